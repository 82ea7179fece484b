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
import struct
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


def _fatbin_entry(target: str) -> bytes:
    """One .nv_fatbin entry header for `target` ("sm_90", "sm_90a", "compute_80"), empty payload.

    Layout and flags as src/evidence/fatbin.cpp documents them (what nvcc 13.0 writes): kind 1 PTX / 2 SASS,
    header size 64, arch number at 28, flags at 40 (0x11: 64-bit Linux; 0x100000 `a`; 0x200000 `f`).
    """
    kind, name = (1, target[len("compute_"):]) if target.startswith("compute_") else (2, target[len("sm_"):])
    flags = 0x11
    if name[-1] in "af":
        flags |= 0x100000 if name[-1] == "a" else 0x200000
        name = name[:-1]
    header = bytearray(64)
    struct.pack_into("<HHIQ", header, 0, kind, 0x101, 64, 0)
    struct.pack_into("<I", header, 28, int(name))
    struct.pack_into("<Q", header, 40, flags)
    return bytes(header)


def fatbin(targets: list[str]) -> bytes:
    """A .nv_fatbin section's bytes: one container whose entries name `targets`."""
    body = b"".join(_fatbin_entry(t) for t in targets)
    return struct.pack("<IHHQ", 0xBA55ED50, 1, 16, len(body)) + body


def cuda_shared_object(targets: list[str], arch: str = "x86_64", pad: bytes = b"") -> bytes:
    """shared_object() with a .nv_fatbin section listing `targets`, as a CUDA kernel's .so carries.

    objcopy adds the section; the ELF header is rewritten afterwards for other architectures.
    """
    with tempfile.TemporaryDirectory() as d:
        so, section = Path(d) / "k.so", Path(d) / "fatbin"
        so.write_bytes(_base())
        section.write_bytes(fatbin(targets))
        subprocess.run(["objcopy", "--add-section", f".nv_fatbin={section}", str(so)], check=True)
        data = bytearray(so.read_bytes())
    data[18:20] = _MACHINES[arch].to_bytes(2, "little")
    return bytes(data) + pad


def hip_shared_object(bundles: list[bytes]) -> bytes:
    """A host .so whose .hip_fatbin holds `bundles` (clang offload bundles, plain or CCOB), one per object.

    Linked as a HIP link does it: each translation unit's object carries its bundle in .hip_fatbin,
    4096-aligned (clang's HIPUtility.cpp emits .p2align 12 and .incbin), and the linker concatenates them.
    """
    with tempfile.TemporaryDirectory() as d:
        objs = []
        for i, bundle in enumerate(bundles):
            (Path(d) / f"b{i}.hipfb").write_bytes(bundle)
            (Path(d) / f"b{i}.s").write_text(f'  .section .hip_fatbin,"a",@progbits\n  .p2align 12\n__hip_fatbin_{i}:\n'
                                             f'  .incbin "b{i}.hipfb"\n  .section .note.GNU-stack,"",@progbits\n')
            subprocess.run(["cc", "-c", f"b{i}.s", "-o", f"b{i}.o"], cwd=d, check=True)
            objs.append(f"b{i}.o")
        (Path(d) / "k.c").write_text("int kwheel_fixture_kernel(int x) { return 2 * x + 1; }\n")
        subprocess.run(["cc", "-shared", "-fPIC", "-nostdlib", "-O2", "-o", "k.so", "k.c", *objs], cwd=d, check=True)
        return (Path(d) / "k.so").read_bytes()


@functools.lru_cache(maxsize=None)
def macho_object(min_macos: str = "26.0", arch: str = "arm64") -> bytes:
    """A real Mach-O dylib for `arch` whose LC_BUILD_VERSION says it needs macOS `min_macos`.

    clang compiles for the Apple target, ld64.lld links with -platform_version (no SDK needed).
    """
    clang = "clang"
    ld64 = subprocess.run([clang, "-print-prog-name=ld64.lld"], capture_output=True, text=True, check=True).stdout.strip()
    with tempfile.TemporaryDirectory() as d:
        src, obj, out = Path(d) / "k.c", Path(d) / "k.o", Path(d) / "k.so"
        src.write_text("int kwheel_fixture_kernel(int x) { return 2 * x + 1; }\n")
        subprocess.run([clang, f"--target={arch}-apple-macos{min_macos}", "-c", str(src), "-o", str(obj)], check=True)
        subprocess.run([ld64, "-dylib", "-arch", arch, "-platform_version", "macos", min_macos, min_macos,
                        "-install_name", "@rpath/k.so", str(obj), "-o", str(out)], check=True)
        return out.read_bytes()


@functools.lru_cache(maxsize=None)
def pe_dll(arch: str = "x86_64") -> bytes:
    """A real PE DLL for `arch` ("x86_64", "aarch64"), linked by lld-link without a Windows SDK."""
    with tempfile.TemporaryDirectory() as d:
        src, out = Path(d) / "k.c", Path(d) / "k.dll"
        src.write_text("int kwheel_fixture_kernel(int x) { return 2 * x + 1; }\n")
        subprocess.run(["clang", f"--target={arch}-pc-windows-msvc", "-fuse-ld=lld", "-nostdlib", "-shared",
                        "-Wl,/noentry", str(src), "-o", str(out)], check=True)
        return out.read_bytes()
