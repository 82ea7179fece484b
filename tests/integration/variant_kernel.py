"""A real multi-build CUDA kernel for the PEP 825 variant-index tests, and the helpers they share.

One Hub-layout kernel repo (flat layout, metadata.json with a digest, as tests/hub/kernel_repos
writes it) whose four torch 2.11 builds differ in what their binaries really carry:

    build                                  device code (SASS)   made by                     backend.archs
    torch211-cxx11-cpu-x86_64-linux        none                 g++ (host .so only)         -
    torch211-cxx11-cu126-x86_64-linux      sm_80, sm_90         ptxas 12.6.85 (PyPI)        8.0, 9.0
    torch211-cxx11-cu129-x86_64-linux      sm_100               ptxas 12.9.86 (PyPI)        10.0
    torch211-cxx11-cu130-x86_64-linux      sm_90                nvcc 13.0 (/usr/local/cuda) 9.0

The device code is kernels/img2gray/csrc/img2gray.cu, the repo's own CUDA kernel. For cu126 and
cu129, nvcc 13.0 writes its PTX (`-ptx -arch=compute_80`), whose `.version 9.0` is lowered to what
the older ptxas reads (8.5 for 12.6, 8.8 for 12.9; the kernel uses nothing newer), that ptxas
assembles one cubin per SASS target, NVIDIA's fatbinary packs them (uncompressed), and objcopy adds
the fatbin as `.nv_fatbin` to a g++-built host .so (the img2gray pixel loop on the CPU), as
tests/integration/test_real_binaries.py wraps nvcc's fatbins. cu130 is a plain `nvcc -shared` of
img2gray.cu (linked against libcudart.so.13), exactly what a CUDA 13.0 build writes.

So the toolkit release is in the cubins, where kwheel reads it: ptxas 12.6's sm_80/sm_90 cubins
(ELF ABI 7) have e_version 0x7e = 126; ptxas 12.9's sm_100 cubin and nvcc 13.0's sm_90 cubins are
ELF ABI 8, whose e_version is 1 and whose `.note.nv.tkinfo` note carries the release as text ("Cuda
compilation tools, release 12.9, V12.9.86"; "... release 13.0, V13.0.88"). nvcc 13.0's .so holds
two sm_90 cubins: img2gray.cu's (made by ptxas) and the device-link stub (made by nvlink).
tests/integration/test_variant_kernel.py holds the fixture to NVIDIA's cuobjdump.

Needs nvcc, fatbinary (the CUDA toolkit at /usr/local/cuda, or on PATH), g++, objcopy, and the
ptxas binaries scripts/fetch-ptxas downloads into .cache/ptxas/; a test using the fixture skips,
saying which is missing.
"""

from __future__ import annotations

import base64
import csv
import hashlib
import io
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import zipfile
from dataclasses import dataclass, field
from html.parser import HTMLParser
from urllib.parse import unquote
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(ROOT / "tests" / "hub"))
import kernel_repos as kr  # noqa: E402

NAME = "img2gray"
VERSION = "1.0.0"          # `kwheel build --version`
TORCH = "torch2.11"        # the variant index these builds land in: SITE/variants/torch2.11/simple/
CSRC = ROOT / "kernels" / "img2gray" / "csrc"
PTXAS_CACHE = Path(os.environ.get("KWHEEL_PTXAS_CACHE") or ROOT / ".cache" / "ptxas")
PTXAS_NO_NETWORK = "no network: ptxas could not be fetched"

CPU = "torch211-cxx11-cpu-x86_64-linux"
CU126 = "torch211-cxx11-cu126-x86_64-linux"
CU129 = "torch211-cxx11-cu129-x86_64-linux"
CU130 = "torch211-cxx11-cu130-x86_64-linux"


@dataclass(frozen=True)
class Build:
    variant: str
    sass: tuple[str, ...]           # the SASS targets the .so's .nv_fatbin holds, in cuobjdump's names
    archs: tuple[str, ...] | None   # metadata.json backend.archs
    toolchain: str                  # "g++", "ptxas 12.6.85", "nvcc 13.0"
    release: str | None             # the CUDA release its cubins carry (e_version / .note.nv.tkinfo)


