"""kwheel on binaries no one here wrote (issue #32), judged by tools we did not write.

The corpus (tests/realbin/, fetched by scripts/setup into .cache/realbin/):
CUDA and ROCm objects from torchao, torchvision, xformers, bitsandbytes and
apache-tvm-ffi wheels on PyPI. Without network every test here skips, saying so.

* Fatbin reading: `kwheel inspect --json` on every object against NVIDIA's
  cuobjdump (PyPI nvidia-cuda-cuobjdump): the default dump's entry headers
  (kind, arch with its a/f suffix, `compressed`) in file order, and the
  count `-lelf -lptx` lists. The comparison is scripts/gpu-inspect-vs-cuobjdump's,
  the one the GPU machine runs on its torch and nvidia-* libraries. No wheel
  here carries a family (`f`) entry, so the nvcc-written fatbins of
  tests/fuzz/seeds/fatbin/ are also wrapped into a real object and compared,
  `-res-usage` and `-sass` included.
* The manylinux verdict on each wheel against `auditwheel show` (6.8.2).
* Each finding of issue #32 rebuilt from real objects, asserting what the
  issue demands.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(ROOT / "tests" / "hub"))
sys.path.insert(0, str(HERE))
import kernel_repos as kr  # noqa: E402
import realbin as rb  # noqa: E402

cmp = rb.comparison()
SEEDS = sorted((ROOT / "tests" / "fuzz" / "seeds" / "fatbin").glob("*.fatbin"))
ROCM = [(p, m) for p, m in rb.OBJECTS if "_rocm" in m]
NOT_ROCM = [(p, m) for p, m in rb.OBJECTS if "_rocm" not in m]
KERNEL_ID = "_realbin_0123abc"  # the op library's name, which metadata.json's id must match


# What cuobjdump cannot read. Its 13.4 and 13.5 releases stop on this object
# with "Invalid ELF" after two of its seven entries (a CUDA 12.1 build); kwheel
# must agree on the two it printed.
ORACLE_FAILS = {("bitsandbytes", "bitsandbytes/libbitsandbytes_cuda121.so"): "Invalid ELF"}


@pytest.fixture(scope="module")
def cuobjdump(venv_python) -> str:
    return str(rb.cuobjdump(venv_python))


def inspect_json(kwheel_bin, path: Path, *extra: str) -> tuple[int, dict]:
    r = subprocess.run([str(kwheel_bin), "inspect", "--json", str(path), *extra], capture_output=True, text=True, timeout=300)
    try:
        return r.returncode, json.loads(r.stdout)
    except ValueError:
        pytest.fail(f"kwheel inspect {path.name} printed no JSON (exit {r.returncode}): {r.stderr}")


# --------------------------------------------------------------------------- fatbin vs cuobjdump


@pytest.mark.parametrize("project,member", NOT_ROCM, ids=[rb.object_id(*o) for o in NOT_ROCM])
def test_fatbin_entries_agree_with_cuobjdump(kwheel_bin, cuobjdump, project, member):
    path = rb.obj(project, member)
    entries, error = cmp.run_kwheel(str(kwheel_bin), path)
    assert entries is not None, f"kwheel refused {member}: {error}"
    oracle = cmp.run_cuobjdump(cuobjdump, path)
    verdict, details = cmp.compare(entries, oracle)
    if (project, member) in ORACLE_FAILS:
        assert verdict == "oracle-failed" and ORACLE_FAILS[(project, member)] in oracle.error, details
        assert len(entries) > len(oracle.entries) > 0
        return
    assert verdict == "agree", "\n".join(details)


def test_corpus_covers_the_cases(kwheel_bin, cuobjdump):
    """The corpus is not vacuous: cuobjdump finds plain and compressed SASS,
    compressed PTX and an `a` arch in it, and objects without device code."""
    seen: set[str] = set()
    empty = 0
    for project, member in NOT_ROCM:
        oracle = cmp.run_cuobjdump(cuobjdump, rb.obj(project, member))
        empty += not oracle.entries
        for e in oracle.entries:
            kind = "ptx" if e.target.startswith("compute_") else "sass"
            seen.add(f"{kind}{'+z' if e.compressed else ''}")
            if re.search(r"\d+a$", e.target):
                seen.add("a")
    assert seen >= {"sass", "sass+z", "ptx+z", "a"}, seen
    assert empty >= 3


@pytest.fixture(scope="module")
def host_object() -> Path:
    return rb.obj("bitsandbytes", "bitsandbytes/libbitsandbytes_cpu.so")


@pytest.mark.parametrize("seed", SEEDS, ids=[s.stem for s in SEEDS])
def test_nvcc_fatbins_in_a_real_object_agree_with_cuobjdump(kwheel_bin, cuobjdump, host_object, tmp_path, seed):
    """nvcc's sections (sm_100f, sm_103f, compute_100f, sm_100a, compressed
    ones) as the .nv_fatbin of a real host object. -lelf names sm_100f
    `sm_100`; the dump headers, -res-usage and -sass keep the `f`, as kwheel does."""
    so = tmp_path / f"{seed.stem}.so"
    subprocess.run(["objcopy", "--add-section", f".nv_fatbin={seed}", "--set-section-flags", ".nv_fatbin=contents,readonly",
                    str(host_object), str(so)], check=True)
    entries, error = cmp.run_kwheel(str(kwheel_bin), so)
    assert entries, f"kwheel read no entries: {error}"
    oracle = cmp.run_cuobjdump(cuobjdump, so)
    verdict, details = cmp.compare(entries, oracle)
    assert verdict == "agree", "\n".join(details)
    # -res-usage and -sass (which runs nvdisasm from beside cuobjdump) name each cubin's arch with its suffix.
    sass = [e.target for e in entries if e.target.startswith("sm_")]
    env = {**os.environ, "PATH": f"{Path(cuobjdump).parent}:{os.environ.get('PATH', '')}"}
    for option in ("-res-usage", "-sass"):
        out = subprocess.run([cuobjdump, option, str(so)], capture_output=True, text=True, check=True, env=env).stdout
        assert [e.target for e in cmp.parse_dump(out) if e.target.startswith("sm_")] == sass, option


def test_gpu_script_on_the_corpus(kwheel_bin, cuobjdump, tmp_path):
    """scripts/gpu-inspect-vs-cuobjdump, as the GPU machine runs it, on the
    corpus: every CUDA object agrees; what it reports otherwise is cuobjdump's
    failure on one object and kwheel's refusal of the ROCm ones (item 1)."""
    objects = rb.corpus() / "objects"
    r = subprocess.run([sys.executable, str(ROOT / "scripts" / "gpu-inspect-vs-cuobjdump"), "--kwheel", str(kwheel_bin),
                        "--cuobjdump", cuobjdump, "--out", str(tmp_path), "--jobs", "2", str(objects)],
                       capture_output=True, text=True, timeout=600)
    report = json.loads((tmp_path / "inspect-vs-cuobjdump.json").read_text())
    # Named relative to the folder given: objects/<project>/<member>.
    verdicts = {o["path"].removeprefix("objects/"): o["verdict"] for o in report["objects"]}
    assert len(verdicts) == len(rb.OBJECTS), verdicts
    assert "| objects that disagree | 0 |" in r.stdout, r.stdout
    assert verdicts["bitsandbytes/bitsandbytes/libbitsandbytes_cuda121.so"] == "oracle-failed"
    odd = {p: v for p, v in verdicts.items() if v != "agree" and not p.endswith("_cuda121.so")}
    assert set(odd.values()) <= {"kwheel-refused"} and all("_rocm" in p for p in odd), odd
    assert r.returncode == (1 if odd else 0), r.stdout


