"""`kwheel build DIR`: every variant name of issue 2 becomes a wheel that real
tools accept (pip, uv, installer, wheel, twine, check-wheel-contents,
packaging); builds are reproducible; bad repos fail naming the culprit and
leave the output directory exactly as it was.

(The comparison with kernels 0.10.5's own wheel builder on the same directory
lives on in scripts/compare-kernels-to-wheel and bench/: that kernels needs
huggingface_hub < 2, so it is not in the test venv.)
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import os
import shutil
import subprocess
import zipfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from packaging.metadata import Metadata
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.tags import Tag
from packaging.utils import parse_wheel_filename
from packaging.version import Version

from conftest import clean_env
from kwheel_fixtures import (
    ALL_VARIANTS,
    EXPECTED,
    NOARCH_VARIANTS,
    arch_of,
    expected_filename,
    expected_tags,
    make_kernel_repo,
    tree_state,
)

TOOL_TIMEOUT = 120


def sha256(p: Path) -> str:
    return hashlib.sha256(Path(p).read_bytes()).hexdigest()


def wheels_in(d: Path) -> list[Path]:
    return sorted(Path(d).glob("*.whl"))


def run(cmd, env=None, cwd=None) -> subprocess.CompletedProcess:
    env = dict(env or clean_env())
    env["PIP_CONFIG_FILE"] = os.devnull  # no machine-wide find-links or index
    env["UV_NO_CONFIG"] = "1"
    return subprocess.run([str(c) for c in cmd], capture_output=True, text=True, env=env, cwd=cwd, timeout=TOOL_TIMEOUT)


def parallel(fn, items):
    """Runs fn over items on two threads (the CI machine has two cores);
    returns the failures as text so one assert reports all of them."""
    with ThreadPoolExecutor(max_workers=2) as pool:
        results = list(pool.map(fn, items))
    return [r for r in results if r]


def variant_of(report: dict, wheel: Path) -> str:
    for v in report["variants"]:
        if v.get("filename") == wheel.name:
            return v["variant"]
    raise AssertionError(f"{wheel.name} is not in the report")


def dist_info_text(wheel: Path, member: str) -> str:
    with zipfile.ZipFile(wheel) as z:
        (name,) = [n for n in z.namelist() if n.endswith(".dist-info/" + member) and n.count("/") == 1]
        return z.read(name).decode("utf-8")


# ---------------------------------------------------------------- fixtures


@pytest.fixture(scope="module")
def repo(tmp_path_factory) -> Path:
    return make_kernel_repo(tmp_path_factory.mktemp("repo"))


@pytest.fixture(scope="module")
def built(repo, build_json, tmp_path_factory):
    """All variants, default options (--manylinux auto)."""
    out = tmp_path_factory.mktemp("dist-auto")
    return build_json(repo, out), out


@pytest.fixture(scope="module")
def built_2_28(repo, build_json, tmp_path_factory):
    """All variants with an explicit --manylinux 2_28."""
    out = tmp_path_factory.mktemp("dist-2_28")
    return build_json(repo, out, "--manylinux", "2_28"), out


# ---------------------------------------------------------------- report and names


def test_json_report_shape(built):
    report, out = built
    assert report["ok"] is True and report["committed"] is True
    assert sorted(v["variant"] for v in report["variants"]) == sorted(ALL_VARIANTS)
    for v in report["variants"]:
        name = v["variant"]
        label, requires = EXPECTED[name]
        assert v["status"] == "built", v
        assert v["filename"] == expected_filename(name), name
        wheel = out / v["filename"]
        assert Path(v["wheel"]).resolve() == wheel.resolve()
        assert v["sha256"] == sha256(wheel), name
        assert v["size"] == wheel.stat().st_size, name
        assert v["tags"] == expected_tags(name), name
        assert v["version"] == ("0.1.0+" + label if label else "0.1.0")
        assert v["requires_dist"] == requires
        assert v["package"] == "img2gray"
    assert sorted(p.name for p in wheels_in(out)) == sorted(v["filename"] for v in report["variants"])
    # Nothing else visible in the output dir (kwheel's build state is hidden).
    assert sorted(p.name for p in out.iterdir() if not p.name.startswith(".")) == sorted(p.name for p in wheels_in(out))


@pytest.mark.parametrize("which", ["auto", "2_28"])
def test_parse_wheel_filename(which, built, built_2_28):
    report, out = built if which == "auto" else built_2_28
    for wheel in wheels_in(out):
        variant = variant_of(report, wheel)
        name, version, build, tags = parse_wheel_filename(wheel.name)
        label = EXPECTED[variant][0]
        assert name == "img2gray"
        assert build == ()
        assert version == Version("0.1.0+" + label if label else "0.1.0")
        assert version.local == (label or None)
        assert str(version) == ("0.1.0+" + label if label else "0.1.0"), "label must already be normalised"
        assert tags == frozenset(Tag(*t.split("-")) for t in expected_tags(variant, which)), wheel.name


def test_metadata_and_wheel_files(built):
    report, out = built
    for wheel in wheels_in(out):
        variant = variant_of(report, wheel)
        label, requires = EXPECTED[variant]
        md = Metadata.from_email(dist_info_text(wheel, "METADATA"), validate=True)
        assert md.metadata_version == "2.4"
        assert md.name == "img2gray"
        assert md.version == Version("0.1.0+" + label if label else "0.1.0")
        assert md.requires_python == SpecifierSet(">=3.9")
        assert [str(r) for r in md.requires_dist] == [str(Requirement(requires))]
        assert md.summary and "img2gray" in md.summary
        assert md.description_content_type == "text/markdown"
        assert variant in md.description
        whl = dist_info_text(wheel, "WHEEL")
        fields = [tuple(line.split(": ", 1)) for line in whl.splitlines() if line]
        assert fields[0] == ("Wheel-Version", "1.0")
        assert fields[1][0] == "Generator" and fields[1][1].startswith("kwheel ")
        assert ("Root-Is-Purelib", "true" if variant in NOARCH_VARIANTS else "false") in fields
        assert [v for k, v in fields if k == "Tag"] == expected_tags(variant)


# ---------------------------------------------------------------- real tools accept every wheel


def pip_platform_args(variant: str) -> list[str]:
    """pip --platform values describing a machine the wheel targets; the
    x86_64 Linux and pure-Python wheels install on this host as they are."""
    if variant.endswith("-darwin"):
        return ["--platform", "macosx_26_0_arm64"]  # pip expands to older macOS
    if arch_of(variant) == "aarch64":
        # A glibc 2.28 aarch64 system: pip does not expand manylinux_2_28 downwards.
        args = ["--platform", "manylinux2014_aarch64"]
        for minor in range(17, 29):
            args += ["--platform", f"manylinux_2_{minor}_aarch64"]
        return args
    return []


def uv_platform_args(variant: str) -> tuple[list[str], dict[str, str]]:
    if variant.endswith("-darwin"):
        return ["--python-platform", "aarch64-apple-darwin"], {"MACOSX_DEPLOYMENT_TARGET": "26.0"}
    if arch_of(variant) == "aarch64":
        return ["--python-platform", "aarch64-manylinux_2_28"], {}
    return [], {}


def installed_ok(target: Path, wheel: Path) -> str:
    """'' if target holds the package and a dist-info whose RECORD lists it."""
    dist_infos = list(target.rglob("img2gray-*.dist-info"))
    if len(dist_infos) != 1:
        return f"{wheel.name}: expected one dist-info under {target}, found {dist_infos}"
    if not (dist_infos[0].parent / "img2gray" / "__init__.py").is_file():
        return f"{wheel.name}: img2gray/__init__.py not installed beside {dist_infos[0]}"
    return ""


def test_pip_install_target(built, venv_python, tmp_path):
    report, out = built

    def one(wheel: Path) -> str:
        variant = variant_of(report, wheel)
        target = tmp_path / variant
        r = run([venv_python, "-m", "pip", "install", "--no-deps", "--no-index", "--no-cache-dir", "--disable-pip-version-check",
                 "--no-compile", "--target", target, *pip_platform_args(variant), wheel])
        if r.returncode != 0:
            return f"pip refused {wheel.name}:\n{r.stdout}{r.stderr}"
        return installed_ok(target, wheel)

    assert parallel(one, wheels_in(out)) == []


def test_pip_refuses_wheels_for_other_platforms(built, venv_python, tmp_path):
    """The tags mean something: without --platform, this x86_64 Linux host
    must refuse the aarch64 and macOS wheels (so the test above can fail)."""
    report, out = built
    for wheel in wheels_in(out):
        variant = variant_of(report, wheel)
        if not pip_platform_args(variant):
            continue
        r = run([venv_python, "-m", "pip", "install", "--no-deps", "--no-index", "--target", tmp_path / variant, wheel])
        assert r.returncode != 0 and "not a supported wheel on this platform" in r.stdout + r.stderr, wheel.name


def test_uv_pip_install_target(built, venv_python, venv_bin, tmp_path):
    report, out = built

    def one(wheel: Path) -> str:
        variant = variant_of(report, wheel)
        args, env = uv_platform_args(variant)
        target = tmp_path / variant
        r = run([venv_bin / "uv", "pip", "install", "--no-deps", "--offline", "--no-cache", "--target", target,
                 "--python", venv_python, *args, wheel],
                env=clean_env(UV_NO_PROGRESS="1", **env))
        if r.returncode != 0:
            return f"uv refused {wheel.name}:\n{r.stdout}{r.stderr}"
        return installed_ok(target, wheel)

    assert parallel(one, wheels_in(out)) == []


def test_installer_validate_record_all(built, venv_python, tmp_path):
    _, out = built

    def one(wheel: Path) -> str:
        dest = tmp_path / wheel.name
        r = run([venv_python, "-m", "installer", "--validate-record", "all", "--no-compile-bytecode", "--destdir", dest, wheel])
        if r.returncode != 0:
            return f"installer refused {wheel.name}:\n{r.stdout}{r.stderr}"
        return "" if list(dest.rglob("img2gray/__init__.py")) else f"{wheel.name}: nothing installed under {dest}"

    assert parallel(one, wheels_in(out)) == []


def test_installer_api_validate_contents(built):
    from installer.sources import WheelFile

    _, out = built
    for wheel in wheels_in(out):
        with WheelFile.open(wheel) as source:
            source.validate_record(validate_contents=True)
            assert {"METADATA", "WHEEL", "RECORD"} <= set(source.dist_info_filenames)


def test_installer_and_wheel_refuse_a_tampered_wheel(built, venv_python, tmp_path):
    """The validators above can fail: same wheel, one member's bytes changed."""
    from installer.exceptions import InstallerError
    from installer.sources import WheelFile

    _, out = built
    good = out / expected_filename("torch-universal")
    bad = tmp_path / good.name
    with zipfile.ZipFile(good) as src, zipfile.ZipFile(bad, "w", zipfile.ZIP_DEFLATED) as dst:
        for info in src.infolist():
            data = src.read(info)
            if info.filename == "img2gray/_ops.py":
                data = data.replace(b"torch", b"TORCH")
            dst.writestr(info, data)
    with WheelFile.open(bad) as source, pytest.raises(InstallerError, match="_ops.py"):
        source.validate_record(validate_contents=True)
    r = run([venv_python, "-m", "wheel", "unpack", "-d", tmp_path / "u", bad])
    assert r.returncode != 0 and "Hash mismatch" in r.stdout + r.stderr


