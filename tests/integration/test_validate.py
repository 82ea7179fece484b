"""`kwheel validate` against real wheels of our own kernel (kernels/img2gray).

The kernel is built once for Debian's torch 1.13 (CPU variant, scripts/build-kernel's
default compat layout with metadata.json), turned into a wheel with `kwheel build`,
and every other case is derived from that build: renamed variant dirs (another
torch, CUDA, cxx98, aarch64), a wheel whose .so bytes no longer match RECORD, a
consistently rebuilt wheel (metadata.json's digest re-hashed) around a corrupt
.so, a deliberately wrong kernel, a kernel without `_kwheel_check`, a pure
Python torch-universal kernel. CI has no GPU: everything runs with
`--python /usr/bin/python3 --device cpu`.

Expectations are computed here, not read back from kwheel: the op namespace
(_img2gray_cpu_<hash>) with the shell pipeline from kernels/img2gray/README.md,
the torch version by asking the interpreter.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import re
import shutil
import signal
import subprocess
import time
import zipfile
from pathlib import Path

import pytest

from conftest import torch_version

ROOT = Path(__file__).resolve().parents[2]
KERNEL = ROOT / "kernels" / "img2gray"
BUILD_SCRIPT = ROOT / "scripts" / "build-kernel"
KWHEEL = os.environ.get("KWHEEL_BIN") or str(ROOT / "build" / "kwheel")
TORCH_PYTHON = "/usr/bin/python3"
CPU_VARIANT = "torch113-cxx11-cpu-x86_64-linux"
VALIDATION_FAILED = 8  # ErrorKind::validation
UNTESTED = 10  # ErrorKind::untested: every wheel SKIP, without --allow-skip


TORCH = torch_version(TORCH_PYTHON)

pytestmark = [
    pytest.mark.skipif(TORCH is None or shutil.which("cmake") is None,
                       reason=f"needs cmake and torch importable by {TORCH_PYTHON} (Debian python3-torch)"),
    pytest.mark.skipif(not os.access(KWHEEL, os.X_OK), reason=f"kwheel not built at {KWHEEL} (set KWHEEL_BIN)"),
]


# --------------------------------------------------------------------------- helpers


def run(argv: list[str], *, env: dict | None = None, cwd: Path | None = None, timeout: int = 600) -> subprocess.CompletedProcess:
    return subprocess.run([str(a) for a in argv], capture_output=True, text=True, env=env, cwd=cwd, timeout=timeout)


def validate(*args, env: dict | None = None, cwd: Path | None = None, device: str = "cpu") -> tuple[subprocess.CompletedProcess, dict]:
    """`kwheel validate ARGS --python /usr/bin/python3 --device D --json`: the
    process and its parsed report."""
    p = run([KWHEEL, "validate", *args, "--python", TORCH_PYTHON, "--device", device, "--json"], env=env, cwd=cwd)
    # (A failing check's traceback belongs in the JSON details; never on stderr.)
    assert "Traceback" not in p.stderr, p.stderr
    try:
        report = json.loads(p.stdout)
    except json.JSONDecodeError:
        pytest.fail(f"kwheel validate printed no JSON report (exit {p.returncode}):\n{p.stdout}\n{p.stderr}")
    return p, report


def only_wheel(report: dict) -> dict:
    assert len(report["wheels"]) == 1, report
    return report["wheels"][0]


def ops_namespace() -> str:
    """The kernel id, _img2gray_<backend>_<hash> (README.md: kernel-builder's scheme), of the CPU build."""
    return f"_img2gray_cpu_{readme_ops_hash()}"


def readme_ops_hash() -> str:
    """The op namespace hash exactly as kernels/img2gray/README.md computes it."""
    listing = ("find build.toml cmake csrc torch-ext -type f ! -path '*/.*' "
               "! -path '*/__pycache__/*' ! -name '*.pyc' | LC_ALL=C sort "
               "| xargs sha256sum | sha256sum | cut -c1-7")
    r = subprocess.run(["bash", "-c", listing], cwd=KERNEL, capture_output=True, text=True, check=True)
    h = r.stdout.strip()
    assert re.fullmatch(r"[0-9a-f]{7}", h), r
    return h


def kwheel_build(src: Path, dist: Path) -> Path:
    p = run([KWHEEL, "build", src, "--version", "0.1.0", "--name", "img2gray", "-o", dist, "-q"])
    assert p.returncode == 0, f"kwheel build failed:\n{p.stdout}\n{p.stderr}"
    wheels = sorted(dist.glob("*.whl"))
    assert len(wheels) == 1, wheels
    return wheels[0]


def build_kernel(out: Path, *args: str) -> Path:
    p = run([BUILD_SCRIPT, "--python", TORCH_PYTHON, "--out", out, "--cpu", *args], timeout=900)
    assert p.returncode == 0, f"build-kernel failed:\n{p.stdout}\n{p.stderr}"
    return Path(p.stdout.strip().splitlines()[-1])


# --------------------------------------------------------------------------- fixtures


@pytest.fixture(scope="module")
def work(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("validate")


@pytest.fixture(scope="module")
def variant_dir(work) -> Path:
    """The real CPU build, once per module."""
    d = build_kernel(work / "kernel")
    assert d.name == CPU_VARIANT, d
    return d


@pytest.fixture(scope="module")
def good_wheel(work, variant_dir) -> Path:
    return kwheel_build(work / "kernel", work / "dist")


def redigest(variant: Path) -> None:
    """Re-hash metadata.json's digest over the variant's files as they are now, as kernels
    computes it (kernels/img2gray/README.md), so a changed variant is consistent again."""
    meta = json.loads((variant / "metadata.json").read_text())
    files = {}
    for p in sorted(variant.rglob("*")):
        rel = p.relative_to(variant).as_posix()
        if p.is_file() and rel not in ("metadata.json", "metadata.json.sigstore") and "__pycache__" not in p.parts:
            files[rel] = base64.b64encode(hashlib.sha256(p.read_bytes()).digest()).decode()
    meta["digest"]["files"] = files
    (variant / "metadata.json").write_text(json.dumps(meta, indent=2))


@pytest.fixture(scope="module")
def make_wheel(work, variant_dir):
    """A wheel from a copy of the real variant, under another variant name
    and/or with its package (flat: the variant dir itself) changed by
    `mutate(package_dir)`, metadata.json's digest then re-hashed to match."""
    def make(tag: str, variant: str = CPU_VARIANT, mutate=None) -> Path:
        repo = work / f"repo-{tag}"
        pkg = repo / "build" / variant
        shutil.copytree(variant_dir, pkg)
        if mutate:
            mutate(pkg)
            redigest(pkg)
        return kwheel_build(repo, work / f"dist-{tag}")
    return make


@pytest.fixture
def private_tmpdir(tmp_path) -> tuple[Path, dict]:
    """An environment whose TMPDIR is a fresh empty directory, so a test can
    see exactly what kwheel leaves behind."""
    t = tmp_path / "tmpdir"
    t.mkdir()
    env = dict(os.environ, TMPDIR=str(t))
    return t, env


def retag(wheel: Path, out_dir: Path, platform: str) -> Path:
    """The same wheel claiming another platform tag, consistently: file name,
    WHEEL's Tag line and RECORD's hash of WHEEL. (kwheel build rightly refuses
    to tag an x86-64 .so for another arch, and there is no cross compiler.)"""
    name, ver, py, abi, _ = wheel.name[: -len(".whl")].split("-")
    tag = f"{py}-{abi}-{platform}"
    dst = out_dir / f"{name}-{ver}-{tag}.whl"
    out_dir.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(wheel) as zi:
        files = {i.filename: zi.read(i) for i in zi.infolist()}
    dist_info = f"{name}-{ver}.dist-info"
    files[f"{dist_info}/WHEEL"] = re.sub(rb"(?m)^Tag: .*$", f"Tag: {tag}".encode(), files[f"{dist_info}/WHEEL"])
    record = []
    for line in files[f"{dist_info}/RECORD"].decode().splitlines():
        path = line.split(",")[0]
        if path == f"{dist_info}/WHEEL":
            digest = base64.urlsafe_b64encode(hashlib.sha256(files[path]).digest()).rstrip(b"=").decode()
            line = f"{path},sha256={digest},{len(files[path])}"
        record.append(line)
    files[f"{dist_info}/RECORD"] = ("\n".join(record) + "\n").encode()
    with zipfile.ZipFile(dst, "w", zipfile.ZIP_DEFLATED) as zo:
        for path, data in files.items():
            zo.writestr(path, data)
    return dst


def the_so(package_dir: Path) -> Path:
    (so,) = package_dir.glob("*.so")
    return so


# --------------------------------------------------------------------------- PASS


def test_real_wheel_passes_and_leaves_nothing_behind(good_wheel, private_tmpdir):
    tmpdir, env = private_tmpdir
    p, report = validate(good_wheel, env=env)
    assert p.returncode == 0, p.stderr
    assert report["ok"] and (report["passed"], report["failed"], report["skipped"]) == (1, 0, 0)
    w = only_wheel(report)
    assert w["result"] == "PASS", w
    d = w["details"]
    assert d["ops"] == [f"{ops_namespace()}::img2gray"]
    assert d["device"] == "cpu" and d["torch"] == TORCH
    assert d["check"] == "img2gray._kwheel_check"
    check = d["details"]
    assert [c["size"] for c in check["cases"]] == ["1x1", "17x31", "1080x1920"]
    assert all(0 <= c["max_abs_diff"] <= 1 for c in check["cases"]), check
    assert check["non_contiguous"] == "rejected with a clear error" or check["non_contiguous"].startswith("handled"), check
    # torch 1.13 has no torch.compile: a skip that names the version.
    assert check["torch_compile"].startswith("skipped") and TORCH in check["torch_compile"], check
    for phase in ("venv", "install", "check"):
        assert w["timings"][phase] > 0, w["timings"]
    # The package came from the test environment, which is gone now.
    assert d["module_file"].startswith(str(tmpdir) + "/kwheel-validate-"), d["module_file"]
    assert list(tmpdir.iterdir()) == []
    assert "env" not in d


def test_keep_env_keeps_the_environment(good_wheel, private_tmpdir):
    tmpdir, env = private_tmpdir
    p, report = validate(good_wheel, "--keep-env", env=env)
    assert p.returncode == 0, p.stderr
    d = only_wheel(report)["details"]
    kept = Path(d["env"])
    try:
        assert kept.is_dir() and kept.is_relative_to(tmpdir)
        (pth,) = kept.glob("lib/python3.*/site-packages/_kwheel_torch.pth")
        torch_site = report["interpreter"]["torch_site"]
        assert repr(torch_site) in pth.read_text() or json.dumps(torch_site) in pth.read_text(), pth.read_text()
        assert (Path(torch_site) / "torch").is_dir()
        assert Path(d["module_file"]).is_relative_to(kept) and Path(d["module_file"]).exists()
        # The environment works on its own: the installed op is there.
        r = run([kept / "bin" / "python", "-c", "import img2gray, torch; print(img2gray.ops.name)"])
        assert r.returncode == 0 and r.stdout.strip() == ops_namespace(), r
    finally:
        shutil.rmtree(kept.parent, ignore_errors=True)


def test_kernel_without_own_check_passes_on_import_and_ops(make_wheel):
    wheel = make_wheel("nocheck", mutate=lambda pkg: (pkg / "_kwheel_check.py").unlink())
    assert "img2gray/_kwheel_check.py" not in zipfile.ZipFile(wheel).namelist()
    p, report = validate(wheel)
    assert p.returncode == 0, p.stderr
    w = only_wheel(report)
    assert w["result"] == "PASS", w
    assert w["details"]["ops"] == [f"{ops_namespace()}::img2gray"]
    assert w["details"]["check"] == "import + op registration (the kernel declares no _kwheel_check)"
    assert "details" not in w["details"]  # nothing was run


def test_universal_kernel_passes_on_import_only(work):
    repo = work / "repo-universal"
    pkg = repo / "build" / "torch-universal" / "img2gray"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("def hello():\n    return 'img2gray universal'\n")
    wheel = kwheel_build(repo, work / "dist-universal")
    assert wheel.name == "img2gray-0.1.0-py3-none-any.whl"
    p, report = validate(wheel)
    assert p.returncode == 0, p.stderr
    w = only_wheel(report)
    assert w["result"] == "PASS", w
    assert w["details"]["ops"] == [] and "import only" in w["details"]["check"], w
    # The runner's own device check: --device cuda with a CPU-only torch.
    p, report = validate(wheel, device="cuda")
    assert p.returncode == UNTESTED and report["outcome"] == "untested", p.stderr
    w = only_wheel(report)
    assert w["result"] == "SKIP" and "no CUDA device" in w["reason"], w


def test_environment_is_isolated_from_pythonpath_and_cwd(good_wheel, tmp_path):
    # A fake img2gray on PYTHONPATH and another in the working directory: if
    # either were imported the check would fail (or report other ops).
    for where in ("pythonpath", "cwd"):
        fake = tmp_path / where / "img2gray"
        fake.mkdir(parents=True)
        (fake / "__init__.py").write_text(f"raise RuntimeError('fake img2gray from the {where} was imported')\n")
        (fake / "_ops.py").write_text("class ops:\n    name = '_img2gray_fake'\n")
    env = dict(os.environ, PYTHONPATH=str(tmp_path / "pythonpath"))
    p, report = validate(good_wheel.resolve(), env=env, cwd=tmp_path / "cwd")
    w = only_wheel(report)
    assert p.returncode == 0 and w["result"] == "PASS", w
    assert w["details"]["ops"] == [f"{ops_namespace()}::img2gray"]
    assert "/site-packages/img2gray/" in w["details"]["module_file"]


def test_interpreter_that_is_itself_a_venv(good_wheel, tmp_path):
    # --system-site-packages of a venv made from a venv would not reach the
    # parent's torch; kwheel's environment must still see it.
    venv = tmp_path / "torch-venv"
    r = run([TORCH_PYTHON, "-m", "venv", "--system-site-packages", "--without-pip", venv])
    assert r.returncode == 0, r.stderr
    p = run([KWHEEL, "validate", good_wheel, "--python", venv / "bin" / "python", "--device", "cpu", "--json"])
    assert p.returncode == 0, p.stdout + p.stderr
    report = json.loads(p.stdout)
    assert report["interpreter"]["executable"] == str(venv / "bin" / "python")
    assert only_wheel(report)["result"] == "PASS"


def test_copy_installed_next_to_torch_neither_shadows_nor_is_touched(good_wheel, tmp_path):
    # An interpreter whose torch site-packages already holds img2gray of the
    # same version (an earlier build): pip must still install the wheel into
    # the test environment, the check must import that one, and the copy next
    # to torch must be left alone.
    venv = tmp_path / "torch-env"
    r = run([TORCH_PYTHON, "-m", "venv", "--without-pip", venv])
    assert r.returncode == 0, r.stderr
    (site,) = venv.glob("lib/python3.*/site-packages")
    (site / "torch").symlink_to("/usr/lib/python3/dist-packages/torch")
    (site / "debian-dist-packages.pth").write_text("/usr/lib/python3/dist-packages\n")  # torch's deps, pip
    r = run([TORCH_PYTHON, "-m", "pip", "install", "--isolated", "-q", "--no-deps", "--no-index", "--target", site, good_wheel])
    assert r.returncode == 0, r.stderr
    stale = site / "img2gray" / "__init__.py"
    stale.write_text("raise RuntimeError('the stale copy next to torch was imported')\n")
    before = sorted(str(p.relative_to(site)) for p in site.rglob("*"))

    p = run([KWHEEL, "validate", good_wheel, "--python", venv / "bin" / "python", "--device", "cpu", "--json"])
    report = json.loads(p.stdout)
    assert report["interpreter"]["torch_site"] == str(site), report["interpreter"]
    w = only_wheel(report)
    assert p.returncode == 0 and w["result"] == "PASS", w
    assert w["details"]["module_file"] != str(stale)
    assert sorted(str(p.relative_to(site)) for p in site.rglob("*")) == before
    assert "stale copy" in stale.read_text()


# --------------------------------------------------------------------------- FAIL


def test_so_changed_behind_records_back_fails_record_check(good_wheel, tmp_path):
    bad = tmp_path / good_wheel.name
    with zipfile.ZipFile(good_wheel) as zi, zipfile.ZipFile(bad, "w", zipfile.ZIP_DEFLATED) as zo:
        for info in zi.infolist():
            data = zi.read(info)
            if info.filename.endswith(".so"):
                data = data[:5000] + bytes([data[5000] ^ 0xFF]) + data[5001:]
            zo.writestr(info, data)
    p, report = validate(bad)
    assert p.returncode == VALIDATION_FAILED
    w = only_wheel(report)
    assert w["result"] == "FAIL" and not report["ok"]
    assert w["reason"].startswith("RECORD check failed") and ".abi3.so" in w["reason"], w["reason"]


def test_consistent_wheel_with_corrupt_so_fails_at_import(make_wheel):
    def corrupt(pkg: Path) -> None:
        so = the_so(pkg)
        b = bytearray(so.read_bytes())
        for i in range(4096, len(b) - 64):  # the ELF header survives, the rest does not
            b[i] ^= 0x5A
        so.write_bytes(bytes(b))

    wheel = make_wheel("corrupt", mutate=corrupt)
    p, report = validate(wheel)
    assert p.returncode == VALIDATION_FAILED, p.stdout + p.stderr
    w = only_wheel(report)
    assert w["result"] == "FAIL", w
    # RECORD is right (kwheel build hashed the corrupt bytes): what fails is
    # loading the module, and the message says so.
    assert "RECORD" not in w["reason"]
    assert re.search(r"\bimport(ing)? img2gray\b", w["reason"]), w["reason"]
    assert "\n" not in w["reason"]


def test_wrong_kernel_fails_with_max_abs_diff(work):
    wrong_dir = build_kernel(work / "kernel-wrong", "--wrong")
    wheel = kwheel_build(wrong_dir.parent.parent, work / "dist-wrong")
    p, report = validate(wheel)
    assert p.returncode == VALIDATION_FAILED
    w = only_wheel(report)
    assert w["result"] == "FAIL", w
    m = re.search(r"max abs diff (\d+)", w["reason"])
    assert m and int(m.group(1)) > 1, w["reason"]
    assert "img2gray._kwheel_check" in w["reason"]


# --------------------------------------------------------------------------- SKIP


@pytest.mark.parametrize("variant, needles", [
    ("torch27-cxx11-cpu-x86_64-linux", ["torch ==2.7", "1.13"]),
    ("torch113-cxx11-cu126-x86_64-linux", ["backend (cu126) does not match selected backend (cpu)"]),  # kernels' words
    ("torch113-cxx98-cpu-x86_64-linux", ["cxx98", "C++ ABI", "cxx11"]),
])
def test_wheels_for_other_setups_are_skipped_with_the_reason(make_wheel, variant, needles):
    wheel = make_wheel(variant, variant=variant)
    p, report = validate(wheel, "--allow-skip")
    assert p.returncode == 0, p.stdout + p.stderr
    assert report["outcome"] == "untested" and report["ok"] is True and report["allow_skip"] is True, report
    w = only_wheel(report)
    assert w["result"] == "SKIP", w
    for needle in needles:
        assert needle in w["reason"], (needle, w["reason"])


def venv_with_tvm_ffi(where: Path, version: str | None) -> Path:
    """A venv of the torch interpreter, holding apache-tvm-ffi `version` (a stub: its metadata and a
    tvm_ffi package saying that version, as the real one does in __version__) unless None."""
    r = run([TORCH_PYTHON, "-m", "venv", "--system-site-packages", "--without-pip", where])
    assert r.returncode == 0, r.stderr
    if version is not None:
        (site,) = where.glob("lib/python3*/site-packages")
        (site / "tvm_ffi").mkdir()
        (site / "tvm_ffi" / "__init__.py").write_text(f"__version__ = {version!r}\n")
        (site / f"apache_tvm_ffi-{version}.dist-info").mkdir()
        (site / f"apache_tvm_ffi-{version}.dist-info" / "METADATA").write_text(
            f"Metadata-Version: 2.1\nName: apache-tvm-ffi\nVersion: {version}\n")
    return where / "bin" / "python"


def test_a_tvm_ffi_wheel_runs_only_beside_its_tvm_ffi(make_wheel, tmp_path):
    """kernels 0.17.2 loads tvm-ffi01 only where tvm_ffi.__version__ is 0.1.x; validate judges the
    same: SKIP, naming the requirement, where it is missing or another version."""
    from kernels.backends import CPU
    from kernels.variants import _resolve_variant_for_system, parse_variant as kernels_variant
    from packaging.version import Version

    variant = "tvm-ffi01-cpu-x86_64-linux"

    def imports_tvm_ffi(pkg: Path) -> None:  # as a real tvm-ffi kernel does: the environment must see it
        init = pkg / "__init__.py"
        init.write_text("import tvm_ffi\n" + init.read_text())

    wheel = make_wheel("tvm-ffi01", variant=variant, mutate=imports_tvm_ffi)
    for version, result in ((None, "SKIP"), ("0.2.0", "SKIP"), ("0.1.3", "PASS")):
        kernels_ffi = Version(".".join(version.split(".")[:2])) if version else None
        accepted, _ = _resolve_variant_for_system([kernels_variant(variant)], CPU(), "x86_64", "linux",
                                                  Version("1.13"), True, kernels_ffi)
        assert bool(accepted) == (result == "PASS"), version
        python = TORCH_PYTHON if version is None else venv_with_tvm_ffi(tmp_path / f"venv-{version}", version)
        p = run([KWHEEL, "validate", wheel, "--python", python, "--device", "cpu", "--json"])
        assert p.returncode == (0 if result == "PASS" else 10), p.stdout + p.stderr  # a lone SKIP tested nothing
        w = only_wheel(json.loads(p.stdout))
        assert w["result"] == result, (version, w)
        if result == "SKIP":
            assert "the wheel needs tvm-ffi 0.1 (apache-tvm-ffi==0.1.*, imported as tvm_ffi)" in w["reason"], w["reason"]
            assert ("has none" if version is None else f"has tvm-ffi {version}") in w["reason"], w["reason"]


def test_wheel_for_another_arch_is_skipped(good_wheel, tmp_path):
    wheel = retag(good_wheel, tmp_path, "manylinux_2_28_aarch64")
    p, report = validate(wheel)
    assert p.returncode == UNTESTED, p.stdout + p.stderr
    w = only_wheel(report)
    assert w["result"] == "SKIP", w
    assert "manylinux_2_28_aarch64" in w["reason"] and "x86_64" in w["reason"], w["reason"]


def test_device_cuda_with_cpu_only_torch_is_skipped(good_wheel):
    p, report = validate(good_wheel, device="cuda")
    assert p.returncode == UNTESTED and report["ok"] is False, report
    w = only_wheel(report)
    assert w["result"] == "SKIP" and "CUDA" in w["reason"], w


def test_mixed_run_reports_each_wheel_and_fails_overall(good_wheel, make_wheel, tmp_path):
    # A broken wheel first: the others are still validated, the run fails.
    broken = tmp_path / "broken-0.1-py3-none-any.whl"
    broken.write_bytes(b"not a zip")
    other = make_wheel("torch27-mixed", variant="torch27-cxx11-cpu-x86_64-linux")
    p = run([KWHEEL, "validate", broken, good_wheel, other, "--python", TORCH_PYTHON, "--device", "cpu"])
    assert p.returncode == VALIDATION_FAILED, p.stdout + p.stderr
    assert "Traceback" not in p.stdout + p.stderr
    assert re.search(r"^FAIL +broken-0\.1-py3-none-any\.whl\n +\S.*zip", p.stdout, re.M), p.stdout
    assert re.search(r"^PASS +" + re.escape(good_wheel.name) + r" \(cpu\)$", p.stdout, re.M), p.stdout
    assert re.search(r"^SKIP +" + re.escape(other.name) + r"\n +the wheel needs torch ==2\.7\.\*", p.stdout, re.M), p.stdout
    assert "summary: 1 PASS, 1 FAIL, 1 SKIP: 1 wheel failed" in p.stderr


def test_a_run_that_tests_nothing_fails_unless_allowed(make_wheel, tmp_path):
    """Issue #33: with a Python whose torch fits none of the wheels, every wheel is SKIP. That run
    exits 10 and says so (even with -q), so a runner that lost its torch or GPU fails the CI gate;
    --allow-skip accepts it, and --json reports the case either way."""
    dist = tmp_path / "dist"
    dist.mkdir()
    for variant in ("torch27-cxx11-cpu-x86_64-linux", "torch210-cxx11-cpu-x86_64-linux",
                    "torch113-cxx11-cu126-x86_64-linux", "torch113-cxx98-cpu-x86_64-linux"):
        shutil.copy(make_wheel(f"none-fits-{variant}", variant=variant), dist)
    for quiet in ([], ["-q"]):
        p = run([KWHEEL, "validate", dist, "--python", TORCH_PYTHON, *quiet])
        assert p.returncode == UNTESTED, p.stdout + p.stderr
        # The report on stdout, or with -q nothing there (as pip's -q); the error says it either way.
        assert p.stdout.count("SKIP ") == (0 if quiet else 4) and (p.stdout == "") == bool(quiet), p.stdout
        (line,) = [ln for ln in p.stderr.splitlines() if "summary:" in ln]
        assert line.startswith("kwheel: error: summary: 0 PASS, 0 FAIL, 4 SKIP: nothing was tested"), line
        assert "--allow-skip" in line and "--python" in line, line
    p, report = validate(dist)
    assert p.returncode == UNTESTED and report["ok"] is False and report["outcome"] == "untested", report
    assert (report["passed"], report["failed"], report["skipped"]) == (0, 0, 4)

    p = run([KWHEEL, "validate", dist, "--python", TORCH_PYTHON, "--allow-skip"])
    assert p.returncode == 0, p.stdout + p.stderr
    assert "summary: 0 PASS, 0 FAIL, 4 SKIP: nothing was tested" in p.stderr and "accepted with --allow-skip" in p.stderr
    assert "error" not in p.stderr, p.stderr
    p, report = validate(dist, "--allow-skip")
    assert p.returncode == 0 and report["ok"] is True and report["outcome"] == "untested", report

    # The exit code and the flag are documented where the user looks.
    p = run([KWHEEL, "--help"])
    assert "10 validate tested nothing" in p.stdout and "--allow-skip" in p.stdout, p.stdout
    p = run([KWHEEL, "validate", "--help"])
    assert "--allow-skip" in p.stdout and "exits 10" in p.stdout, p.stdout


def test_a_pass_beside_skips_passes(good_wheel, make_wheel, tmp_path):
    other = make_wheel("torch27-beside", variant="torch27-cxx11-cpu-x86_64-linux")
    p = run([KWHEEL, "validate", good_wheel, other, "--python", TORCH_PYTHON, "--device", "cpu"])
    assert p.returncode == 0, p.stdout + p.stderr
    assert "summary: 1 PASS, 0 FAIL, 1 SKIP: every wheel that could run here passed" in p.stderr, p.stderr


# --------------------------------------------------------------------------- bad inputs


@pytest.mark.parametrize("case", ["not-a-wheel", "empty-dir", "missing", "no-python"])
def test_bad_inputs_give_one_line_errors(case, good_wheel, tmp_path):
    python = TORCH_PYTHON
    if case == "not-a-wheel":
        target = tmp_path / "README.md"
        target.write_text("# hello\n")
    elif case == "empty-dir":
        target = tmp_path / "empty"
        target.mkdir()
    elif case == "missing":
        target = tmp_path / "nothing-here.whl"
    else:
        target, python = good_wheel, "/nonexistent"
    p = run([KWHEEL, "validate", target, "--python", python, "--device", "cpu"])
    assert p.returncode not in (0, VALIDATION_FAILED), p
    assert "Traceback" not in p.stdout + p.stderr
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("kwheel: error: "), p.stderr
    assert p.stdout == ""
    expect = {"not-a-wheel": "README.md", "empty-dir": "no .whl", "missing": "nothing-here.whl", "no-python": "/nonexistent"}[case]
    assert expect in lines[0], lines[0]


# --------------------------------------------------------------------------- hostile wheels, interruptions (issue 14)


def rewrite_metadata(wheel: Path, out_dir: Path, edit) -> Path:
    """The same wheel with METADATA changed by `edit(text) -> text`, RECORD kept consistent."""
    out_dir.mkdir(parents=True, exist_ok=True)
    dst = out_dir / wheel.name
    with zipfile.ZipFile(wheel) as zi:
        files = {i.filename: zi.read(i) for i in zi.infolist()}
    (meta,) = [p for p in files if p.endswith(".dist-info/METADATA")]
    files[meta] = edit(files[meta].decode()).encode()
    record_path = meta.rsplit("/", 1)[0] + "/RECORD"
    record = []
    for line in files[record_path].decode().splitlines():
        path = line.split(",")[0]
        if path == meta:
            digest = base64.urlsafe_b64encode(hashlib.sha256(files[meta]).digest()).rstrip(b"=").decode()
            line = f"{path},sha256={digest},{len(files[meta])}"
        record.append(line)
    files[record_path] = ("\n".join(record) + "\n").encode()
    with zipfile.ZipFile(dst, "w", zipfile.ZIP_DEFLATED) as zo:
        for path, data in files.items():
            zo.writestr(path, data)
    return dst


def test_a_wheel_with_a_malformed_torch_requirement_fails_alone(good_wheel, tmp_path):
    """`Requires-Dist: torch (>=2.0,,)` used to abort the whole run (exit 2) before any
    other wheel was reported: now that wheel is a FAIL naming the requirement, and the
    good wheel after it still passes."""
    bad = rewrite_metadata(good_wheel, tmp_path / "bad",
                           lambda t: re.sub(r"(?m)^Requires-Dist: torch.*$", "Requires-Dist: torch (>=2.0,,)", t))
    assert "Requires-Dist: torch (>=2.0,,)" in zipfile.ZipFile(bad).read(
        next(n for n in zipfile.ZipFile(bad).namelist() if n.endswith("METADATA"))).decode()
    p, report = validate(bad, good_wheel)
    assert p.returncode == VALIDATION_FAILED, p.stderr
    results = {Path(w["wheel"]).parent.name: w for w in report["wheels"]}
    assert results["bad"]["result"] == "FAIL" and "torch (>=2.0,,)" in results["bad"]["reason"], results["bad"]
    assert results[good_wheel.parent.name]["result"] == "PASS", results
    assert (report["passed"], report["failed"]) == (1, 1)


def test_interrupt_kills_the_check_process_and_removes_the_environment(make_wheel, private_tmpdir, tmp_path):
    """Ctrl-C while the kernel's check runs: the check runs in its own process group (so
    that a timeout kills its children), which the terminal's SIGINT never reaches; kwheel
    kills that group, removes its temp environment, and dies of SIGINT."""
    tmpdir, env = private_tmpdir
    marker = tmp_path / "check-started"

    def hang_on_import(pkg: Path) -> None:
        init = pkg / "__init__.py"
        init.write_text(f"import os, time\nopen({str(marker)!r}, 'w').write(str(os.getpid()))\ntime.sleep(900)\n"
                        + init.read_text())

    wheel = make_wheel("hang", mutate=hang_on_import)
    proc = subprocess.Popen([KWHEEL, "validate", str(wheel), "--python", TORCH_PYTHON, "--device", "cpu", "--json"],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 300
        while not (marker.exists() and marker.read_text()):
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, "the check never started"
            time.sleep(0.05)  # polling for the check to start, not a synchronisation sleep
        check_pid = int(marker.read_text())
        assert list(tmpdir.iterdir()), "the environment should exist while the check runs"
        proc.send_signal(signal.SIGINT)
        proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == -signal.SIGINT
    # SIGKILL was sent before kwheel died; its delivery is asynchronous.
    deadline = time.monotonic() + 10
    while _running(check_pid):
        assert time.monotonic() < deadline, f"check process {check_pid} survived the interrupt"
        time.sleep(0.02)  # polling for a state change, not a synchronisation sleep
    assert list(tmpdir.iterdir()) == []


def _running(pid: int) -> bool:
    """Alive and not a zombie (an orphan's reaper may not have collected it yet)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError, IndexError):
        return False
    return state not in ("Z", "X")


# --------------------------------------------------------------------------- Requires-Dist that is a pip option


@pytest.fixture(scope="module")
def einops_kernel(work) -> Path:
    """A pure-Python torch-cpu kernel whose package imports einops (python-depends: its
    one Requires-Dist beside torch)."""
    repo = work / "depkern"
    pkg = repo / "build" / "torch-cpu" / "depkern"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("import einops\n\n\ndef hello():\n    return einops.__version__\n")
    meta = {"name": "depkern", "version": 1, "license": "Apache-2.0", "python-depends": ["einops"], "backend": {"type": "cpu"}}
    (repo / "build" / "torch-cpu" / "metadata.json").write_text(json.dumps(meta))
    p = run([KWHEEL, "build", repo, "--version", "0.1.0", "-o", work / "dist-depkern", "-q"])
    assert p.returncode == 0, p.stderr
    (wheel,) = (work / "dist-depkern").glob("*.whl")
    return wheel


@pytest.fixture(scope="module")
def einops_links(work) -> Path:
    """A --find-links directory holding PyPI's einops wheel (the real-binary corpus)."""
    import realbin

    d = work / "einops-links"
    d.mkdir()
    shutil.copy(realbin.wheel("einops"), d)
    return d


def with_requires_dist(value: str):
    return lambda text: text.replace("\n\n", f"\nRequires-Dist: {value}\n\n", 1) if "\n\n" in text else text + f"Requires-Dist: {value}\n"


class Recorder:
    """An HTTP server on 127.0.0.1 that answers 404 and records every path asked for."""

    def __enter__(self):
        import http.server
        import threading

        seen = self.seen = []

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                seen.append(self.path)
                self.send_error(404)

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.server.shutdown()
        self.server.server_close()
        self.thread.join()


@pytest.mark.parametrize("option", ["find-links", "log"])
def test_a_requires_dist_that_is_a_pip_option_fails_that_wheel_and_pip_never_obeys_it(option, einops_kernel, einops_links, tmp_path):
    """`Requires-Dist: --find-links=URL` made pip fetch from a server nobody named (and
    validate said PASS); `--log=FILE` wrote a file outside the environment. Each is now a
    FAIL of its wheel, one line naming the wheel and the value; pip never obeys it, and
    the good wheel beside it still gets einops from --find-links and passes."""
    log = tmp_path / "pip-wrote-this.log"
    with Recorder() as server:
        value = f"--find-links={server.url}/" if option == "find-links" else f"--log={log}"
        hostile = rewrite_metadata(einops_kernel, tmp_path / "hostile", with_requires_dist(value))
        p, report = validate(hostile, einops_kernel, "--find-links", einops_links)
        assert server.seen == [], f"pip fetched {server.seen} from the server a Requires-Dist named"
    assert not log.exists(), "pip wrote the log file a Requires-Dist named"
    assert p.returncode == VALIDATION_FAILED, p.stderr
    results = {Path(w["wheel"]).parent.name: w for w in report["wheels"]}
    w = results["hostile"]
    assert w["result"] == "FAIL" and "\n" not in w["reason"], w
    assert f"{einops_kernel.name}: Requires-Dist '{value}' is not a PEP 508 requirement" in w["reason"], w
    assert results[einops_kernel.parent.name]["result"] == "PASS", results


def test_a_direct_url_requires_dist_fails_that_wheel_without_a_fetch(einops_kernel, einops_links, tmp_path):
    """`name @ URL` would have pip fetch from wherever the wheel says; validate takes
    dependencies from the sources it was given only."""
    with Recorder() as server:
        wheel = rewrite_metadata(einops_kernel, tmp_path / "url", with_requires_dist(f"evil @ {server.url}/evil-1.0-py3-none-any.whl"))
        p, report = validate(wheel, "--find-links", einops_links)
        assert server.seen == [], server.seen
    w = only_wheel(report)
    assert p.returncode == VALIDATION_FAILED and w["result"] == "FAIL", w
    assert "a direct URL (name @ URL)" in w["reason"] and f"evil @ {server.url}/evil-1.0-py3-none-any.whl" in w["reason"], w