# --------------------------------------------------------------------------- manylinux vs auditwheel


# Where auditwheel and kwheel name different external libraries, and why
# neither is wrong: torchvision grafts libcudart as torchvision.libs/
# libcudart.3eda8113.so.13 but keeps its SONAME libcudart.so.13, which
# _C_stable.so needs without a RUNPATH to it. kwheel counts the need as met
# by the wheel's own SONAME (the loader matches loaded libraries by SONAME);
# auditwheel resolves it along search paths and calls it external.
EXTERNAL_DIFFERENCES = {"torchvision": {"libcudart.so.13"}}


@pytest.mark.parametrize("project", rb.PROJECTS)
def test_manylinux_verdict_agrees_with_auditwheel(kwheel_bin, venv_bin, tmp_path, project):
    whl = rb.wheel(project)
    # --ldpaths on an empty folder: auditwheel judges the wheel's own objects,
    # not this machine's copies of the libraries they need (Debian's libtorch).
    empty = tmp_path / "ldpath"
    empty.mkdir()
    aw = subprocess.run([str(venv_bin / "auditwheel"), "show", "--json", "--ldpaths", str(empty), str(whl)],
                        capture_output=True, text=True, timeout=600)
    assert aw.returncode == 0, aw.stderr
    aw_report = json.loads(aw.stdout)
    rc, kw = inspect_json(kwheel_bin, whl)
    assert "manylinux" in kw, f"kwheel refused {whl.name} (exit {rc}): {kw.get('error')}"
    m = kw["manylinux"]
    assert m["platform_tag"] == aw_report["sym_tag"], (m["reason"], aw_report["sym_tag"])
    ours = {lib["soname"] for key in ("torch_provided", "external", "allowed_external") for lib in m[key]}
    assert ours ^ set(aw_report["external_libs"]) == EXTERNAL_DIFFERENCES.get(project, set())


