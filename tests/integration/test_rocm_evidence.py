"""Issue 32, item 1, at the command line: ROCm libraries whose .hip_fatbin holds clang offload bundles in
each compression clang-offload-bundler writes: none, zlib and zstd (`-compress`, what the ROCm builds
of bitsandbytes 0.50.2 ship for ROCm 6.4 to 7.2). `kwheel inspect` names their gfx targets, and
`kwheel build` of a ROCm variant holding such an object writes its wheel, or refuses a declared arch
the bundles lack.

The bundles are written by Debian's clang-19 clang-offload-bundler over AMD GPU code objects clang-19
compiles, and linked into the host library as a HIP link does (elfgen.hip_shared_object). LLVM 19's
bundler compresses with zstd wherever LLVM has zstd, as Debian's does, and has no switch for zlib: the
zlib container is laid out here after LLVM's CompressedOffloadBundle::compress (version 2), and the same
bundler reads it back (`-list`) before kwheel sees it, as it does every bundle here.
"""

from __future__ import annotations

import hashlib
import json
import struct
import subprocess
import sys
import zlib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "hub"))
import kernel_repos as kr  # noqa: E402
from conftest import clean_env  # noqa: E402
from elfgen import hip_shared_object  # noqa: E402
from kwheel_fixtures import tree_state  # noqa: E402

LLVM = Path("/usr/lib/llvm-19/bin")  # scripts/setup installs clang-19
BUNDLER = LLVM / "clang-offload-bundler"
VARIANT = "torch29-cxx11-rocm64-x86_64-linux"
# The host as clang 20+ names it to the bundler; LLVM 19 stores it with the empty environment's '-', as
# the ROCm objects of bitsandbytes carry it (given "...-gnu-", LLVM 19 would store the id twice over).
HOST = "host-x86_64-unknown-linux-gnu"
# One bundle per translation unit, as a HIP library of two sources carries.
UNITS = [["gfx90a", "gfx942:sramecc+:xnack-"], ["gfx1100", "gfx1201"]]
GFX = ["gfx1100", "gfx1201", "gfx90a", "gfx942"]  # sorted, as kwheel lists processors
COMPRESSIONS = ["none", "zlib", "zstd"]


def code_object(d: Path, target: str) -> Path:
    """A real AMD GPU code object (a shared object, as HIP's are) for `target`.

    Code object version 4: the system's ld.lld 14 links it (it does not know version 5, clang-19's default).
    """
    stem = d / ("co-" + target.replace(":", "_").replace("+", "p"))
    src = d / "kernel.c"
    src.write_text('__attribute__((visibility("default"))) int kernel_entry(int x) { return 3 * x + 1; }\n')
    subprocess.run([LLVM / "clang", "--target=amdgcn-amd-amdhsa", f"-mcpu={target}", "-mcode-object-version=4",
                    "-nogpulib", "-O1", "-c", src, "-o", stem.with_suffix(".o")], check=True)
    subprocess.run(["ld.lld", "-shared", stem.with_suffix(".o"), "-o", stem.with_suffix(".co")], check=True)
    return stem.with_suffix(".co")


def zlib_ccob_v2(plain: bytes) -> bytes:
    """LLVM's compressed bundle, version 2, method 0 (zlib at its default level): magic, version, method,
    total size, uncompressed size, the MD5's low 8 bytes, then the stream."""
    stream = zlib.compress(plain, 6)
    digest = int.from_bytes(hashlib.md5(plain).digest()[:8], "little")
    return b"CCOB" + struct.pack("<HHIIQ", 2, 0, 24 + len(stream), len(plain), digest) + stream