def test_wheel_unpack(built, venv_python, tmp_path):
    _, out = built

    def one(wheel: Path) -> str:
        dest = tmp_path / wheel.name
        r = run([venv_python, "-m", "wheel", "unpack", "-d", dest, wheel])
        if r.returncode != 0:
            return f"wheel unpack refused {wheel.name}:\n{r.stdout}{r.stderr}"
        return "" if list(dest.rglob("img2gray/_ops.py")) else f"{wheel.name}: unpacked nothing"

    assert parallel(one, wheels_in(out)) == []


def test_twine_check_strict(built, venv_python):
    _, out = built
    wheels = wheels_in(out)
    r = run([venv_python, "-m", "twine", "check", "--strict", *wheels])
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.count("PASSED") == len(wheels), r.stdout


def test_check_wheel_contents(built, venv_bin):
    _, out = built
    wheels = wheels_in(out)
    r = run([venv_bin / "check-wheel-contents", *wheels])
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.count(": OK") == len(wheels), r.stdout


def pip_pick(venv_python: Path, links: Path) -> str:
    r = run([venv_python, "-m", "pip", "install", "--dry-run", "--no-deps", "--no-index", "--find-links", links,
             "--disable-pip-version-check", "--ignore-installed", "--report", "-", "--quiet", "img2gray==0.1.0"])
    assert r.returncode == 0, r.stdout + r.stderr
    (item,) = json.loads(r.stdout)["install"]
    return item["metadata"]["version"]


