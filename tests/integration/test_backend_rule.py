"""Issue #37, 6: which backend's builds fit which system, held to kernels 0.17.2 itself.

For one set of variant names (a repo directory holding build/<variant>/) and one system per backend
kernels knows on Linux (CUDA, CPU, ROCm, XPU), kernels' public `resolve_variants` (its own backend
detection from torch, then `_check_variants`) decides in a subprocess whose `torch` is a stand-in:
a package whose torch/version.py says the build (cuda, hip, xpu), as real torch's does. kwheel
decides for the same variants with `kwheel variants DIR --python` on a venv holding that same
stand-in (kwheel's probe reads torch/version.py), and with `--torch X.Y --cuda X.Y / --cpu`.

The verdicts must agree variant for variant, and where kernels rejects for the backend, kwheel's
reason is kernels' own sentence. `kwheel pin` then refuses a CPU-only build for a CUDA target.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "hub"))
import kernel_repos as kr  # noqa: E402
from conftest import clean_env  # noqa: E402

TORCH = "2.9"
VARIANTS = [
    "torch29-cxx11-cu126-x86_64-linux", "torch29-cxx11-cu128-x86_64-linux", "torch29-cxx11-cu129-x86_64-linux",
    "torch29-cxx11-cu130-x86_64-linux", "torch29-cu128-x86_64-linux", "torch28-cxx11-cu128-x86_64-linux",
    "torch29-cxx11-cpu-x86_64-linux", "torch29-cxx11-rocm63-x86_64-linux", "torch29-cxx11-rocm64-x86_64-linux",
    "torch29-cxx11-xpu20251-x86_64-linux", "torch-stable-abi29-cu126-x86_64-linux", "torch-stable-abi29-cpu-x86_64-linux",
    "torch-universal", "torch-cpu", "torch-cuda", "torch-rocm", "torch-xpu", "torch-metal", "torch-npu",
]
# system -> what its torch/version.py says besides __version__
SYSTEMS = {
    "cuda12.8": {"__version__": "2.9.0+cu128", "cuda": "12.8", "hip": None, "xpu": None},
    "cuda13.0": {"__version__": "2.9.0+cu130", "cuda": "13.0", "hip": None, "xpu": None},
    "cpu": {"__version__": "2.9.0+cpu", "cuda": None, "hip": None, "xpu": None},
    "rocm6.3": {"__version__": "2.9.0+rocm6.3", "cuda": None, "hip": "6.3.42131-fa1d09cbd", "xpu": None},
    "xpu": {"__version__": "2.9.0+xpu", "cuda": None, "hip": None, "xpu": "20250101"},
}
# The attributes kernels' backend detection reads beyond version.py (kernels/backends.py _backend),
# answered as a torch without MPS, TPU, Neuron or a private-use backend answers them.
STAND_IN_INIT = """\
from . import version
from .version import __version__


class _Mps:
    @staticmethod
    def is_available():
        return False


class backends:
    mps = _Mps


class _C:
    pass


def compiled_with_cxx11_abi():
    return True
