"""The multi-build CUDA kernel of variant_kernel.py, held to tools we did not write.

The PEP 825 variant-index tests (test_variant_index.py) choose between its builds by what their
binaries carry, so the fixture itself is checked first: NVIDIA's cuobjdump (PyPI
nvidia-cuda-cuobjdump, in the tools venv) lists exactly each build's SASS targets and no PTX;
the cubins it extracts name the CUDA release that made them; metadata.json declares those
archs, and its digest is what kernel-builder's hash step would write (kernels/img2gray/cmake/
kernel_metadata.py verify). kwheel's own reading of the fatbins (`inspect --json`) agrees with
cuobjdump, entry by entry (scripts/gpu-inspect-vs-cuobjdump's comparison).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import realbin as rb  # noqa: E402
import variant_kernel as vk  # noqa: E402
from variant_kernel import variant_kernel  # noqa: E402,F401  (the session fixture)

cmp = rb.comparison()
KERNEL_METADATA = HERE.parents[1] / "kernels" / "img2gray" / "cmake" / "kernel_metadata.py"


@pytest.fixture(scope="module")
def cuobjdump(venv_python) -> str:
    return str(rb.cuobjdump(venv_python))


def so_file(kernel: vk.VariantKernel, variant: str) -> Path:
    return kernel.repo / "build" / variant / kernel.so_path[variant].split("/", 1)[1]


@pytest.mark.parametrize("variant", list(vk.BUILDS))
def test_cuobjdump_lists_exactly_the_builds_sass_targets(variant_kernel, cuobjdump, variant):
    build = vk.BUILDS[variant]
    oracle = cmp.run_cuobjdump(cuobjdump, so_file(variant_kernel, variant))
    assert not oracle.error, oracle.error
    targets = [e.target for e in oracle.entries]
    assert sorted(set(targets)) == sorted(build.sass), targets
    assert sorted(oracle.listed) == sorted(build.sass), oracle.listed  # `cuobjdump -lelf -lptx`
    assert not any(t.startswith("compute_") for t in targets), f"no PTX: {targets}"
    # Plain cubins, so the release they carry is readable without decompressing them.
    assert not any(e.compressed for e in oracle.entries), oracle.entries


@pytest.mark.parametrize("variant", [v for v, b in vk.BUILDS.items() if b.sass])
def test_each_cubin_names_the_cuda_release_that_made_it(variant_kernel, cuobjdump, variant, tmp_path):
    build = vk.BUILDS[variant]
    cubins = vk.cuobjdump_cubins(cuobjdump, so_file(variant_kernel, variant), tmp_path)
    assert cubins, "cuobjdump extracted no cubin"
    releases = {c.name: vk.cubin_release(c.read_bytes()) for c in cubins}
    assert set(releases.values()) == {build.release}, releases


def test_builds_differ_in_code_and_toolkit(variant_kernel):
    """What the variant-index cases rely on: sm_90 is in cu126 and cu130 only, sm_100 in cu129 only,
    sm_80 in cu126 only; every .so is different; the CPU build has no device code."""
    has = {t: sorted(v for v, b in vk.BUILDS.items() if t in b.sass) for t in ("sm_80", "sm_90", "sm_100")}
    assert has == {"sm_80": [vk.CU126], "sm_90": [vk.CU126, vk.CU130], "sm_100": [vk.CU129]}
    assert len(set(variant_kernel.so.values())) == len(vk.BUILDS)
    assert vk.BUILDS[vk.CPU].sass == ()


@pytest.mark.parametrize("variant", list(vk.BUILDS))
def test_metadata_declares_the_archs_of_its_code(variant_kernel, variant):
    build = vk.BUILDS[variant]
    vdir = variant_kernel.repo / "build" / variant
    meta = json.loads((vdir / "metadata.json").read_bytes())
    assert meta["name"] == vk.NAME
    assert meta["backend"]["type"] == ("cpu" if not build.sass else "cuda")
    assert meta["backend"].get("archs") == (list(build.archs) if build.archs else None)
    assert [f"sm_{a.replace('.', '')}" for a in meta["backend"].get("archs", [])] == sorted(build.sass, key=lambda t: int(t[3:]))
    assert meta["id"] + ".abi3.so" == Path(variant_kernel.so_path[variant]).name
    r = subprocess.run([sys.executable, str(KERNEL_METADATA), "verify", str(vdir)], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stdout + r.stderr


@pytest.mark.parametrize("variant", [v for v, b in vk.BUILDS.items() if b.sass])
def test_kwheel_reads_what_cuobjdump_lists(kwheel_bin, variant_kernel, cuobjdump, variant):
    so = so_file(variant_kernel, variant)
    entries, error = cmp.run_kwheel(str(kwheel_bin), so)
    assert entries is not None, error
    verdict, details = cmp.compare(entries, cmp.run_cuobjdump(cuobjdump, so))
    assert verdict == "agree", "\n".join(details)


def test_kwheel_builds_every_variant_with_the_fixtures_evidence(kwheel_bin, variant_kernel, tmp_path):
    r = subprocess.run([str(kwheel_bin), "build", str(variant_kernel.repo), "-o", str(tmp_path / "dist"), "--version", vk.VERSION,
                        "--json"], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    report = {v["variant"]: v for v in json.loads(r.stdout)["variants"]}
    assert sorted(report) == sorted(vk.BUILDS)
    for variant, build in vk.BUILDS.items():
        gpu = report[variant].get("gpu") or {}
        assert gpu.get("cuda_targets", []) == list(build.sass), (variant, gpu)
        assert gpu.get("missing", []) == [] and gpu.get("undeclared", []) == [], (variant, gpu)
