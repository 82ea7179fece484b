"""Kernel repos on disk for the build tests and scripts/compare-kernels-to-wheel.

A repo is the Hub layout, `build/<variant>/<package>/...`, with every
variant name from issue 2. Linux variants carry a real (tiny) ELF shared
object from elfgen, since kwheel reads each `.so` for the platform tag;
the darwin/Metal one a real arm64 Mach-O needing macOS 26 (elfgen.macho_object).
Contents are deterministic, so builds can be compared byte for byte.
Standard library only.
"""

from __future__ import annotations

import base64
import hashlib
import os
import zipfile
from pathlib import Path

from elfgen import macho_object, shared_object

ARCH_VARIANTS = [
    "torch27-cxx11-cu126-x86_64-linux",
    "torch26-cxx98-cu124-x86_64-linux",
    "torch28-cxx11-cu129-aarch64-linux",
    "torch27-cxx11-rocm63-x86_64-linux",
    "torch29-cxx11-cpu-x86_64-linux",
    "torch28-cxx11-xpu20251-x86_64-linux",
    "torch27-metal-aarch64-darwin",
    "torch210-cxx11-cu130-x86_64-linux",
]
NOARCH_VARIANTS = ["torch-universal", "torch-cpu", "torch-cuda", "torch-metal", "torch-rocm", "torch-xpu"]
ALL_VARIANTS = ARCH_VARIANTS + NOARCH_VARIANTS

# What kwheel's scheme (docs/wheel-naming.md) gives each variant: local
# label, Requires-Dist, and the platform tags with --manylinux 2_28 and with
# the default --manylinux auto for elfgen's libc-free .so (the oldest policy
# per arch: manylinux_2_5 on x86_64, manylinux_2_17 on aarch64).
EXPECTED = {
    "torch27-cxx11-cu126-x86_64-linux": ("torch2.7.cu126", "torch==2.7.*"),
    "torch26-cxx98-cu124-x86_64-linux": ("torch2.6.cu124.cxx98", "torch==2.6.*"),
    "torch28-cxx11-cu129-aarch64-linux": ("torch2.8.cu129", "torch==2.8.*"),
    "torch27-cxx11-rocm63-x86_64-linux": ("torch2.7.rocm63", "torch==2.7.*"),
    "torch29-cxx11-cpu-x86_64-linux": ("torch2.9.cpu", "torch==2.9.*"),
    "torch28-cxx11-xpu20251-x86_64-linux": ("torch2.8.xpu20251", "torch==2.8.*"),
    "torch27-metal-aarch64-darwin": ("torch2.7.metal", "torch==2.7.*"),
    "torch210-cxx11-cu130-x86_64-linux": ("torch2.10.cu130", "torch==2.10.*"),
    "torch-universal": ("", "torch"),
    "torch-cpu": ("torch.cpu", "torch"),
    "torch-cuda": ("torch.cuda", "torch"),
    "torch-metal": ("torch.metal", "torch"),
    "torch-rocm": ("torch.rocm", "torch"),
    "torch-xpu": ("torch.xpu", "torch"),
}


def arch_of(variant: str) -> str | None:
    if variant in NOARCH_VARIANTS:
        return None
    return "aarch64" if "-aarch64-" in variant else "x86_64"


def expected_platforms(variant: str, manylinux: str = "auto") -> list[str]:
    if variant in NOARCH_VARIANTS:
        return ["any"]
    if variant.endswith("-darwin"):
        return ["macosx_26_0_arm64"]
    arch = arch_of(variant)
    if manylinux != "auto":
        return [f"manylinux_{manylinux}_{arch}"]
    return ["manylinux1_x86_64", "manylinux_2_5_x86_64"] if arch == "x86_64" else ["manylinux2014_aarch64", "manylinux_2_17_aarch64"]


def expected_tags(variant: str, manylinux: str = "auto") -> list[str]:
    interp = "py3-none" if variant in NOARCH_VARIANTS else "cp39-abi3"
    return [f"{interp}-{p}" for p in expected_platforms(variant, manylinux)]


def expected_filename(variant: str, name: str = "img2gray", version: str = "0.1.0", manylinux: str = "auto") -> str:
    label = EXPECTED[variant][0]
    full = f"{version}+{label}" if label else version
    interp = "py3-none" if variant in NOARCH_VARIANTS else "cp39-abi3"
    return f"{name}-{full}-{interp}-{'.'.join(expected_platforms(variant, manylinux))}.whl"


