#!/usr/bin/env python3
"""Write issue 38's hostile ROCm repo (defect 4): VARIANTS ROCm variants, each carrying one host library
whose .hip_fatbin holds a zstd-compressed offload bundle that clang-19's clang-offload-bundler wrote
(`-compress`) over a code object of SIZE_MIB MiB of zeros: a few tens of KB on disk that inflate to just
under kwheel's 1 GiB cap at the default 1023. bench/hostile-rss builds it at --jobs 4.

    bench/hostile-rocm-repo.py OUT_REPO [SIZE_MIB] [VARIANTS]

The bundler needs about 3 times SIZE_MIB of memory for a moment (3.1 GB at 1023); the bundle is made
once and linked into every variant's library.
"""
from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "hub"))
sys.path.insert(0, str(ROOT / "tests" / "integration"))
import kernel_repos as kr  # noqa: E402
from elfgen import hip_shared_object  # noqa: E402

BUNDLER = Path("/usr/lib/llvm-19/bin/clang-offload-bundler")
VARIANTS = ["torch29-cxx11-rocm64-x86_64-linux", "torch29-cxx11-rocm63-x86_64-linux",
            "torch28-cxx11-rocm64-x86_64-linux", "torch28-cxx11-rocm63-x86_64-linux"]


def hostile_bundle(size_mib: int) -> bytes:
    with tempfile.TemporaryDirectory() as d:
        d = Path(d)
        (d / "host.o").write_bytes(b"")
        with open(d / "big.co", "wb") as f:  # sparse: zeros without the disk
            f.truncate(size_mib << 20)
        subprocess.run([BUNDLER, "-type=o", "-bundle-align=4096",
                        "-targets=host-x86_64-unknown-linux-gnu,hipv4-amdgcn-amd-amdhsa--gfx90a",
                        f"-input={d / 'host.o'}", f"-input={d / 'big.co'}", f"-output={d / 'b.hipfb'}", "-compress"],
                       check=True, env={"OFFLOAD_BUNDLER_IGNORE_ENV_VAR": "1", "PATH": "/usr/bin:/bin"})
        return (d / "b.hipfb").read_bytes()


def write_repo(repo: Path, size_mib: int = 1023, variants: int = 4) -> None:
    so = hip_shared_object([hostile_bundle(size_mib)])
    for v in VARIANTS[:variants]:
        kr.write_variant(repo, v, layout="flat", name="relu", archs=["gfx90a"], kernel_id="_relu_0123abc",
                         files=kr.demo_package("relu", v, so=so))


if __name__ == "__main__":
    write_repo(Path(sys.argv[1]), int(sys.argv[2]) if len(sys.argv) > 2 else 1023,
               int(sys.argv[3]) if len(sys.argv) > 3 else 4)
