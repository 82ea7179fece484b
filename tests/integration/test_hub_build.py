"""`kwheel build ORG/NAME` against the fixture Hub (tests/hub/): what issue 3 must show.

* a Hub build gives the very bytes a directory build gives (one writer), but for the
  "Hub revision" Project-URL naming the commit it came from;
* every injectable fault is survived (same wheels as a clean build) or fails
  with a one-line error and an exit code, never leaving a partial wheel in -o
  nor a corrupt blob in the cache;
* warm cache, --offline, HF_HUB_OFFLINE, tokens (never on the CDN, never
  printed), version specs, revisions, cache interop with huggingface_hub,
  `kwheel variants`, repo types: kernel repos by default (/api/kernels, kernels--
  cache folders), a model-only repo found as one with a warning, --repo-type model.

(The differential test against `kernels to-wheel`, kernels 0.10.5, lives on in
bench/ and scripts/compare-kernels-to-wheel: that kernels needs huggingface_hub < 2.)

Everything is counted at the fixture (its request log), never timed with sleeps.
"""

from __future__ import annotations

import concurrent.futures
import hashlib
import os
import re
import shutil
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

import hubtest as H
from hubtest import hubfix, kwheel

TOKEN = "hf_kwheelTestTOKEN_4f1d2c9b8a7e6d5c"
WRONG_TOKEN = "hf_kwheelWRONGtoken_0a1b2c3d4e5f6789"
USER = "user"
REPO = f"{USER}/img2gray"
PRIVATE = f"{USER}/img2gray-private"
GATED = f"{USER}/img2gray-gated"
DENIED = f"{USER}/img2gray-denied"
NOBUILD = f"{USER}/nobuild"
NOMETA = f"{USER}/nometa"            # variants without metadata.json, main only
MODEL_ONLY = f"{USER}/img2gray-model"  # served as a model repo only
PAGE_SIZE = 3

CU126 = "torch27-cxx11-cu126-x86_64-linux"
CU128 = "torch210-cxx11-cu128-x86_64-linux"
CPU = "torch27-cxx11-cpu-x86_64-linux"
UNIVERSAL = "torch-universal"



def with_variant(base: dict, variant: str, rev: str) -> dict:
    """`base` with build/<variant>/ replaced by that variant's files at `rev`."""
    return {**{p: b for p, b in base.items() if not p.startswith(f"build/{variant}/")}, **H.kernel_files(variant, rev)}


# History: v0.1.0 -> v0.1.1 -> v0.2.0 (branch v0) -> main (untagged).
C0 = {"README.md": b"# img2gray\n", **H.kernel_files(CU126, "a"), **H.kernel_files(CPU, "a"),
      **H.kernel_files(UNIVERSAL, "a")}
C1 = with_variant(with_variant(C0, CU126, "b"), CU128, "b")
C2 = {**with_variant(C1, UNIVERSAL, "c"), "README.md": b"# img2gray\n\nv0.2.0\n"}
C3 = with_variant(C2, CPU, "d")
V011 = {CU126, CU128, CPU, UNIVERSAL}


def variants_of(files: dict) -> set[str]:
    return {p.split("/")[1] for p in files if p.startswith("build/")}


def build_files(files: dict) -> dict[str, bytes]:
    return {p: b for p, b in files.items() if p.startswith("build/")}


def so_path(files: dict, variant: str) -> str:
    (p,) = [p for p in files if p.startswith(f"build/{variant}/") and p.endswith(".so")]
    return p


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


# --------------------------------------------------------------------------- fixtures


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    root = tmp_path_factory.mktemp("hubstore") / "root"
    repo = hubfix.make_repo(root, REPO, [C0, C1, C2, C3], branches={"main": 3, "v0": 2},
                            tags={"v0.1.0": 0, "v0.1.1": 1, "v0.2.0": 2},
                            messages=["Build v0.1.0", "Build v0.1.1", "Build v0.2.0", "Rebuild on main"])
    hubfix.make_repo(root, PRIVATE, [C1], private=True, tags={"v0.1.1": 0})
    hubfix.make_repo(root, GATED, [C1], gated="manual", tags={"v0.1.1": 0})
    hubfix.make_repo(root, DENIED, [C1], gated="auto", gated_granted=False, tags={"v0.1.1": 0})
    hubfix.make_repo(root, NOBUILD, [{"README.md": b"no build here\n"}], tags={"v0.1.0": 0})
    hubfix.make_repo(root, NOMETA, [{p: b for p, b in C1.items() if not p.endswith("/metadata.json")}])
    hubfix.make_repo(root, MODEL_ONLY, [C1], tags={"v0.1.1": 0}, types=["model"])
    return {"root": root, "shas": repo.shas, "dirs": [repo.dir / "commits" / s for s in repo.shas]}


@pytest.fixture(scope="module")
def hub(store):
    with hubfix.hub_server(store["root"], token=TOKEN, page_size=PAGE_SIZE) as srv:
        yield srv


@pytest.fixture(autouse=True)
def _fresh(request):
    """Each test starts with no faults armed and an empty request log."""
    if "hub" in request.fixturenames:
        srv = request.getfixturevalue("hub")
        srv.clear_faults()
        srv.clear_log()
        yield
        srv.clear_faults()
    else:
        yield


@dataclass
class Workspace:
    root: Path

    @property
    def cache(self) -> Path:
        return self.root / "cache"

    @property
    def out(self) -> Path:
        return self.root / "dist"

    @property
    def home(self) -> Path:
        return self.root / "home"

    def env(self, **extra) -> dict:
        self.home.mkdir(parents=True, exist_ok=True)
        return H.clean_env(self.home, **extra)


@pytest.fixture
def ws(tmp_path) -> Workspace:
    return Workspace(tmp_path)


def hub_build(hub, ws: Workspace, *args, repo: str = REPO, env: dict | None = None, cache=True, out=None):
    argv = ["build", repo, "--endpoint", hub.endpoint, "-o", out or ws.out]
    if cache:
        argv += ["--cache-dir", ws.cache]
    return kwheel(*argv, *args, env=env if env is not None else ws.env())