def test_pip_picks_the_highest_pep440_version_unpinned(built, venv_python, tmp_path):
    """`pip install img2gray==0.1.0` with every wheel on offer (x86_64
    Linux): pip takes the highest version by PEP 440 (packaging), whose
    local-label rules therefore decide the variant. Pure-Python labels
    (`torch.xpu`) sort below every native `torch2…` one, so the newest
    native build wins: torch 2.10 over 2.9 (kernels' torch210cu130 sorts
    below torch29...); see docs/wheel-naming.md."""
    report, out = built
    installable = [v["version"] for v in report["variants"] if not v["variant"].endswith("-darwin") and arch_of(v["variant"]) != "aarch64"]
    assert pip_pick(venv_python, out) == str(max(map(Version, installable))) == "0.1.0+torch2.10.cu130"

    native = tmp_path / "native"
    native.mkdir()
    for v in report["variants"]:
        if v["variant"].endswith("x86_64-linux"):
            os.link(out / v["filename"], native / v["filename"])
    assert pip_pick(venv_python, native) == "0.1.0+torch2.10.cu130"


# ---------------------------------------------------------------- reproducibility


def test_two_builds_are_byte_identical(repo, built, build_json, tmp_path):
    report, _ = built
    again = build_json(repo, tmp_path / "again")
    assert {v["filename"]: v["sha256"] for v in again["variants"]} == {v["filename"]: v["sha256"] for v in report["variants"]}
    assert all(v["reused"] is False for v in again["variants"])


