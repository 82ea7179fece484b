# Where this interpreter has a distribution installed, for `kwheel verify
# --python PY NAME`: the directory its RECORD's paths are relative to
# (site-packages). importlib.metadata finds it as pip and kernels would.
import json
import sys
from importlib import metadata

try:
    dist = metadata.distribution(sys.argv[1])
except metadata.PackageNotFoundError:
    print(json.dumps({"found": False}))
else:
    print(json.dumps({"found": True, "location": str(dist.locate_file("")), "version": dist.version}))
