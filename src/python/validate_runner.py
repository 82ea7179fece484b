# Runs in the fresh environment holding one installed wheel: imports the
# package, checks its ops are registered with torch, and runs the kernel's
# own check (<package>._kwheel_check.run) when it declares one.
# Prints one JSON object as its last line. Exit 0 pass, 3 skip, 1 fail.
# Before each step it writes "kwheel-stage: <what>" to stderr, so that when
# native code kills the process (a corrupt .so segfaults in dlopen or in the
# kernel) kwheel can still say what it was doing; faulthandler adds where.
import faulthandler
import importlib
import json
import os
import sys
import time
import traceback

faulthandler.enable()
package, device, want_cxx11 = sys.argv[1], sys.argv[2], sys.argv[3]
result = {"package": package}
# Seconds per step, so that a slow validation says whether torch, the
# package or the kernel's own check took the time.
timings = {}
_clock = [time.perf_counter(), None]


def stage(what, key=None):
    now = time.perf_counter()
    if _clock[1]:
        timings[_clock[1]] = round(now - _clock[0], 4)
    _clock[0], _clock[1] = now, key
    sys.stderr.write("kwheel-stage: %s\n" % what)
    sys.stderr.flush()


def finish(code, **fields):
    stage("reporting")
    result["timings"] = timings
    result.update(fields)
    print(json.dumps(result))
    sys.exit(code)


def optional_module(name):
    """The module `name`, or None when it does not exist. A module that
    exists but fails to import (or whose own imports are missing) is an
    error, not an absent module."""
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as e:
        if e.name == name:
            return None
        raise


stage("importing torch", "import_torch")
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
    finish(3, reason="--device cuda, but this torch (%s) sees no CUDA device" % torch.__version__)
result["device"] = device
if device == "cuda":
    result["device_name"] = torch.cuda.get_device_name(0)

stage("importing %s" % package, "import_package")
try:
    module = importlib.import_module(package)
except Exception as e:  # noqa: BLE001
    finish(1, error="import %s failed: %s: %s" % (package, type(e).__name__, e), traceback=traceback.format_exc(limit=3))
result["module_file"] = getattr(module, "__file__", None)
# The environment also sees torch's site-packages: make sure what we test is
# the wheel just installed, not a copy of the package sitting next to torch.
_env = os.path.realpath(sys.prefix) + os.sep
if not os.path.realpath(result["module_file"] or "").startswith(_env):
    finish(1, error="import %s found %s, not the wheel installed in the test environment %s"
           % (package, result["module_file"], sys.prefix))

# Kernels built by kernel-builder name their op namespace in _ops.py.
stage("looking up the ops of %s" % package, "ops")
try:
    ops_module = optional_module(package + "._ops")
except Exception as e:  # noqa: BLE001
    finish(1, error="import %s._ops failed: %s: %s" % (package, type(e).__name__, e), traceback=traceback.format_exc(limit=3))
namespace = getattr(getattr(ops_module, "ops", None), "name", None) if ops_module else None
if namespace:
    names = sorted({s.name for s in torch._C._jit_get_all_schemas() if s.name.startswith(namespace + "::")})
    if not names:
        finish(1, error="no op is registered under torch.ops.%s after importing %s" % (namespace, package))
    result["ops"] = names
else:
    result["ops"] = []
    result["note"] = "no op namespace in %s._ops: checked the import only" % package

stage("importing %s._kwheel_check" % package, "import_check")
try:
    check = optional_module(package + "._kwheel_check")
except Exception as e:  # noqa: BLE001
    finish(1, error="import %s._kwheel_check failed: %s: %s" % (package, type(e).__name__, e), traceback=traceback.format_exc(limit=3))
if check is None:
    what = "import + op registration" if namespace else "import only"
    finish(0, check="%s (the kernel declares no _kwheel_check)" % what)
stage("running %s._kwheel_check on %s" % (package, device), "kernel_check")
try:
    details = check.run(device=device)
except Exception as e:  # noqa: BLE001
    finish(1, error="%s._kwheel_check failed: %s: %s" % (package, type(e).__name__, e), traceback=traceback.format_exc(limit=5))
finish(0, check="%s._kwheel_check" % package, details=details)
