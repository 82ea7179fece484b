"""The release wheel of scripts/release-wheel, as the machines of a team that
builds kernels on manylinux_2_28 get it.

What the wheel claims (manylinux_2_28_x86_64) is held to auditwheel's own
verdict, to kwheel's `inspect`, and to a scan of every ELF file in it:
nothing needs a GLIBC symbol version newer than 2.28 (the policy also caps
GLIBCXX at 3.4.25; libc++ is linked in, so none is needed at all), nor a
library outside the policy's whitelist. Then the wheel is installed as a
user installs it (`uv tool install` into a fresh tool directory) and that
binary builds, indexes and pins a kernel, reaching an HTTPS index through
--cert, through each CA variable, and through the system's CA store where
Debian and RHEL keep it (each layout made in a private mount namespace, so
the test needs no RHEL machine and changes nothing outside it).
"""

from __future__ import annotations

import base64
import contextlib
import functools
import hashlib
import http.server
import io
import json
import os
import re
import shutil
import ssl
import subprocess
import zipfile
from pathlib import Path

import pytest
from elftools.elf.elffile import ELFFile
from elftools.elf.gnuversions import GNUVerNeedSection

from conftest import ROOT
from kwheel_fixtures import ALL_VARIANTS, expected_filename, make_kernel_repo
from local_servers import serve_in_thread

TAG = "py3-none-manylinux_2_28_x86_64"
GLIBC_MAX = (2, 28)
TIMEOUT = 180
CA_VARIABLES = ["KWHEEL_CA_BUNDLE", "SSL_CERT_FILE", "REQUESTS_CA_BUNDLE", "PIP_CERT"]
# Every variable a TLS stack reads a CA from: none may help a check that is about another source.
ALL_CA_VARIABLES = [*CA_VARIABLES, "CURL_CA_BUNDLE", "SSL_CERT_DIR"]


def version() -> str:
    m = re.search(r"project\(kwheel VERSION ([0-9.]+)", (ROOT / "CMakeLists.txt").read_text())
    assert m
    return m.group(1)


def run(cmd, env=None, timeout=TIMEOUT) -> subprocess.CompletedProcess:
    return subprocess.run([str(c) for c in cmd], capture_output=True, text=True, env=env, timeout=timeout)


def ok(r: subprocess.CompletedProcess) -> subprocess.CompletedProcess:
    assert r.returncode == 0, f"{' '.join(map(str, r.args))} exited {r.returncode}\n{r.stdout}\n{r.stderr}"
    return r


def tls_env(home: Path, **extra) -> dict[str, str]:
    """This environment less every CA variable and proxy; HOME fresh."""
    env = {k: v for k, v in os.environ.items() if k not in ALL_CA_VARIABLES and "proxy" not in k.lower()
           and not k.startswith(("PIP_", "UV_", "KWHEEL_"))}
    home.mkdir(parents=True, exist_ok=True)
    env.update(HOME=str(home), PATH="/usr/bin:/bin", **{k: str(v) for k, v in extra.items()})
    return env


def policy(name: str) -> dict:
    doc = json.loads((ROOT / "manylinux" / "policy.json").read_text())
    (p,) = [p for p in doc["policies"] if p["name"] == name]
    return p


def members(wheel: Path) -> dict[str, bytes]:
    with zipfile.ZipFile(wheel) as z:
        return {n: z.read(n) for n in z.namelist() if not n.endswith("/")}


def elf_needs(data: bytes) -> tuple[set[str], dict[str, set[str]], str]:
    """DT_NEEDED, the symbol versions needed of each library (.gnu.version_r),
    and the program interpreter's file name ("" for a library)."""
    elf = ELFFile(io.BytesIO(data))
    interp = next((Path(seg.get_interp_name()).name for seg in elf.iter_segments() if seg["p_type"] == "PT_INTERP"), "")
    needed: set[str] = set()
    dyn = elf.get_section_by_name(".dynamic")
    if dyn:
        needed = {t.needed for t in dyn.iter_tags() if t.entry.d_tag == "DT_NEEDED"}
    versions: dict[str, set[str]] = {}
    for s in elf.iter_sections():
        if isinstance(s, GNUVerNeedSection):
            for verneed, aux in s.iter_versions():
                versions.setdefault(verneed.name, set()).update(a.name for a in aux)
    return needed, versions, interp


def as_tuple(v: str, prefix: str) -> tuple[int, ...]:
    return tuple(int(x) for x in v[len(prefix):].split("."))


# ------------------------------------------------------------------ the wheel's claim


def test_the_tag_is_manylinux_2_28(release_wheel: Path):
    dist = f"kwheel-{version()}"
    assert release_wheel.name == f"{dist}-{TAG}.whl", release_wheel.name
    wheel_file = members(release_wheel)[f"{dist}.dist-info/WHEEL"].decode()
    assert re.findall(r"^Tag: (.*)$", wheel_file, re.M) == [TAG], wheel_file