def test_changed_input_byte_changes_only_that_wheel(repo, built, build_json, tmp_path):
    report, _ = built
    copy = tmp_path / "img2gray"
    shutil.copytree(repo, copy, symlinks=True)
    ops = copy / "build" / "torch-cuda" / "img2gray" / "_ops.py"
    data = bytearray(ops.read_bytes())
    data[0] ^= 0x01  # same size, one bit
    ops.write_bytes(bytes(data))
    changed = build_json(copy, tmp_path / "dist")
    before = {v["variant"]: v["sha256"] for v in report["variants"]}
    after = {v["variant"]: v["sha256"] for v in changed["variants"]}
    assert {k for k in before if before[k] != after[k]} == {"torch-cuda"}


def test_source_date_epoch_and_time_zone(repo, built, build_json, tmp_path):
    report, _ = built
    default = {v["variant"]: v["sha256"] for v in report["variants"]}
    sde = build_json(repo, tmp_path / "sde", "--variant", "torch-*", "--variant", "torch27-cxx11-cu126-x86_64-linux",
                     env=clean_env(SOURCE_DATE_EPOCH="1700000000", TZ="UTC"))
    sde_hashes = {v["variant"]: v["sha256"] for v in sde["variants"] if v["status"] == "built"}
    assert len(sde_hashes) == 7
    assert all(sde_hashes[k] != default[k] for k in sde_hashes)
    # Same instant, other zones (one with DST in November, one east of UTC): same bytes.
    for tz in ("EST5EDT,M3.2.0,M11.1.0", "LINT-14"):  # POSIX TZ strings: no tzdata needed
        other = build_json(repo, tmp_path / tz.replace("/", "_").replace(",", "_"), "--variant", "torch-*", "--variant", "torch27-cxx11-cu126-x86_64-linux",
                           env=clean_env(SOURCE_DATE_EPOCH="1700000000", TZ=tz))
        assert {v["variant"]: v["sha256"] for v in other["variants"] if v["status"] == "built"} == sde_hashes, tz
    wheel = tmp_path / "sde" / expected_filename("torch-universal")
    with zipfile.ZipFile(wheel) as z:
        assert {i.date_time for i in z.infolist()} == {(2023, 11, 14, 22, 13, 20)}  # 1700000000 in UTC
    with zipfile.ZipFile(built[1] / expected_filename("torch-universal")) as z:
        assert {i.date_time for i in z.infolist()} == {(1980, 1, 1, 0, 0, 0)}


