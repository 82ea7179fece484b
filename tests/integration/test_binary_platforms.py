"""Issue 15 for darwin and Windows variants: the macOS tag follows the Mach-O
files' own minimum macOS (LC_BUILD_VERSION), --macos claims a floor and
refuses a file that needs more, and an object built for the wrong CPU
(Mach-O slice, PE machine) refuses its variant, naming the file. The
binaries are real: clang with ld64.lld / lld-link builds them (elfgen).
"""

from __future__ import annotations

import base64
import ctypes
import hashlib
import json
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from email.parser import Parser
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.tags import cpython_tags
from packaging.utils import parse_wheel_filename
from packaging.version import Version

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "hub"))
import kernel_repos as kr  # noqa: E402
from conftest import clean_env  # noqa: E402
from elfgen import macho_object, pe_dll, shared_object  # noqa: E402
from kwheel_fixtures import tree_state  # noqa: E402

CPU_MAC = "torch211-cpu-aarch64-darwin"
METAL = "torch211-metal-aarch64-darwin"
WINDOWS = "torch211-cxx11-cpu-x86_64-windows"


def repo_with(tmp_path: Path, variant: str, binary: bytes, name: str = "_relu_0123abc.abi3.so") -> Path:
    repo = tmp_path / "relu"
    files = kr.demo_package("relu", "x")
    files[name] = binary
    kr.write_variant(repo, variant, layout="flat", name="relu", kernel_id="_relu_0123abc", files=files)
    return repo


def build(kwheel_bin, repo: Path, out: Path, *extra) -> subprocess.CompletedProcess:
    return subprocess.run([str(kwheel_bin), "build", str(repo), "-o", str(out), "--version", "1.0.0", "--json", *map(str, extra)],
                          capture_output=True, text=True, env=clean_env(), timeout=120)


@pytest.mark.parametrize("minimum,tag", [("12.0", "macosx_12_0_arm64"), ("14.2", "macosx_15_0_arm64"), ("11.0", "macosx_11_0_arm64")])
def test_macos_tag_follows_the_binary(kwheel_bin, tmp_path, minimum, tag):
    r = build(kwheel_bin, repo_with(tmp_path, CPU_MAC, macho_object(minimum)), tmp_path / "dist")
    assert r.returncode == 0, r.stdout + r.stderr
    v = json.loads(r.stdout)["variants"][0]
    assert v["filename"].endswith(f"-{tag}.whl")
    assert v["macos"]["objects"] == [{"file": "relu/_relu_0123abc.abi3.so", "arch": "arm64", "min_macos": minimum,
                                      "source": "LC_BUILD_VERSION"}]


def test_metal_never_goes_below_kernels_floor(kwheel_bin, tmp_path):
    r = build(kwheel_bin, repo_with(tmp_path, METAL, macho_object("14.0")), tmp_path / "dist")
    assert r.returncode == 0, r.stdout
    assert json.loads(r.stdout)["variants"][0]["filename"].endswith("-macosx_26_0_arm64.whl")


def test_macos_claim_below_the_binary_is_refused_naming_it(kwheel_bin, tmp_path):
    dist = tmp_path / "dist"
    dist.mkdir()
    before = tree_state(dist)
    r = build(kwheel_bin, repo_with(tmp_path, CPU_MAC, macho_object("13.0")), dist, "--macos", "11.0")
    assert r.returncode == 9, r.stdout
    err = json.loads(r.stdout)["variants"][0]["error"]
    assert "--macos 11.0 claims too old a macOS: relu/_relu_0123abc.abi3.so needs macOS 13.0 (LC_BUILD_VERSION)" in err
    assert "pass --macos 13.0" in err
    assert tree_state(dist) == before
    ok = build(kwheel_bin, repo_with(tmp_path / "b", CPU_MAC, macho_object("11.0")), dist, "--macos", "12.0")
    assert json.loads(ok.stdout)["variants"][0]["filename"].endswith("-macosx_12_0_arm64.whl")