def op_hash(variant: str) -> str:
    return hashlib.sha256(variant.encode()).hexdigest()[:7]


def variant_files(variant: str, package: str = "img2gray") -> dict[str, bytes]:
    """The files of one variant, relative to build/<variant>/."""
    ops = f"_{package}_{op_hash(variant)}"
    files = {
        f"{package}/__init__.py": (
            f'"""{package} kernel, build variant {variant}."""\n'
            "from ._ops import ops\n\n\n"
            "def img2gray(x):\n"
            "    return ops.img2gray(x)\n"
        ).encode(),
        f"{package}/_ops.py": (
            f"import torch\nfrom . import {ops}\nops = torch.ops.{ops}\n\n\n"
            f"def add_op_namespace_prefix(op_name: str):\n    return f\"{ops}::{{op_name}}\"\n"
        ).encode(),
    }
    arch = arch_of(variant)
    if arch is not None:
        pad = hashlib.sha256(b"pad:" + variant.encode()).digest() * 8
        if variant.endswith("-darwin"):
            # A real arm64 Mach-O needing macOS 26, as kernel-builder's Metal builds do.
            so = macho_object("26.0") + pad
        else:
            so = shared_object(arch, pad)
        files[f"{package}/{ops}.abi3.so"] = so
    return files


def make_kernel_repo(
    root: Path,
    name: str = "img2gray",
    variants: list[str] | None = None,
    extra: dict[str, bytes] | None = None,
    package: str | None = None,
) -> Path:
    """Writes <root>/<name>/build/<variant>/<package>/... and returns <root>/<name>.

    `extra` maps repo-relative paths to bytes (added after the variants)."""
    repo = Path(root) / name
    pkg = package or name.replace("-", "_")
    for variant in ALL_VARIANTS if variants is None else variants:
        for rel, data in variant_files(variant, pkg).items():
            p = repo / "build" / variant / rel
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_bytes(data)
    for rel, data in (extra or {}).items():
        p = repo / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(data)
    (repo / "build").mkdir(parents=True, exist_ok=True)
    return repo


def tree_state(d: Path) -> dict[str, str]:
    """Every entry below d (hidden ones too) -> sha256 of its bytes, or its kind."""
    out: dict[str, str] = {}
    d = Path(d)
    if not d.exists():
        return out
    for root, dirs, files in os.walk(d):
        for n in dirs:
            out[os.path.relpath(os.path.join(root, n), d) + "/"] = "dir"
        for n in files:
            p = os.path.join(root, n)
            out[os.path.relpath(p, d)] = hashlib.sha256(Path(p).read_bytes()).hexdigest()
    return out


def one_error_line(p, code: int, *needles: str) -> str:
    """Exit `code` and exactly one `kwheel: error:` line, holding every needle; that line."""
    assert p.returncode == code, (p.returncode, p.stdout, p.stderr)
    lines = [ln for ln in p.stderr.splitlines() if ln.startswith("kwheel: error:")]
    assert len(lines) == 1, p.stderr
    for n in needles:
        assert n in lines[0], (n, lines[0])
    return lines[0]


def rewrite_wheel(wheel: Path, change) -> None:
    """`change(members, dist_info)` applied to the wheel's members and RECORD written anew over them:
    a wheel someone who can write it made, which a RECORD check alone accepts."""
    with zipfile.ZipFile(wheel) as z:
        members = {i.filename: z.read(i) for i in z.infolist()}
    (dist_info,) = {n.split("/")[0] for n in members if n.split("/")[0].endswith(".dist-info")}
    change(members, dist_info)
    record = f"{dist_info}/RECORD"
    rows = [f"{n},sha256={base64.urlsafe_b64encode(hashlib.sha256(d).digest()).rstrip(b'=').decode()},{len(d)}"
            for n, d in members.items() if n != record]
    members[record] = ("\n".join(rows + [f"{record},,"]) + "\n").encode()
    with zipfile.ZipFile(wheel, "w", zipfile.ZIP_DEFLATED) as z:
        for n, d in members.items():
            z.writestr(n, d)
