"""Hostile wheels and index inputs (issue 14), against the real binary.

Zip bombs are built here byte by byte (zipbomb.py), never stored: an
overlapping-entry bomb (Fifield's quoted overlap, true CRCs, 51 GB from
1.7 MB), the full-overlap variant, a member past the 100:1 ratio limit, and
a member whose stream inflates past its declared size. Every command that
reads a wheel kwheel did not write (index, publish, validate, inspect)
must refuse each with a one-line error naming the wheel, exit non-zero, give
valid JSON with --json, and stay small while doing so: each run is measured
(peak RSS from wait4) and held under RLIMIT_FSIZE and RLIMIT_CPU, so a
regression that inflates the bomb dies of a signal instead of filling the
disk.

Index integrity: a METADATA version the filename does not carry, `-o`
through a symlink or with a trailing slash, two different wheels with one
filename, and a package directory that installers take for the wheel's own
metadata or data directory.
"""

from __future__ import annotations

import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

import pytest

import zipbomb
from hubtest import KWHEEL, clean_env, kwheel

pytestmark = pytest.mark.skipif(not os.access(KWHEEL, os.X_OK), reason=f"kwheel not built at {KWHEEL} (set KWHEEL_BIN)")

USAGE, INPUT, VALIDATION = 2, 3, 8
RSS_LIMIT_KB = 256 * 1024  # kwheel reading a 2 MB wheel needs a few MB; a bomb would need gigabytes
FILE_LIMIT = 64 << 20  # no file kwheel writes here may grow past this (inspect's extracted members included)
CPU_LIMIT_S = 60  # the overlapping bomb alone would take minutes of inflating


# --------------------------------------------------------------------------- running kwheel, measured


@dataclass
class Measured:
    returncode: int
    stdout: str
    stderr: str
    max_rss_kb: int
    json: dict | None

    def __str__(self) -> str:
        return f"exit {self.returncode}, peak RSS {self.max_rss_kb} KB\nstdout:\n{self.stdout}\nstderr:\n{self.stderr}"


def _limits() -> None:
    resource.setrlimit(resource.RLIMIT_FSIZE, (FILE_LIMIT, FILE_LIMIT))
    resource.setrlimit(resource.RLIMIT_CPU, (CPU_LIMIT_S, CPU_LIMIT_S))


def measured(*args, tmp: Path, env: dict | None = None) -> Measured:
    """kwheel ARGS --json under file-size and CPU limits; its own peak RSS from wait4."""
    env = dict(env or clean_env())
    scratch = tmp / "TMPDIR"
    scratch.mkdir(exist_ok=True)
    env["TMPDIR"] = str(scratch)
    # publish checks every wheel before it connects; the port has no server.
    env.update(TWINE_USERNAME="user", TWINE_PASSWORD="unused")
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        p = subprocess.Popen([KWHEEL, *map(str, args), "--json"], stdout=out, stderr=err, env=env, preexec_fn=_limits)
        _, status, usage = os.wait4(p.pid, 0)
        p.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read().decode(), err.read().decode()
    try:
        doc = json.loads(stdout)
    except ValueError:
        doc = None
    assert not any(scratch.iterdir()), f"kwheel left {list(scratch.iterdir())} in TMPDIR"
    return Measured(p.returncode, stdout, stderr, usage.ru_maxrss, doc)


def one_line_error(r: Measured) -> str:
    """The error of a refused run: one stderr line, the same text in the JSON."""
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("kwheel: error: "), str(r)
    assert r.json is not None and r.json["ok"] is False, str(r)
    assert r.json["error"] == lines[0].removeprefix("kwheel: error: "), str(r)
    assert r.json["exit_code"] == r.returncode, str(r)
    return r.json["error"]


# --------------------------------------------------------------------------- zip bombs


@dataclass
class Bomb:
    path: Path
    expect: str  # in the error
    inflates: int  # what inflating every member would produce, bytes


@pytest.fixture(scope="module")
def bombs(tmp_path_factory) -> dict[str, Bomb]:
    d = tmp_path_factory.mktemp("bombs")
    overlap, overlap_total = zipbomb.overlapping_bomb(d / "overlap")
    full, full_total = zipbomb.full_overlap_bomb(d / "full-overlap")
    ratio = zipbomb.high_ratio_wheel(d / "ratio")
    # A .so, so that `inspect` (which extracts only shared objects) meets it too.
    liar = zipbomb.lying_size_wheel(d / "lying-size", member="bomb/_bomb.abi3.so")
    return {
        "overlap": Bomb(overlap, "'bomb/_d0000.abi3.so' and 'bomb/_d0001.abi3.so' overlap in the archive", overlap_total),
        "full-overlap": Bomb(full, "'bomb/_data.abi3.so' and 'bomb/_data.abi3.so' overlap in the archive", full_total),
        "ratio": Bomb(ratio, "member 'bomb/_zeros.abi3.so' inflates", 200 * 10**6),
        "lying-size": Bomb(liar, "member 'bomb/_bomb.abi3.so': inflates past its declared 1000 bytes", 50 * 10**6),
    }