def test_macos_option_is_checked(kwheel_bin, tmp_path):
    repo = repo_with(tmp_path, CPU_MAC, macho_object("11.0"))
    r = build(kwheel_bin, repo, tmp_path / "dist", "--macos", "eleven")
    assert r.returncode == 2 and "--macos 'eleven' is not a macOS version" in r.stdout + r.stderr
    r = build(kwheel_bin, repo, tmp_path / "dist", "--macos", "14.2")
    assert "pass --macos 14.0 or 15.0" in r.stdout + r.stderr


def test_wrong_architecture_mach_o_is_refused(kwheel_bin, tmp_path):
    r = build(kwheel_bin, repo_with(tmp_path, CPU_MAC, macho_object("11.0", "x86_64")), tmp_path / "dist")
    assert r.returncode == 9
    assert "'relu/_relu_0123abc.abi3.so' is a Mach-O for x86_64, not arm64" in json.loads(r.stdout)["variants"][0]["error"]


def test_windows_machine_type_is_checked(kwheel_bin, tmp_path):
    good = build(kwheel_bin, repo_with(tmp_path / "a", WINDOWS, pe_dll("x86_64"), "_relu_0123abc.pyd"), tmp_path / "dist")
    assert good.returncode == 0, good.stdout + good.stderr
    assert json.loads(good.stdout)["variants"][0]["filename"].endswith("-win_amd64.whl")
    bad = build(kwheel_bin, repo_with(tmp_path / "b", WINDOWS, pe_dll("aarch64"), "_relu_0123abc.pyd"), tmp_path / "dist2")
    assert bad.returncode == 9
    assert "'relu/_relu_0123abc.pyd' is a PE image for arm64, not amd64" in json.loads(bad.stdout)["variants"][0]["error"]


def test_inspect_shows_mach_o_evidence_and_an_undertagged_wheel(kwheel_bin, tmp_path):
    r = build(kwheel_bin, repo_with(tmp_path, CPU_MAC, macho_object("12.0")), tmp_path / "dist")
    wheel = Path(json.loads(r.stdout)["variants"][0]["wheel"])
    ins = subprocess.run([str(kwheel_bin), "inspect", str(wheel)], capture_output=True, text=True, env=clean_env(), timeout=60)
    assert ins.returncode == 0, ins.stdout + ins.stderr
    assert "relu/_relu_0123abc.abi3.so: arm64, needs macOS 12.0 (LC_BUILD_VERSION)" in ins.stdout
    assert "platform: macosx_12_0_arm64" in ins.stdout

    # The same wheel with an object that needs macOS 14: its tag now lies.
    lying = tmp_path / wheel.name
    with zipfile.ZipFile(wheel) as src, zipfile.ZipFile(lying, "w") as dst:
        for info in src.infolist():
            data = macho_object("14.0") if info.filename.endswith(".so") else src.read(info)
            dst.writestr(info, data)
    ins = subprocess.run([str(kwheel_bin), "inspect", "--json", str(lying)], capture_output=True, text=True, env=clean_env(), timeout=60)
    assert ins.returncode == 9
    doc = json.loads(ins.stdout)
    assert doc["ok"] is False and doc["macos"]["tag"] == "macosx_14_0_arm64"
    assert doc["problems"] == ["tagged macOS 12.0 but relu/_relu_0123abc.abi3.so needs macOS 14.0 (LC_BUILD_VERSION); "
                               "rebuild the wheel (kwheel tags it macosx_14_0_arm64)"]


# --------------------------------------------------------------------------- issue 32 #7: objects no loader loads

LINUX = "torch211-cxx11-cpu-x86_64-linux"
KERNEL_C = "int kwheel_fixture_kernel(int x) { return 2 * x + 1; }\nint main(void) { return kwheel_fixture_kernel(0); }\n"


