# Facts about the torch of the interpreter running this script, printed as
# key=value lines for CMakeLists.txt. Everything the variant name needs comes
# from here, i.e. from the torch the kernel is compiled against, not from
# whatever happens to be installed elsewhere on the build machine.
import os
import platform
import sys
import sysconfig

import torch

facts = {
    "torch_version": torch.__version__,
    "cxx11_abi": int(bool(torch._C._GLIBCXX_USE_CXX11_ABI)),
    "torch_cuda": torch.version.cuda or "",
    "cmake_prefix_path": torch.utils.cmake_prefix_path,
    # Rewritten by every torch (re)install: lets CMake notice a changed torch.
    "torch_version_file": os.path.join(os.path.dirname(torch.__file__), "version.py"),
    "machine": platform.machine(),
    "os": sys.platform,
    "python_version": "%d.%d" % sys.version_info[:2],
    "python_include": sysconfig.get_paths()["include"],
}
for key, value in facts.items():
    print(f"{key}={value}")