def test_the_bombs_are_what_they_claim(bombs):
    """The fixtures themselves: small files that inflate enormously, with CRCs a reader accepts."""
    import zipfile
    assert bombs["overlap"].path.stat().st_size < 2 * 10**6 and bombs["overlap"].inflates > 50 * 10**9
    assert bombs["full-overlap"].path.stat().st_size < 2 * 10**6 and bombs["full-overlap"].inflates > 50 * 10**9
    with zipfile.ZipFile(bombs["overlap"].path) as z:
        last = z.infolist()[-2]  # the last bomb member: the shared kernel alone, true CRC
        assert last.filename == "bomb/_d0199.abi3.so"
        assert z.read(last) == b"\0" * last.file_size
    with zipfile.ZipFile(bombs["ratio"].path) as z:
        i = z.getinfo("bomb/_zeros.abi3.so")
        assert i.file_size > 100 * i.compress_size > 100 * 10**6


COMMANDS = {
    "index": lambda w, tmp: ("index", w, "-o", tmp / "site"),
    "publish": lambda w, tmp: ("publish", w, "--repository-url", "http://127.0.0.1:9/legacy/"),
    "validate": lambda w, tmp: ("validate", w, "--python", sys.executable),
    "inspect": lambda w, tmp: ("inspect", w),
}


@pytest.mark.parametrize("kind", ["overlap", "full-overlap", "ratio", "lying-size"])
@pytest.mark.parametrize("command", list(COMMANDS))
def test_zip_bomb_is_refused_in_bounded_time_and_space(bombs, tmp_path, command, kind):
    bomb = bombs[kind]
    r = measured(*COMMANDS[command](bomb.path, tmp_path), tmp=tmp_path)
    assert r.returncode > 0, str(r)  # not killed by a limit: a signal reads negative
    assert r.max_rss_kb < RSS_LIMIT_KB, str(r)
    if command == "validate":
        # validate reports per wheel, and fails the run (exit 8) without installing it.
        assert r.returncode == VALIDATION, str(r)
        [w] = r.json["wheels"]
        assert w["result"] == "FAIL" and bomb.expect in w["reason"], str(r)
        return
    assert r.returncode == INPUT, str(r)
    error = one_line_error(r)
    assert bomb.expect in error, error
    assert bomb.path.name in error, error
    if kind in ("overlap", "full-overlap", "ratio"):
        assert "docs/wheel-naming.md" in error, error  # where the limits are documented
    assert not (tmp_path / "site").exists()


# --------------------------------------------------------------------------- index integrity


def test_index_and_publish_refuse_a_metadata_version_the_filename_does_not_carry(tmp_path):
    # Found from outside: listed under a cu126 sub-index it was never built for.
    liar = zipbomb.plain_wheel(tmp_path / "dist", name="demo", version="0.1.0", metadata_version="9.9.9+torch2.7.cu126")
    expect = "METADATA Version '9.9.9+torch2.7.cu126' does not match the filename's '0.1.0'"
    for args in (("index", liar, "-o", tmp_path / "site"),
                 ("publish", liar, "--repository-url", "http://127.0.0.1:9/legacy/")):
        r = measured(*args, tmp=tmp_path)
        assert r.returncode == INPUT, str(r)
        assert expect in one_line_error(r)
    assert not (tmp_path / "site").exists()
    # The same version spelled another way is the same version, as pip compares them.
    same = zipbomb.plain_wheel(tmp_path / "dist2", name="demo", version="1.0", metadata_version="1.0.0")
    r = measured("index", same, "-o", tmp_path / "site", tmp=tmp_path)
    assert r.returncode == 0, str(r)


def test_index_out_with_a_trailing_slash(tmp_path):
    wheel = zipbomb.plain_wheel(tmp_path / "dist", name="demo", version="0.1.0")
    site = tmp_path / "site"
    for expect in ("added", "unchanged"):
        r = kwheel("index", wheel, "-o", f"{site}/")
        assert r.returncode == 0, str(r)
        assert r.json[expect] == [wheel.name], str(r)
        assert r.json["site"] == str(site), str(r)
    assert (site / "simple" / "demo" / "index.html").is_file()
    assert not [p for p in tmp_path.iterdir() if "kwheel-new" in p.name], "scratch left beside the site"
    picked = pip_pick(f"file://{site}/simple", "demo")
    assert picked["metadata"]["version"] == "0.1.0"