def cc(tmp_path: Path, *flags: str, compiler: list[str] | None = None) -> bytes:
    """KERNEL_C compiled and linked with `flags` (the host cc unless `compiler`)."""
    d = tmp_path / "cc"
    d.mkdir(exist_ok=True)
    (d / "k.c").write_text(KERNEL_C)
    subprocess.run([*(compiler or ["cc"]), *flags, "k.c", "-o", "out"], cwd=d, check=True, capture_output=True)
    return (d / "out").read_bytes()


def dlopen_error(tmp_path: Path, binary: bytes) -> str | None:
    """glibc's own words when its dlopen refuses `binary` (the oracle), else None."""
    f = tmp_path / "dlopen-probe.so"
    f.write_bytes(binary)
    try:
        ctypes.CDLL(str(f))
    except OSError as e:
        return str(e).rsplit(": ", 1)[1]
    return None


@pytest.mark.parametrize("flags, says", [
    (["-no-pie"], "is an executable (ET_EXEC)"),
    (["-fPIE", "-pie"], "is a position-independent executable (DF_1_PIE)"),
    (["-c", "-fPIC"], "is ELF type 1, not a shared object (ET_DYN)"),
    (["-shared", "-fPIC", "-Wl,-z,nodlopen"], "is linked with -z nodlopen (DF_1_NOOPEN)"),
    (["-shared", "-fPIC"], None),
], ids=["exec", "pie", "object", "nodlopen", "shared-object"])
def test_an_object_the_loader_refuses_is_refused_naming_it(kwheel_bin, tmp_path, flags, says):
    binary = cc(tmp_path, *flags)
    loader = dlopen_error(tmp_path, binary)
    assert (loader is None) == (says is None), loader
    dist = tmp_path / "dist"
    dist.mkdir()
    before = tree_state(dist)
    r = build(kwheel_bin, repo_with(tmp_path, LINUX, binary), dist)
    if says is None:
        assert r.returncode == 0, r.stdout + r.stderr
        return
    assert r.returncode == 3, r.stdout + r.stderr
    err = json.loads(r.stdout)["variants"][0]["error"]
    assert f"variant '{LINUX}': 'relu/_relu_0123abc.abi3.so' {says}" in err, err
    assert f'"{loader}"' in err, (loader, err)  # glibc's words, quoted
    assert err.endswith("or leave it out of the variant") and "\n" not in err
    assert tree_state(dist) == before


def test_a_library_only_needed_may_forbid_dlopen(kwheel_bin, tmp_path):
    """-z nodlopen stops dlopen, not DT_NEEDED: a libhelper.so.1 beside the extension may carry it."""
    repo = tmp_path / "relu"
    files = kr.demo_package("relu", "x")
    files["_relu_0123abc.abi3.so"] = cc(tmp_path, "-shared", "-fPIC")
    files["libhelper.so.1"] = cc(tmp_path, "-shared", "-fPIC", "-Wl,-z,nodlopen")
    kr.write_variant(repo, LINUX, layout="flat", name="relu", kernel_id="_relu_0123abc", files=files)
    r = build(kwheel_bin, repo, tmp_path / "dist")
    assert r.returncode == 0, r.stdout + r.stderr


def test_a_windows_executable_is_refused_as_an_extension(kwheel_bin, tmp_path):
    exe = cc(tmp_path, "--target=x86_64-pc-windows-msvc", "-fuse-ld=lld", "-nostdlib", "-Wl,/entry:kwheel_fixture_kernel",
             "-Wl,/subsystem:console", compiler=["clang"])
    r = build(kwheel_bin, repo_with(tmp_path, WINDOWS, exe, "_relu_0123abc.pyd"), tmp_path / "dist")
    assert r.returncode == 3, r.stdout + r.stderr
    err = json.loads(r.stdout)["variants"][0]["error"]
    assert "'relu/_relu_0123abc.pyd' is an executable image (no IMAGE_FILE_DLL in its characteristics), not a DLL" in err, err
    assert "link it as a DLL" in err