# --------------------------------------------------------------------------- the findings, from real objects


def build_variant(kwheel_bin, root: Path, variant: str, objects: dict[str, Path], archs: list[str] | None):
    """A flat variant whose package holds `objects` ({package path: corpus
    object}); built with --json. Returns (exit code, the variant's report, stderr)."""
    files = {"__init__.py": b"from ._ops import ops\n", "_ops.py": f"import torch\nops = torch.ops.{KERNEL_ID}\n".encode()}
    files.update({rel: p.read_bytes() for rel, p in objects.items()})
    repo = root / "repo"
    kr.write_variant(repo, variant, layout="flat", name="realbin", files=files, archs=archs, kernel_id=KERNEL_ID)
    r = subprocess.run([str(kwheel_bin), "build", str(repo), "--version", "0.1.0", "-o", str(root / "dist"), "--json"],
                       capture_output=True, text=True, timeout=600)
    try:
        (report,) = json.loads(r.stdout)["variants"]
    except (ValueError, KeyError) as e:
        pytest.fail(f"kwheel build printed no variant report ({e}, exit {r.returncode}): {r.stdout}\n{r.stderr}")
    return r.returncode, report, r.stderr


def ao(member: str) -> Path:
    return rb.obj("torchao", f"torchao/{member}")


XFORMERS = ("xformers", "xformers/_C.so")
CUTLASS_90A = "_C_cutlass_90a.abi3.so"           # sm_90a x6
MXFP8 = "_C_mxfp8.cpython-310-x86_64-linux-gnu.so"  # sm_100 x3, compute_120 x3
CU130 = "torch210-cxx11-cu130-x86_64-linux"
CU128 = "torch29-cxx11-cu128-x86_64-linux"


@pytest.mark.parametrize("project,member", ROCM, ids=[rb.object_id(*o) for o in ROCM])
def test_item1_rocm_zstd_bundles_are_read(kwheel_bin, project, member):
    """bitsandbytes' ROCm objects (zstd CCOB v2 and v3 bundles): inspect reads
    them, and names the gfx processors LLVM's clang-offload-bundler lists."""
    path = rb.obj(project, member)
    expected = rb.offload_bundle_targets(path)
    assert len(expected) > 5, expected
    rc, doc = inspect_json(kwheel_bin, path)
    assert rc != 3 and "gpu" in doc, doc.get("error")
    assert sorted({g.split(":")[0] for o in doc["gpu"]["objects"] for g in o["gfx"]}) == expected


def test_item2_libcudart12_object_refused_in_a_cu130_variant(kwheel_bin, tmp_path):
    """xformers' _C.so needs libcudart.so.12; cu130 torch provides libcudart.so.13."""
    rc, report, stderr = build_variant(kwheel_bin, tmp_path, CU130, {f"{KERNEL_ID}.abi3.so": rb.obj(*XFORMERS)},
                                       ["7.5", "8.0", "9.0a"])
    assert rc != 0 and report["status"] != "built", report
    assert "libcudart.so.12" in (report.get("error") or ""), report


def test_item2_control_libcudart12_object_builds_in_a_cu128_variant(kwheel_bin, tmp_path):
    rc, report, stderr = build_variant(kwheel_bin, tmp_path, CU128, {f"{KERNEL_ID}.abi3.so": rb.obj(*XFORMERS)},
                                       ["7.5", "8.0", "9.0a"])
    assert rc == 0 and report["status"] == "built", report