def test_auditwheel_and_kwheel_inspect_agree_it_is_manylinux_2_28_or_older(release_wheel: Path, venv_bin: Path, installed):
    aw = json.loads(ok(run([venv_bin / "auditwheel", "show", "--json", release_wheel])).stdout)
    glibc = lambda tag: tuple(int(x) for x in re.fullmatch(r"manylinux_(\d+)_(\d+)_x86_64", tag).groups())  # noqa: E731
    assert glibc(aw["overall_tag"]) <= GLIBC_MAX and glibc(aw["sym_tag"]) <= GLIBC_MAX, aw
    assert aw["external_libs"] == {}, aw["external_libs"]
    kw = json.loads(run([installed["kwheel"], "inspect", "--json", release_wheel]).stdout)
    assert kw["ok"] is True, kw["manylinux"]["problems"]
    assert kw["manylinux"]["platform_tag"] == aw["sym_tag"], (kw["manylinux"]["platform_tag"], aw["sym_tag"])
    assert kw["manylinux"]["external"] == []


def test_no_elf_needs_a_newer_glibc_a_libstdcxx_or_a_library_off_the_whitelist(release_wheel: Path):
    whitelist = set(policy("manylinux_2_28")["lib_whitelist"])
    elves = {n: d for n, d in members(release_wheel).items() if d[:4] == b"\x7fELF"}
    assert list(elves) == [f"kwheel-{version()}.data/scripts/kwheel"], list(elves)
    for name, data in elves.items():
        needed, versions, interp = elf_needs(data)
        # The loader itself may be named too (zig's link does, for __tls_get_addr); auditwheel
        # counts the interpreter as part of the system, as every policy must.
        assert interp == "ld-linux-x86-64.so.2", (name, interp)
        assert needed and needed - {interp} <= whitelist, (name, needed - whitelist)
        assert not any(lib.startswith(("libstdc++", "libgcc_s", "libc++")) for lib in needed), (name, needed)
        glibc = {v for vs in versions.values() for v in vs if v.startswith("GLIBC_") and v[6:7].isdigit()}
        assert glibc, f"{name}: no GLIBC version needed at all; the scan read nothing"
        newest = max(glibc, key=lambda v: as_tuple(v, "GLIBC_"))
        assert as_tuple(newest, "GLIBC_") <= GLIBC_MAX, (name, newest)
        cxx = {v for vs in versions.values() for v in vs if v.startswith(("GLIBCXX_", "CXXABI_"))}
        assert not cxx, (name, cxx)  # libc++ is in the binary: no C++ runtime of the system's is used


def test_record_names_every_file_with_its_hash_and_size(release_wheel: Path):
    files = members(release_wheel)
    record_name = f"kwheel-{version()}.dist-info/RECORD"
    rows = [ln.split(",") for ln in files[record_name].decode().splitlines()]
    listed = {r[0]: r for r in rows}
    assert set(listed) == set(files), set(listed) ^ set(files)
    assert listed[record_name][1:] == ["", ""]
    for name, data in files.items():
        if name == record_name:
            continue
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        assert listed[name][1:] == [f"sha256={digest}", str(len(data))], name


def test_every_library_built_in_has_its_license_in_the_wheel(release_wheel: Path):
    dist_info = f"kwheel-{version()}.dist-info"
    files = members(release_wheel)
    licensed = {n.split("/")[2] for n in files if n.startswith(f"{dist_info}/licenses/")}
    pinned = {ln.split()[0] for ln in (ROOT / "third_party/release/sources.lock").read_text().splitlines()
              if ln.strip() and not ln.startswith("#")}
    # What zig links into every binary, besides the pinned sources.
    assert pinned | {"zig", "zig-libcxx", "zig-libcxxabi", "zig-libunwind", "zig-glibc"} == licensed, licensed
    for name in pinned:
        assert f"{dist_info}/licenses/{name}/copyright" in files, name  # Debian's account of every file's license
    metadata = files[f"{dist_info}/METADATA"].decode()
    declared = set(re.findall(r"^License-File: (.*)$", metadata, re.M))
    assert declared == {n[len(f"{dist_info}/licenses/"):] for n in files if n.startswith(f"{dist_info}/licenses/")}


# ------------------------------------------------------------------ installed


@pytest.fixture(scope="module")
def installed(release_wheel: Path, venv_bin: Path, tmp_path_factory) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("uv-tool")
    env = dict(os.environ, UV_TOOL_DIR=str(d / "tools"), UV_TOOL_BIN_DIR=str(d / "bin"), UV_CACHE_DIR=str(d / "cache"),
               UV_OFFLINE="1", UV_PYTHON_DOWNLOADS="never", UV_NO_CONFIG="1")
    ok(run([venv_bin / "uv", "tool", "install", "--python", venv_bin / "python", release_wheel], env=env))
    return {"kwheel": d / "bin" / "kwheel"}


