"""The libraries `import torch` provides, per torch minor and CUDA/ROCm major.

Each object here is compiled at test time against a stand-in library whose
soname we choose (cc -Wl,-soname,...), so its DT_NEEDED names exactly that
soname, and packed as the only `.so` of a variant. `kwheel build` must accept
it where the variant's torch provides that soname and refuse it (exit 9, one
line naming the object, the library and what torch provides instead) where
torch provides another major of the same library: issue #32's
libcudart.so.12 in a cu130 variant, which a cu130 torch cannot load.

What each torch provides is the data scripts/update-torch-provided read from
the PyPI wheels (manylinux/torch-provided.json): the facts asserted here
(a CUDA 13 torch pins nvidia-cuda-runtime 13 with libcudart.so.13 and cuDNN 9;
torch 2.15's wheel has torch/lib/libtorch_nvshmem.so, torch 2.6's has not)
are those wheels' contents; `readelf -d` confirms each object's DT_NEEDED.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
KWHEEL = os.environ.get("KWHEEL_BIN") or str(ROOT / "build" / "kwheel")
SO_NAME = "_k_0a1b2c3.abi3.so"
MEMBER = f"k/{SO_NAME}"
POLICY = 9  # ErrorKind::policy

pytestmark = [
    pytest.mark.skipif(not os.access(KWHEEL, os.X_OK), reason=f"kwheel not built at {KWHEEL} (set KWHEEL_BIN)"),
    pytest.mark.skipif(shutil.which("cc") is None, reason="needs cc"),
]


def run(argv, **kw) -> subprocess.CompletedProcess:
    return subprocess.run([str(a) for a in argv], capture_output=True, text=True, timeout=300, **kw)


def kernel_needing(d: Path, soname: str) -> Path:
    """k.so with DT_NEEDED `soname` (and libc): linked against a stand-in."""
    stub = d / "stub"
    stub.mkdir(parents=True)
    (stub / "s.c").write_text("void stub_fn(void) {}\n")
    assert run(["cc", "-shared", "-fPIC", "-nostdlib", f"-Wl,-soname,{soname}", "s.c", "-o", soname], cwd=stub).returncode == 0
    (d / "k.c").write_text("void stub_fn(void);\nvoid op(void) { stub_fn(); }\n")
    r = run(["cc", "-shared", "-fPIC", "k.c", "-o", "k.so", "-Wl,--no-as-needed", "-Lstub", f"-l:{soname}"], cwd=d)
    assert r.returncode == 0, r.stderr
    if shutil.which("readelf"):
        dyn = run(["readelf", "-d", d / "k.so"]).stdout
        assert f"Shared library: [{soname}]" in dyn, dyn
    return d / "k.so"


def build(tmp: Path, variant: str, soname: str, *args: str) -> tuple[subprocess.CompletedProcess, dict]:
    so = kernel_needing(tmp / "obj", soname)
    pkg = tmp / "src" / "build" / variant / "k"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    shutil.copyfile(so, pkg / SO_NAME)
    proc = run([KWHEEL, "build", tmp / "src", "--version", "0.1.0", "--name", "k", "--json", "-o", tmp / "dist", *args])
    try:
        report = json.loads(proc.stdout)
    except ValueError:
        pytest.fail(f"kwheel build printed no JSON:\n{proc.stdout}\n{proc.stderr}")
    return proc, report["variants"][0]


def inspect(path: Path) -> tuple[int, dict]:
    r = run([KWHEEL, "inspect", "--json", path])
    try:
        return r.returncode, json.loads(r.stdout)
    except ValueError:
        pytest.fail(f"kwheel inspect printed no JSON:\n{r.stdout}\n{r.stderr}")


def provided(variant: dict) -> list[str]:
    return [t["soname"] for t in variant["platform"]["torch_provided"]]


def refused_line(proc: subprocess.CompletedProcess, variant: dict, *fragments: str) -> str:
    assert proc.returncode == POLICY, proc.stdout + proc.stderr
    error = variant["error"]
    assert "\n" not in error
    for f in fragments:
        assert f in error, error
    return error


def test_cudart_12_refused_in_cu130(tmp_path):
    proc, v = build(tmp_path, "torch210-cxx11-cu130-x86_64-linux", "libcudart.so.12")
    refused_line(proc, v, "torch210-cxx11-cu130-x86_64-linux", MEMBER, "needs libcudart.so.12",
                 "provides libcudart.so.13", "nvidia-cuda-runtime", "rebuild it against CUDA 13", "cu12x variant")
    assert not list((tmp_path / "dist").glob("*.whl"))


def test_cudart_13_accepted_in_cu130(tmp_path):
    proc, v = build(tmp_path, "torch210-cxx11-cu130-x86_64-linux", "libcudart.so.13")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert provided(v) == ["libcudart.so.13"]
    assert "nvidia-cuda-runtime" in v["platform"]["torch_provided"][0]["reason"]


def test_cudart_12_accepted_in_cu128(tmp_path):
    proc, v = build(tmp_path, "torch28-cxx11-cu128-x86_64-linux", "libcudart.so.12")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert provided(v) == ["libcudart.so.12"]


def test_cudnn_9_accepted_in_cu130(tmp_path):
    """cuDNN's soname major (9) is not CUDA's: the cu13 torch pins nvidia-cudnn-cu13, which ships libcudnn.so.9."""
    proc, v = build(tmp_path, "torch210-cxx11-cu130-x86_64-linux", "libcudnn.so.9")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert provided(v) == ["libcudnn.so.9"]
    assert "nvidia-cudnn-cu13" in v["platform"]["torch_provided"][0]["reason"]


def test_cufft_major_from_the_wheels_not_cuda(tmp_path):
    """cuFFT in CUDA 13 is libcufft.so.12: a CUDA-major rule would refuse it."""
    proc, v = build(tmp_path, "torch211-cxx11-cu130-x86_64-linux", "libcufft.so.12")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    proc, v = build(tmp_path / "old", "torch211-cxx11-cu130-x86_64-linux", "libcufft.so.11")
    refused_line(proc, v, MEMBER, "needs libcufft.so.11", "provides libcufft.so.12")


def test_nvshmem_torch_library_for_215(tmp_path):
    proc, v = build(tmp_path, "torch215-cxx11-cu130-x86_64-linux", "libtorch_nvshmem.so")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert provided(v) == ["libtorch_nvshmem.so"]
    assert "torch-2.15." in v["platform"]["torch_provided"][0]["reason"]
    # issue #32 item 5: inspect called it external (exit 9).
    rc, report = inspect(Path(v["wheel"]))
    assert rc == 0, report
    assert [t["soname"] for t in report["manylinux"]["torch_provided"]] == ["libtorch_nvshmem.so"]


def test_nvshmem_refused_where_the_wheel_lacks_it(tmp_path):
    proc, v = build(tmp_path, "torch26-cxx11-cu124-x86_64-linux", "libtorch_nvshmem.so")
    refused_line(proc, v, MEMBER, "needs libtorch_nvshmem.so", "torch 2.6 ships no libtorch_nvshmem.so", "torch-2.6.")


def test_hip_major_mismatch_refused(tmp_path):
    proc, v = build(tmp_path, "torch29-cxx11-rocm70-x86_64-linux", "libamdhip64.so.6")
    refused_line(proc, v, MEMBER, "needs libamdhip64.so.6", "provides libamdhip64.so.7", "rocm6x variant")
    proc, v = build(tmp_path / "ok", "torch29-cxx11-rocm70-x86_64-linux", "libamdhip64.so.7")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert provided(v) == ["libamdhip64.so.7"]


def test_inspect_judges_a_wheel_by_its_label(tmp_path):
    """A wheel built with the mismatch allowed is refused by inspect, which
    reads torch 2.10 / CUDA 13 from its label (+torch2.10.cu130)."""
    proc, v = build(tmp_path, "torch210-cxx11-cu130-x86_64-linux", "libcudart.so.12", "--allow-external", "libcudart.so.12")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    rc, report = inspect(Path(v["wheel"]))
    assert rc == POLICY
    problems = report["manylinux"]["problems"]
    assert len(problems) == 1, problems
    for f in (MEMBER, "needs libcudart.so.12", "torch2.10.cu130", "provides libcudart.so.13", "cu12x variant"):
        assert f in problems[0], problems


def test_uncovered_torch_minor_warns_and_uses_rules(tmp_path):
    proc, v = build(tmp_path, "torch299-cxx11-cu140-x86_64-linux", "libcudart.so.14")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    warnings = v["platform"]["warnings"]
    assert any("not 2.99" in w for w in warnings), warnings
    assert any("not 14" in w for w in warnings), warnings
    proc, v = build(tmp_path / "old", "torch299-cxx11-cu140-x86_64-linux", "libcudart.so.13")
    refused_line(proc, v, MEMBER, "needs libcudart.so.13", "provides libcudart.so.14")