BUILDS: dict[str, Build] = {
    CPU: Build(CPU, (), None, "g++", None),
    CU126: Build(CU126, ("sm_80", "sm_90"), ("8.0", "9.0"), "ptxas 12.6.85", "12.6"),
    CU129: Build(CU129, ("sm_100",), ("10.0",), "ptxas 12.9.86", "12.9"),
    CU130: Build(CU130, ("sm_90",), ("9.0",), "nvcc 13.0", "13.0"),
}

# The PTX ISA each ptxas reads at most (CUDA 12.6: 8.5, 12.9: 8.8).
PTX_ISA = {"12.6.85": "8.5", "12.9.86": "8.8"}


@dataclass
class VariantKernel:
    repo: Path                                                # <root>/img2gray, for `kwheel build`
    so: dict[str, bytes] = field(default_factory=dict)        # variant -> its one .so's bytes
    so_path: dict[str, str] = field(default_factory=dict)     # variant -> the .so's path in the package

    def build_of(self, so_bytes: bytes) -> str:
        """Which build a .so's bytes are (the fixture is the source of truth, not kwheel)."""
        hits = [v for v, b in self.so.items() if b == so_bytes]
        assert len(hits) == 1, f"the .so is none of the fixture's builds (sha256 {hashlib.sha256(so_bytes).hexdigest()})"
        return hits[0]


# --------------------------------------------------------------------------- tools


def _tool(name: str) -> str | None:
    for p in (f"/usr/local/cuda/bin/{name}",):
        if os.access(p, os.X_OK):
            return p
    return shutil.which(name)


def cuda_tools() -> dict[str, str]:
    """nvcc and fatbinary of the machine's CUDA toolkit, g++ and objcopy; a skip naming what is missing."""
    tools = {n: _tool(n) for n in ("nvcc", "fatbinary")} | {n: shutil.which(n) for n in ("g++", "objcopy")}
    missing = [n for n, p in tools.items() if p is None]
    if missing:
        pytest.skip(f"the multi-build CUDA kernel needs {', '.join(missing)} (the CUDA toolkit at /usr/local/cuda, binutils, g++)")
    return tools  # type: ignore[return-value]


def ptxas(version: str) -> Path:
    """.cache/ptxas/<version>/ptxas (scripts/fetch-ptxas), or a skip that says why it is missing."""
    if (PTXAS_CACHE / ".stamp").is_file():
        p = PTXAS_CACHE / version / "ptxas"
        if not p.is_file():
            pytest.fail(f"{p} is missing; tests/realbin/ptxas-requirements.txt pins it: run scripts/fetch-ptxas again")
        return p
    why = PTXAS_CACHE / "UNAVAILABLE"
    if why.is_file():
        pytest.skip(f"{PTXAS_NO_NETWORK} ({PTXAS_CACHE}; scripts/fetch-ptxas: {why.read_text().splitlines()[-1].strip()})")
    pytest.skip(f"ptxas {version} is not in {PTXAS_CACHE}: run scripts/setup (or scripts/fetch-ptxas)")


def _run(cmd, cwd: Path) -> None:
    r = subprocess.run([str(c) for c in cmd], cwd=cwd, capture_output=True, text=True, timeout=300)
    if r.returncode != 0:
        pytest.fail(f"{' '.join(map(str, cmd))} exited {r.returncode}:\n{r.stdout}\n{r.stderr}")


# --------------------------------------------------------------------------- the builds

HOST_SRC = """\
// The host side of one build of the variant-index test kernel: img2gray on the CPU, through the
// same per-pixel function the CUDA kernel uses, and the name of the build it belongs to.
#include <stddef.h>
#include "img2gray_common.h"

extern "C" const char* img2gray_fixture_build() { return "%(variant)s"; }

extern "C" void img2gray_fixture_host(const uint8_t* rgb, uint8_t* gray, size_t pixels) {
  for (size_t i = 0; i < pixels; ++i) gray[i] = img2gray_pixel(rgb[3 * i], rgb[3 * i + 1], rgb[3 * i + 2]);
}
"""


