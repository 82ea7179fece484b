"""Builds the sample kernel kernels/img2gray with scripts/build-kernel and
checks it the way a Hub consumer would meet it: the build/<variant>/ layout
(compat by default, flat and nested on request), metadata.json, the variant
name, the generated _ops.py, what the .so links against, and that the op
computes the right thing (and that a wrong build is caught).

Expectations are derived independently of the build: the variant name from
the torch the kernel is built against (asked at test time), the kernel id
(_img2gray_cpu_<hash>) by re-hashing the sources here, metadata.json's
digest by hashing the variant's files here, the gray values from plain
torch arithmetic.

Torch comes from Debian's /usr/bin/python3 (python3-torch); the pytest venv
has none, so everything that imports torch runs in a subprocess.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import re
import shutil
import subprocess
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
KERNEL = ROOT / "kernels" / "img2gray"
BUILD_SCRIPT = ROOT / "scripts" / "build-kernel"
TORCH_PYTHON = "/usr/bin/python3"

# Symbols of the 3.9 stable ABI the module may use. REGISTER_EXTENSION needs
# only PyModule_Create2; anything else showing up means the abi3 tag lies.
STABLE_ABI_ALLOWED = {"PyModule_Create2", "PyModuleDef_Init"}


def _torch_python_usable() -> bool:
    if not os.access(TORCH_PYTHON, os.X_OK):
        return False
    return subprocess.run([TORCH_PYTHON, "-c", "import torch"], capture_output=True).returncode == 0


pytestmark = pytest.mark.skipif(
    not _torch_python_usable() or shutil.which("cmake") is None,
    reason=f"needs cmake and torch importable by {TORCH_PYTHON} (Debian python3-torch)",
)


def run_torch_python(code: str, pythonpath: Path | None = None) -> dict:
    """Run `code` under the torch interpreter; its last stdout line is JSON."""
    env = dict(os.environ)
    env["PYTHONDONTWRITEBYTECODE"] = "1"  # keep __pycache__ out of the layout
    if pythonpath is not None:
        env["PYTHONPATH"] = str(pythonpath)
    r = subprocess.run(
        [TORCH_PYTHON, "-c", textwrap.dedent(code)],
        capture_output=True, text=True, env=env, timeout=300,
    )
    assert r.returncode == 0, f"torch subprocess failed:\n{r.stdout}\n{r.stderr}"
    return json.loads(r.stdout.strip().splitlines()[-1])


def build_kernel(out: Path, *args: str) -> Path:
    r = subprocess.run(
        [str(BUILD_SCRIPT), "--python", TORCH_PYTHON, "--out", str(out), *args],
        capture_output=True, text=True, timeout=900,
    )
    assert r.returncode == 0, f"build-kernel failed:\n{r.stdout}\n{r.stderr}"
    return Path(r.stdout.strip().splitlines()[-1])


def ops_name(wrong: bool = False) -> str:
    """kernel-builder's kernel id, _{name}_{backend}_{unique id}: the op namespace, the
    extension module's name and metadata.json's "id"."""
    return f"_img2gray_cpu_{expected_ops_hash(wrong)}"


def expected_ops_hash(wrong: bool = False) -> str:
    """The documented scheme, re-implemented: sha256 over a sha256sum-style
    listing of build.toml + cmake/ + csrc/ + torch-ext/, first 7 hex."""
    files = [KERNEL / "build.toml"]
    for sub in ("cmake", "csrc", "torch-ext"):
        files += [p for p in (KERNEL / sub).rglob("*") if p.is_file()]
    rel = sorted(
        str(p.relative_to(KERNEL)) for p in files
        if not any(part.startswith(".") or part == "__pycache__" for part in p.relative_to(KERNEL).parts)
        and p.suffix != ".pyc"
    )
    listing = "".join(f"{hashlib.sha256((KERNEL / r).read_bytes()).hexdigest()}  {r}\n" for r in rel)
    if wrong:
        listing += "IMG2GRAY_WRONG\n"
    return hashlib.sha256(listing.encode()).hexdigest()[:7]


@pytest.fixture(scope="module")
def torch_facts() -> dict:
    # Public APIs (compiled_with_cxx11_abi, platform) rather than the private
    # torch._C flag the build uses, so the two cannot share a mistake.
    return run_torch_python(
        """
        import json, platform, re, torch
        major, minor = re.match(r"(\\d+)\\.(\\d+)", torch.__version__).groups()
        print(json.dumps({
            "major": major, "minor": minor,
            "cxx11": torch.compiled_with_cxx11_abi(),
            "machine": platform.machine(),
            "os": platform.system().lower(),
        }))
        """
    )


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> tuple[Path, Path]:
    """The default build: the compat layout (flat variant + img2gray/ compat module)."""
    out = tmp_path_factory.mktemp("kernel-out")
    return out, build_kernel(out, "--cpu")


# --layout arguments -> the variant's files (relative to build/<variant>/), <id> the kernel id.
LAYOUTS = {
    "compat": ([], ["__init__.py", "_kwheel_check.py", "_ops.py", "<id>.abi3.so", "layers.py", "metadata.json",
                    "img2gray/__init__.py"]),
    "flat": (["--layout", "flat"], ["__init__.py", "_kwheel_check.py", "_ops.py", "<id>.abi3.so", "layers.py", "metadata.json"]),
    "nested": (["--layout", "nested"], ["metadata.json", "img2gray/__init__.py", "img2gray/_kwheel_check.py",
                                         "img2gray/_ops.py", "img2gray/<id>.abi3.so", "img2gray/layers.py"]),
    "nested-no-metadata": (["--layout", "nested", "--no-metadata"],
                           ["img2gray/__init__.py", "img2gray/_kwheel_check.py", "img2gray/_ops.py",
                            "img2gray/<id>.abi3.so", "img2gray/layers.py"]),
}


@pytest.fixture(scope="module")
def built_layouts(built, tmp_path_factory) -> dict[str, tuple[Path, Path]]:
    """Every layout, each into its own --out (one CMake build serves them all)."""
    res = {"compat": built}
    for layout, (args, _) in LAYOUTS.items():
        if layout != "compat":
            out = tmp_path_factory.mktemp(f"kernel-out-{layout}")
            res[layout] = (out, build_kernel(out, "--cpu", *args))
    return res


@pytest.fixture(scope="module")
def built_wrong(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("kernel-out-wrong")
    return build_kernel(out, "--cpu", "--wrong")


def the_so(variant_dir: Path) -> Path:
    """The extension module of a flat/compat variant (the default layout): at the variant's top."""
    (so,) = variant_dir.glob("*.so")
    return so