"""

KERNELS_DECIDES = """\
import json, sys
from pathlib import Path
from kernels.variants import VariantRejected, get_variants_local, resolve_variants
_, trace = resolve_variants(get_variants_local(Path(sys.argv[1])))
print(json.dumps({d.variant.variant_str: d.reason if isinstance(d, VariantRejected) else None for d in trace}))
"""


def stand_in_venv(where: Path, version_py: dict) -> tuple[Path, Path]:
    """A venv whose torch is the stand-in; returns its python and site-packages."""
    r = subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(where)], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    [site] = list(where.glob("lib/python3*/site-packages"))
    (site / "torch").mkdir()
    (site / "torch" / "__init__.py").write_text(STAND_IN_INIT)
    (site / "torch" / "version.py").write_text("".join(f"{k} = {v!r}\n" for k, v in version_py.items()))
    return where / "bin" / "python", site


def kernels_decisions(site: Path, build: Path) -> dict[str, str | None]:
    """kernels 0.17.2's verdict per variant on the system of the stand-in torch at `site`."""
    env = clean_env(PYTHONPATH=str(site))
    r = subprocess.run([sys.executable, "-c", KERNELS_DECIDES, str(build)], capture_output=True, text=True, env=env, timeout=120)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def kwheel_decisions(kwheel_bin: Path, repo: Path, *target: str) -> dict[str, str | None]:
    r = subprocess.run([str(kwheel_bin), "variants", str(repo), *target, "--json"], capture_output=True, text=True, env=clean_env(), timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    return {v["variant"]: None if v["fits"] else v["reason"] for v in json.loads(r.stdout)["variants"]}


def is_backend_reason(reason: str | None) -> bool:
    """kernels' reasons from its backend checks (variants.py, _check_variants)."""
    return reason is not None and (reason.startswith("backend (") or reason.startswith("CUDA version ("))


@pytest.fixture(scope="module")
def repo(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("backend-rule") / "repo"
    for variant in VARIANTS:
        (root / "build" / variant).mkdir(parents=True)
    return root


@pytest.fixture(scope="module")
def systems(tmp_path_factory) -> dict[str, tuple[Path, Path]]:
    work = tmp_path_factory.mktemp("systems")
    return {name: stand_in_venv(work / name, {"__version__": v["__version__"], **{k: v[k] for k in ("cuda", "hip", "xpu")}})
            for name, v in SYSTEMS.items()}


@pytest.mark.parametrize("system", list(SYSTEMS))
def test_kwheel_fits_what_kernels_loads(kwheel_bin, repo, systems, system):
    python, site = systems[system]
    theirs = kernels_decisions(site, repo / "build")
    assert sorted(theirs) == sorted(VARIANTS)  # kernels read every name: the comparison covers them all
    assert any(r is None for r in theirs.values()) and any(is_backend_reason(r) for r in theirs.values())
    targets = [("--python", str(python))]
    # A target described on the command line is judged the same way.
    described = {"cuda12.8": ["--cuda", "12.8"], "cuda13.0": ["--cuda", "13.0"], "cpu": ["--cpu"]}.get(system)
    if described:
        targets.append(("--torch", TORCH, *described))
    for target in targets:
        ours = kwheel_decisions(kwheel_bin, repo, *target)
        assert {v for v, r in ours.items() if r is None} == {v for v, r in theirs.items() if r is None}, (target, ours, theirs)
        for variant, reason in theirs.items():
            if is_backend_reason(reason):
                assert ours[variant] == reason, (target, variant, ours[variant], reason)


def test_pin_refuses_a_cpu_only_build_for_a_cuda_target(kwheel_bin, tmp_path):
    """The issue's case: `kwheel pin dist --torch 2.9 --cuda 12.8` gave the torch.cpu build, exit 0."""
    src = tmp_path / "relu"
    kr.write_variant(src, "torch-cpu", layout="flat", name="relu", files=kr.demo_package("relu", "torch-cpu"))
    env = clean_env()
    build = lambda repo, out: subprocess.run([str(kwheel_bin), "build", str(repo), "--version", "1", "-o", str(out), "-q"],  # noqa: E731
                                             capture_output=True, text=True, env=env, timeout=300)
    r = build(src, tmp_path / "dist")
    assert r.returncode == 0, r.stderr
    pin = lambda *target: subprocess.run([str(kwheel_bin), "pin", str(tmp_path / "dist"), *target],  # noqa: E731
                                         capture_output=True, text=True, env=env, timeout=120)
    r = pin("--torch", TORCH, "--cuda", "12.8")
    assert r.returncode == 5 and r.stdout == "", r.stdout + r.stderr
    assert "backend (cpu) does not match system backend (cuda) and is not universal" in r.stderr, r.stderr
    assert pin("--torch", TORCH, "--cpu").stdout.splitlines()[-1].startswith("relu==1+torch.cpu ")
    # With a torch-cuda build beside it, the CUDA target gets that one.
    kr.write_variant(tmp_path / "relu-cuda", "torch-cuda", layout="flat", name="relu", files=kr.demo_package("relu", "torch-cuda"))
    assert build(tmp_path / "relu-cuda", tmp_path / "dist").returncode == 0
    r = pin("--torch", TORCH, "--cuda", "12.8")
    assert r.returncode == 0 and r.stdout.splitlines()[-1].startswith("relu==1+torch.cuda "), r.stdout + r.stderr
