# The kernel wheels this interpreter has installed, for `kwheel link --python
# PY`: every distribution importlib.metadata finds (as pip and kernels see
# them) that carries <dist>.dist-info/hub_kernel.json, or whose METADATA
# marks a kernel the way older kwheel wheels did (Keywords: hf-kernel, or the
# "Hub revision" Project-URL). kwheel decides from the texts; this only finds
# them. The first distribution of a name on sys.path is the one import sees.
import json
import sys
from importlib import metadata

LIMIT = 256 << 10
seen = set()
found = []
for dist in metadata.distributions():
    name = dist.metadata.get("Name") or ""
    key = name.lower().replace("_", "-").replace(".", "-")
    if not name or key in seen:
        continue
    seen.add(key)
    hub = dist.read_text("hub_kernel.json")
    text = dist.read_text("METADATA") or ""
    if hub is None and "hf-kernel" not in text.lower() and "Hub revision" not in text:
        continue
    found.append({
        "name": name,
        "version": dist.version,
        "location": str(dist.locate_file("")),
        "hub_kernel": None if hub is None else hub[:LIMIT],
        "metadata": text[:LIMIT] if hub is None else "",
    })
print(json.dumps({"python": sys.executable, "prefix": sys.prefix, "kernels": found}))