def kernels_digest(variant_dir: Path) -> dict[str, str]:
    """metadata.json's digest as kernels computes it (kernels/img2gray/README.md): every file below
    the variant but metadata.json(.sigstore) at its top, keyed by relative path, valued by the
    padded standard base64 of its sha256."""
    out = {}
    for p in sorted(variant_dir.rglob("*")):
        rel = p.relative_to(variant_dir).as_posix()
        if not p.is_file() or rel in ("metadata.json", "metadata.json.sigstore") or "__pycache__" in p.parts:
            continue
        out[rel] = base64.b64encode(hashlib.sha256(p.read_bytes()).digest()).decode()
    return out


def test_variant_name_follows_hub_grammar(built, torch_facts):
    out, variant_dir = built
    f = torch_facts
    abi = "cxx11" if f["cxx11"] else "cxx98"
    expected = f"torch{f['major']}{f['minor']}-{abi}-cpu-{f['machine']}-{f['os']}"
    assert variant_dir == out / "build" / expected
    assert re.fullmatch(r"torch\d+-cxx(11|98)-(cpu|cu\d+)-[a-z0-9_]+-[a-z]+", variant_dir.name)


@pytest.mark.parametrize("layout", sorted(LAYOUTS))
def test_layout_is_exactly_the_hub_layout(built_layouts, layout):
    out, variant_dir = built_layouts[layout]
    everything = sorted(str(p.relative_to(out)) for p in out.rglob("*"))
    v = f"build/{variant_dir.name}"
    files = [f.replace("<id>", ops_name()) for f in LAYOUTS[layout][1]]  # _kwheel_check.py: what `kwheel validate` runs
    dirs = ["build", v] + ([f"{v}/img2gray"] if any(f.startswith("img2gray/") for f in files) else [])
    assert everything == sorted(dirs + [f"{v}/{f}" for f in files])


