# The GPU `kwheel validate` would run on: its compute capability and name,
# from the interpreter's own torch. Run once per validate, and only when a
# CUDA wheel is to be validated (importing torch takes seconds).
import json

import torch

info = {"available": bool(torch.cuda.is_available())}
if info["available"]:
    info["capability"] = "%d.%d" % torch.cuda.get_device_capability(0)
    info["name"] = torch.cuda.get_device_name(0)
print(json.dumps(info))