def pip_pick(index_url: str, requirement: str) -> dict:
    """What pip would install from the index (dry run, --report)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PIP_")}
    env.update(PIP_CONFIG_FILE=os.devnull, PIP_DISABLE_PIP_VERSION_CHECK="1", PIP_NO_INPUT="1")
    p = subprocess.run([sys.executable, "-m", "pip", "install", "--dry-run", "--ignore-installed", "--no-deps", "--no-cache-dir", "-q",
                        "--report", "-", "--index-url", index_url, requirement], capture_output=True, text=True, env=env, timeout=120)
    assert p.returncode == 0, p.stdout + p.stderr
    [item] = json.loads(p.stdout)["install"]
    return item


@pytest.mark.parametrize("link_kind", ["relative", "absolute", "dangling"])
def test_index_out_through_a_symlink_writes_the_target_and_keeps_the_link(tmp_path, link_kind):
    """A web server serves www/current -> releases/site; `-o www/current` must update what it serves."""
    w1 = zipbomb.plain_wheel(tmp_path / "dist1", name="demo", version="0.1.0")
    w2 = zipbomb.plain_wheel(tmp_path / "dist2", name="demo", version="0.2.0")
    target = tmp_path / "releases" / "site"
    target.parent.mkdir()
    if link_kind != "dangling":
        r = kwheel("index", w1, "-o", target)
        assert r.returncode == 0, str(r)
    www = tmp_path / "www"
    www.mkdir()
    link = www / "current"
    link.symlink_to(os.path.relpath(target, www) if link_kind == "relative" else target)
    link_text = os.readlink(link)

    r = kwheel("index", w2, "-o", link)
    assert r.returncode == 0, str(r)
    assert link.is_symlink() and os.readlink(link) == link_text, "the link was replaced"
    assert r.json["site"] == str(target.resolve()), str(r)
    assert r.json["added"] == [w2.name], str(r)
    manifest = json.loads((target / "kwheel-index.json").read_text())
    expected = {w2.name} | ({w1.name} if link_kind != "dangling" else set())
    assert {f["filename"] for f in manifest["files"]} == expected
    assert sorted(p.name for p in www.iterdir()) == ["current"], "scratch or lock files beside the link"
    # pip, through the link, sees the new release.
    assert pip_pick(f"file://{link}/simple", "demo")["metadata"]["version"] == "0.2.0"


def test_two_different_wheels_with_one_filename_are_an_error(tmp_path):
    a = zipbomb.plain_wheel(tmp_path / "a", name="demo", version="0.1.0")
    b = zipbomb.plain_wheel(tmp_path / "b", name="demo", version="0.1.0", files={"demo/__init__.py": b"X = 2\n"})
    assert a.name == b.name and a.read_bytes() != b.read_bytes()
    r = measured("index", tmp_path / "a", tmp_path / "b", "-o", tmp_path / "site", tmp=tmp_path)
    assert r.returncode == INPUT, str(r)
    error = one_line_error(r)
    assert f"two different wheels are named '{a.name}'" in error and str(a) in error and str(b) in error, error
    assert not (tmp_path / "site").exists()
    # The same bytes twice (a file and a directory holding it, or a copy) are one wheel.
    c = tmp_path / "c" / a.name
    c.parent.mkdir()
    shutil.copy(a, c)
    r = kwheel("index", a, tmp_path / "a", c, "-o", tmp_path / "site")
    assert r.returncode == 0, str(r)
    assert r.json["added"] == [a.name], str(r)


@pytest.mark.parametrize("package", ["x-1.0.dist-info", "x-1.0.data"])
def test_build_refuses_a_package_directory_installers_take_for_the_wheels_own(tmp_path, package):
    repo = tmp_path / "repo"
    pkg = repo / "build" / "torch-universal" / package
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("X = 1\n")
    out = tmp_path / "out"
    r = kwheel("build", repo, "--version", "1.0", "-o", out)
    assert r.returncode == INPUT, str(r)
    [v] = r.json["variants"]
    assert v["status"] == "failed" and "\n" not in v["error"], str(r)
    assert f"package directory '{package}/'" in v["error"] and "rename the package directory" in v["error"], str(r)
    assert not out.exists() or not list(out.glob("*.whl"))
