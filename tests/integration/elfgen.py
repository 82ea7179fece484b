"""Small real ELF shared objects for tests that need a `.so` in a variant.

kwheel reads every `.so` it packs (the manylinux evidence), so fixture
kernels must carry real ELF files, not random bytes. `shared_object()`
compiles a tiny library once per session (no libc, no versioned symbols:
any manylinux policy accepts it), rewrites e_machine for other
architectures, and appends padding so variants differ in content and size
(ELF readers ignore bytes past the sections).
"""

from __future__ import annotations

import functools
import subprocess
import tempfile
from pathlib import Path

_MACHINES = {"x86_64": 62, "aarch64": 183}


@functools.lru_cache(maxsize=None)
def _base() -> bytes:
    with tempfile.TemporaryDirectory() as d:
        src = Path(d) / "k.c"
        src.write_text("int kwheel_fixture_kernel(int x) { return 2 * x + 1; }\n")
        out = Path(d) / "k.so"
        subprocess.run(["cc", "-shared", "-fPIC", "-nostdlib", "-O2", "-o", str(out), str(src)], check=True)
        return out.read_bytes()


def shared_object(arch: str = "x86_64", pad: bytes = b"") -> bytes:
    data = bytearray(_base())
    data[18:20] = _MACHINES[arch].to_bytes(2, "little")  # e_machine
    return bytes(data) + pad