def test_malformed_source_date_epoch_is_a_usage_error(repo, run_kwheel, tmp_path):
    r = run_kwheel("build", repo, "--version", "0.1.0", "-o", tmp_path / "d", env=clean_env(SOURCE_DATE_EPOCH="yesterday"))
    assert r.returncode == 2
    assert "SOURCE_DATE_EPOCH" in r.stderr
    assert not (tmp_path / "d").exists()


# ---------------------------------------------------------------- bad repos: named, nothing written


def _unknown_backend(repo: Path, outside: Path) -> tuple[str, str]:
    v = repo / "build" / "torch27-cxx11-opencl3-x86_64-linux" / "img2gray"
    v.mkdir(parents=True)
    (v / "__init__.py").write_text("")
    return "torch27-cxx11-opencl3-x86_64-linux", "unknown backend 'opencl3'"


def _missing_package_dir(repo: Path, outside: Path) -> tuple[str, str]:
    v = repo / "build" / "torch-rocm"
    (v / "docs").mkdir(parents=True)
    (v / "docs" / "README.md").write_text("no package here\n")
    return "torch-rocm", "no package directory 'img2gray/'"


def _empty_variant(repo: Path, outside: Path) -> tuple[str, str]:
    (repo / "build" / "torch-xpu").mkdir(parents=True)
    return "torch-xpu", "empty"


def _symlink_outside(repo: Path, outside: Path) -> tuple[str, str]:
    link = repo / "build" / "torch-universal" / "img2gray" / "secret.py"
    link.symlink_to(outside)
    return "build/torch-universal/img2gray/secret.py", "outside the repo"


def _symlink_dotdot(repo: Path, outside: Path) -> tuple[str, str]:
    link = repo / "build" / "torch-universal" / "img2gray" / "escape.py"
    rel = os.path.relpath(outside, link.parent)
    assert ".." in rel
    link.symlink_to(rel)
    return "build/torch-universal/img2gray/escape.py", "outside the repo"


BAD = {
    "unknown-backend": _unknown_backend,
    "missing-package-dir": _missing_package_dir,
    "empty-variant": _empty_variant,
    "symlink-outside": _symlink_outside,
    "symlink-dotdot-escape": _symlink_dotdot,
}
GOOD = ["torch-universal", "torch27-cxx11-cu126-x86_64-linux"]


@pytest.mark.parametrize("dist_before", ["absent", "older-wheels"])
@pytest.mark.parametrize("case", sorted(BAD))
def test_bad_repo_fails_naming_it_and_leaves_dist_alone(case, dist_before, run_kwheel, tmp_path):
    outside = tmp_path / "outside.txt"
    outside.write_text("not part of the repo\n")
    repo = make_kernel_repo(tmp_path / "src", variants=GOOD)
    dist = tmp_path / "dist"
    if dist_before == "older-wheels":
        run_kwheel("build", repo, "--version", "0.0.9", "-o", dist, check=True)  # real wheels + kwheel's state
        (dist / "unrelated.txt").write_text("keep me\n")
        assert len(wheels_in(dist)) == 2
    before = tree_state(dist)
    culprit, reason = BAD[case](repo, outside)

    r = run_kwheel("build", repo, "--version", "0.1.0", "-o", dist)
    assert r.returncode == 3, r.stdout + r.stderr  # 3: bad input (see kwheel --help)
    lines = [line for line in (r.stdout + r.stderr).splitlines() if culprit in line]
    assert len(lines) == 1, f"expected one line naming {culprit}:\n{r.stdout}{r.stderr}"
    assert reason in lines[0], lines[0]
    assert tree_state(dist) == before
    if dist_before == "absent":
        assert not dist.exists()

    j = run_kwheel("build", repo, "--version", "0.1.0", "-o", dist, "--json")
    assert j.returncode == 3
    report = json.loads(j.stdout)
    assert report["ok"] is False
    assert culprit in json.dumps(report)
    assert tree_state(dist) == before


def test_good_variants_of_a_bad_repo_build_when_filtered(run_kwheel, tmp_path):
    repo = make_kernel_repo(tmp_path / "src", variants=GOOD)
    _unknown_backend(repo, tmp_path)
    r = run_kwheel("build", repo, "--version", "0.1.0", "-o", tmp_path / "dist", "--variant", "torch-universal", "--json")
    assert r.returncode == 0, r.stdout + r.stderr
    assert [p.name for p in wheels_in(tmp_path / "dist")] == [expected_filename("torch-universal")]