@pytest.mark.parametrize("layout", sorted(set(LAYOUTS) - {"nested-no-metadata"}))
def test_metadata_json_is_kernel_builders(built_layouts, layout):
    _, variant_dir = built_layouts[layout]
    meta = json.loads((variant_dir / "metadata.json").read_text())
    assert {k: v for k, v in meta.items() if k != "digest"} == {
        "name": "img2gray", "id": ops_name(), "version": 1, "license": "Apache-2.0",
        "python-depends": [], "kernel-depends": [], "backend": {"type": "cpu"},
    }
    assert meta["digest"] == {"algorithm": "sha256", "files": kernels_digest(variant_dir)}


def test_kernel_version_sets_metadata_version(tmp_path):
    variant_dir = build_kernel(tmp_path / "out", "--cpu", "--kernel-version", "3")
    assert json.loads((variant_dir / "metadata.json").read_text())["version"] == 3


@pytest.mark.parametrize("layout", ["compat", "nested"])
def test_ops_py_is_what_kernel_builder_generates(built_layouts, layout):
    _, variant_dir = built_layouts[layout]
    pkg = variant_dir / "img2gray" if layout == "nested" else variant_dir
    name = ops_name()
    assert (pkg / "_ops.py").read_text() == (
        "import torch\n"
        f"from . import {name}\n"
        f"ops = torch.ops.{name}\n"
        "\n"
        "def add_op_namespace_prefix(op_name: str):\n"
        '    """\n'
        "    Prefix op by namespace.\n"
        '    """\n'
        f'    return f"{name}::{{op_name}}"\n'
    )


def test_init_py_is_the_source_package(built_layouts):
    source = (KERNEL / "torch-ext" / "img2gray" / "__init__.py").read_bytes()
    assert (built_layouts["compat"][1] / "__init__.py").read_bytes() == source
    assert (built_layouts["flat"][1] / "__init__.py").read_bytes() == source
    assert (built_layouts["nested"][1] / "img2gray" / "__init__.py").read_bytes() == source
    # compat: img2gray/__init__.py is the compatibility module re-exporting the flat package
    assert (built_layouts["compat"][1] / "img2gray" / "__init__.py").read_bytes() == (
        KERNEL / "cmake" / "compat.py").read_bytes()


@pytest.mark.skipif(shutil.which("readelf") is None or shutil.which("nm") is None,
                    reason="needs binutils (readelf, nm)")
def test_so_links_only_against_torch_already_loaded(built):
    _, variant_dir = built
    so = the_so(variant_dir)
    dyn = subprocess.run(["readelf", "-d", str(so)], capture_output=True, text=True, check=True).stdout
    # No RPATH/RUNPATH: libc10/libtorch_cpu must come from the torch that is
    # already imported, never from the build machine's paths.
    assert "RPATH" not in dyn and "RUNPATH" not in dyn, dyn
    needed = re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", dyn)
    assert any(n.startswith("libc10.so") for n in needed), needed
    assert any(n.startswith("libtorch_cpu.so") for n in needed), needed
    # An extension module must not link libpython; a CPU variant must not
    # need any CUDA library (it has to load on a CPU-only torch).
    for bad in ("libpython", "libtorch_cuda", "libc10_cuda", "libcudart", "libtorch_python"):
        assert not any(n.startswith(bad) for n in needed), needed

    undef = subprocess.run(["nm", "-D", "--undefined-only", str(so)],
                           capture_output=True, text=True, check=True).stdout.split()
    py_syms = {s for s in undef if s.startswith(("Py", "_Py"))}
    assert py_syms and py_syms <= STABLE_ABI_ALLOWED, py_syms

    defined = subprocess.run(["nm", "-D", "--defined-only", str(so)],
                             capture_output=True, text=True, check=True).stdout
    assert f"PyInit_{ops_name()}" in defined
    # Hidden visibility: implementation symbols stay private to this build (the module's
    # init function is named after the kernel id, _img2gray_cpu_<hash>, so it is set aside).
    names = {line.split()[-1] for line in defined.splitlines() if line.strip()} - {f"PyInit_{ops_name()}"}
    assert not [n for n in names if "img2gray_cpu" in n or "img2gray_pixel" in n], names


def test_so_has_no_build_paths(built):
    _, variant_dir = built
    blob = the_so(variant_dir).read_bytes()
    for path in {str(ROOT), str(KERNEL), "/tmp/"}:
        assert path.encode() not in blob, f"{path} baked into the .so"