def torchao_pair() -> dict[str, Path]:
    # _C_mxfp8 under an abi3 name, so that item 7 (its cpython-310 name) does not decide this build.
    return {f"{KERNEL_ID}.abi3.so": ao(CUTLASS_90A), "_C_mxfp8.abi3.so": ao(MXFP8)}


def test_item3_declared_archs_are_the_union_of_the_objects(kwheel_bin, tmp_path):
    """torchao's sm_90a-only object beside its sm_100 + compute_120 one: the
    honest declaration ["9.0a", "10.0", "12.0+PTX"] is accepted."""
    rc, report, stderr = build_variant(kwheel_bin, tmp_path, CU130, torchao_pair(), ["9.0a", "10.0", "12.0+PTX"])
    assert rc == 0 and report["status"] == "built", report.get("error")


def test_item3_control_an_arch_no_object_carries_is_refused(kwheel_bin, tmp_path):
    rc, report, stderr = build_variant(kwheel_bin, tmp_path, CU130, torchao_pair(), ["8.0", "9.0a", "10.0", "12.0+PTX"])
    assert rc == 9 and report["status"] != "built", report
    assert "8.0" in report["error"], report["error"]


def test_item4_refusal_counts_repeated_entries(kwheel_bin, tmp_path):
    """xformers' _C.so carries 44 entries, 11 each of four targets; a refusal
    naming what it carries says each target once, in a short line."""
    rc, report, stderr = build_variant(kwheel_bin, tmp_path, CU128, {f"{KERNEL_ID}.abi3.so": rb.obj(*XFORMERS)}, ["10.0"])
    assert rc == 9 and report["status"] != "built", report
    error = report["error"]
    for target in ("sm_75", "sm_80", "sm_90a", "compute_80"):
        assert len(re.findall(rf"\b{target}\b", error)) == 1, (target, error)
    assert len(error) < 400, (len(error), error)


def test_item6_objects_of_one_name_are_told_apart_by_path(kwheel_bin, tmp_path):
    """sgl-kernel's layout, sm90/common_ops.abi3.so and sm100/common_ops.abi3.so,
    rebuilt from torchao's objects: reports name each by its path in the package."""
    objects = {f"{KERNEL_ID}.abi3.so": ao(CUTLASS_90A), "sm90/common_ops.abi3.so": ao(CUTLASS_90A),
               "sm100/common_ops.abi3.so": ao(MXFP8)}
    rc, report, stderr = build_variant(kwheel_bin, tmp_path, CU130, objects, None)
    assert rc == 0, report
    rc, doc = inspect_json(kwheel_bin, Path(report["wheel"]))
    files = [lib["file"] for lib in doc["manylinux"]["libraries"]]
    assert len(set(files)) == 3, files
    assert any(f.endswith("sm90/common_ops.abi3.so") for f in files) and any(f.endswith("sm100/common_ops.abi3.so") for f in files), files
    # Only the sm100 object (_C_mxfp8) needs torch's Python bindings.
    (python,) = [lib for lib in doc["manylinux"]["torch_provided"] if lib["soname"] == "libtorch_python.so"]
    assert len(python["needed_by"]) == 1 and python["needed_by"][0].endswith("sm100/common_ops.abi3.so"), python
    gpu = [o["file"] for o in doc["gpu"]["objects"]]
    assert len(set(gpu)) == 3 and any(f.endswith("sm90/common_ops.abi3.so") for f in gpu), gpu


def test_item7_a_cpython_310_object_is_not_packed_as_abi3_silently(kwheel_bin, tmp_path):
    """torchao's _C_mxfp8.cpython-310-x86_64-linux-gnu.so: refused, or the
    wheel is tagged for CPython 3.10, not cp39-abi3."""
    objects = {f"{KERNEL_ID}.abi3.so": ao(CUTLASS_90A), MXFP8: ao(MXFP8)}
    rc, report, stderr = build_variant(kwheel_bin, tmp_path, CU130, objects, None)
    if rc != 0:
        assert MXFP8 in (report.get("error") or ""), report
        return
    tags = report["tags"]
    assert tags and all(t.startswith("cp310-cp310-") for t in tags), tags