def test_uv_tool_install_puts_the_release_kwheel_on_path(installed, release_wheel: Path):
    assert ok(run([installed["kwheel"], "--version"])).stdout.strip() == f"kwheel {version()}"
    script = members(release_wheel)[f"kwheel-{version()}.data/scripts/kwheel"]
    assert installed["kwheel"].resolve().read_bytes() == script


@pytest.fixture(scope="module")
def site(installed, tmp_path_factory) -> Path:
    """A kernel from a directory repo, built and indexed by the installed kwheel."""
    work = tmp_path_factory.mktemp("release-site")
    repo = make_kernel_repo(work / "src")
    report = json.loads(ok(run([installed["kwheel"], "build", repo, "--version", "0.1.0", "-o", work / "dist", "--json"])).stdout)
    assert sorted(p.name for p in (work / "dist").glob("*.whl")) == sorted(expected_filename(v) for v in ALL_VARIANTS)
    assert {v["filename"] for v in report["variants"]} == {expected_filename(v) for v in ALL_VARIANTS}
    ok(run([installed["kwheel"], "index", work / "dist", "-o", work / "site", "-q"]))
    assert (work / "site" / "simple" / "img2gray").is_dir()
    return work / "site"


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


@contextlib.contextmanager
def https_server(root: Path, pki: dict[str, Path]):
    """`root` served over HTTPS with a certificate from the test CA."""
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_Quiet, directory=str(root)))
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(pki["cert"], pki["key"])
    srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
    srv.handle_error = lambda *a: None  # a client that refuses the certificate is part of the test
    with serve_in_thread(srv):
        yield f"https://127.0.0.1:{srv.server_address[1]}/simple/"


def pin(kwheel: Path, url: str, *args, env, wrap: list[str] | None = None) -> subprocess.CompletedProcess:
    return run([*(wrap or []), kwheel, "pin", url, "--torch", "2.7", "--cuda", "12.6", "--json", *args], env=env)


def pinned_ok(p: subprocess.CompletedProcess, site: Path) -> dict:
    ok(p)
    report = json.loads(p.stdout)
    wheel = expected_filename("torch27-cxx11-cu126-x86_64-linux")
    digest = hashlib.sha256(next(site.rglob(wheel)).read_bytes()).hexdigest()
    assert digest in p.stdout, report  # the build for torch 2.7/CUDA 12.6, pinned to the bytes the index serves
    return report


def test_installed_kwheel_pins_over_https_with_cert_and_refuses_without(installed, site, pki, tmp_path):
    with https_server(site, pki) as url:
        env = tls_env(tmp_path / "home")
        report = pinned_ok(pin(installed["kwheel"], url, "--cert", pki["ca"], env=env), site)
        assert report["connection"]["ca_from"] == "--cert"
        # The same server without the CA: this machine's store does not have it, so verification refuses it.
        p = pin(installed["kwheel"], url, env=env)
        assert p.returncode != 0 and "--cert" in p.stderr, (p.returncode, p.stderr)


def test_installed_kwheel_trusts_each_ca_variable(installed, site, pki, tmp_path):
    with https_server(site, pki) as url:
        for var in CA_VARIABLES:
            report = pinned_ok(pin(installed["kwheel"], url, env=tls_env(tmp_path / "home", **{var: pki["ca"]})), site)
            assert report["connection"]["ca_from"] == var


# Where each distribution keeps its CA bundle; the test CA is put in one
# place, the others are absent, in a copy of /etc bound over /etc.
LAYOUTS = {
    "debian": "ssl/certs/ca-certificates.crt",
    "rhel": "pki/tls/certs/ca-bundle.crt",
    "rhel-extracted": "pki/ca-trust/extracted/pem/tls-ca-bundle.pem",
}


@pytest.mark.parametrize("layout", sorted(LAYOUTS))
def test_installed_kwheel_finds_the_system_ca_store_of_debian_and_rhel(installed, site, pki, tmp_path, layout):
    if run(["unshare", "--mount", "true"]).returncode != 0:
        pytest.skip("no private mount namespace here (unshare --mount): cannot lay out another distribution's /etc")
    etc = tmp_path / "etc"
    shutil.copytree("/etc", etc, symlinks=True, ignore_dangling_symlinks=True,
                    ignore=shutil.ignore_patterns("shadow*", "gshadow*"))
    for rel in LAYOUTS.values():
        (etc / rel).unlink(missing_ok=True)
    (etc / LAYOUTS[layout]).parent.mkdir(parents=True, exist_ok=True)
    shutil.copy(pki["ca"], etc / LAYOUTS[layout])
    # unshare's shell binds the copy over /etc, then runs kwheel in its place.
    wrap = ["unshare", "--mount", "sh", "-c", 'mount --bind "$0" /etc && exec "$@"', str(etc)]
    with https_server(site, pki) as url:
        report = pinned_ok(pin(installed["kwheel"], url, env=tls_env(tmp_path / "home"), wrap=wrap), site)
        assert report["connection"]["ca_from"] == "system"
