"""A `file://` index gets the limits an HTTP one has (issue: unbounded file:// pages).

A page of a `file://` index used to be read whole, and a file it linked was
read or hashed wherever it led: a variant index page linking `/dev/zero` as its
variants.json grew kwheel to about 1 GiB until `std::bad_alloc`, and `pin --lock`
from a plain project page linking `/dev/zero` hashed it for ever. A link may now
lead only to a regular file of the site the page was read from (symlinks
resolved), and pages, variants.json files and wheels are capped as over HTTP.

Every kwheel here runs under a wall-clock timeout and a memory limit
(RLIMIT_AS for a plain binary; ASan's hard_rss_limit_mb for a sanitizer
build, which cannot run under RLIMIT_AS): a regression fails the test, it
does not take the machine with it. Each case must end in exit 3 with one
error line naming the page, the link and the fix. Pages are PEP 691 JSON
(a `filename` beside each `url`) or PEP 503 HTML, written here; the wheels
linked from outside the site are real archives a baseline kwheel pins.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import resource
import subprocess
import zipfile
from pathlib import Path

import pytest

TIMEOUT_S = 60
MEMORY_BYTES = 4 << 30
NAME = "demo"
WHEEL = f"{NAME}-1-py3-none-any.whl"
COMMIT = "1" * 40


def tiny_wheel(path: Path, name: str, version: str) -> Path:
    """A pure-Python wheel laid out as the binary distribution format spec says."""
    di = f"{name}-{version}.dist-info"
    files = {f"{name}/__init__.py": b"",
             f"{di}/METADATA": f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\nKeywords: hf-kernel\nRequires-Dist: torch\n".encode(),
             f"{di}/WHEEL": b"Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n"}
    record = "".join(f"{k},sha256={base64.urlsafe_b64encode(hashlib.sha256(v).digest()).rstrip(b'=').decode()},{len(v)}\n" for k, v in files.items())
    files[f"{di}/RECORD"] = (record + f"{di}/RECORD,,\n").encode()
    path.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(path, "w") as z:
        for k, v in files.items():
            z.writestr(k, v)
    return path


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def is_asan(binary: Path) -> bool:
    """A sanitizer build imports ASan's entry point (libasan is linked dynamically)."""
    with open(binary, "rb") as f:
        return b"__asan_init" in f.read()


def bounded_kwheel(kwheel_bin: Path, *args, cwd: Path) -> subprocess.CompletedProcess:
    """kwheel ARGS under TIMEOUT_S and MEMORY_BYTES; a timeout fails the test."""
    env = {k: v for k, v in os.environ.items() if k not in {"SOURCE_DATE_EPOCH", "TZ"}}
    preexec = None
    if is_asan(kwheel_bin):
        env["ASAN_OPTIONS"] = ":".join(filter(None, [env.get("ASAN_OPTIONS", ""), f"hard_rss_limit_mb={MEMORY_BYTES >> 20}"]))
    else:
        preexec = lambda: resource.setrlimit(resource.RLIMIT_AS, (MEMORY_BYTES, MEMORY_BYTES))  # noqa: E731
    try:
        return subprocess.run([str(kwheel_bin), *map(str, args)], capture_output=True, text=True, env=env, cwd=cwd,
                              timeout=TIMEOUT_S, preexec_fn=preexec)
    except subprocess.TimeoutExpired:
        pytest.fail(f"kwheel {' '.join(map(str, args))} ran past {TIMEOUT_S} s (reading a file without bound?)")