@pytest.fixture(scope="module")
def clean_dir(store, tmp_path_factory) -> Path:
    """The v0.1.1 wheels built from the commit's directory (no network): their -o."""
    out = tmp_path_factory.mktemp("clean") / "dist"
    r = kwheel("build", store["dirs"][1], "--version", "0.1.1", "--name", "img2gray", "-o", out)
    assert r.returncode == 0, str(r)
    shas = H.wheel_shas(r)
    assert len(shas) == len(V011) and H.dir_shas(out) == shas
    return out


@pytest.fixture(scope="module")
def clean(hub, store, clean_dir, tmp_path_factory) -> dict[str, str]:
    """{filename: sha256} of the v0.1.1 wheels of a fault-free build from this module's fixture Hub,
    each the directory build's wheel plus the commit's "Hub revision" Project-URL."""
    d = tmp_path_factory.mktemp("clean-hub")
    r = kwheel("build", REPO, "--endpoint", hub.endpoint, "--cache-dir", d / "cache", "-o", d / "dist",
               "--version", "0.1.1", env=H.clean_env(d / "home"))
    assert r.returncode == 0, str(r)
    assert r.json["source"]["commit"] == store["shas"][1] and r.json["source"]["repo_type"] == "kernel"
    H.assert_like_directory_build(r, d / "dist", clean_dir, REPO)
    return H.wheel_shas(r)


def assert_survived(r: H.Run, ws: Workspace, clean: dict[str, str]) -> None:
    """The build succeeded with exactly the clean wheels, nothing else in -o, a sound cache."""
    assert r.returncode == 0 and r.json and r.json["ok"] and r.json["committed"], str(r)
    assert H.wheel_shas(r) == clean, str(r)
    assert H.dir_shas(ws.out) == clean
    counts = H.check_cache(ws.cache)
    assert counts["incomplete"] == 0, counts


def assert_failed(r: H.Run, ws: Workspace, exit_code: int, *needles: str, out_before: dict | None = None) -> str:
    """Exit code, a one-line error naming what failed, -o as it was (nothing new, nothing partial),
    no corrupt blob cached, no token printed."""
    assert r.returncode == exit_code, str(r)
    assert r.json is not None and r.json["ok"] is False and r.json["exit_code"] == exit_code, str(r)
    err = r.json["error"]
    assert "\n" not in err and err, str(r)
    lines = [ln for ln in r.stderr.splitlines() if ln.startswith("kwheel: error:")]
    assert lines == [f"kwheel: error: {err}"], str(r)
    for n in needles:
        assert n.lower() in err.lower(), f"{n!r} not in error: {err}"
    assert H.dir_shas(ws.out) == (out_before or {}), f"-o changed: {sorted(os.listdir(ws.out))}"
    assert {p.name for p in ws.root.iterdir()} <= {"cache", "dist", "home"}, "staging left beside -o"
    H.check_cache(ws.cache)
    for secret in (TOKEN, WRONG_TOKEN):
        assert secret not in r.output
    return err


# --------------------------------------------------------------------------- one writer


def test_hub_build_is_byte_identical_to_directory_build(hub, store, ws, clean, clean_dir):
    r = hub_build(hub, ws, "--version", "0.1.1")
    assert_survived(r, ws, clean)
    # the directory build's bytes, plus one METADATA line: the commit it came from, as a tree URL
    H.assert_like_directory_build(r, ws.out, clean_dir, REPO)
    for v in r.json["variants"]:
        w = H.read_wheel(ws.out / v["filename"])
        assert ("Hub revision, " + H.hub_revision_url(REPO, store["shas"][1])) in w.meta("Project-URL")
    # one wheel per variant
    assert sorted(v["variant"] for v in r.json["variants"]) == sorted(V011)
    assert all(v["status"] == "built" for v in r.json["variants"])
    src = r.json["source"]
    assert src["type"] == "hub" and src["repo"] == REPO and src["endpoint"] == hub.endpoint
    assert src["commit"] == store["shas"][1] and src["ref"] == "v0.1.1" and src["version"] == "0.1.1"
    assert src["token"] == "none"
    # every wheel: RECORD right, package files are the repo's bytes
    for v in r.json["variants"]:
        H.check_record(ws.out / v["filename"])
        w = H.read_wheel(ws.out / v["filename"])
        want = {p.split("/", 2)[2]: b for p, b in build_files(C1).items()
                if p.startswith(f"build/{v['variant']}/img2gray/")}
        # the variant's metadata.json (beside the package) is packaged inside it
        want["img2gray/metadata.json"] = C1[f"build/{v['variant']}/metadata.json"]
        assert w.package_files() == want
    # every file was fetched once: identical contents (the __init__.py of every variant) share a blob
    etags = {sha256(b) if p.endswith(".so") else hubfix.git_blob_oid(b) for p, b in build_files(C1).items()}
    assert H.cached_blob_names(ws.cache) == etags
    resolves = [e for e in hub.log(kind="resolve") if e["method"] == "GET"]
    assert len(resolves) == len(etags)
    assert all(e["revision"] == store["shas"][1] or store["shas"][1] in e["path"] for e in resolves)
    tree_pages = hub.log(kind="tree")
    assert len(tree_pages) > 5  # the small page size forced pagination
    unique = {(sha256(b) if p.endswith(".so") else hubfix.git_blob_oid(b)): len(b) for p, b in build_files(C1).items()}
    assert r.json["transfers"]["bytes_downloaded"] == sum(unique.values())