def test_a_mach_o_executable_is_refused_and_a_bundle_is_not(kwheel_bin, tmp_path):
    ld64 = subprocess.run(["clang", "-print-prog-name=ld64.lld"], capture_output=True, text=True, check=True).stdout.strip()
    d = tmp_path / "macho"
    d.mkdir()
    (d / "k.c").write_text(KERNEL_C)
    subprocess.run(["clang", "--target=arm64-apple-macos11.0", "-c", "k.c", "-o", "k.o"], cwd=d, check=True)
    for kind in ("-execute", "-bundle"):
        subprocess.run([ld64, kind, "-arch", "arm64", "-platform_version", "macos", "11.0", "11.0", "k.o", "-o", kind[1:]],
                       cwd=d, check=True)
    bad = build(kwheel_bin, repo_with(tmp_path / "a", CPU_MAC, (d / "execute").read_bytes()), tmp_path / "dist")
    assert bad.returncode == 3, bad.stdout + bad.stderr
    err = json.loads(bad.stdout)["variants"][0]["error"]
    assert "'relu/_relu_0123abc.abi3.so' is an executable (MH_EXECUTE), not a dylib or bundle" in err, err
    good = build(kwheel_bin, repo_with(tmp_path / "b", CPU_MAC, (d / "bundle").read_bytes()), tmp_path / "dist")
    assert good.returncode == 0, good.stdout + good.stderr


def stub_torch_wheel(out: Path, version: str) -> Path:
    """A distribution named torch at `version` (an empty package), for pip to hold a kernel wheel's requirement against."""
    out.mkdir(parents=True, exist_ok=True)
    wheel = out / f"torch-{version}-py3-none-any.whl"
    files = {"torch/__init__.py": f"__version__ = {version!r}\n".encode(),
             f"torch-{version}.dist-info/METADATA": f"Metadata-Version: 2.1\nName: torch\nVersion: {version}\n".encode(),
             f"torch-{version}.dist-info/WHEEL": b"Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n"}
    record = [f"{p},sha256={base64.urlsafe_b64encode(hashlib.sha256(b).digest()).rstrip(b'=').decode()},{len(b)}" for p, b in files.items()]
    files[f"torch-{version}.dist-info/RECORD"] = ("\n".join(record + [f"torch-{version}.dist-info/RECORD,,"]) + "\n").encode()
    with zipfile.ZipFile(wheel, "w") as z:
        for p, b in files.items():
            z.writestr(p, b)
    return wheel