def one_error_line(p: subprocess.CompletedProcess, *needles: str) -> str:
    assert p.returncode == 3, (p.returncode, p.stdout, p.stderr[-2000:])
    assert p.stdout == "", p.stdout
    lines = [line for line in p.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("kwheel: error: "), p.stderr[-2000:]
    for n in needles:
        assert n in lines[0], (n, lines[0])
    return lines[0]


def root_page(simple: Path) -> None:
    """SIMPLE/index.json, the PEP 691 root page listing the one project."""
    simple.mkdir(parents=True, exist_ok=True)
    (simple / "index.json").write_text(json.dumps({"meta": {"api-version": "1.1"}, "projects": [{"name": NAME}]}))


def json_page(site: Path, files: list[dict]) -> str:
    """SITE/simple/demo/index.json listing `files` (and the root page); the index URL."""
    page = site / "simple" / NAME
    page.mkdir(parents=True, exist_ok=True)
    root_page(site / "simple")
    (page / "index.json").write_text(json.dumps({"meta": {"api-version": "1.1"}, "name": NAME, "files": files}))
    return (site / "simple").as_uri() + "/"


def entry(filename: str, url: str, digest: str) -> dict:
    return {"filename": filename, "url": url, "hashes": {"sha256": digest}}


def page_of(index: str) -> str:
    return f"index page {index}{NAME}/ links "


FIX = "a file:// index may link only regular files of its own site"


def test_lock_from_a_project_page_linking_dev_zero_ends_at_once(kwheel_bin, tmp_path):
    site = tmp_path / "site"
    index = json_page(site, [entry(WHEEL, "file:///dev/zero", "a" * 64)])
    lock = tmp_path / "kernels.lock"
    lock.write_text(json.dumps([{"dependency": {"repo-id": f"org/{NAME}", "version": 1}, "lock": {"commit": COMMIT}}]))
    p = bounded_kwheel(kwheel_bin, "pin", index, "--lock", lock, "--torch", "2.7", "--cpu", "--no-deps", cwd=tmp_path)
    one_error_line(p, page_of(index) + "'file:///dev/zero'", "resolves to '/dev/zero', outside the site", FIX)


def test_a_variant_index_page_linking_dev_zero_ends_at_once(kwheel_bin, tmp_path):
    site = tmp_path / "site"
    variant = f"{NAME}-1+torch2.11-py3-none-any-null.whl"
    tiny_wheel(site / "files" / variant, NAME, "1+torch2.11")
    index = json_page(site, [entry(f"{NAME}-1+torch2.11-variants.json", "file:///dev/zero", "a" * 64),
                             entry(variant, f"../../files/{variant}", sha256(site / "files" / variant))])
    p = bounded_kwheel(kwheel_bin, "pin", index, "--torch", "2.11", "--cuda", "13.0", "--cuda-driver", "13.0", "--no-deps", cwd=tmp_path)
    one_error_line(p, page_of(index) + "'file:///dev/zero'", FIX)


@pytest.mark.parametrize("how", ["symlink", "absolute-path", "file-url", "dot-dot", "encoded-dot-dot"])
def test_a_link_out_of_the_site_is_refused(kwheel_bin, tmp_path, how):
    """The wheel outside the site is a real one with the right hash: read, it would be pinned."""
    site, elsewhere = tmp_path / "site", tmp_path / "elsewhere"
    wheel = tiny_wheel(elsewhere / WHEEL, NAME, "1")
    (site / "files").mkdir(parents=True)
    if how == "symlink":
        (site / "files" / WHEEL).symlink_to(wheel)
    url = {"symlink": f"../../files/{WHEEL}", "absolute-path": str(wheel), "file-url": wheel.as_uri(),
           "dot-dot": f"../../../elsewhere/{WHEEL}", "encoded-dot-dot": f"..%2F..%2F..%2Felsewhere%2F{WHEEL}"}[how]
    index = json_page(site, [entry(WHEEL, url, sha256(wheel))])
    for lock in (False, True):
        extra = []
        if lock:
            (tmp_path / "kernels.lock").write_text(json.dumps([{"dependency": {"repo-id": f"org/{NAME}", "version": 1}, "lock": {"commit": COMMIT}}]))
            extra = ["--lock", tmp_path / "kernels.lock"]
        p = bounded_kwheel(kwheel_bin, "pin", index, *extra, "--torch", "2.7", "--cpu", "--no-deps", cwd=tmp_path)
        one_error_line(p, page_of(index) + f"'{url}'", f"resolves to '{wheel.resolve()}', outside the site '{site.resolve()}'", FIX)


def test_an_html_page_linking_dev_zero_by_path_is_refused(kwheel_bin, tmp_path):
    site = tmp_path / "site"
    page = site / "simple" / NAME
    page.mkdir(parents=True)
    (site / "files").mkdir()
    (site / "files" / WHEEL).symlink_to("/dev/zero")
    root_page(site / "simple")
    (page / "index.html").write_text(f'<!DOCTYPE html>\n<html><body>\n<a href="../../files/{WHEEL}#sha256={"a" * 64}">{WHEEL}</a>\n</body></html>\n')
    index = (site / "simple").as_uri() + "/"
    p = bounded_kwheel(kwheel_bin, "pin", index, "--torch", "2.7", "--cpu", "--no-deps", cwd=tmp_path)
    one_error_line(p, page_of(index) + f"'../../files/{WHEEL}'", "resolves to '/dev/zero'", FIX)


def test_a_page_that_is_dev_zero_is_refused(kwheel_bin, tmp_path):
    site = tmp_path / "site"
    (site / "simple" / NAME).mkdir(parents=True)
    (site / "simple" / NAME / "index.html").symlink_to("/dev/zero")
    p = bounded_kwheel(kwheel_bin, "pin", (site / "simple").as_uri(), "--name", NAME, "--torch", "2.7", "--cpu", "--no-deps", cwd=tmp_path)
    one_error_line(p, f"{site / 'simple' / NAME / 'index.html'}' is not a regular file", "rebuild the index with `kwheel index`")


def test_a_kwheel_site_still_pins_through_a_symlinked_path(kwheel_bin, tmp_path):
    """The control: a site's own links (SITE/files/ from a sub-index) pin, also through a symlink to the site."""
    site = tmp_path / "site"
    wheel = tiny_wheel(site / "files" / WHEEL, NAME, "1")
    (site / "kwheel-index.json").write_text("{}")
    sub = site / "cpu" / "simple" / NAME
    sub.mkdir(parents=True)
    root_page(sub.parent)
    (sub / "index.json").write_text(json.dumps({"meta": {"api-version": "1.1"}, "name": NAME, "files": [entry(WHEEL, f"../../../files/{WHEEL}", sha256(wheel))]}))
    (tmp_path / "link").symlink_to(site)
    p = bounded_kwheel(kwheel_bin, "pin", (tmp_path / "link" / "cpu" / "simple").as_uri(), "--torch", "2.7", "--cpu", "--no-deps", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    assert p.stdout.splitlines()[-1] == f"{NAME}==1 --hash=sha256:{sha256(wheel)}", p.stdout
