# Where this interpreter's `import NAME` finds a top-level module, for
# `kwheel verify --python PY NAME`: the package verify checked must be the
# one `import` loads, not one shadowed by an earlier sys.path entry or an
# import hook. find_spec locates a top-level module without running it.
import importlib.util
import json
import sys

try:
    spec = importlib.util.find_spec(sys.argv[1])
except (ImportError, ValueError):
    spec = None
if spec is None:
    print(json.dumps({"found": False}))
else:
    print(json.dumps({"found": True, "origin": spec.origin, "locations": [str(p) for p in (spec.submodule_search_locations or [])]}))