def bundle(d: Path, name: str, targets: list[str], compression: str) -> bytes:
    """What clang-offload-bundler -type=o writes for HIP's link step (an empty host input, 4096 alignment)."""
    ids = [HOST] + [f"hipv4-amdgcn-amd-amdhsa--{t}" for t in targets]
    host = d / "host.o"
    host.write_bytes(b"")
    inputs = [host] + [code_object(d, t) for t in targets]
    out = d / name
    cmd = [BUNDLER, "-type=o", "-bundle-align=4096", "-targets=" + ",".join(ids), *[f"-input={p}" for p in inputs],
           f"-output={out}"]
    if compression == "zstd":
        cmd.append("-compress")
    # Only the command line decides: OFFLOAD_BUNDLER_COMPRESS and friends in the caller's environment are ignored.
    subprocess.run(cmd, check=True, env=clean_env(OFFLOAD_BUNDLER_IGNORE_ENV_VAR="1"))
    data = out.read_bytes()
    if compression == "zlib":
        data = zlib_ccob_v2(data)
        out.write_bytes(data)
    magic, method = data[:4], struct.unpack_from("<H", data, 6)[0]
    if compression == "none":
        assert data.startswith(b"__CLANG_OFFLOAD_BUNDLE__")
    else:
        assert magic == b"CCOB" and method == {"zlib": 0, "zstd": 1}[compression], (magic, method)
    listed = subprocess.run([BUNDLER, "-list", "-type=o", f"-input={out}"], capture_output=True, text=True, check=True)
    assert sorted(listed.stdout.split()) == sorted([HOST + "-", *ids[1:]]), listed.stdout
    return data


def rocm_library(tmp_path: Path, compression: str) -> bytes:
    d = tmp_path / f"bundles-{compression}"
    d.mkdir()
    return hip_shared_object([bundle(d, f"tu{i}.hipfb", targets, compression) for i, targets in enumerate(UNITS)])


def kwheel(kwheel_bin, *args) -> subprocess.CompletedProcess:
    return subprocess.run([str(kwheel_bin), *map(str, args)], capture_output=True, text=True, env=clean_env(), timeout=120)


@pytest.mark.parametrize("compression", COMPRESSIONS)
def test_inspect_names_the_gfx_targets_of_each_compression(kwheel_bin, tmp_path, compression):
    so = tmp_path / "libkernel_rocm.so"
    so.write_bytes(rocm_library(tmp_path, compression))
    r = kwheel(kwheel_bin, "inspect", so)
    assert r.returncode == 0, r.stdout + r.stderr
    assert f"gpu code: {so.name}: {', '.join(GFX)}" in r.stdout, r.stdout
    j = json.loads(kwheel(kwheel_bin, "inspect", "--json", so).stdout)
    assert j["gpu"]["gfx_targets"] == GFX, j["gpu"]


@pytest.mark.parametrize("compression", COMPRESSIONS)
def test_build_of_a_rocm_variant_writes_its_wheel(kwheel_bin, tmp_path, compression):
    repo = tmp_path / "relu"
    kr.write_variant(repo, VARIANT, layout="flat", name="relu", archs=GFX, kernel_id="_relu_0123abc",
                     files=kr.demo_package("relu", "x", so=rocm_library(tmp_path, compression)))
    dist = tmp_path / "dist"
    r = kwheel(kwheel_bin, "build", repo, "-o", dist, "--version", "1.0.0", "--json")
    assert r.returncode == 0, r.stdout + r.stderr
    gpu = json.loads(r.stdout)["variants"][0]["gpu"]
    assert gpu["gfx_targets"] == GFX and gpu["declared_archs"] == GFX and gpu["undeclared"] == [], gpu
    wheel = next(dist.glob("*.whl"))
    ins = kwheel(kwheel_bin, "inspect", wheel)
    assert f"gpu code: relu/_relu_0123abc.abi3.so: {', '.join(GFX)}" in ins.stdout, ins.stdout


def test_a_declared_arch_the_zstd_bundles_lack_refuses_the_build(kwheel_bin, tmp_path):
    repo = tmp_path / "relu"
    kr.write_variant(repo, VARIANT, layout="flat", name="relu", archs=GFX + ["gfx950"], kernel_id="_relu_0123abc",
                     files=kr.demo_package("relu", "x", so=rocm_library(tmp_path, "zstd")))
    dist = tmp_path / "dist"
    dist.mkdir()
    before = tree_state(dist)
    r = kwheel(kwheel_bin, "build", repo, "-o", dist, "--version", "1.0.0", "--json")
    assert r.returncode == 9, r.stdout + r.stderr
    line = json.loads(r.stdout)["variants"][0]["error"]
    assert "metadata.json declares backend arch gfx950 but no shared object carries code for it" in line
    assert f"relu/_relu_0123abc.abi3.so has {', '.join(GFX)}" in line
    assert tree_state(dist) == before