def test_variants_are_packed_while_later_ones_still_download(hub, store, ws, clean):
    """Downloads and packing overlap: with the last variant's .so withheld by the server, every
    other wheel gets staged (a complete temp file beside its final name, not yet committed)
    before that one download is answered; then the build finishes with the clean wheels."""
    held_variant = sorted(v for v in V011 if v != UNIVERSAL)[-1]
    fault = hub.add_fault("hold", path=f"*/build/{held_variant}/img2gray/*.so", max_seconds=60)
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        run = pool.submit(hub_build, hub, ws, "--version", "0.1.1", "-j", "2")
        try:
            end = time.monotonic() + 60
            while True:  # polling for files to appear, not a synchronisation sleep
                staged = sorted(p.name for p in ws.out.glob(".*.kwheel-tmp-*")) if ws.out.exists() else []
                held = [e for e in hub.log() if e.get("held") and "released" not in e]
                if held and len(staged) == len(V011) - 1:
                    break
                assert time.monotonic() < end and not run.done(), f"staged {staged}, held {held}"
                time.sleep(0.02)
            assert not [p for p in ws.out.iterdir() if p.name.endswith(".whl") and not p.name.startswith(".")]
            assert not [n for n in staged if f"+{_ours_local(held_variant)}-" in n], staged
        finally:
            hub.release(fault["id"])
        r = run.result()
    assert_survived(r, ws, clean)
    assert hub.fault(fault["id"])["fired"] == 1


def _ours_local(variant: str) -> str:
    m = re.match(r"torch(\d)(\d+)-cxx11-(cu\d+|cpu)-", variant)
    return f"torch{m.group(1)}.{m.group(2)}.{m.group(3)}"


# --------------------------------------------------------------------------- faults: survived


def _cdn_path(data: bytes) -> str:
    return f"/repos/*/{sha256(data)}"


def _resolve_path(path: str) -> str:
    return f"/kernels/{REPO}/resolve/*/{path}"


SO_CU126 = so_path(C1, CU126)
OPS_CU128 = f"build/{CU128}/img2gray/_ops.py"


@pytest.mark.parametrize("where", ["cdn-lfs", "hub-plain"])
def test_fault_drop_mid_file_resumes_with_range(hub, ws, clean, where):
    if where == "cdn-lfs":
        data = C1[SO_CU126]
        f = hub.add_fault("drop", listener="cdn", path=_cdn_path(data), after_bytes=20_000)
    else:
        data = C1[OPS_CU128]
        f = hub.add_fault("drop", listener="hub", path=_resolve_path(OPS_CU128), after_bytes=50)
    after = 20_000 if where == "cdn-lfs" else 50
    r = hub_build(hub, ws, "--version", "0.1.1")
    assert_survived(r, ws, clean)
    assert hub.fault(f["id"])["fired"] == 1
    hits = [e for e in hub.log() if e["fault"] and e["fault"]["id"] == f["id"]]
    assert len(hits) == 1 and hits[0]["bytes"] == after and hits[0]["range"] is None
    same = [e for e in hub.log(path=hits[0]["path"]) if e["seq"] > hits[0]["seq"] and e["method"] == "GET"]
    # resumed: the next request for the file asks for the rest only, and gets it
    assert same and same[0]["range"] == f"bytes={after}-" and same[0]["status"] == 206, same
    assert same[0]["bytes"] == len(data) - after
    assert r.json["transfers"]["retries"] >= 1


def test_fault_corrupt_once_is_retried(hub, ws, clean):
    data = C1[SO_CU126]
    f = hub.add_fault("corrupt", listener="cdn", path=_cdn_path(data), offset=1000, count=64)
    r = hub_build(hub, ws, "--version", "0.1.1")
    assert_survived(r, ws, clean)
    gets = [e for e in hub.log(listener="cdn", file=sha256(data)) if e["method"] == "GET"]
    assert len(gets) == 2 and gets[0]["fault"]["id"] == f["id"] and gets[1]["fault"] is None
    assert gets[1]["range"] is None  # wrong bytes are never resumed from: fetched whole again


@pytest.mark.parametrize("where", ["api", "resolve"])
def test_fault_429_waits_retry_after(hub, ws, clean, where):
    path = f"/api/kernels/{REPO}/refs" if where == "api" else _resolve_path(OPS_CU128)
    f = hub.add_fault("status", status=429, retry_after=1, path=path)
    r = hub_build(hub, ws, "--version", "0.1.1")
    assert_survived(r, ws, clean)
    entries = [e for e in hub.log() if e["fault"] and e["fault"]["id"] == f["id"]]
    assert len(entries) == 1 and entries[0]["status"] == 429
    retry = [e for e in hub.log(path=entries[0]["path"]) if e["seq"] > entries[0]["seq"]]
    assert retry and retry[0]["status"] == 200
    waited = retry[0]["time"] - entries[0]["time"]
    assert waited >= 1.0, f"retried after {waited:.3f}s, before Retry-After: 1"
    assert waited < 10, waited


@pytest.mark.parametrize("status,where", [(500, "api-refs"), (503, "api-tree-page-2"), (500, "resolve-plain"),
                                          (503, "resolve-lfs"), (503, "cdn")])
def test_fault_5xx_is_retried(hub, ws, clean, status, where):
    spec = {
        "api-refs": dict(path=f"/api/kernels/{REPO}/refs"),
        "api-tree-page-2": dict(path=f"/api/kernels/{REPO}/tree/*", skip=1),
        "resolve-plain": dict(path=_resolve_path(OPS_CU128)),
        "resolve-lfs": dict(path=_resolve_path(SO_CU126)),
        "cdn": dict(listener="cdn", path=_cdn_path(C1[SO_CU126])),
    }[where]
    f = hub.add_fault("status", status=status, times=2, **spec)
    r = hub_build(hub, ws, "--version", "0.1.1")
    assert_survived(r, ws, clean)
    assert hub.fault(f["id"])["fired"] == 2
    hits = [e for e in hub.log() if e["fault"] and e["fault"]["id"] == f["id"]]
    assert [e["status"] for e in hits] == [status, status]
    later = [e for e in hub.log(path=hits[-1]["path"]) if e["seq"] > hits[-1]["seq"]]
    assert later and later[0]["status"] in (200, 302)
    assert r.json["transfers"]["retries"] >= 2


