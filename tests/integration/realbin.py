"""The real-binary corpus of issue #32 (tests/realbin/): CUDA and ROCm objects
from PyPI wheels no one here wrote, fetched by scripts/fetch-realbin into
.cache/realbin/, and the oracles that judge kwheel on them: NVIDIA's
cuobjdump (PyPI nvidia-cuda-cuobjdump, in the tools venv), auditwheel, and
LLVM's clang-offload-bundler with the zstd tool for ROCm bundles.

Every accessor skips the calling test when the corpus could not be fetched,
saying why; the lists below are read from the manifests, so tests are
collected (and reported as skipped) with or without the corpus.
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
MANIFEST = ROOT / "tests" / "realbin" / "requirements.txt"
MEMBERS = ROOT / "tests" / "realbin" / "members.txt"
CACHE = Path(os.environ.get("KWHEEL_REALBIN_CACHE") or ROOT / ".cache" / "realbin")
NO_NETWORK = "no network: the real-binary corpus could not be fetched"


def _members() -> list[tuple[str, str]]:
    out = []
    for line in MEMBERS.read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            project, member = line.split()
            out.append((project, member))
    return out


def _projects() -> list[str]:
    return [m.group(1) for m in re.finditer(r"^([A-Za-z0-9][-A-Za-z0-9_.]*)==", MANIFEST.read_text(), re.M)]


# Pure-Python wheels of the manifest: real dependencies for the index tests
# (einops, a kernel's python-depends), not binaries for the oracles.
PURE_PYTHON: tuple[str, ...] = ("einops",)

OBJECTS: list[tuple[str, str]] = _members()   # (project, member path in its wheel)
PROJECTS: list[str] = [p for p in _projects() if p not in PURE_PYTHON]   # the binary wheels


def object_id(project: str, member: str) -> str:
    return f"{project}:{member}"


def corpus() -> Path:
    """The fetched corpus folder, or a skip that says why it is missing."""
    if (CACHE / ".stamp").is_file():
        return CACHE
    why = CACHE / "UNAVAILABLE"
    if why.is_file():
        pytest.skip(f"{NO_NETWORK} ({CACHE}; scripts/fetch-realbin: {why.read_text().splitlines()[-1].strip()})")
    pytest.skip(f"the real-binary corpus is not in {CACHE}: run scripts/setup (or scripts/fetch-realbin)")


def obj(project: str, member: str) -> Path:
    p = corpus() / "objects" / project / member
    if not p.is_file():
        pytest.fail(f"{p} is missing from the corpus; run scripts/fetch-realbin again")
    return p


def wheel(project: str) -> Path:
    norm = lambda s: re.sub(r"[-_.]+", "-", s).lower()
    found = [w for w in (corpus() / "wheels").glob("*.whl") if norm(w.name.split("-")[0]) == norm(project)]
    if len(found) != 1:
        pytest.fail(f"expected one {project} wheel in {CACHE / 'wheels'}, found {found}")
    return found[0]


def venv_tool(venv_python: Path, rel: str) -> Path:
    """A file installed into the tools venv's site-packages (a glob)."""
    hits = sorted(Path(venv_python).parent.parent.glob(f"lib/python3*/site-packages/{rel}"))
    if not hits:
        pytest.fail(f"{rel} is not in the tools venv; run scripts/setup (scripts/requirements-test.txt)")
    return hits[0]


def cuobjdump(venv_python: Path) -> Path:
    return venv_tool(venv_python, "nvidia/cu*/bin/cuobjdump")


def comparison():
    """scripts/gpu-inspect-vs-cuobjdump as a module: one reading of cuobjdump's
    output and one comparison, for these tests and for the GPU machine."""
    path = ROOT / "scripts" / "gpu-inspect-vs-cuobjdump"
    loader = importlib.machinery.SourceFileLoader("gpu_inspect_vs_cuobjdump", str(path))
    spec = importlib.util.spec_from_loader(loader.name, loader)
    mod = importlib.util.module_from_spec(spec)
    sys.modules.setdefault(loader.name, mod)
    loader.exec_module(mod)
    return mod


# --------------------------------------------------------------------------- ROCm

def _bundler() -> str | None:
    for name in ("clang-offload-bundler", "clang-offload-bundler-19"):
        if p := shutil.which(name):
            return p
    hits = sorted(Path("/usr/lib").glob("llvm-*/bin/clang-offload-bundler"))
    return str(hits[-1]) if hits else None


def offload_bundle_targets(path: Path) -> list[str]:
    """The gfx processors of an object's .hip_fatbin as LLVM's own tools read
    them: objcopy takes the section out, each compressed bundle (CCOB, LLVM's
    ClangOffloadBundler docs: v2 has a 32-bit total size, v3 a 64-bit one;
    zstd, method 1) is decompressed by the zstd tool and listed by
    clang-offload-bundler --list. Sorted, without features."""
    bundler, zstd = _bundler(), shutil.which("zstd")
    if bundler is None or zstd is None or shutil.which("objcopy") is None:
        pytest.skip("needs objcopy, zstd and clang-offload-bundler (scripts/setup installs them)")
    with tempfile.TemporaryDirectory() as d:
        section = Path(d) / "hip_fatbin"
        subprocess.run(["objcopy", "-O", "binary", "--only-section=.hip_fatbin", str(path), str(section)], check=True)
        data = section.read_bytes()
        targets: set[str] = set()
        off = data.find(b"CCOB")
        while off >= 0:
            version, method = struct.unpack_from("<HH", data, off + 4)
            assert method == 1, f"{path.name}: bundle at {off} is not zstd (method {method})"
            if version >= 3:
                total, header = struct.unpack_from("<Q", data, off + 8)[0], 32
            else:
                total, header = struct.unpack_from("<I", data, off + 8)[0], 24
            plain = subprocess.run([zstd, "-d", "-c"], input=data[off + header: off + total], capture_output=True, check=True).stdout
            bundle = Path(d) / f"bundle-{off}"
            bundle.write_bytes(plain)
            ids = subprocess.run([bundler, "--list", "--type=o", f"--input={bundle}"], capture_output=True, text=True, check=True).stdout
            for ident in ids.split():
                if m := re.search(r"--(gfx[0-9a-z]+)", ident):
                    targets.add(m.group(1))
            off = data.find(b"CCOB", off + total)
        return sorted(targets)