def _host_so(work: Path, tools: dict[str, str], variant: str) -> Path:
    src, out = work / "host.cpp", work / "host.so"
    src.write_text(HOST_SRC % {"variant": variant})
    _run([tools["g++"], "-shared", "-fPIC", "-O2", "-I", CSRC, src.name, "-o", out.name], work)
    return out


def _ptxas_so(work: Path, tools: dict[str, str], build: Build, version: str) -> bytes:
    """img2gray.cu's PTX, assembled by ptxas `version` for build.sass, in a g++ host .so's .nv_fatbin."""
    _run([tools["nvcc"], "-ptx", "-arch=compute_80", "-I", CSRC, CSRC / "img2gray.cu", "-o", "k.ptx"], work)
    ptx = (work / "k.ptx").read_text()
    lowered, n = re.subn(r"^\.version \d+\.\d+$", f".version {PTX_ISA[version]}", ptx, count=1, flags=re.M)
    assert n == 1, "nvcc's PTX has no .version line"
    (work / "k-old.ptx").write_text(lowered)
    images = []
    for target in build.sass:
        sm = target[len("sm_"):]
        _run([ptxas(version), f"-arch=sm_{sm}", "k-old.ptx", "-o", f"k{sm}.cubin"], work)
        images.append(f"--image3=kind=elf,sm={sm},file=k{sm}.cubin")
    _run([tools["fatbinary"], "--create=k.fatbin", "-64", "--compress=false", *images], work)
    so = _host_so(work, tools, build.variant)
    _run([tools["objcopy"], "--add-section", ".nv_fatbin=k.fatbin", "--set-section-flags", ".nv_fatbin=contents,readonly",
          so.name, "k.so"], work)
    return (work / "k.so").read_bytes()


def _nvcc_so(work: Path, tools: dict[str, str], build: Build) -> bytes:
    """`nvcc -shared` of img2gray.cu for build.sass, as a CUDA 13.0 build of the kernel writes it."""
    codes = [f"-gencode=arch=compute_{t[3:]},code={t}" for t in build.sass]
    _run([tools["nvcc"], "-shared", "-cudart", "shared", "-Xcompiler", "-fPIC", *codes, "-I", CSRC,
          CSRC / "img2gray.cu", "-o", "k.so"], work)
    return (work / "k.so").read_bytes()


def _package(variant: str, kernel_id: str, so: bytes) -> dict[str, bytes]:
    """The package files of one build (flat layout): a pure-Python face and its op library."""
    files = kr.demo_package(NAME, variant)
    files["_ops.py"] = (f"ops = None  # torch.ops.{kernel_id} once the library is loaded\n\n\n"
                        f"def add_op_namespace_prefix(op_name: str) -> str:\n    return f\"{kernel_id}::{{op_name}}\"\n").encode()
    files[f"{kernel_id}.abi3.so"] = so
    return files


def build_variant_kernel(root: Path) -> VariantKernel:
    """Writes <root>/img2gray/build/<variant>/... for the four builds of BUILDS; returns the kernel."""
    tools = cuda_tools()
    for version in PTX_ISA:
        ptxas(version)  # skip before compiling anything when the cache is missing
    kernel = VariantKernel(repo=Path(root) / NAME)
    for variant, build in BUILDS.items():
        work = Path(root) / "work" / variant
        work.mkdir(parents=True)
        if build.toolchain == "g++":
            so = _host_so(work, tools, variant).read_bytes()
        elif build.toolchain.startswith("ptxas "):
            so = _ptxas_so(work, tools, build, build.toolchain.split()[1])
        else:
            so = _nvcc_so(work, tools, build)
        backend = kr.backend_of(variant)
        kernel_id = f"_{NAME}_{backend}_{hashlib.sha256(so).hexdigest()[:7]}"
        kr.write_variant(kernel.repo, variant, layout="flat", name=NAME, backend=backend,
                         archs=list(build.archs) if build.archs else None, kernel_id=kernel_id,
                         files=_package(variant, kernel_id, so))
        kernel.so[variant] = so
        kernel.so_path[variant] = f"{NAME}/{kernel_id}.abi3.so"
    return kernel