# Issue 38, defect 4: a zstd bundle of a few tens of KB that inflates to hundreds of MiB. Before, each
# variant's reader held the whole payload (grown by doubling: 1.5 times it at the last step, and zstd's own
# window beside it), so four at --jobs 4 held four of them at once: 6.6 GB for four bundles of 1023 MiB
# (bench/hostile-rss rocm-4x1023m). Now the payload streams through a fixed chunk, only its entry table
# is kept, and every decoder's window is reserved from one budget for the whole run. The build runs here
# under an RLIMIT_DATA that one such reader alone fitted in before, four at once did not; no RSS or time
# is asserted: the build must simply succeed, with the wheels and targets a small bundle gives.
HOSTILE_MIB = 240
DATA_LIMIT = 768 << 20
ROCM_VARIANTS = ["torch29-cxx11-rocm64-x86_64-linux", "torch29-cxx11-rocm63-x86_64-linux",
                 "torch28-cxx11-rocm64-x86_64-linux", "torch28-cxx11-rocm63-x86_64-linux"]


def hostile_library(tmp_path: Path, size_mib: int) -> bytes:
    """A HIP-linked library whose one bundle the bundler compressed (-compress: zstd) over a gfx90a code
    object of `size_mib` MiB of zeros (a sparse file: no disk, and the bundler's memory only for a moment)."""
    d = tmp_path / "hostile"
    d.mkdir()
    (d / "host.o").write_bytes(b"")
    with open(d / "big.co", "wb") as f:
        f.truncate(size_mib << 20)
    out = d / "big.hipfb"
    subprocess.run([BUNDLER, "-type=o", "-bundle-align=4096", f"-targets={HOST},hipv4-amdgcn-amd-amdhsa--gfx90a",
                    f"-input={d / 'host.o'}", f"-input={d / 'big.co'}", f"-output={out}", "-compress"],
                   check=True, env=clean_env(OFFLOAD_BUNDLER_IGNORE_ENV_VAR="1"))
    data = out.read_bytes()
    assert data[:4] == b"CCOB" and struct.unpack_from("<H", data, 6)[0] == 1, data[:8]
    assert len(data) < 1 << 20  # the payload is all zeros: a 1 MiB .so could carry it many times over
    return hip_shared_object([data])


def test_four_variants_inflating_to_hundreds_of_mib_build_side_by_side_within_a_memory_limit(kwheel_bin, tmp_path):
    if b"__asan_init" in Path(kwheel_bin).read_bytes():
        pytest.skip("ASan reserves terabytes of shadow and keeps freed memory in quarantine")
    import resource

    so = hostile_library(tmp_path, HOSTILE_MIB)
    repo = tmp_path / "relu"
    for v in ROCM_VARIANTS:
        kr.write_variant(repo, v, layout="flat", name="relu", archs=["gfx90a"], kernel_id="_relu_0123abc",
                         files=kr.demo_package("relu", v, so=so))
    dist = tmp_path / "dist"

    def limited():
        resource.setrlimit(resource.RLIMIT_DATA, (DATA_LIMIT, DATA_LIMIT))

    r = subprocess.run([str(kwheel_bin), "build", repo, "-o", dist, "--version", "1.0.0", "--jobs", "4", "--json"],
                       capture_output=True, text=True, env=clean_env(), timeout=300, preexec_fn=limited)
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    variants = json.loads(r.stdout)["variants"]
    assert sorted(v["variant"] for v in variants) == sorted(ROCM_VARIANTS)
    for v in variants:
        assert v["status"] == "built" and v["gpu"]["gfx_targets"] == ["gfx90a"], v
    assert len(list(dist.glob("*.whl"))) == 4