@pytest.mark.parametrize("layout", ["compat", "nested"])
def test_kernel_matches_plain_torch_reference(built_layouts, layout):
    # `import img2gray` with the variant dir on sys.path: the compat module (re-exporting the
    # flat package) or the nested package itself
    _, variant_dir = built_layouts[layout]
    name = ops_name()
    res = run_torch_python(
        f"""
        import json, torch
        import img2gray
        ns = getattr(torch.ops, {name!r})
        op = ns.img2gray  # raises if the namespace has no such op
        schema = op.default._schema
        qual = {name!r} + "::img2gray"
        res = {{
            "module_file": img2gray.__file__,
            "args": [a.name for a in schema.arguments],
            "output_is_written": bool(schema.arguments[1].alias_info and schema.arguments[1].alias_info.is_write),
            "returns": len(schema.returns),
            "cpu_kernel": torch._C._dispatch_has_kernel_for_dispatch_key(qual, "CPU"),
            "cuda_kernel": torch._C._dispatch_has_kernel_for_dispatch_key(qual, "CUDA"),
            "cases": [],
        }}
        w = torch.tensor([0.21, 0.72, 0.07])
        gen = torch.Generator().manual_seed(1234)
        for h, w_ in [(1, 1), (17, 31), (1080, 1920), (0, 5)]:
            x = torch.randint(0, 256, (h, w_, 3), dtype=torch.uint8, generator=gen)
            y = img2gray.img2gray(x)
            ref = (x.float() @ w).round().clamp(0, 255).to(torch.uint8)
            # The documented rounding rule, exactly: nearest, ties up.
            xi = x.to(torch.int32)
            exact = torch.div(21 * xi[..., 0] + 72 * xi[..., 1] + 7 * xi[..., 2] + 50,
                              100, rounding_mode="floor").to(torch.uint8)
            # The raw op with a caller-provided output, as _ops users call it.
            out = torch.full((h, w_), 7, dtype=torch.uint8)
            op(x, out)
            res["cases"].append({{
                "size": [h, w_],
                "shape": list(y.shape), "dtype": str(y.dtype),
                "max_diff": int((y.int() - ref.int()).abs().max()) if y.numel() else 0,
                "exact": bool(torch.equal(y, exact)),
                "op_out_equal": bool(torch.equal(out, y)),
            }})
        print(json.dumps(res))
        """,
        pythonpath=variant_dir,
    )
    assert res["module_file"].startswith(str(variant_dir))
    assert res["args"] == ["input", "output"]
    assert res["output_is_written"] and res["returns"] == 0
    assert res["cpu_kernel"] and not res["cuda_kernel"]
    for case in res["cases"]:
        assert case["shape"] == case["size"] and case["dtype"] == "torch.uint8", case
        assert case["max_diff"] <= 1, case
        assert case["exact"] and case["op_out_equal"], case


def test_bad_inputs_raise_clear_errors(built):
    _, variant_dir = built
    res = run_torch_python(
        """
        import json, torch
        import img2gray
        img = torch.randint(0, 256, (4, 6, 3), dtype=torch.uint8)
        cases = {
            "non_contiguous": img.transpose(0, 1),
            "chw": torch.randint(0, 256, (3, 4, 6), dtype=torch.uint8),
            "float": img.float(),
            "two_dims": img[..., 0],
            "four_channels": torch.zeros(4, 6, 4, dtype=torch.uint8),
        }
        res = {}
        for name, x in cases.items():
            try:
                img2gray.img2gray(x)
                res[name] = ["no error", ""]
            except Exception as e:
                res[name] = [type(e).__name__, str(e)]
        # The op itself (bypassing the Python checks) must refuse, not
        # read out of bounds.
        try:
            img2gray.ops.img2gray(img.transpose(0, 1), torch.empty(6, 4, dtype=torch.uint8))
            res["op_non_contiguous"] = ["no error", ""]
        except Exception as e:
            res["op_non_contiguous"] = [type(e).__name__, str(e)]
        try:
            img2gray.ops.img2gray(img, torch.empty(4, 5, dtype=torch.uint8))
            res["op_bad_output"] = ["no error", ""]
        except Exception as e:
            res["op_bad_output"] = [type(e).__name__, str(e)]
        print(json.dumps(res))
        """,
        pythonpath=variant_dir,
    )
    expect = {
        "non_contiguous": "contiguous",
        "chw": "3 channels",
        "float": "uint8",
        "two_dims": "3-D",
        "four_channels": "3 channels",
    }
    for name, needle in expect.items():
        kind, msg = res[name]
        assert kind == "ValueError" and needle in msg and msg.startswith("img2gray:"), (name, res[name])
    assert res["op_non_contiguous"][0] == "RuntimeError" and "contiguous" in res["op_non_contiguous"][1]
    assert res["op_bad_output"][0] == "RuntimeError" and "output must have shape" in res["op_bad_output"][1]