@pytest.fixture(scope="session")
def variant_kernel(tmp_path_factory) -> VariantKernel:
    """The multi-build CUDA kernel, built once per session."""
    return build_variant_kernel(tmp_path_factory.mktemp("variant-kernel"))


# --------------------------------------------------------------------------- reading cubins


def cubin_release(cubin: bytes) -> str | None:
    """The CUDA release a cubin says made it: e_version for ELF ABI 7 cubins (126 -> "12.6"), else
    (ABI 8, whose e_version is 1) the text of its .note.nv.tkinfo note, "Cuda compilation tools,
    release 12.9, V12.9.86". The note's first word is no release: 0x81 from ptxas 12.9, 2 from 13.0."""
    assert cubin[:4] == b"\x7fELF" and cubin[4] == 2, "not a 64-bit ELF"
    e_version = struct.unpack_from("<I", cubin, 20)[0]
    if e_version > 1:
        return f"{e_version // 10}.{e_version % 10}"
    shoff, = struct.unpack_from("<Q", cubin, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", cubin, 0x3A)
    sections = [struct.unpack_from("<IIQQQQIIQQ", cubin, shoff + i * shentsize) for i in range(shnum)]
    names_off = sections[shstrndx][4]
    for s in sections:
        name = cubin[names_off + s[0]:cubin.index(b"\0", names_off + s[0])]
        if name == b".note.nv.tkinfo":
            m = re.search(rb"Cuda compilation tools, release (\d+\.\d+)", cubin[s[4]:s[4] + s[5]])
            return m.group(1).decode() if m else None
    return None


def cuobjdump_cubins(cuobjdump: str | Path, so: Path, out: Path) -> list[Path]:
    """The cubins NVIDIA's cuobjdump extracts from `so` (-xelf all), in its order."""
    out.mkdir(parents=True, exist_ok=True)
    r = subprocess.run([str(cuobjdump), "-xelf", "all", str(so)], cwd=out, capture_output=True, text=True, timeout=120)
    if "does not contain device code" in r.stderr:
        return []
    assert r.returncode == 0, r.stderr
    names = re.findall(r"Extracting ELF file\s+\d+: (\S+)", r.stdout)
    return [out / n for n in names]


# --------------------------------------------------------------------------- the index side


class _Links(HTMLParser):
    def __init__(self):
        super().__init__()
        self.hrefs: list[str] = []

    def handle_starttag(self, tag, attrs):
        if tag == "a":
            href = dict(attrs).get("href")
            if href:
                self.hrefs.append(href)


def page_links(page: Path) -> dict[str, tuple[Path, str | None]]:
    """A PEP 503 project page's links: file name -> (the file it points to on disk, its #sha256 or None)."""
    parser = _Links()
    parser.feed(page.read_text(encoding="utf-8"))
    out: dict[str, tuple[Path, str | None]] = {}
    for href in parser.hrefs:
        url, _, frag = href.partition("#")
        assert not re.match(r"^[a-z]+://", url), f"{page}: {href} is not relative: a file:// site must link its own files"
        target = (page.parent / unquote(url)).resolve()
        sha = frag[len("sha256="):] if frag.startswith("sha256=") else None
        out[target.name] = (target, sha)
    return out


def variant_label(filename: str) -> str | None:
    """The PEP 825 label of a wheel filename ({name}-{version}-{py}-{abi}-{plat}-{label}.whl), None for a plain wheel."""
    parts = filename[:-len(".whl")].split("-")
    if len(parts) == 6 and not parts[2][:1].isdigit():
        return parts[5]
    if len(parts) == 7:  # with a build tag
        return parts[6]
    return None


def record_problems(wheel: Path) -> list[str]:
    """What pip's RECORD check would refuse in `wheel`: every member listed, every sha256 and size right."""
    problems = []
    with zipfile.ZipFile(wheel) as z:
        names = [n for n in z.namelist() if not n.endswith("/")]
        (record,) = [n for n in names if re.fullmatch(r"[^/]+\.dist-info/RECORD", n)]
        rows = {row[0]: row for row in csv.reader(io.StringIO(z.read(record).decode("utf-8"))) if row}
        for n in names:
            if n not in rows:
                problems.append(f"{n}: not in RECORD")
                continue
            if n == record:
                continue
            path, digest, size = rows[n]
            data = z.read(n)
            algo, _, want = digest.partition("=")
            if algo != "sha256":
                problems.append(f"{n}: RECORD hash is {algo or 'missing'}, not sha256")
                continue
            got = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
            if got != want:
                problems.append(f"{n}: sha256 {got} in the wheel, {want} in RECORD")
            if size != str(len(data)):
                problems.append(f"{n}: {len(data)} bytes in the wheel, {size} in RECORD")
        problems += [f"{p}: in RECORD, not in the wheel" for p in rows if p not in names]
    return problems


@dataclass
class Installed:
    run: subprocess.CompletedProcess
    target: Path

    @property
    def ok(self) -> bool:
        return self.run.returncode == 0

    def so(self) -> bytes:
        """The one .so the install put into the package."""
        found = sorted((self.target / NAME).glob("*.so"))
        assert len(found) == 1, f"expected one .so in {self.target / NAME}, found {found}\n{self}"
        return found[0].read_bytes()

    def variant_json(self) -> dict:
        (p,) = self.target.glob(f"{NAME}-*.dist-info/variant.json")
        return json.loads(p.read_text(encoding="utf-8"))

    def nothing_installed(self) -> bool:
        """No package and no dist-info in the target (uv leaves its .lock file there either way)."""
        return not self.target.exists() or not [p for p in self.target.iterdir() if p.name != ".lock"]

    def __str__(self) -> str:
        return f"$ {' '.join(map(str, self.run.args))}\nexit {self.run.returncode}\n{self.run.stdout}\n{self.run.stderr}"


NV_DRIVER = "NV_VARIANT_PROVIDER_FORCE_CUDA_DRIVER_VERSION"
NV_SM = "NV_VARIANT_PROVIDER_FORCE_SM_ARCH"


def tool_env(tmp: Path, driver: str | None = None, sm: str | None = None) -> dict[str, str]:
    """The machine's environment without uv's, pip's or the NVIDIA provider's settings; a fresh uv cache under
    `tmp`; the provider forced to `driver` / `sm` where given (uv 0.13.9 reads both; neither set is a machine
    with no NVIDIA driver, as this one is)."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("UV_", "PIP_", "NV_VARIANT_")) and k not in {"VIRTUAL_ENV", "PYTHONPATH"}}
    cache = tmp / "uv-cache"
    shutil.rmtree(cache, ignore_errors=True)
    env.update(UV_NO_CONFIG="1", UV_CACHE_DIR=str(cache), PIP_CONFIG_FILE=os.devnull, PIP_DISABLE_PIP_VERSION_CHECK="1",
               PIP_NO_CACHE_DIR="1")
    if driver is not None:
        env[NV_DRIVER] = driver
    if sm is not None:
        env[NV_SM] = sm
    return env


def uv_install(uv: Path, python: Path, index: Path, target: Path, *, driver: str | None = None, sm: str | None = None,
               preview: bool = True, name: str = NAME) -> Installed:
    """`uv pip install [--preview-features wheel-variants] --index-url file://INDEX/ NAME --no-deps --target TARGET`."""
    shutil.rmtree(target, ignore_errors=True)
    cmd = [str(uv), "pip", "install", "--python", str(python), *(["--preview-features", "wheel-variants"] if preview else []),
           "--index-url", index.as_uri() + "/", name, "--no-deps", "--target", str(target)]
    run = subprocess.run(cmd, capture_output=True, text=True, env=tool_env(target.parent / f"{target.name}-env", driver, sm),
                         timeout=300)
    return Installed(run, target)


def pip_install(pip: Path, index: Path, target: Path, *extra: str) -> Installed:
    """`pip install --index-url file://INDEX/ img2gray --no-deps --target TARGET`, isolated from any pip configuration."""
    shutil.rmtree(target, ignore_errors=True)
    cmd = [str(pip), "install", "--isolated", "--index-url", index.as_uri() + "/", NAME, "--no-deps", "--target", str(target), *extra]
    run = subprocess.run(cmd, capture_output=True, text=True, env=tool_env(target.parent / f"{target.name}-env"), timeout=300)
    return Installed(run, target)
