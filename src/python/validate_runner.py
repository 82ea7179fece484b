# Runs in the fresh environment holding one installed wheel: imports the
# package, checks its ops are registered with torch, and runs the kernel's
# own check (<package>._kwheel_check.run) when it declares one.
# Prints one JSON object as its last line. Exit 0 pass, 3 skip, 1 fail.
import importlib
import json
import sys
import traceback

package, device, want_cxx11 = sys.argv[1], sys.argv[2], sys.argv[3]
result = {"package": package}


def finish(code, **fields):
    result.update(fields)
    print(json.dumps(result))
    sys.exit(code)


try:
    import torch
except Exception as e:  # noqa: BLE001 - any import failure is the finding
    finish(1, error="cannot import torch: %s: %s" % (type(e).__name__, e))

result["torch"] = torch.__version__
abi = bool(getattr(torch._C, "_GLIBCXX_USE_CXX11_ABI", True))
if want_cxx11 in ("cxx11", "cxx98") and abi != (want_cxx11 == "cxx11"):
    finish(3, reason="the wheel is built for the %s C++ ABI, this torch uses %s" % (want_cxx11, "cxx11" if abi else "cxx98"))

if device == "auto":
    device = "cuda" if torch.cuda.is_available() else "cpu"
if device == "cuda" and not torch.cuda.is_available():
    finish(3, reason="--device cuda, but this torch sees no CUDA device")
result["device"] = device
if device == "cuda":
    result["device_name"] = torch.cuda.get_device_name(0)

try:
    module = importlib.import_module(package)
except Exception as e:  # noqa: BLE001
    finish(1, error="import %s failed: %s: %s" % (package, type(e).__name__, e), traceback=traceback.format_exc(limit=3))

# Kernels built by kernel-builder name their op namespace in _ops.py.
try:
    ops_module = importlib.import_module(package + "._ops")
    namespace = getattr(getattr(ops_module, "ops", None), "name", None)
except ModuleNotFoundError:
    namespace = None
if namespace:
    names = sorted({s.name for s in torch._C._jit_get_all_schemas() if s.name.startswith(namespace + "::")})
    if not names:
        finish(1, error="no op is registered under torch.ops.%s after importing %s" % (namespace, package))
    result["ops"] = names
else:
    result["ops"] = []
    result["note"] = "no _ops.py: checked the import only"

try:
    check = importlib.import_module(package + "._kwheel_check")
except ModuleNotFoundError:
    check = None
if check is None:
    finish(0, check="import + op registration (the kernel declares no _kwheel_check)")
try:
    details = check.run(device=device)
except Exception as e:  # noqa: BLE001
    finish(1, error="%s._kwheel_check failed: %s: %s" % (package, type(e).__name__, e), traceback=traceback.format_exc(limit=5))
finish(0, check="%s._kwheel_check" % package, details=details)