def test_wrong_build_is_caught(built_wrong):
    # Also in its own namespace: a wrong build can never pose as the right one.
    assert ops_name(wrong=True) != ops_name()
    assert the_so(built_wrong).name == f"{ops_name(wrong=True)}.abi3.so"
    assert json.loads((built_wrong / "metadata.json").read_text())["id"] == ops_name(wrong=True)
    res = run_torch_python(
        """
        import json, torch
        import img2gray
        x = torch.randint(0, 256, (64, 64, 3), dtype=torch.uint8,
                          generator=torch.Generator().manual_seed(7))
        ref = (x.float() @ torch.tensor([0.21, 0.72, 0.07])).round().to(torch.uint8)
        y = img2gray.img2gray(x)
        print(json.dumps({"max_diff": int((y.int() - ref.int()).abs().max())}))
        """,
        pythonpath=built_wrong,
    )
    assert res["max_diff"] > 1


def test_rebuild_is_idempotent_and_prunes_stale_files(built):
    out, variant_dir = built
    so = the_so(variant_dir)
    before = (so.read_bytes(), so.stat().st_mtime_ns)
    meta = (variant_dir / "metadata.json").read_bytes()
    (variant_dir / "_img2gray_cpu_0000000.abi3.so").write_bytes(b"stale")
    (variant_dir / "__pycache__").mkdir()
    (variant_dir / "img2gray" / "_ops.py").write_bytes(b"a stale nested layout\n")
    assert build_kernel(out, "--cpu") == variant_dir
    assert sorted(p.relative_to(variant_dir).as_posix() for p in variant_dir.rglob("*")) == sorted(
        ["__init__.py", "_kwheel_check.py", "_ops.py", "layers.py", so.name, "metadata.json", "img2gray", "img2gray/__init__.py"])
    assert (so.read_bytes(), so.stat().st_mtime_ns) == before
    assert (variant_dir / "metadata.json").read_bytes() == meta


def test_build_is_reproducible_across_build_dirs(built, tmp_path):
    # A second, from-scratch build in another directory must give the same
    # bytes: no build paths, timestamps or temp names in the binary.
    _, variant_dir = built
    other = build_kernel(tmp_path / "out", "--cpu", "--build-dir", str(tmp_path / "cmake"))
    assert other.name == variant_dir.name
    for name in ("__init__.py", "_kwheel_check.py", "_ops.py", the_so(variant_dir).name, "metadata.json",
                 "img2gray/__init__.py"):
        assert (other / name).read_bytes() == (variant_dir / name).read_bytes(), name


def _nvcc() -> str | None:
    return shutil.which("nvcc") or next(
        (p for p in ("/usr/local/cuda/bin/nvcc",) if os.access(p, os.X_OK)), None)


@pytest.mark.skipif(_nvcc() is None, reason="nvcc not installed")
def test_cuda_kernel_compiles_with_bare_nvcc(tmp_path):
    # Only the CUDA toolkit on the include path (no torch): img2gray.cu must
    # stay free of torch so it can be checked on machines without CUDA torch.
    obj = tmp_path / "img2gray.o"
    for defines in ([], ["-DIMG2GRAY_WRONG"]):
        r = subprocess.run(
            [_nvcc(), "-c", "-arch=sm_90", "-I", str(KERNEL / "csrc"), *defines,
             str(KERNEL / "csrc" / "img2gray.cu"), "-o", str(obj)],
            capture_output=True, text=True, timeout=300,
        )
        assert r.returncode == 0, r.stderr
        assert obj.stat().st_size > 0
        syms = subprocess.run(["nm", "-C", str(obj)], capture_output=True, text=True).stdout
        assert "img2gray_cuda_launch" in syms
