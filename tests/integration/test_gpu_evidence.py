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


def repo_with(tmp_path: Path, targets: list[str], archs: list[str]) -> Path:
    repo = tmp_path / "relu"
    kr.write_variant(repo, VARIANT, layout="flat", name="relu", archs=archs, kernel_id="_relu_0123abc",
                     files=kr.demo_package("relu", "x", so=cuda_shared_object(targets)))
    return repo


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
    assert "metadata.json declares backend arch 9.0 (sm_90) but relu/_relu_0123abc.abi3.so carries no code for it" in line
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