@pytest.mark.parametrize("status", [501, 505])
def test_fault_5xx_that_cannot_succeed_is_asked_once(hub, ws, status):
    """501 Not Implemented and 505 say the request can never succeed there (issue #33): one
    request, and a one-line error with the status, not five tries."""
    f = hub.add_fault("status", status=status, times=5, path=f"/api/kernels/{REPO}/refs")
    r = hub_build(hub, ws, "--version", "0.1.1")
    assert_failed(r, ws, 4, f"HTTP {status}")
    assert hub.fault(f["id"])["fired"] == 1
    assert r.json["error"].count("attempts") == 0, r.json["error"]


@pytest.mark.parametrize("where", ["cdn", "api"])
def test_fault_slow_response_is_waited_for(hub, ws, clean, where):
    if where == "cdn":
        f = hub.add_fault("slow", listener="cdn", path=_cdn_path(C1[SO_CU126]), delay=0.3,
                          bytes_per_sec=150_000)
    else:
        f = hub.add_fault("slow", path=f"/api/kernels/{REPO}/tree/*", delay=0.5)
    r = hub_build(hub, ws, "--version", "0.1.1")
    assert_survived(r, ws, clean)
    (hit,) = [e for e in hub.log() if e["fault"] and e["fault"]["id"] == f["id"]]
    assert hit["status"] == 200
    if where == "cdn":
        assert hit["bytes"] == len(C1[SO_CU126])  # the slow answer itself was used, in full
        assert not [e for e in hub.log(path=hit["path"]) if e["seq"] > hit["seq"]]


@pytest.mark.parametrize("on", ["refs", "tree"])
def test_fault_truncated_json_once_is_retried(hub, ws, clean, on):
    f = hub.add_fault("truncate_json", path=f"/api/kernels/{REPO}/{on}*")
    r = hub_build(hub, ws, "--version", "0.1.1")
    assert_survived(r, ws, clean)
    assert hub.fault(f["id"])["fired"] == 1


@pytest.mark.parametrize("where", ["api", "hub-resolve", "cdn"])
def test_fault_disconnect_without_answer_is_retried(hub, ws, clean, where):
    spec = {"api": dict(path=f"/api/kernels/{REPO}/tree/*"),
            "hub-resolve": dict(path=_resolve_path(OPS_CU128)),
            "cdn": dict(listener="cdn", path=_cdn_path(C1[SO_CU126]))}[where]
    f = hub.add_fault("disconnect", **spec)
    r = hub_build(hub, ws, "--version", "0.1.1")
    assert_survived(r, ws, clean)
    (hit,) = [e for e in hub.log() if e["fault"] and e["fault"]["id"] == f["id"]]
    assert hit["status"] is None
    later = [e for e in hub.log(path=hit["path"]) if e["seq"] > hit["seq"]]
    assert later and later[0]["status"] in (200, 302)


def test_fault_tree_lie_about_lfs_pointer_oid_is_harmless(hub, ws, clean):
    """An LFS file's git oid is its pointer's; its content is checked by the LFS sha256 instead."""
    f = hub.add_fault("tree_lie", field="oid", file=SO_CU126, times=None)
    r = hub_build(hub, ws, "--version", "0.1.1")
    assert_survived(r, ws, clean)
    assert hub.fault(f["id"])["fired"] >= 1


# --------------------------------------------------------------------------- faults: failing clearly


def test_fault_corrupt_always_fails_with_sha256_mismatch(hub, ws):
    data = C1[SO_CU126]
    f = hub.add_fault("corrupt", listener="cdn", path=_cdn_path(data), offset=1000, count=64, times=None)
    r = hub_build(hub, ws, "--version", "0.1.1")
    assert_failed(r, ws, 4, "sha256 mismatch", SO_CU126, REPO)
    fired = hub.fault(f["id"])["fired"]
    assert 2 <= fired <= 10, fired  # retried, a bounded number of times
    assert sha256(data) not in H.cached_blob_names(ws.cache)
    assert not list(ws.cache.glob(f"*/blobs/{sha256(data)}*"))  # not even a partial


@pytest.mark.parametrize("where", ["api", "resolve"])
def test_fault_redirect_loop_fails(hub, ws, where):
    path = f"/api/kernels/{REPO}/refs" if where == "api" else _resolve_path(SO_CU126)
    f = hub.add_fault("redirect_loop", path=path, times=None)
    r = hub_build(hub, ws, "--version", "0.1.1")
    err = assert_failed(r, ws, 4, "too many redirects")
    assert (f"/{REPO}/refs" in err) if where == "api" else (SO_CU126 in err and REPO in err)
    assert 2 <= hub.fault(f["id"])["fired"] <= 12


def test_fault_redirect_without_location_fails_and_keeps_existing_output(hub, ws):
    ws.out.mkdir(parents=True)
    (ws.out / "old-0.0.1-py3-none-any.whl").write_bytes(b"an earlier wheel")
    before = H.dir_shas(ws.out)
    f = hub.add_fault("headers", path=_resolve_path(SO_CU126), remove=["Location"])
    r = hub_build(hub, ws, "--version", "0.1.1")
    assert_failed(r, ws, 4, SO_CU126, REPO, "302", out_before=before)
    assert hub.fault(f["id"])["fired"] == 1


def test_network_down_fails_clearly(store, ws):
    with hubfix.hub_server(store["root"]) as srv:
        endpoint = srv.endpoint  # a port that was just listening, now closed
    r = kwheel("build", REPO, "--endpoint", endpoint, "--cache-dir", ws.cache, "-o", ws.out, "--version", "0.1.1",
               env=ws.env())
    assert_failed(r, ws, 4, endpoint, "attempts")