def test_a_stable_abi_wheel_requires_the_torch_kernels_loads_it_into(kwheel_bin, tmp_path, venv_python):
    variant = "torch-stable-abi211-cpu-x86_64-linux"
    r = build(kwheel_bin, repo_with(tmp_path, variant, shared_object()), tmp_path / "dist")
    assert r.returncode == 0, r.stdout + r.stderr
    wheel = Path(json.loads(r.stdout)["variants"][0]["wheel"])
    with zipfile.ZipFile(wheel) as z:
        meta = next(z.read(n) for n in z.namelist() if n.endswith(".dist-info/METADATA"))
    (req,) = [Requirement(v) for v in Parser().parsestr(meta.decode()).get_all("Requires-Dist") if v.startswith("torch")]
    assert req.name == "torch"

    # kernels 0.17.2 decides which torch loads the variant; the requirement must say the same.
    from kernels.backends import CPU
    from kernels.variants import parse_variant as kernels_variant, _resolve_variant_for_system
    for torch in ["1.13", "2.9", "2.10", "2.11", "2.12", "3.0"]:
        accepted, _ = _resolve_variant_for_system([kernels_variant(variant)], CPU(), "x86_64", "linux",
                                                  Version(torch), True, None)
        assert bool(accepted) == req.specifier.contains(f"{torch}.0"), (torch, str(req))

    # pip refuses the wheel beside torch 1.13, and takes it beside 2.11.
    for torch, ok in (("1.13.0", False), ("2.11.0", True)):
        venv = tmp_path / f"venv-{torch}"
        subprocess.run([str(venv_python), "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
        pip = [str(venv_python), "-m", "pip", "--python", str(venv / "bin" / "python"), "install", "--isolated", "--no-index",
               "--disable-pip-version-check", "--no-cache-dir", "-q"]
        subprocess.run([*pip, str(stub_torch_wheel(tmp_path / "stubs", torch))], check=True, capture_output=True, timeout=300)
        p = subprocess.run([*pip, "--find-links", str(wheel.parent), str(wheel)], capture_output=True, text=True, timeout=300)
        assert (p.returncode == 0) == ok, p.stdout + p.stderr
        if not ok:
            assert "torch>=2.11" in p.stderr, p.stderr


# --------------------------------------------------------------------------- modules named for one CPython


def repo_with_modules(tmp_path: Path, names: list[str]) -> Path:
    repo = tmp_path / "relu"
    files = kr.demo_package("relu", "x", so=shared_object())
    for n in names:
        files[n] = shared_object()
    kr.write_variant(repo, LINUX, layout="flat", name="relu", kernel_id="_relu_0123abc", files=files)
    return repo


def test_a_module_named_for_one_cpython_tags_the_wheel_for_it(kwheel_bin, tmp_path):
    module = "_C_mxfp8.cpython-310-x86_64-linux-gnu.so"
    r = build(kwheel_bin, repo_with_modules(tmp_path, [module]), tmp_path / "dist")
    assert r.returncode == 0, r.stdout + r.stderr
    v = json.loads(r.stdout)["variants"][0]
    _, _, _, tags = parse_wheel_filename(v["filename"])
    # packaging's own tag lists: CPython 3.10 installs it, 3.9 and 3.11 do not.
    for py, fits in (((3, 10), True), ((3, 9), False), ((3, 11), False)):
        supported = set(cpython_tags(py, platforms=["manylinux_2_5_x86_64"]))
        assert bool(tags & supported) == fits, (py, v["filename"])
    assert v["cpython_module"] == f"relu/{module}"
    assert f"variant '{LINUX}' is tagged cp310-cp310, not abi3: 'relu/{module}'" in r.stderr, r.stderr
    with zipfile.ZipFile(v["wheel"]) as z:
        meta = Parser().parsestr(next(z.read(n) for n in z.namelist() if n.endswith(".dist-info/METADATA")).decode())
    assert SpecifierSet(meta["Requires-Python"]).contains("3.10.4") and not SpecifierSet(meta["Requires-Python"]).contains("3.11.0")


@pytest.mark.parametrize("names, extra, says", [
    (["_a.cpython-310-x86_64-linux-gnu.so", "_b.cpython-311-x86_64-linux-gnu.so"], [],
     "'relu/_b.cpython-311-x86_64-linux-gnu.so' is named for cp311 and 'relu/_a.cpython-310-x86_64-linux-gnu.so' for cp310"),
    (["_a.cpython-310-aarch64-linux-gnu.so"], [],
     "'relu/_a.cpython-310-aarch64-linux-gnu.so' is named for CPython on aarch64-linux-gnu, which the linux x86_64 CPython never imports"),
    (["_a.cpython-310-x86_64-linux-gnu.so"], ["--min-python", "3.11"],
     "'relu/_a.cpython-310-x86_64-linux-gnu.so' is named for cp310, older than --min-python 3.11"),
], ids=["two-pythons", "other-platform", "below-min-python"])
def test_modules_named_for_no_one_wheel_are_refused(kwheel_bin, tmp_path, names, extra, says):
    dist = tmp_path / "dist"
    dist.mkdir()
    r = build(kwheel_bin, repo_with_modules(tmp_path, names), dist, *extra)
    assert r.returncode == 3, r.stdout + r.stderr
    err = json.loads(r.stdout)["variants"][0]["error"]
    assert says in err, err
    assert "rename it to <module>.abi3.so" in err and "\n" not in err
    assert list(dist.iterdir()) == []
