# Facts about an interpreter that decide which wheels can run in it. It
# must not import torch (seconds); torch's version.py carries what we need.
import importlib.util
import json
import os
import platform
import sys

info = {
    "python": "%d.%d" % sys.version_info[:2],
    "python_version": "%d.%d.%d" % sys.version_info[:3],  # what pip holds Requires-Python to
    "implementation": sys.implementation.name,
    "executable": sys.executable,
    "machine": platform.machine(),
    "system": platform.system().lower(),
    "glibc": "",
    "has_pip": importlib.util.find_spec("pip") is not None,
}
# pip >= 22.3 ships __pip-runner__.py, with which `pip --python ENV` runs
# itself inside ENV; kwheel runs it there directly and saves a pip start-up.
pip_spec = importlib.util.find_spec("pip")
if pip_spec and pip_spec.origin:
    runner = os.path.join(os.path.dirname(pip_spec.origin), "__pip-runner__.py")
    if os.path.isfile(runner):
        info["pip_runner"] = runner
try:
    libc = os.confstr("CS_GNU_LIBC_VERSION") or ""
    if libc.startswith("glibc "):
        info["glibc"] = libc.split()[1]
except (AttributeError, ValueError, OSError):
    pass
spec = importlib.util.find_spec("torch")
if spec and spec.origin:
    pkg = os.path.dirname(spec.origin)
    info["torch_site"] = os.path.dirname(pkg)
    ns = {}
    try:
        with open(os.path.join(pkg, "version.py")) as f:
            exec(compile(f.read(), "torch/version.py", "exec"), ns)
        info["torch"] = str(ns.get("__version__", ""))
        info["cuda"] = ns.get("cuda")
        info["hip"] = ns.get("hip")
        info["xpu"] = ns.get("xpu")  # torch >= 2.4; kernels picks an XPU backend from it
    except OSError as e:
        info["torch_error"] = "cannot read torch/version.py: %s" % e
# tvm-ffi variants load only where tvm_ffi's major.minor is theirs; kernels
# 0.17.2 finds the module as find_spec("tvm_ffi") and reads
# tvm_ffi.__version__. The distribution's metadata gives that version without
# running the module; a tvm_ffi without it (a source checkout) is imported.
spec = importlib.util.find_spec("tvm_ffi")
if spec and spec.origin:
    info["tvm_ffi_site"] = os.path.dirname(os.path.dirname(spec.origin))
    try:
        from importlib import metadata
        info["tvm_ffi"] = metadata.version("apache-tvm-ffi")
    except Exception:  # noqa: BLE001 - no metadata: ask the module itself
        try:
            import tvm_ffi
            info["tvm_ffi"] = str(tvm_ffi.__version__)
        except Exception as e:  # noqa: BLE001
            info["tvm_ffi_error"] = "cannot read tvm_ffi's version: %s: %s" % (type(e).__name__, e)
print(json.dumps(info))
