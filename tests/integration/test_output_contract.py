"""The --json and exit-code contract when names are hostile (issue 14, class 10):
with --json every outcome is one valid JSON document (UTF-8, strings escaped),
control bytes from ELF names, zip members and file names never reach the
terminal raw, and a failure the filesystem reports is a one-line error with
its documented exit code, not "internal error". Real binary, real files built
here: a .so whose DT_NEEDED holds ESC, BEL and bytes that are not UTF-8 (linked
by the real linker against a library with that soname), a variant directory
with such a file name, and a directory nested past PATH_MAX."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import zipfile
from pathlib import Path

import pytest

import hubtest as H
from elfgen import shared_object

KWHEEL = H.KWHEEL
HOSTILE = b"lib\x1b]0;pwned\x07\x1b[2J\xff\xfe\xc2\x9b.so"
EXIT_CODES = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9}


def run(*args, json_out: bool = True) -> subprocess.CompletedProcess:
    argv = [os.fsencode(str(a)) if not isinstance(a, bytes) else a for a in args]
    if json_out:
        argv.append(b"--json")
    return subprocess.run([KWHEEL.encode(), *argv], capture_output=True, env=H.clean_env(), timeout=120)


def strict_json(out: bytes) -> dict:
    """One JSON document, and valid UTF-8 (json.loads of str would accept lone surrogates)."""
    return json.loads(out.decode("utf-8", errors="strict"))


def no_raw_controls(data: bytes) -> None:
    for bad in (b"\x1b", b"\x07", b"\xc2\x9b", b"\r"):
        assert bad not in data, data


@pytest.fixture(scope="module")
def hostile_so(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("hostile")
    (d / "dep.c").write_text("int dep(void) { return 1; }\n")
    (d / "k.c").write_text("int dep(void);\nint kernel(void) { return dep(); }\n")
    subprocess.run([b"cc", b"-shared", b"-fPIC", b"-nostdlib", b"-Wl,-soname," + HOSTILE, b"-o", bytes(d / "dep.so"), bytes(d / "dep.c")],
                   check=True)
    subprocess.run(["cc", "-shared", "-fPIC", "-nostdlib", "-o", d / "k.so", d / "k.c", d / "dep.so"], check=True)
    assert HOSTILE in (d / "k.so").read_bytes()
    return d / "k.so"


def test_inspect_reports_a_hostile_needed_name_as_json_and_escaped_text(hostile_so):
    r = run("inspect", hostile_so)
    assert r.returncode in EXIT_CODES - {1}, r
    report = strict_json(r.stdout)
    names = json.dumps(report)
    assert "pwned" in names  # the name is reported, escaped by the JSON encoder
    no_raw_controls(r.stdout + r.stderr)
    human = run("inspect", hostile_so, json_out=False)
    assert human.returncode == r.returncode, human
    no_raw_controls(human.stdout + human.stderr)
    assert b"lib\\x1b]0;pwned\\x07" in human.stdout + human.stderr


def test_inspect_of_a_wheel_with_hostile_member_names(tmp_path, hostile_so):
    wheel = tmp_path / "evil-0.1.0-py3-none-manylinux_2_17_x86_64.whl"
    member = "evil/\x1b[31mred\x1b[0m.so"
    with zipfile.ZipFile(wheel, "w") as z:
        z.writestr(member, hostile_so.read_bytes())
        z.writestr("evil-0.1.0.dist-info/METADATA", "Metadata-Version: 2.1\nName: evil\nVersion: 0.1.0\n")
        z.writestr("evil-0.1.0.dist-info/WHEEL", "Wheel-Version: 1.0\nRoot-Is-Purelib: false\nTag: py3-none-manylinux_2_17_x86_64\n")
        z.writestr("evil-0.1.0.dist-info/RECORD", "")
    for json_out in (True, False):
        r = run("inspect", wheel, json_out=json_out)
        assert r.returncode in EXIT_CODES - {1}, r
        no_raw_controls(r.stdout + r.stderr)
        if json_out:
            assert strict_json(r.stdout)


def test_build_json_with_a_non_utf8_file_name_outside_the_package(tmp_path):
    """The variant carries a stray file whose name is not UTF-8 (and holds ESC) beside its
    package: the build succeeds or fails cleanly, and either way its report is JSON."""
    variant = tmp_path / "repo" / "build" / "torch27-cxx11-cpu-x86_64-linux"
    pkg = variant / "img2gray"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("x = 1\n")
    (pkg / "_img2gray_abc1234.abi3.so").write_bytes(shared_object())
    with open(os.path.join(os.fsencode(str(variant)), b"notes-\xff\x1b[2J.txt"), "wb") as f:
        f.write(b"stray\n")
    out = tmp_path / "dist"
    r = run("build", tmp_path / "repo", "--version", "0.1.0", "--name", "img2gray", "-o", out)
    assert r.returncode in EXIT_CODES - {1}, r
    report = strict_json(r.stdout)
    assert report["ok"] == (r.returncode == 0), report
    no_raw_controls(r.stdout + r.stderr)
    if r.returncode == 0:
        assert [p.name for p in out.glob("*.whl")], report


def test_a_directory_the_filesystem_cannot_walk_is_a_one_line_io_error(tmp_path):
    """Nested past PATH_MAX (as root, permissions cannot make a directory unreadable; this
    is a walk the filesystem refuses all the same): exit 7, one line, JSON."""
    pkg = tmp_path / "repo" / "build" / "torch27-cxx11-cpu-x86_64-linux" / "img2gray"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("x = 1\n")
    fd = os.open(pkg, os.O_RDONLY)
    try:
        for _ in range(20):  # 20 x 251 bytes: well past PATH_MAX (4096)
            os.mkdir("d" * 250, dir_fd=fd)
            nxt = os.open("d" * 250, os.O_RDONLY, dir_fd=fd)
            os.close(fd)
            fd = nxt
        with open(os.open("deep.py", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd), "w") as f:
            f.write("y = 2\n")
    finally:
        os.close(fd)
    out = tmp_path / "dist"
    try:
        r = run("build", tmp_path / "repo", "--version", "0.1.0", "--name", "img2gray", "-o", out)
    finally:  # by descriptor: pytest's own cleanup walks full paths, which this one is past
        top = os.open(pkg, os.O_RDONLY)
        shutil.rmtree("d" * 250, dir_fd=top)
        os.close(top)
    assert r.returncode in (3, 7), r
    report = strict_json(r.stdout)
    assert report["ok"] is False and report["exit_code"] == r.returncode
    err_lines = [ln for ln in r.stderr.decode().splitlines() if ln.startswith("kwheel: ")]
    assert err_lines == [f"kwheel: error: {report['error']}"], r.stderr
    assert "internal error" not in report["error"]
    assert not out.exists() or not list(out.iterdir())


def test_a_command_line_that_does_not_parse_still_answers_in_json():
    r = run("build", "--no-such-option")
    assert r.returncode == 2, r
    report = strict_json(r.stdout)
    assert report == {"ok": False, "error": report["error"], "exit_code": 2}
    assert "--no-such-option" in report["error"]
    assert r.stderr.decode().strip() == f"kwheel: error: {report['error']}"
