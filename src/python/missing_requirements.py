# Which of a wheel's requirements (argv[1:], torch left out by kwheel) this
# environment does not have, for `kwheel validate`: one JSON list on stdout.
# Markers are evaluated with packaging when the environment has it (pip's
# vendored copy otherwise); without either, a requirement counts as wanted.
import json
import re
import sys
from importlib import metadata

try:
    from packaging.requirements import Requirement
except ImportError:
    try:
        from pip._vendor.packaging.requirements import Requirement
    except ImportError:
        Requirement = None

missing = []
for text in sys.argv[1:]:
    name = re.split(r"[\s<>=!~;\[(]", text, maxsplit=1)[0]
    if Requirement is not None:
        try:
            req = Requirement(text)
        except Exception:
            req = None
        if req is not None:
            name = req.name
            if req.marker is not None and not req.marker.evaluate({"extra": ""}):
                continue
    try:
        metadata.distribution(name)
    except metadata.PackageNotFoundError:
        missing.append(text)
print(json.dumps(missing))