def test_concurrent_builds_share_the_cache(hub, ws, clean, tmp_path):
    """Two builds at once into one cache: both succeed, and every file is downloaded once."""
    procs = []
    for i in range(2):
        argv = [H.KWHEEL, "build", REPO, "--endpoint", hub.endpoint, "--cache-dir", str(ws.cache), "-o",
                str(tmp_path / f"out{i}"), "--version", "0.1.1", "--json"]
        procs.append(subprocess.Popen(argv, env=ws.env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
    for i, p in enumerate(procs):
        out, err = p.communicate(timeout=120)
        assert p.returncode == 0, err
        assert H.dir_shas(tmp_path / f"out{i}") == clean
    unique = {sha256(b) if p.endswith(".so") else hubfix.git_blob_oid(b) for p, b in build_files(C1).items()}
    assert H.check_cache(ws.cache)["blobs"] == len(unique)
    assert hub.downloads() == len(unique)


@pytest.mark.parametrize("on", ["refs", "tree"])
def test_fault_truncated_json_always_fails(hub, ws, on):
    f = hub.add_fault("truncate_json", path=f"/api/kernels/{REPO}/{on}*", times=None)
    r = hub_build(hub, ws, "--version", "0.1.1")
    assert_failed(r, ws, 4, REPO, "JSON")
    assert 2 <= hub.fault(f["id"])["fired"] <= 10
    assert hub.downloads() == 0
    assert H.check_cache(ws.cache)["blobs"] == 0


@pytest.mark.parametrize("field,path,needle,downloads", [
    ("size", SO_CU126, "inconsistent sizes", False),         # tree size != lfs.size: caught in the listing
    ("lfs_size", SO_CU126, "inconsistent sizes", False),
    ("lfs_oid", SO_CU126, "sha256 mismatch", True),          # caught on the bytes
    ("oid", OPS_CU128, "git blob id mismatch", True),
    ("size", OPS_CU128, "expected", True),
])
def test_fault_tree_lie_fails_and_writes_nothing(hub, ws, field, path, needle, downloads):
    f = hub.add_fault("tree_lie", field=field, file=path, times=None)
    r = hub_build(hub, ws, "--version", "0.1.1")
    assert_failed(r, ws, 4, needle, path)
    assert hub.fault(f["id"])["fired"] >= 1
    true_etag = sha256(C1[path]) if path.endswith(".so") else hubfix.git_blob_oid(C1[path])
    assert true_etag not in H.cached_blob_names(ws.cache)
    assert not list(ws.cache.glob("*/snapshots/*"))  # no snapshot of a commit that failed
    if not downloads:
        assert hub.downloads() == 0 and H.check_cache(ws.cache)["blobs"] == 0


# A repo whose tree listing names a file no installer may write: refused
# before anything is downloaded, with a one-line error naming the entry,
# and nothing written anywhere (the escape target is checked explicitly).
HOSTILE_PATHS = {
    "dotdot": ("build/{v}/img2gray/../../../../escaped.py", "'..' path component"),
    "absolute": ("{root}/escaped.py", "absolute path"),
    "backslash": ("build\\{v}\\..\\..\\escaped.py", "backslash"),
    "nul": ("build/{v}/img2gray/escaped.py\u0000.so", "NUL byte"),
    "newline": ("build/{v}/img2gray/escaped\n.py", "control character"),
    "long-name": ("build/{v}/img2gray/" + "n" * 300 + ".py", "longer than 255"),
    "variant-like-a-path": ("build/{root}/img2gray/escaped.py", "empty path component"),
    "variant-dotdot": ("build/../escaped/img2gray/_ops.py", "'..' path component"),
}


@pytest.mark.parametrize("case", sorted(HOSTILE_PATHS))
def test_hostile_tree_path_is_refused_and_nothing_is_written(hub, ws, case):
    template, reason = HOSTILE_PATHS[case]
    value = template.format(v=CU128, root=ws.root)
    hub.add_fault("tree_lie", field="path", value=value, file=OPS_CU128, times=None)
    r = hub_build(hub, ws, "--version", "0.1.1")
    err = assert_failed(r, ws, 3, REPO, reason, "refusing")
    if "\n" not in value and "\0" not in value:
        assert value in err
    assert hub.downloads() == 0 and H.check_cache(ws.cache)["blobs"] == 0
    assert not [p for p in ws.root.parent.rglob("escaped*")], "a hostile path was written"


def test_file_listed_twice_is_refused(hub, ws):
    hub.add_fault("tree_lie", field="duplicate", file=OPS_CU128, times=None)
    r = hub_build(hub, ws, "--version", "0.1.1")
    assert_failed(r, ws, 3, REPO, OPS_CU128, "twice")
    assert hub.downloads() == 0


# --------------------------------------------------------------------------- Hub errors


def test_repo_not_found(hub, ws):
    r = hub_build(hub, ws, repo=f"{USER}/does-not-exist")
    assert_failed(r, ws, 5, f"{USER}/does-not-exist", "not found")


def test_private_repo_without_token_looks_not_found(hub, ws):
    r = hub_build(hub, ws, "--version", "0.1.1", repo=PRIVATE)
    err = assert_failed(r, ws, 5, PRIVATE, "not found")
    assert "--token" in err or "HF_TOKEN" in err


def test_gated_repo_without_token(hub, ws):
    r = hub_build(hub, ws, "--version", "0.1.1", repo=GATED)
    assert_failed(r, ws, 6, GATED, "gated")


def test_gated_repo_granted_with_token(hub, ws, clean_dir):
    r = hub_build(hub, ws, "--version", "0.1.1", "--name", "img2gray", "--token", TOKEN, repo=GATED)
    assert r.returncode == 0, str(r)
    H.assert_like_directory_build(r, ws.out, clean_dir, GATED)
    assert TOKEN not in r.output
    assert not any(e["auth"] for e in hub.log(listener="cdn"))


def test_gated_repo_not_granted(hub, ws):
    r = hub_build(hub, ws, "--version", "0.1.1", "--token", TOKEN, repo=DENIED)
    assert_failed(r, ws, 6, DENIED, "gated")
    assert [e["status"] for e in hub.log(kind="resolve")][:1] == [403]


def test_revision_not_found_lists_branches_and_tags(hub, ws):
    r = hub_build(hub, ws, "--revision", "v9.9")
    err = assert_failed(r, ws, 5, "v9.9", REPO)
    for ref in ("main", "v0", "v0.1.0", "v0.1.1", "v0.2.0"):
        assert re.search(rf"\b{re.escape(ref)}\b", err), (ref, err)


def test_repo_without_build_directory(hub, ws):
    r = hub_build(hub, ws, "--version", "0.1.0", repo=NOBUILD)
    assert_failed(r, ws, 5, NOBUILD, "has no build/ directory")


# --------------------------------------------------------------------------- cache and --offline


def test_warm_cache_downloads_nothing(hub, ws, clean):
    cold = hub_build(hub, ws, "--version", "0.1.1")
    assert_survived(cold, ws, clean)
    assert hub.downloads() > 0
    hub.clear_log()
    shutil.rmtree(ws.out)
    warm = hub_build(hub, ws, "--version", "0.1.1")
    assert_survived(warm, ws, clean)
    log = hub.log()
    assert [e for e in log if e["kind"] in ("resolve", "cdn")] == []
    assert hub.downloads() == 0 and warm.json["transfers"]["bytes_downloaded"] == 0
    assert {e["kind"] for e in log} <= {"organizations", "refs", "tree"}  # publisher trust is asked on every run, as kernels does


def test_offline_builds_from_cache_with_server_stopped(store, ws, clean_dir):
    with hubfix.hub_server(store["root"], page_size=PAGE_SIZE) as srv:
        endpoint = srv.endpoint
        r = hub_build(srv, ws, "--version", "0.1.1")
        assert r.returncode == 0, str(r)
        H.assert_like_directory_build(r, ws.out, clean_dir, REPO)
        clean = H.wheel_shas(r)
        assert_survived(r, ws, clean)
    # the server is gone: any request would fail with exit code 4
    for args, extra in [(["--offline", "--version", "0.1.1"], {}),
                        (["--version", "0.1.1"], {"HF_HUB_OFFLINE": "1"}),
                        (["--offline", "--version", ">=0.1,<0.2"], {}),
                        (["--offline", "--revision", store["shas"][1]], {})]:
        shutil.rmtree(ws.out, ignore_errors=True)
        r = kwheel("build", REPO, "--endpoint", endpoint, "--cache-dir", ws.cache, "-o", ws.out, *args,
                   env=ws.env(**extra))
        assert_survived(r, ws, clean)
        assert r.json["source"]["commit"] == store["shas"][1] and r.json["source"]["offline"] is True
        assert r.json["transfers"]["requests"] == 0
    # a revision the cache never saw fails clearly, offline
    shutil.rmtree(ws.out)
    r = kwheel("build", REPO, "--endpoint", endpoint, "--cache-dir", ws.cache, "-o", ws.out, "--offline",
               "--version", "0.2.0", env=ws.env())
    assert_failed(r, ws, 5, REPO, "0.2.0", "without --offline")


def test_offline_with_empty_cache_fails_clearly(hub, ws):
    r = hub_build(hub, ws, "--offline", "--version", "0.1.1")
    assert_failed(r, ws, 5, REPO, "--offline")
    r = hub_build(hub, ws, "--revision", "main", env=ws.env(HF_HUB_OFFLINE="1"))
    assert_failed(r, ws, 5, REPO, "main", "cache")
    assert hub.log() == []


# --------------------------------------------------------------------------- tokens


@pytest.mark.parametrize("how", ["flag", "env", "file"])
def test_private_repo_with_token(hub, store, ws, clean_dir, how):
    args, extra = ["--version", "0.1.1", "--name", "img2gray"], {}
    if how == "flag":
        args += ["--token", TOKEN]
        source = "--token"
    elif how == "env":
        extra["HF_TOKEN"] = TOKEN
        source = "HF_TOKEN"
    else:
        ws.home.mkdir(parents=True)
        tok = ws.home / "token"
        tok.write_text(TOKEN + "\n")
        tok.chmod(0o600)
        source = str(tok)
    r = hub_build(hub, ws, *args, repo=PRIVATE, env=ws.env(**extra))
    assert r.returncode == 0, str(r)
    H.assert_like_directory_build(r, ws.out, clean_dir, PRIVATE)  # same files as user/img2gray v0.1.1
    assert r.json["source"]["token"] == f"from {source}"
    assert TOKEN not in r.output
    hub_log, cdn_log = hub.log(listener="hub"), hub.log(listener="cdn")
    bearer = hashlib.sha256(f"Bearer {TOKEN}".encode()).hexdigest()
    assert hub_log and all(e["auth"] and e["auth_sha256"] == bearer for e in hub_log)
    assert cdn_log and not any(e["auth"] for e in cdn_log)  # the token never reaches the CDN
    assert all(e["status"] == 200 for e in cdn_log)


def test_world_readable_token_file_is_used_with_a_warning(hub, ws, clean_dir):
    """The HF token file readable by every user: the build still uses it, and warns once on stderr,
    naming the file and the chmod that fixes it; at 0600 there is no warning."""
    ws.home.mkdir(parents=True)
    tok = ws.home / "token"
    tok.write_text(TOKEN + "\n")
    tok.chmod(0o644)
    r = hub_build(hub, ws, "--version", "0.1.1", "--name", "img2gray", repo=PRIVATE)
    assert r.returncode == 0, str(r)
    H.assert_like_directory_build(r, ws.out, clean_dir, PRIVATE)
    assert r.json["source"]["token"] == f"from {tok}"
    warnings = H.warnings(r.stderr)
    assert warnings == [f"kwheel: warning: token file {tok} is readable by every user; run: chmod 600 {tok}"], r.stderr
    assert TOKEN not in r.output

    tok.chmod(0o600)
    r = hub_build(hub, ws, "--version", "0.1.1", "--name", "img2gray", repo=PRIVATE)
    assert r.returncode == 0, str(r)
    assert "readable by every user" not in r.stderr


@pytest.mark.parametrize("how", ["flag", "env", "file"])
def test_wrong_token_fails_without_printing_it(hub, ws, how):
    extra, args = {}, []
    if how == "flag":
        args, source = ["--token", WRONG_TOKEN], "--token"
    elif how == "env":
        extra["HF_TOKEN"], source = WRONG_TOKEN, "HF_TOKEN"
    else:
        ws.home.mkdir(parents=True)
        (ws.home / "token").write_text(WRONG_TOKEN)
        (ws.home / "token").chmod(0o600)
        source = str(ws.home / "token")
    for repo in (PRIVATE, REPO):  # an unknown token is refused on public repos too: not "repo not found"
        r = hub_build(hub, ws, "--version", "0.1.1", *args, repo=repo, env=ws.env(**extra))
        err = assert_failed(r, ws, 6, repo, "rejected the token", f"(from {source})")
        assert "not found" not in err
        assert WRONG_TOKEN not in r.output
    v = kwheel("variants", PRIVATE, "--endpoint", hub.endpoint, "--cache-dir", ws.cache, *args,
               env=ws.env(**extra))
    assert v.returncode == 6 and WRONG_TOKEN not in v.output, str(v)
    assert not any(e["auth"] for e in hub.log(listener="cdn"))


# --------------------------------------------------------------------------- versions and revisions


def test_version_range_picks_highest_matching_tag(hub, store, ws):
    r = hub_build(hub, ws, "--version", ">=0.1,<0.2")
    assert r.returncode == 0, str(r)
    src = r.json["source"]
    assert (src["commit"], src["ref"], src["version"], src["requested"]) == (store["shas"][1], "v0.1.1", "0.1.1",
                                                                            ">=0.1,<0.2")
    assert {v["variant"] for v in r.json["variants"]} == V011
    assert all(v["filename"].startswith("img2gray-0.1.1") and v["version"].split("+")[0] == "0.1.1"
               for v in r.json["variants"])
    # every request after the refs listing names the tag's commit, never the tag
    after = [e for e in hub.log(listener="hub") if e["kind"] not in ("organizations", "refs")]  # trust, then refs
    assert after and all(store["shas"][1] in e["path"] for e in after)


def test_version_without_match_lists_what_exists(hub, ws):
    r = hub_build(hub, ws, "--version", "0.3")
    err = assert_failed(r, ws, 5, REPO, "0.3")
    for v in ("0.1.0", "0.1.1", "0.2.0", "v0"):
        assert v in err, err
    assert hub.downloads() == 0


def test_version_major_picks_branch(hub, store, ws):
    r = hub_build(hub, ws, "--version", "0")
    assert r.returncode == 0, str(r)
    src = r.json["source"]
    assert (src["commit"], src["ref"], src["kernel_version"], src["latest"]) == (store["shas"][2], "v0", 0, False)
    assert {v["variant"] for v in r.json["variants"]} == variants_of(C2)
    # reached through a vN branch: <kernel version>.<commits in its history>, the kernel version
    # from the commit's own metadata.json ("version": 1), the history C0..C2
    assert all(v["filename"].startswith("img2gray-1.3") and v["version"].split("+")[0] == "1.3"
               for v in r.json["variants"]), str(r)


def test_default_builds_the_highest_version_branch(hub, store, ws):
    r = hub_build(hub, ws)
    assert r.returncode == 0, str(r)
    src = r.json["source"]
    assert (src["commit"], src["ref"], src["kernel_version"], src["latest"]) == (store["shas"][2], "v0", 0, True)
    assert "v0" in src["requested"] and "highest" in src["requested"], src  # says which
    assert {v["variant"] for v in r.json["variants"]} == variants_of(C2)
    assert all(v["version"].split("+")[0] == "1.3" for v in r.json["variants"]), str(r)


def test_repo_without_version_branch_fails_listing_refs(hub, ws):
    r = hub_build(hub, ws, repo=NOBUILD)
    err = assert_failed(r, ws, 5, NOBUILD, "no version branch", "--revision")
    assert re.search(r"\bmain\b", err) and re.search(r"\bv0\.1\.0\b", err), err
    assert hub.downloads() == 0


def test_untagged_main_gets_kernel_version_and_history_length(hub, store, ws):
    r = hub_build(hub, ws, "--revision", "main")
    assert r.returncode == 0, str(r)
    src = r.json["source"]
    assert src["commit"] == store["shas"][3] and src["ref"] == "main" and "version" not in src
    # metadata.json's "version": 1, four commits in main's history
    assert all(v["filename"].startswith("img2gray-1.4") and v["version"].split("+")[0] == "1.4"
               for v in r.json["variants"]), str(r)
    assert {v["variant"] for v in r.json["variants"]} == variants_of(C3)
    assert hub.log(kind="commits"), "the history length was not asked of the Hub"
    shutil.rmtree(ws.out)
    r = hub_build(hub, ws, "--revision", "main", "--wheel-version", "0.3.0.dev1")
    assert r.returncode == 0, str(r)
    assert r.json["source"]["commit"] == store["shas"][3] and "version" not in r.json["source"]
    assert all(v["filename"].startswith("img2gray-0.3.0.dev1") for v in r.json["variants"])


def test_untagged_commit_without_kernel_version_needs_wheel_version(hub, ws):
    r = hub_build(hub, ws, "--revision", "main", repo=NOMETA)
    assert r.returncode == 2, str(r)
    assert "is not a vN branch, carries no vX.Y.Z tag, and its variants have no metadata.json" in r.stderr
    assert "--wheel-version" in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert not hub.log(kind="resolve"), "it downloaded before refusing"
    assert not ws.out.exists()
    r = hub_build(hub, ws, "--revision", "main", "--wheel-version", "0.3.0.dev1", repo=NOMETA)
    assert r.returncode == 0, str(r)
    assert all(v["filename"].startswith("img2gray-0.3.0.dev1") for v in r.json["variants"])


def test_revision_short_sha(hub, store, ws):
    short = store["shas"][0][:7]
    r = hub_build(hub, ws, "--revision", short)
    assert r.returncode == 0, str(r)
    src = r.json["source"]
    assert src["commit"] == store["shas"][0] and src["requested"] == short and src["version"] == "0.1.0"
    assert {v["variant"] for v in r.json["variants"]} == variants_of(C0)
    w = H.read_wheel(ws.out / next(v["filename"] for v in r.json["variants"] if v["variant"] == CU126))
    so = so_path(C0, CU126)
    assert w.files["img2gray/" + so.rsplit("/", 1)[1]] == C0[so]  # v0.1.0's bytes, not main's


# --------------------------------------------------------------------------- cache interop


def test_kwheel_cache_is_a_standard_hf_cache(hub, store, ws):
    from huggingface_hub import hf_hub_download, scan_cache_dir, snapshot_download

    r = hub_build(hub, ws, "--version", "0.1.1")
    assert r.returncode == 0, str(r)
    assert r.json["source"]["repo_type"] == "kernel"
    for rev in ("v0.1.1", store["shas"][1]):
        snap = Path(snapshot_download(REPO, repo_type="kernel", revision=rev, cache_dir=ws.cache,
                                      local_files_only=True))
        assert snap.name == store["shas"][1]
        got = {p.relative_to(snap).as_posix(): p.read_bytes() for p in snap.rglob("*") if p.is_file()}
        assert got == build_files(C1)
    p = hf_hub_download(REPO, SO_CU126, repo_type="kernel", revision="v0.1.1", cache_dir=ws.cache,
                        local_files_only=True)
    assert Path(p).read_bytes() == C1[SO_CU126]
    info = scan_cache_dir(ws.cache)
    assert not info.warnings, info.warnings
    (repo,) = info.repos
    assert repo.repo_id == REPO and repo.repo_type == "kernel"
    assert repo.repo_path.name == f"kernels--{USER}--img2gray"
    (rev,) = repo.revisions
    assert rev.commit_hash == store["shas"][1] and "v0.1.1" in rev.refs
    assert rev.nb_files == len(build_files(C1))


def test_kwheel_offline_uses_snapshot_download_cache(hub, store, ws, clean):
    from huggingface_hub import snapshot_download

    snapshot_download(REPO, repo_type="kernel", revision="v0.1.1", cache_dir=ws.cache, endpoint=hub.endpoint,
                      token=False)
    hub.clear_log()
    r = hub_build(hub, ws, "--offline", "--version", "0.1.1")
    assert_survived(r, ws, clean)
    assert r.json["source"]["commit"] == store["shas"][1] and r.json["source"]["repo_type"] == "kernel"
    assert hub.log() == []


# --------------------------------------------------------------------------- variants, repo types


def test_variants_lists_without_downloading(hub, store, ws):
    r = kwheel("variants", REPO, "--endpoint", hub.endpoint, "--cache-dir", ws.cache, "--version", "0.1.1",
               env=ws.env())
    assert r.returncode == 0, str(r)
    assert {v["variant"] for v in r.json["variants"]} == V011
    assert all(v["valid"] for v in r.json["variants"])
    cu = next(v for v in r.json["variants"] if v["variant"] == CU128)
    assert (cu["framework_version"], cu["backend"], cu["backend_version"]) == ("2.10", "cuda", "12.8")
    assert r.json["source"]["commit"] == store["shas"][1]
    log = hub.log()
    assert log and not [e for e in log if e["kind"] in ("resolve", "cdn")]
    assert hub.downloads() == 0 and len([e for e in log if e["kind"] == "tree"]) > 1
    assert not ws.cache.exists() or H.check_cache(ws.cache)["blobs"] == 0


@pytest.mark.parametrize("repo_type, api, resolve, cache, other", [
    ("kernel", f"/api/kernels/{REPO}/", f"/kernels/{REPO}/resolve/", "kernels", "models"),
    ("model", f"/api/models/{REPO}/", f"/{REPO}/resolve/", "models", "kernels"),
])
def test_repo_type_forces_routes_and_cache(hub, ws, clean_dir, repo_type, api, resolve, cache, other):
    r = hub_build(hub, ws, "--version", "0.1.1", "--repo-type", repo_type)
    assert r.returncode == 0, str(r)
    assert (r.json["source"]["repo_type"], r.json["source"]["repo_type_fallback"]) == (repo_type, False)
    assert H.warnings(r.stderr) == []
    H.assert_like_directory_build(r, ws.out, clean_dir, REPO)
    # the publisher's overview first (it has no repo type), then only that type's routes
    assert hub.log(listener="hub")[0]["kind"] == "organizations"
    paths = [e["path"] for e in hub.log(listener="hub")][1:]
    assert paths and all(p.startswith((api, resolve)) for p in paths)
    assert any(p.startswith(resolve) for p in paths)
    assert (ws.cache / f"{cache}--{USER}--img2gray" / "snapshots").is_dir()
    assert not (ws.cache / f"{other}--{USER}--img2gray").exists()


def test_model_only_repo_is_found_as_model_repo_with_a_warning(hub, ws, clean_dir):
    r = hub_build(hub, ws, "--version", "0.1.1", repo=MODEL_ONLY)
    assert r.returncode == 0, str(r)
    src = r.json["source"]
    assert (src["repo_type"], src["repo_type_fallback"], src["ref"]) == ("model", True, "v0.1.1")
    warnings = H.warnings(r.stderr)
    assert len(warnings) == 1 and MODEL_ONLY in warnings[0] and "model repo" in warnings[0], r.stderr
    H.assert_like_directory_build(r, ws.out, clean_dir, MODEL_ONLY)
    # asked as a kernel repo first, then read through the model routes only
    paths = [e["path"] for e in hub.log(listener="hub")]
    assert paths.pop(0) == "/api/organizations/user/overview"  # publisher trust comes first
    assert paths[0].startswith(f"/api/kernels/{MODEL_ONLY}/")
    assert all(p.startswith((f"/api/models/{MODEL_ONLY}/", f"/{MODEL_ONLY}/resolve/")) for p in paths[1:]), paths
    assert (ws.cache / f"models--{USER}--img2gray-model" / "snapshots").is_dir()
    assert not (ws.cache / f"kernels--{USER}--img2gray-model").exists()
    # the kernel type forced: not found, and no fallback
    shutil.rmtree(ws.out)
    r = hub_build(hub, ws, "--version", "0.1.1", "--repo-type", "kernel", repo=MODEL_ONLY)
    assert_failed(r, ws, 5, MODEL_ONLY, "not found")
