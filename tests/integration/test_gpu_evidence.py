"""Issue 15 at the command line: a variant's GPU code (its .so files' .nv_fatbin)
against metadata.json's backend.archs. An arch declared without code refuses
the build, naming the arch and the files, and leaves dist/ as it was; code
for undeclared archs is shown, in `build --json` and `inspect`, not refused.

The fatbins here are built byte by byte (elfgen.fatbin); fatbin_test.cpp
checks the reader on fatbins nvcc itself builds.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "hub"))
import kernel_repos as kr  # noqa: E402
from conftest import clean_env  # noqa: E402
from elfgen import cuda_shared_object  # noqa: E402
from kwheel_fixtures import tree_state  # noqa: E402

VARIANT = "torch211-cxx11-cu130-x86_64-linux"


def repo_with(tmp_path: Path, targets: list[str], archs: list[str], extra: dict[str, list[str]] | None = None) -> Path:
    """A relu variant whose _relu_0123abc.abi3.so carries `targets`; `extra` adds objects by package path."""
    repo = tmp_path / "relu"
    files = kr.demo_package("relu", "x", so=cuda_shared_object(targets) if targets else None)
    for i, (path, code) in enumerate((extra or {}).items()):
        files[path] = cuda_shared_object(code, pad=bytes([i + 1]) * 8)
    kr.write_variant(repo, VARIANT, layout="flat", name="relu", archs=archs, kernel_id="_relu_0123abc", files=files)
    return repo


# Issue 32: sgl-kernel's layout, one object per arch family under the same
# basename; torchao's split (_C_cutlass_90a: sm_90a; _C_mxfp8: sm_100 and
# compute_120) gives the same union.
PER_FAMILY = {"sm90/common_ops.abi3.so": ["sm_90a"], "sm100/common_ops.abi3.so": ["sm_100", "compute_120"]}
HONEST = ["9.0a", "10.0", "12.0+PTX"]


def kwheel(kwheel_bin, *args) -> subprocess.CompletedProcess:
    return subprocess.run([str(kwheel_bin), *map(str, args)], capture_output=True, text=True, env=clean_env(), timeout=120)


def test_declared_arch_without_code_refuses_the_build_and_leaves_dist(kwheel_bin, tmp_path):
    repo = repo_with(tmp_path, ["sm_100"], ["9.0"])
    dist = tmp_path / "dist"
    dist.mkdir()
    (dist / "keep.txt").write_text("earlier output")
    before = tree_state(dist)
    r = kwheel(kwheel_bin, "build", repo, "-o", dist, "--version", "1.0.0", "--json")
    assert r.returncode == 9, r.stdout
    line = json.loads(r.stdout)["variants"][0]["error"]
    assert "\n" not in line
    assert "metadata.json declares backend arch 9.0 (sm_90) but no shared object carries code for it" in line
    assert "relu/_relu_0123abc.abi3.so has sm_100" in line
    assert "remove it from backend.archs" in line
    assert tree_state(dist) == before


def test_plus_ptx_promises_the_ptx_too(kwheel_bin, tmp_path):
    repo = repo_with(tmp_path, ["sm_90"], ["9.0+PTX"])
    r = kwheel(kwheel_bin, "build", repo, "-o", tmp_path / "dist", "--version", "1.0.0", "--json")
    assert r.returncode == 9
    assert "9.0+PTX (compute_90)" in json.loads(r.stdout)["variants"][0]["error"]


def test_undeclared_code_is_shown_not_refused(kwheel_bin, tmp_path):
    repo = repo_with(tmp_path, ["sm_86", "sm_90", "compute_90"], ["9.0+PTX"])
    r = kwheel(kwheel_bin, "build", repo, "-o", tmp_path / "dist", "--version", "1.0.0", "--json")
    assert r.returncode == 0, r.stderr
    gpu = json.loads(r.stdout)["variants"][0]["gpu"]
    assert gpu["cuda_targets"] == ["sm_86", "sm_90", "compute_90"]
    assert gpu["declared_archs"] == ["9.0+PTX"]
    assert gpu["undeclared"] == ["sm_86"]
    assert gpu["objects"][0]["file"] == "relu/_relu_0123abc.abi3.so"

    wheel = next((tmp_path / "dist").glob("*.whl"))
    ins = kwheel(kwheel_bin, "inspect", wheel)
    assert "gpu code: relu/_relu_0123abc.abi3.so: sm_86, sm_90, compute_90" in ins.stdout, ins.stdout
    assert "gpu code not in backend.archs: sm_86" in ins.stdout
    j = json.loads(kwheel(kwheel_bin, "inspect", "--json", wheel).stdout)
    assert j["gpu"]["cuda_targets"] == ["sm_86", "sm_90", "compute_90"] and j["gpu"]["undeclared"] == ["sm_86"]


def test_malformed_fatbin_is_a_one_line_error_naming_the_file(kwheel_bin, tmp_path):
    so = bytearray(cuda_shared_object(["sm_90"]))
    at = bytes(so).index((0xBA55ED50).to_bytes(4, "little"))
    so[at + 16 + 28:at + 16 + 32] = (0).to_bytes(4, "little")  # the entry's arch number
    repo = tmp_path / "relu"
    kr.write_variant(repo, VARIANT, layout="flat", name="relu", archs=["9.0"], kernel_id="_relu_0123abc", files=kr.demo_package("relu", "x", so=bytes(so)))
    r = kwheel(kwheel_bin, "build", repo, "-o", tmp_path / "dist", "--version", "1.0.0")
    assert r.returncode == 3
    row = next(line for line in r.stdout.splitlines() if line.startswith(VARIANT))
    assert "_relu_0123abc.abi3.so: malformed CUDA fatbin" in row and "architecture number 0 is no GPU's" in row


def test_one_object_per_arch_family_builds_when_their_union_meets_the_declaration(kwheel_bin, tmp_path):
    repo = repo_with(tmp_path, [], HONEST, PER_FAMILY)
    r = kwheel(kwheel_bin, "build", repo, "-o", tmp_path / "dist", "--version", "1.0.0", "--json")
    assert r.returncode == 0, r.stdout + r.stderr
    gpu = json.loads(r.stdout)["variants"][0]["gpu"]
    assert gpu["missing"] == [] and gpu["outside_declared"] == []
    assert sorted(o["file"] for o in gpu["objects"]) == ["relu/sm100/common_ops.abi3.so", "relu/sm90/common_ops.abi3.so"]

    # Reports tell the two common_ops.abi3.so apart: GPU code and platform evidence.
    wheel = next((tmp_path / "dist").glob("*.whl"))
    ins = kwheel(kwheel_bin, "inspect", wheel)
    assert ins.returncode == 0, ins.stdout
    assert "gpu code: relu/sm90/common_ops.abi3.so: sm_90a\n" in ins.stdout, ins.stdout
    assert "gpu code: relu/sm100/common_ops.abi3.so: sm_100, compute_120\n" in ins.stdout, ins.stdout
    assert "  relu/sm90/common_ops.abi3.so\n" in ins.stdout and "  relu/sm100/common_ops.abi3.so\n" in ins.stdout
    j = json.loads(kwheel(kwheel_bin, "inspect", "--json", wheel).stdout)
    assert sorted(lib["file"] for lib in j["manylinux"]["libraries"]) == ["relu/sm100/common_ops.abi3.so", "relu/sm90/common_ops.abi3.so"]


def test_a_declared_arch_the_union_lacks_is_refused(kwheel_bin, tmp_path):
    repo = repo_with(tmp_path, [], ["8.0", *HONEST], PER_FAMILY)
    r = kwheel(kwheel_bin, "build", repo, "-o", tmp_path / "dist", "--version", "1.0.0", "--json")
    assert r.returncode == 9, r.stdout
    line = json.loads(r.stdout)["variants"][0]["error"]
    assert "metadata.json declares backend arch 8.0 (sm_80) but no shared object carries code for it" in line
    assert "relu/sm90/common_ops.abi3.so has sm_90a" in line
    assert "relu/sm100/common_ops.abi3.so has sm_100, compute_120" in line


def test_an_object_for_no_declared_arch_is_refused(kwheel_bin, tmp_path):
    # Its sm_80 runs on no 9.0a, 10.x or 12.0+ GPU: stale, or its arch undeclared.
    repo = repo_with(tmp_path, [], HONEST, {**PER_FAMILY, "sm80/common_ops.abi3.so": ["sm_80"]})
    r = kwheel(kwheel_bin, "build", repo, "-o", tmp_path / "dist", "--version", "1.0.0", "--json")
    assert r.returncode == 9, r.stdout
    line = json.loads(r.stdout)["variants"][0]["error"]
    assert "relu/sm80/common_ops.abi3.so has sm_80, which runs on none of metadata.json's backend.archs (" in line, line
    declared = line.split("backend.archs (")[1].split(")")[0]
    assert sorted(declared.split(", ")) == sorted(HONEST), line
    assert "declare the arch it is built for, or leave the object out" in line
    # PTX a declared GPU JIT-compiles is for it: not refused.
    repo = repo_with(tmp_path / "ptx", [], HONEST, {**PER_FAMILY, "jit/common_ops.abi3.so": ["compute_80"]})
    r = kwheel(kwheel_bin, "build", repo, "-o", tmp_path / "ptx" / "dist", "--version", "1.0.0", "--json")
    assert r.returncode == 0, r.stdout


# One sgl-kernel object holds 546 containers (one per translation unit),
# each naming sm_90a: its refusal was 4,253 characters.
REPEATED = [t for i in range(546) for t in (["sm_90a"] + (["sm_80", "sm_86"] if i < 2 else []))]


def test_a_refusal_counts_repeated_entries_on_a_short_line(kwheel_bin, tmp_path):
    repo = repo_with(tmp_path, REPEATED, ["9.0a", "10.0"])
    r = kwheel(kwheel_bin, "build", repo, "-o", tmp_path / "dist", "--version", "1.0.0", "--json")
    assert r.returncode == 9, r.stdout
    line = json.loads(r.stdout)["variants"][0]["error"]
    assert "(relu/_relu_0123abc.abi3.so has sm_90a \u00d7546, sm_80 \u00d72, sm_86 \u00d72)" in line, line
    assert len(line) < 400, len(line)
    # --json keeps every entry; the text report counts them.
    repo = repo_with(tmp_path / "ok", REPEATED, ["9.0a", "8.0"])
    r = kwheel(kwheel_bin, "build", repo, "-o", tmp_path / "ok" / "dist", "--version", "1.0.0", "--json")
    assert r.returncode == 0, r.stdout
    assert len(json.loads(r.stdout)["variants"][0]["gpu"]["objects"][0]["cuda"]) == len(REPEATED)
    wheel = next((tmp_path / "ok" / "dist").glob("*.whl"))
    ins = kwheel(kwheel_bin, "inspect", wheel)
    assert "gpu code: relu/_relu_0123abc.abi3.so: sm_90a \u00d7546, sm_80 \u00d72, sm_86 \u00d72\n" in ins.stdout, ins.stdout


def fake_h100_python(tmp_path: Path) -> Path:
    """An "interpreter" answering kwheel's two probes as torch 2.11+cu130 on an H100 would, without pip.

    The probes are the seam validate reads the GPU through; no check ever runs (no pip: FAIL
    right after the GPU judgement), so which wheels get past the judgement shows in the results.
    """
    script = tmp_path / "python"
    interp = json.dumps({"executable": str(script), "python": "3.11", "implementation": "cpython", "machine": "x86_64",
                         "system": "linux", "glibc": "2.36", "has_pip": False, "torch": "2.11.0+cu130", "cuda": "13.0"})
    device = json.dumps({"available": True, "capability": "9.0", "name": "NVIDIA H100 80GB HBM3"})
    script.write_text("#!/bin/sh\ncase \"$3\" in\n"
                      f"  *get_device_capability*) echo '{device}' ;;\n"
                      f"  *) echo '{interp}' ;;\nesac\n")
    script.chmod(0o755)
    return script


def test_validate_skips_only_when_no_object_runs_on_the_gpu(kwheel_bin, tmp_path):
    # sgl-kernel's layout on an H100: sm90/ runs, sm100/ is listed. Code for sm_100 only: SKIP.
    built = {}
    for name, extra in (("split", PER_FAMILY), ("blackwell", {"sm100/common_ops.abi3.so": ["sm_100"]})):
        repo = repo_with(tmp_path / name, [], ["10.0"] if name == "blackwell" else HONEST, extra)
        r = kwheel(kwheel_bin, "build", repo, "-o", tmp_path / name / "dist", "--version", "1.0.0")
        assert r.returncode == 0, r.stdout + r.stderr
        built[name] = next((tmp_path / name / "dist").glob("*.whl"))
    python = fake_h100_python(tmp_path)
    r = kwheel(kwheel_bin, "validate", "--python", python, "--device", "auto", "--json", built["split"], built["blackwell"])
    report = json.loads(r.stdout)
    assert report["interpreter"]["cuda_device"] == {"capability": "9.0", "name": "NVIDIA H100 80GB HBM3"}
    split, blackwell = report["wheels"]
    assert split["result"] == "FAIL" and "has no pip" in split["reason"], split  # past the GPU judgement
    assert split["details"]["gpu_code"]["covered"] is True
    assert split["details"]["gpu_code"]["no_code_for_device"] == ["relu/sm100/common_ops.abi3.so"]
    assert blackwell["result"] == "SKIP", blackwell
    assert blackwell["reason"] == "this GPU is sm_90; relu/sm100/common_ops.abi3.so has code for sm_100 only"

    text = kwheel(kwheel_bin, "validate", "--python", python, "--device", "auto", built["split"]).stdout
    assert "\n      no code for sm_90 in relu/sm100/common_ops.abi3.so\n" in text, text