# ---------------------------------------------------------------- options


def test_variant_filter(repo, build_json, tmp_path):
    report = build_json(repo, tmp_path / "dist", "--variant", "torch27-*", "--variant", "torch-universal")
    status = {v["variant"]: v["status"] for v in report["variants"]}
    chosen = {"torch27-cxx11-cu126-x86_64-linux", "torch27-cxx11-rocm63-x86_64-linux", "torch27-metal-aarch64-darwin", "torch-universal"}
    assert {k for k, s in status.items() if s == "built"} == chosen
    assert {k for k, s in status.items() if s == "filtered"} == set(ALL_VARIANTS) - chosen
    assert all("filename" not in v for v in report["variants"] if v["status"] == "filtered")
    assert sorted(p.name for p in wheels_in(tmp_path / "dist")) == sorted(expected_filename(v) for v in chosen)


def test_variant_filter_matching_nothing(repo, run_kwheel, tmp_path):
    r = run_kwheel("build", repo, "--version", "0.1.0", "-o", tmp_path / "dist", "--variant", "torch99-*")
    assert r.returncode == 5, r.stderr  # not found
    assert "torch-universal" in r.stderr  # lists what is available
    assert not (tmp_path / "dist").exists()


def test_missing_version_is_a_usage_error(repo, run_kwheel, tmp_path):
    r = run_kwheel("build", repo, "-o", tmp_path / "dist")
    assert r.returncode == 2, r.stdout + r.stderr
    assert "--version" in r.stderr
    assert not (tmp_path / "dist").exists()


def test_name_and_min_python(repo, build_json, tmp_path):
    report = build_json(repo, tmp_path / "dist", "--name", "img2gray", "--min-python", "3.11", "--variant", "torch27-cxx11-cu126-x86_64-linux")
    (v,) = [v for v in report["variants"] if v["status"] == "built"]
    assert v["filename"] == "img2gray-0.1.0+torch2.7.cu126-cp311-abi3-manylinux1_x86_64.manylinux_2_5_x86_64.whl"
    md = Metadata.from_email(dist_info_text(tmp_path / "dist" / v["filename"], "METADATA"), validate=True)
    assert md.requires_python == SpecifierSet(">=3.11")


# ---------------------------------------------------------------- RECORD escaping

ODD_NAMES = ["img2gray/a,b.py", 'img2gray/say "hi".py', "img2gray/grüße_ñ.py", "img2gray/data/x,\"y\"é.txt"]


def test_record_escaping_accepted_by_installer_pip_and_wheel(run_kwheel, venv_python, tmp_path):
    extra = {f"build/torch-universal/{n}": f"# {n}\n".encode() for n in ODD_NAMES}
    repo = make_kernel_repo(tmp_path / "src", variants=["torch-universal"], extra=extra)
    run_kwheel("build", repo, "--version", "0.1.0", "-o", tmp_path / "dist", check=True)
    (wheel,) = wheels_in(tmp_path / "dist")

    rows = list(csv.reader(io.StringIO(dist_info_text(wheel, "RECORD"))))
    by_path = {row[0]: row for row in rows}
    for n in ODD_NAMES:
        assert n in by_path, (n, list(by_path))
        data = f"# {n}\n".encode()
        import base64

        assert by_path[n][1] == "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        assert by_path[n][2] == str(len(data))
    with zipfile.ZipFile(wheel) as z:
        for n in ODD_NAMES:
            assert z.getinfo(n).flag_bits & 0x800 or n.isascii()  # UTF-8 names flagged

    from installer.sources import WheelFile

    with WheelFile.open(wheel) as source:
        source.validate_record(validate_contents=True)
    for cmd in (
        [venv_python, "-m", "installer", "--validate-record", "all", "--no-compile-bytecode", "--destdir", tmp_path / "inst", wheel],
        [venv_python, "-m", "pip", "install", "--no-deps", "--no-index", "--target", tmp_path / "pip", wheel],
        [venv_python, "-m", "wheel", "unpack", "-d", tmp_path / "unpacked", wheel],
    ):
        r = run(cmd)
        assert r.returncode == 0, f"{cmd}\n{r.stdout}{r.stderr}"
    for n in ODD_NAMES:
        assert (tmp_path / "pip" / n).read_text() == f"# {n}\n"
