"""The fixture Hub (tests/hub/server.py) is only useful if real, current clients accept it.

These tests drive it with huggingface_hub 2.4 (in process) and kernels 0.17.2 (its CLI and
`get_kernel`, in subprocesses pointed at the fixture by HF_ENDPOINT), both installed in the
venv with their dependencies (scripts/requirements-test.txt). The kernel repos are today's:
kernel-type repos (/api/kernels, /kernels/.../resolve, cache folder kernels--org--name) with
integer version branches v1 and v2, in the three layouts kernel-builder has written (nested,
flat + compat module, flat; tests/hub/kernel_repos.py), each variant's metadata.json carrying
a digest computed independently of kernels. The tests also show that every injectable fault
fires. No kwheel binary is needed.
"""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import urlsplit

import httpx2
import pytest
from huggingface_hub import HfApi, hf_hub_download, snapshot_download
from huggingface_hub.errors import (
    GatedRepoError,
    HfHubHTTPError,
    LocalEntryNotFoundError,
    RemoteEntryNotFoundError,
    RepositoryNotFoundError,
    RevisionNotFoundError,
)
from kernels._rust import Digest, DigestAlgorithm, DigestValidationError, Metadata

REPO_ROOT = Path(__file__).resolve().parents[2]
HUB_DIR = REPO_ROOT / "tests" / "hub"
sys.path.insert(0, str(HUB_DIR))
import fixture as hubfix  # noqa: E402
import kernel_repos as kr  # noqa: E402

PY = sys.executable
KERNELS_CLI = str(Path(sys.executable).parent / "kernels")  # kernels 0.17.2's console script
DEBIAN_DIST = Path("/usr/lib/python3/dist-packages")

TOKEN = "hf_fixtureTOKEN0123456789abcdef"
ORG = "kernels-test"
REPO = f"{ORG}/img2gray"
PRIVATE = f"{ORG}/img2gray-private"
GATED = f"{ORG}/img2gray-gated"
GATED_DENIED = f"{ORG}/img2gray-gated-denied"
PAGE_SIZE = 3
BIG = 10 * 1024 * 1024 + 123  # >= 10 MiB: LFS by size even though it is not a .so

CU126 = "torch27-cxx11-cu126-x86_64-linux"
CPU = "torch27-cxx11-cpu-x86_64-linux"
CPU113 = "torch113-cxx11-cpu-x86_64-linux"  # matches Debian's python3-torch 1.13 (cxx11 ABI, CPU)
UNIVERSAL = "torch-universal"


def _blob(seed: str, n: int) -> bytes:
    out, i = bytearray(), 0
    while len(out) < n:
        out += hashlib.sha256(f"{seed}:{i}".encode()).digest()
        i += 1
    return bytes(out[:n])


def _variant(variant: str, rev: str) -> dict[str, bytes]:
    """An old-style (nested, vX.Y.Z-tagged) img2gray variant: metadata without a digest."""
    backend = "cuda" if "-cu" in variant else "cpu"
    meta = {"id": f"_img2gray_{rev}_{variant}", "name": "img2gray", "version": 1, "license": "Apache-2.0",
            "backend": {"type": backend}, "python-depends": []}
    return {
        f"build/{variant}/img2gray/__init__.py":
            f"from ._ops import ops\n\n\ndef hello():\n    return 'img2gray {rev} {variant}'\n".encode(),
        f"build/{variant}/img2gray/_ops.py": b"ops = None  # a real kernel loads _img2gray_abc123.abi3.so here\n",
        f"build/{variant}/img2gray/_img2gray_abc123.abi3.so": b"\x7fELF" + _blob(f"{variant}{rev}", 40_000),
        f"build/{variant}/metadata.json": json.dumps(meta).encode(),
    }


# Three commits, each the full tree; a variant is byte-identical across commits unless it changes.
C0 = {"README.md": b"# img2gray\n", **_variant(CU126, "a"), **_variant(CPU, "a"), **_variant(UNIVERSAL, "a")}
C1 = {**C0, **_variant(CU126, "b"), **_variant(CPU113, "b"), "data/big.bin": _blob("big", BIG)}
C2 = {**C1, **_variant(UNIVERSAL, "c"), "README.md": b"# img2gray\n\nv0.2.0\n"}
COMMITS = [C0, C1, C2]

# Today's kernel repos: one per layout, versions 1 and 2 on branches v1 and v2 forked from main,
# which holds the README only (what `kernel-builder upload` does).
KNAME = "my-relu"  # a dash, so the import name (my_relu) differs from the kernel name
NOARCH = "torch-cpu"  # pure Python (noarch): what kernels 0.17.2 loads without torch for backend="cpu"
NOARCH_CUDA = "torch-cuda"  # its CUDA twin: selected without torch when kernels finds a CUDA runtime
CUDA_ARCH = "torch29-cxx11-cu128-x86_64-linux"  # never selected here: needs torch 2.9 built for CUDA
KVARIANTS = (NOARCH, NOARCH_CUDA, CPU113, CUDA_ARCH)
LEGACY = f"{ORG}/my-relu-legacy"  # nested without metadata.json: the oldest Hub kernels
TAMPERED = f"{ORG}/my-relu-tampered"  # flat, one digest entry wrong
UNTRUSTED_ORG = "untrusted-org"
UNTRUSTED = f"{UNTRUSTED_ORG}/my-relu"


def _krepo(layout: str) -> str:
    return f"{ORG}/my-relu-{layout}"


def _label(layout: str, n: int, variant: str) -> str:
    return f"{KNAME} {layout} v{n} {variant}"


KREADME = f"# {KNAME}\n\nA ReLU kernel.\n".encode()


def _kernel_tree(layout: str, n: int, **kw) -> dict[str, bytes]:
    """Branch vN's tree: main's README plus the variants, as kernel-builder lays them out."""
    tree = {"README.md": KREADME}
    for v in KVARIANTS:
        so = None if v.startswith("torch-") else b"\x7fELF" + _blob(f"{layout}{n}{v}", 20_000)
        tree.update(kr.variant_tree(v, layout=layout, name=KNAME, version=n, archs=["9.0", "8.0"] if "-cu" in v else None,
                                    files=kr.demo_package(KNAME, _label(layout, n, v), so=so), **kw))
    return tree


KTREES = {layout: {n: _kernel_tree(layout, n) for n in (1, 2)} for layout in kr.LAYOUTS}
LEGACY_TREE = _kernel_tree("nested", 1, with_metadata=False)


def _tampered_tree() -> dict[str, bytes]:
    """Flat v1 whose torch-cpu metadata.json claims another __init__.py than the one served."""
    tree = dict(KTREES["flat"][1])
    path = f"build/{NOARCH}/metadata.json"
    meta = json.loads(tree[path])
    meta["digest"]["files"]["__init__.py"] = kr.file_digest(b"def hello():\n    return 'not this one'\n")
    tree[path] = kr.metadata_bytes(meta)
    return tree


def _write_tree(dst: Path, files: dict[str, bytes]) -> Path:
    return kr.write_tree(dst, files)


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    base = tmp_path_factory.mktemp("hubstore")
    root = base / "root"
    # Commits are built from Hub-layout directories on disk, as kwheel's tests will do.
    dirs = [_write_tree(base / f"src{i}", files) for i, files in enumerate(COMMITS)]
    repo = hubfix.make_repo(root, REPO, dirs, branches={"main": 2, "v0": 1},
                            tags={"v0.1.0": 0, "v0.1.1": 1, "v0.2.0": 2},
                            messages=["Initial build", "Build v0.1.1", "Build v0.2.0"])
    hubfix.set_repo_options(repo.dir, refs={**json.loads((repo.dir / "repo.json").read_text())["refs"],
                                            "pulls": {"1": repo.shas[2]}})
    hubfix.make_repo(root, PRIVATE, [dirs[1]], private=True, tags={"v0.1.1": 0})
    hubfix.make_repo(root, GATED, [dirs[0]], gated="manual")
    hubfix.make_repo(root, GATED_DENIED, [dirs[0]], gated="auto", gated_granted=False)
    hubfix.set_org(root, ORG, trustedKernelPublisher=True)
    kernels = {layout: kr.make_kernel_repo(root, _krepo(layout), trees, readme=KREADME)
               for layout, trees in KTREES.items()}
    kernels["legacy"] = kr.make_kernel_repo(root, LEGACY, {1: LEGACY_TREE}, readme=KREADME, main=1,
                                            tags={"v0.1.0": 1})
    kernels["tampered"] = kr.make_kernel_repo(root, TAMPERED, {1: _tampered_tree()}, readme=KREADME)
    kernels["untrusted"] = kr.make_kernel_repo(root, UNTRUSTED, {1: KTREES["flat"][1]}, readme=KREADME)
    hubfix.set_org(root, UNTRUSTED_ORG, trustedKernelPublisher=False)
    return {"root": root, "shas": repo.shas, "kernels": kernels}


@pytest.fixture(scope="module")
def hub(store):
    with hubfix.hub_server(store["root"], token=TOKEN, page_size=PAGE_SIZE) as srv:
        yield srv


@pytest.fixture(autouse=True)
def _fresh(request):
    if "hub" in request.fixturenames:
        srv = request.getfixturevalue("hub")
        srv.clear_faults()
        srv.clear_log()
        srv.set_commits_page_size(50)
    yield


def _oid(data: bytes, path: str) -> str:
    """The blob name huggingface_hub must use: git blob id, or sha256 for LFS files."""
    if hubfix.is_lfs(path, len(data)):
        return hashlib.sha256(data).hexdigest()
    return hubfix.git_blob_oid(data)


def _assert_snapshot(snap: Path, files: dict[str, bytes]):
    got = {p.relative_to(snap).as_posix() for p in snap.rglob("*") if p.is_file()}
    assert got == set(files)
    for rel, data in files.items():
        p = snap / rel
        assert p.read_bytes() == data, rel
        assert p.is_symlink() and p.resolve().name == _oid(data, rel), rel


def _run(cmd, env, cwd, timeout=120) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, env=env, cwd=cwd, capture_output=True, text=True, timeout=timeout)


# --------------------------------------------------------------------------- huggingface_hub 2.4: model repos


@pytest.mark.parametrize("rev,idx", [("main", 2), ("v0.1.0", 0), ("v0.1.1", 1), ("v0", 1), ("sha", 0),
                                     ("short", 1), ("refs/pr/1", 2)])
def test_snapshot_download_is_byte_identical(hub, store, tmp_path, rev, idx):
    sha = store["shas"][idx]
    revision = {"sha": sha, "short": sha[:10]}.get(rev, rev)
    cache = tmp_path / "cache"
    path = Path(snapshot_download(REPO, revision=revision, endpoint=hub.endpoint, cache_dir=cache, token=False))

    storage = cache / "models--kernels-test--img2gray"
    assert path == storage / "snapshots" / sha
    _assert_snapshot(path, COMMITS[idx])
    if rev != "sha":
        assert (storage / "refs" / revision).read_text() == sha
    assert {p.name for p in (storage / "blobs").iterdir()} == {_oid(d, r) for r, d in COMMITS[idx].items()}

    log = hub.log()
    tree_pages = [e for e in log if e["kind"] == "tree"]
    n_entries = len(COMMITS[idx]) + len({"/".join(p.split("/")[:i]) for p in COMMITS[idx]
                                         for i in range(1, p.count("/") + 1)})
    assert len(tree_pages) == -(-n_entries // PAGE_SIZE) > 1  # paginated through Link: rel="next"
    assert all(e["path"].endswith(f"/tree/{sha}") for e in tree_pages)
    lfs = [r for r, d in COMMITS[idx].items() if hubfix.is_lfs(r, len(d))]
    cdn_gets = [e for e in log if e["listener"] == "cdn" and e["method"] == "GET"]
    assert len(cdn_gets) == len(lfs) and all(e["status"] == 200 for e in cdn_gets)
    blobs = {_oid(d, r) for r, d in COMMITS[idx].items()}
    assert hub.downloads() == len(blobs)  # every distinct blob fetched exactly once
    assert not any(e["auth"] for e in log)


def test_hfapi_refs_tree_info(hub, store, tmp_path):
    api = HfApi(endpoint=hub.endpoint, token=False)
    shas = store["shas"]
    refs = api.list_repo_refs(REPO)
    assert {(b.name, b.ref, b.target_commit) for b in refs.branches} == {
        ("main", "refs/heads/main", shas[2]), ("v0", "refs/heads/v0", shas[1])}
    assert {(t.name, t.ref, t.target_commit) for t in refs.tags} == {
        ("v0.1.0", "refs/tags/v0.1.0", shas[0]), ("v0.1.1", "refs/tags/v0.1.1", shas[1]),
        ("v0.2.0", "refs/tags/v0.2.0", shas[2])}
    assert refs.converts == []

    tree = list(api.list_repo_tree(REPO, recursive=True, revision="v0.1.1"))
    files = {f.path: f for f in tree if f.__class__.__name__ == "RepoFile"}
    dirs = {f.path for f in tree if f.__class__.__name__ == "RepoFolder"}
    assert set(files) == set(C1)
    assert {"build", f"build/{CU126}", f"build/{CU126}/img2gray", "data"} <= dirs
    for rel, data in C1.items():
        f = files[rel]
        assert f.size == len(data)
        if hubfix.is_lfs(rel, len(data)):
            assert f.lfs.sha256 == hashlib.sha256(data).hexdigest() and f.lfs.size == len(data)
            assert f.blob_id == hubfix.git_blob_oid(hubfix.lfs_pointer(f.lfs.sha256, len(data)))
            assert f.lfs.pointer_size == len(hubfix.lfs_pointer(f.lfs.sha256, len(data)))
        else:
            assert f.lfs is None and f.blob_id == hubfix.git_blob_oid(data)
    assert files["data/big.bin"].lfs is not None  # LFS by size, not by suffix
    assert len([e for e in hub.log() if e["kind"] == "tree"]) == -(-len(tree) // PAGE_SIZE)

    top = list(api.list_repo_tree(REPO, path_in_repo="build", revision=shas[1]))
    assert {t.path for t in top} == {f"build/{v}" for v in (CU126, CPU, CPU113, UNIVERSAL)}
    expanded = {t.path: t for t in api.list_repo_tree(REPO, path_in_repo=f"build/{CPU}/img2gray", expand=True)}
    assert expanded[f"build/{CPU}/img2gray/__init__.py"].last_commit.oid == shas[0]  # unchanged since C0
    assert expanded[f"build/{CPU}/img2gray/__init__.py"].last_commit.title == "Initial build"

    info = api.model_info(REPO, revision="v0.1.0", files_metadata=True)
    assert info.sha == shas[0] and info.private is False and info.gated is False
    sib = {s.rfilename: s for s in info.siblings}
    assert set(sib) == set(C0)
    so = f"build/{CU126}/img2gray/_img2gray_abc123.abi3.so"
    assert sib[so].lfs.sha256 == hashlib.sha256(C0[so]).hexdigest() and sib[so].size == len(C0[so])
    assert sib["README.md"].blob_id == hubfix.git_blob_oid(C0["README.md"]) and sib["README.md"].lfs is None

    kinfo = api.repo_info(REPO, repo_type="kernel", revision="v0.1.1")  # /api/kernels/...
    assert kinfo.sha == shas[1]
    assert api.file_exists(REPO, "README.md") and not api.file_exists(REPO, "nope.txt")
    assert api.revision_exists(REPO, "v0.2.0") and not api.revision_exists(REPO, "v9")
    paths = api.get_paths_info(REPO, ["README.md", "build", "missing"], revision="v0.1.0")
    assert [p.path for p in paths] == ["README.md", "build"]
    assert [c.commit_id for c in api.list_repo_commits(REPO)] == shas[::-1]

    with pytest.raises(RevisionNotFoundError):
        api.model_info(REPO, revision="v9.9.9")
    with pytest.raises(RepositoryNotFoundError):
        api.model_info(f"{ORG}/does-not-exist")
    with pytest.raises(RemoteEntryNotFoundError):
        hf_hub_download(REPO, "nope.txt", endpoint=hub.endpoint, cache_dir=tmp_path, token=False)


def test_resolve_protocol_details(hub, store):
    sha = store["shas"][1]
    so = f"build/{CU126}/img2gray/_img2gray_abc123.abi3.so"
    with httpx2.Client(trust_env=False) as c:
        r = c.head(f"{hub.endpoint}/{REPO}/resolve/v0.1.1/README.md")
        assert r.status_code == 200
        assert r.headers["etag"] == f'"{hubfix.git_blob_oid(C1["README.md"])}"'
        assert r.headers["x-repo-commit"] == sha
        assert r.headers["content-length"] == str(len(C1["README.md"]))
        assert r.headers["accept-ranges"] == "bytes"
        r = c.get(f"{hub.endpoint}/{REPO}/resolve/v0.1.1/README.md", headers={"Range": "bytes=2-5"})
        assert r.status_code == 206 and r.content == C1["README.md"][2:6]
        assert r.headers["content-range"] == f"bytes 2-5/{len(C1['README.md'])}"
        r = c.get(f"{hub.endpoint}/{REPO}/resolve/v0.1.1/README.md", headers={"Range": "bytes=999-"})
        assert r.status_code == 416
        # kernels-type URL form, a %-encoded PR ref, and the LFS redirect to another host
        r = c.head(f"{hub.endpoint}/kernels/{REPO}/resolve/refs%2Fpr%2F1/{so}")
        assert r.status_code == 302
        sha256 = hashlib.sha256(C1[so]).hexdigest()
        assert r.headers["x-linked-etag"] == f'"{sha256}"' and r.headers["x-linked-size"] == str(len(C1[so]))
        assert r.headers["x-repo-commit"] == store["shas"][2]
        loc = urlsplit(r.headers["location"])
        assert loc.hostname != urlsplit(hub.endpoint).hostname and f"{loc.scheme}://{loc.netloc}" == hub.cdn
        # plain LFS behind a CDN: no Xet headers, so huggingface_hub 2.4 takes the HTTP path, not hf_xet
        assert not [h for h in r.headers if h.lower().startswith("x-xet")]
        assert 'rel="xet-auth"' not in r.headers.get("link", "")
        r = c.get(r.headers["location"])
        assert r.status_code == 200 and r.content == C1[so]
        r = c.get(f"{hub.endpoint}/{REPO}/resolve/v0.1.1/missing.txt")
        assert r.status_code == 404 and r.headers["x-error-code"] == "EntryNotFound"
        assert r.headers["x-repo-commit"] == sha and "error" in r.json()
        for rev in ("refs%2Fpr%2F1", "refs/pr/1", store["shas"][2][:7]):  # encoded, raw, short sha
            r = c.get(f"{hub.endpoint}/api/models/{REPO}/tree/{rev}/build%2F{UNIVERSAL}")
            assert r.status_code == 200 and r.headers["x-repo-commit"] == store["shas"][2]
            assert [e["path"] for e in r.json()] == [f"build/{UNIVERSAL}/img2gray", f"build/{UNIVERSAL}/metadata.json"]
        r = c.get(f"{hub.endpoint}/api/models/{REPO}/tree/main/nowhere")
        assert r.status_code == 404 and r.headers["x-error-code"] == "EntryNotFound"
        r = c.get(f"{hub.endpoint}/api/models/{REPO}/revision/nope")
        assert r.status_code == 404 and r.headers["x-error-code"] == "RevisionNotFound"


def test_private_repo_token_and_cdn_never_sees_it(hub, tmp_path):
    with pytest.raises(RepositoryNotFoundError):
        snapshot_download(PRIVATE, endpoint=hub.endpoint, cache_dir=tmp_path / "a", token=False)
    with pytest.raises(HfHubHTTPError) as bad:
        HfApi(endpoint=hub.endpoint, token="hf_wrong").model_info(PRIVATE)
    assert bad.value.response.status_code == 401 and "Invalid credentials" in str(bad.value)
    assert hub.log()[-1]["auth"] is True

    hub.clear_log()
    path = Path(snapshot_download(PRIVATE, revision="v0.1.1", endpoint=hub.endpoint, cache_dir=tmp_path / "b",
                                  token=TOKEN))
    _assert_snapshot(path, C1)
    log = hub.log()
    cdn = [e for e in log if e["listener"] == "cdn"]
    assert cdn and all(e["status"] == 200 for e in cdn)
    assert not any(e["auth"] for e in cdn), "the token leaked to the CDN"
    hub_side = [e for e in log if e["listener"] == "hub"]
    want = hashlib.sha256(f"Bearer {TOKEN}".encode()).hexdigest()
    assert hub_side and all(e["auth_sha256"] == want for e in hub_side)
    assert TOKEN not in json.dumps(log)  # the log never holds the token itself


def test_cdn_rejects_authorization_header(hub):
    so = f"build/{CPU}/img2gray/_img2gray_abc123.abi3.so"
    with httpx2.Client(trust_env=False) as c:
        head = c.head(f"{hub.endpoint}/{PRIVATE}/resolve/main/{so}", headers={"Authorization": f"Bearer {TOKEN}"})
        assert head.status_code == 302
        loc = head.headers["location"]
        r = c.get(loc, headers={"Authorization": f"Bearer {TOKEN}"})
        assert r.status_code == 400 and b"Only one auth mechanism" in r.content
        assert c.get(loc.replace("Signature=", "Signature=0")).status_code == 403
        r = c.get(loc, headers={"Range": "bytes=-10"})
        assert r.status_code == 206 and r.content == C1[so][-10:]
        assert c.get(loc).content == C1[so]
    cdn = hub.log(listener="cdn")
    assert [(e["status"], e["auth"]) for e in cdn] == [(400, True), (403, False), (206, False), (200, False)]
    assert "REJECTED" in hub.stderr_text()


def test_gated_repo(hub, tmp_path):
    api = HfApi(endpoint=hub.endpoint, token=False)
    assert api.model_info(GATED).gated == "manual"  # metadata stays public
    with pytest.raises(GatedRepoError) as e401:
        hf_hub_download(GATED, "README.md", endpoint=hub.endpoint, cache_dir=tmp_path / "a", token=False)
    assert e401.value.response.status_code == 401
    p = hf_hub_download(GATED, "README.md", endpoint=hub.endpoint, cache_dir=tmp_path / "b", token=TOKEN)
    assert Path(p).read_bytes() == C0["README.md"]
    with pytest.raises(GatedRepoError) as e403:
        hf_hub_download(GATED_DENIED, "README.md", endpoint=hub.endpoint, cache_dir=tmp_path / "c", token=TOKEN)
    assert e403.value.response.status_code == 403


# --------------------------------------------------------------------------- huggingface_hub 2.4: kernel repos


def _kernel_routes_only(log: list[dict], repo_id: str):
    """A kernel-type client never touches the model routes."""
    mine = [e["path"] for e in log if e["repo"] == repo_id]
    assert mine and all(p == f"/api/kernels/{repo_id}" or p.startswith((f"/api/kernels/{repo_id}/",
                                                                         f"/kernels/{repo_id}/resolve/")) for p in mine)


@pytest.mark.parametrize("n", [1, 2])
@pytest.mark.parametrize("layout", kr.LAYOUTS)
def test_snapshot_download_kernel_repo(hub, store, tmp_path, layout, n):
    repo_id, handle = _krepo(layout), store["kernels"][layout]
    sha = handle.versions[n]
    cache = tmp_path / "cache"
    path = Path(snapshot_download(repo_id, repo_type="kernel", revision=f"v{n}", endpoint=hub.endpoint,
                                  cache_dir=cache, token=False))
    storage = cache / f"kernels--{ORG}--my-relu-{layout}"
    assert path == storage / "snapshots" / sha
    _assert_snapshot(path, KTREES[layout][n])
    assert (storage / "refs" / f"v{n}").read_text() == sha
    # huggingface_hub 2.4 caches the commit's tree listing next to the snapshots
    listing = json.loads((storage / "trees" / f"{sha}.json").read_text())
    assert set(listing["files"]) == set(KTREES[layout][n])
    assert not any("xet_hash" in f for f in listing["files"].values())  # plain LFS, no Xet
    log = hub.log()
    _kernel_routes_only(log, repo_id)
    assert [e["path"] for e in log if e["kind"] == "info"] == [f"/api/kernels/{repo_id}/revision/v{n}"]
    assert len([e for e in log if e["kind"] == "tree"]) > 1  # paginated
    assert hub.downloads() == len({_oid(d, r) for r, d in KTREES[layout][n].items()})
    assert not any(e["auth"] for e in log)


def test_hfapi_on_kernel_repos(hub, store, tmp_path):
    api = HfApi(endpoint=hub.endpoint, token=False)
    repo_id, handle = _krepo("flat"), store["kernels"]["flat"]
    refs = api.list_repo_refs(repo_id, repo_type="kernel")
    assert {(b.name, b.ref, b.target_commit) for b in refs.branches} == {
        ("main", "refs/heads/main", handle.shas[0]), ("v1", "refs/heads/v1", handle.versions[1]),
        ("v2", "refs/heads/v2", handle.versions[2])}
    assert refs.tags == [] and refs.converts == []
    assert api.kernel_info(repo_id).sha == handle.shas[0]  # main: the README commit
    assert api.list_repo_files(repo_id, repo_type="kernel") == ["README.md"]
    info = api.repo_info(repo_id, repo_type="kernel", revision="v1")
    assert info.sha == handle.versions[1] and info.private is False
    top = list(api.list_repo_tree(repo_id, path_in_repo="build", repo_type="kernel", revision="v1"))
    assert {t.path for t in top} == {f"build/{v}" for v in KVARIANTS}
    files = {f.path: f for f in api.list_repo_tree(repo_id, recursive=True, repo_type="kernel", revision="v2")
             if f.__class__.__name__ == "RepoFile"}
    assert set(files) == set(KTREES["flat"][2])
    so = next(p for p in files if p.endswith(".so"))
    assert files[so].lfs.sha256 == hashlib.sha256(KTREES["flat"][2][so]).hexdigest() and files[so].xet_hash is None
    paths = api.get_paths_info(repo_id, [f"build/{NOARCH}/metadata.json", "build", "nope"], repo_type="kernel",
                               revision="v1")
    assert [p.path for p in paths] == [f"build/{NOARCH}/metadata.json", "build"]
    assert api.file_exists(repo_id, "README.md", repo_type="kernel", revision="v1")
    assert api.revision_exists(repo_id, "v2", repo_type="kernel") and not api.revision_exists(repo_id, "v3",
                                                                                              repo_type="kernel")
    meta = hf_hub_download(repo_id, f"build/{NOARCH}/metadata.json", repo_type="kernel", revision="v2",
                           endpoint=hub.endpoint, cache_dir=tmp_path, token=False)
    assert Path(meta).read_bytes() == KTREES["flat"][2][f"build/{NOARCH}/metadata.json"]
    hub.set_commits_page_size(1)  # the commits listing pages on its own; huggingface_hub follows Link
    commits = api.list_repo_commits(repo_id, repo_type="kernel", revision="v2", formatted=True)
    assert [c.commit_id for c in commits] == [handle.versions[2], handle.shas[0]]  # v2 forks from main, not v1
    assert commits[0].title == "Build version 2" and commits[0].formatted_title == "<p>Build version 2</p>"
    assert len(hub.log(kind="commits")) == 2
    _kernel_routes_only(hub.log(), repo_id)
    with pytest.raises(RepositoryNotFoundError):  # served as a kernel only, like on the Hub
        api.model_info(repo_id)


def test_commits_listing_pages_like_the_hub(hub, store):
    hub.set_commits_page_size(2)
    api = HfApi(endpoint=hub.endpoint, token=False)
    assert [c.commit_id for c in api.list_repo_commits(REPO)] == store["shas"][::-1]
    pages = hub.log(kind="commits")
    assert len(pages) == 2 and "p=1" in pages[1]["query"]
    with httpx2.Client(trust_env=False) as c:
        r = c.get(f"{hub.endpoint}/api/models/{REPO}/commits/main", params={"limit": 1, "p": 2})
        assert [x["id"] for x in r.json()] == [store["shas"][0]] and "link" not in r.headers
        assert r.headers["x-total-count"] == "3"
        assert c.get(f"{hub.endpoint}/api/models/{REPO}/commits/main", params={"limit": 0}).status_code == 400


# --------------------------------------------------------------------------- kernels 0.17.2

GET_KERNEL = r"""
import json, sys
from pathlib import Path
if sys.argv[1] == "debian":
    sys.path.append(sys.argv[2])  # Debian's python3-torch, after the venv's packages
    import torch
from kernels import get_kernel, get_loaded_kernels
backend = None if sys.argv[5] == "auto" else sys.argv[5]
out = {"hello": {}, "loaded": []}
for n in json.loads(sys.argv[4]):
    out["hello"][n] = get_kernel(sys.argv[3], version=n, backend=backend).hello()
for k in get_loaded_kernels():
    path = Path(k.module.__file__)
    out["loaded"].append({"id": k.metadata.id, "version": k.metadata.version, "revision": k.repo_info.revision,
                          "file": "/".join(path.parts[path.parts.index("build"):])})
print("RESULT " + json.dumps(out))
"""


def _get_kernel(hub, tmp_path, repo_id: str, versions=(1, 2), torch: str = "none",
                backend: str = "cpu") -> subprocess.CompletedProcess:
    """get_kernel in a subprocess. backend="cpu" by default: without it kernels picks the backend of
    the machine (CUDA wherever it finds libcudart, even without torch), and the test would not be
    deterministic; test_kernels_get_kernel_detects_the_backend covers "auto"."""
    env = hubfix.client_env(hub, tmp_path / "home")
    return _run([PY, "-c", GET_KERNEL, torch, str(DEBIAN_DIST), repo_id, json.dumps(list(versions)), backend],
                env, tmp_path)


@pytest.fixture(scope="session")
def noarch_here(tmp_path_factory) -> str:
    """The noarch variant kernels 0.17.2 selects on this machine without torch and without a backend
    argument (torch-cuda when it finds a CUDA runtime library, else torch-cpu): asked of kernels itself."""
    r = _run([PY, "-c", "from kernels.backends import _backend; print(_backend().name)"], dict(os.environ),
             tmp_path_factory.mktemp("backend"))
    assert r.returncode == 0, r.stderr
    return f"torch-{r.stdout.strip()}"


def _result(r: subprocess.CompletedProcess) -> dict:
    assert r.returncode == 0, r.stderr
    return json.loads(next(line for line in r.stdout.splitlines() if line.startswith("RESULT "))[7:])


def _needs_debian_torch(torch: str):
    if torch == "debian" and not (DEBIAN_DIST / "torch" / "__init__.py").exists():
        pytest.skip("Debian's python3-torch is not installed (scripts/setup installs it)")


@pytest.mark.parametrize("torch", ["none", "debian"])
@pytest.mark.parametrize("layout", kr.LAYOUTS)
def test_kernels_get_kernel_versions(hub, store, tmp_path, layout, torch):
    """get_kernel(repo, version=1) and version=2 load the variant kernels selects here, in every layout."""
    _needs_debian_torch(torch)
    repo_id, handle = _krepo(layout), store["kernels"][layout]
    variant = CPU113 if torch == "debian" else NOARCH  # arch kernels need torch; noarch torch-cpu does not
    got = _result(_get_kernel(hub, tmp_path, repo_id, torch=torch))
    assert got["hello"] == {str(n): _label(layout, n, variant) for n in (1, 2)}
    # nested: kernels falls back to build/<v>/<pkg>/__init__.py; compat and flat load build/<v>/__init__.py
    init = f"build/{variant}/my_relu/__init__.py" if layout == "nested" else f"build/{variant}/__init__.py"
    assert [(k["version"], k["revision"], k["file"]) for k in got["loaded"]] == [
        (n, handle.versions[n], init) for n in (1, 2)]
    assert all(k["id"].startswith("_my_relu_cpu_") for k in got["loaded"])
    log = hub.log()
    assert [e["path"] for e in log if e["kind"] == "refs"] == [f"/api/kernels/{repo_id}/refs"] * 2
    assert any(e["path"] == f"/api/organizations/{ORG}/overview" for e in log)  # publisher trust
    fetched = {e["file"] for e in log if e["kind"] == "resolve" and e["method"] == "GET"}
    assert fetched and all(f.startswith(f"build/{variant}/") for f in fetched)  # only the selected variant
    _kernel_routes_only(log, repo_id)


def test_kernels_get_kernel_detects_the_backend(hub, store, tmp_path, noarch_here):
    assert noarch_here in (NOARCH, NOARCH_CUDA)
    got = _result(_get_kernel(hub, tmp_path, _krepo("flat"), versions=(2,), backend="auto"))
    assert got["hello"] == {"2": _label("flat", 2, noarch_here)}


def test_kernels_refuses_nested_without_metadata(hub, store, tmp_path):
    """The oldest kernels (nested, no metadata.json) do not load with kernels 0.17: it reads metadata first."""
    r = _get_kernel(hub, tmp_path, LEGACY, versions=(1,))
    assert r.returncode != 0 and "RemoteEntryNotFoundError" in r.stderr, r.stderr
    assert f"build/{NOARCH}/metadata.json" in r.stderr
    assert [e["status"] for e in hub.log(kind="resolve")] == [404]


def test_kernels_refuses_untrusted_publisher(hub, tmp_path):
    r = _get_kernel(hub, tmp_path, UNTRUSTED, versions=(1,))
    assert r.returncode != 0 and "is not from a trusted publisher" in r.stderr, r.stderr
    assert not hub.log(kind="resolve")  # refused before downloading anything


@pytest.mark.parametrize("torch", ["none", "debian"])
def test_kernels_get_kernel_old_repo(hub, tmp_path, torch):
    """The old img2gray repo (nested, metadata without digest, alpha branch v0) still loads."""
    _needs_debian_torch(torch)
    got = _result(_get_kernel(hub, tmp_path, REPO, versions=(0,), torch=torch))
    # branch v0 is C1: its torch113 variant is new in C1 ("b"), torch-universal is still C0's ("a")
    assert got["hello"]["0"] == (f"img2gray b {CPU113}" if torch == "debian" else f"img2gray a {UNIVERSAL}")


def _project(tmp_path: Path, deps: dict[str, int]) -> Path:
    proj = tmp_path / "proj"
    proj.mkdir()
    lines = "".join(f'"{repo}" = {n}\n' for repo, n in deps.items())
    (proj / "pyproject.toml").write_text(f'[project]\nname = "p"\nversion = "0"\n\n[tool.kernels.dependencies]\n{lines}')
    return proj


def test_kernels_cli_lock_and_download(hub, store, tmp_path, noarch_here):
    deps = {_krepo("flat"): 2, _krepo("compat"): 1, _krepo("nested"): 1}
    proj = _project(tmp_path, deps)
    env = hubfix.client_env(hub, tmp_path / "home")
    r = _run([KERNELS_CLI, "lock", str(proj)], env, tmp_path)
    assert r.returncode == 0, r.stderr
    # kernels 0.17's lock: a JSON array (serde pretty, no trailing newline), one entry per dependency,
    # {dependency: {repo-id, version}, lock: {commit}}; the 0.10 format (repo_id, sha, variants) is gone
    raw = (proj / "kernels.lock").read_text()
    assert raw.startswith('[\n  {\n    "dependency": {\n      "repo-id": ') and raw.endswith("]")
    lock = json.loads(raw)
    assert sorted(lock, key=lambda e: e["dependency"]["repo-id"]) == sorted(
        [{"dependency": {"repo-id": repo, "version": n}, "lock": {"commit": store["kernels"][repo.rsplit("-", 1)[1]]
                                                                  .versions[n]}} for repo, n in deps.items()],
        key=lambda e: e["dependency"]["repo-id"])
    # lock lists the variants of the locked commit and reads each one's metadata.json
    meta_gets = {(e["repo"], e["file"]) for e in hub.log(kind="resolve") if e["method"] == "GET"}
    assert meta_gets == {(repo, f"build/{v}/metadata.json") for repo in deps for v in KVARIANTS}

    # download: the variant this machine selects (no torch in the CLI's venv: noarch), per locked commit
    hub.clear_log()
    r = _run([KERNELS_CLI, "download", str(proj)], env, tmp_path)
    assert r.returncode == 0, r.stderr
    fetched = {e["file"] for e in hub.log(kind="resolve") if e["method"] == "GET"}
    assert fetched and all(f.startswith(f"build/{noarch_here}/") for f in fetched)
    for repo, n in deps.items():
        layout = repo.rsplit("-", 1)[1]
        snap = tmp_path / "home" / "hub" / f"kernels--{ORG}--my-relu-{layout}" / "snapshots" / \
            store["kernels"][layout].versions[n]
        # the selected variant, plus every variant's metadata.json that `lock` fetched into this cache
        _assert_snapshot(snap, {k: v for k, v in KTREES[layout][n].items()
                                if k.startswith(f"build/{noarch_here}/") or k.endswith("/metadata.json")})
        _kernel_routes_only(hub.log(), repo)

    # download --all-variants: the whole build/ of every locked commit, into a fresh cache
    env2 = hubfix.client_env(hub, tmp_path / "home2")
    r = _run([KERNELS_CLI, "download", "--all-variants", str(proj)], env2, tmp_path)
    assert r.returncode == 0, r.stderr
    for repo, n in deps.items():
        layout = repo.rsplit("-", 1)[1]
        snap = tmp_path / "home2" / "hub" / f"kernels--{ORG}--my-relu-{layout}" / "snapshots" / \
            store["kernels"][layout].versions[n]
        _assert_snapshot(snap, {k: v for k, v in KTREES[layout][n].items() if k.startswith("build/")})


@pytest.mark.parametrize("repo,needle", [(LEGACY, "RemoteEntryNotFoundError"),
                                         (UNTRUSTED, "is not from a trusted publisher")])
def test_kernels_cli_lock_refuses(hub, tmp_path, repo, needle):
    proj = _project(tmp_path, {repo: 1})
    r = _run([KERNELS_CLI, "lock", str(proj)], hubfix.client_env(hub, tmp_path / "home"), tmp_path)
    assert r.returncode != 0 and needle in r.stderr, r.stderr
    assert not (proj / "kernels.lock").exists()


DIGEST_CHECK = r"""
import json, sys
from kernels import install_kernel
from kernels._rust import Digest, DigestAlgorithm, DigestValidationError, Metadata
sys.path.insert(0, sys.argv[2])
import kernel_repos
path = install_kernel(sys.argv[1], version=1, backend="cpu")
meta = Metadata.read_from_file(path / "metadata.json")
actual = Digest.hash_variant(meta.digest.algorithm, path)  # what kernels' verify_variant runs
ours = kernel_repos.digest_files(path)
try:
    meta.digest.validate(actual)
    violations = []
except DigestValidationError as e:
    violations = [str(v) for v in e.violations]
print("RESULT " + json.dumps({"variant": path.name, "violations": violations, "agree": ours == actual.files}))
"""


@pytest.mark.parametrize("repo", [_krepo(layout) for layout in kr.LAYOUTS] + [TAMPERED])
def test_kernels_checks_the_digest_of_a_downloaded_variant(hub, tmp_path, repo):
    """kernels' own digest check (Digest.hash_variant + validate, what `kernels verify-signature` runs once
    the signature holds) accepts every variant kernel_repos wrote and refuses the tampered one.

    kernels 0.17.2 checks digests only there: get_kernel loads a variant whatever its digest says
    (the last assertion), and verify-signature needs a sigstore bundle before it looks at the digest.
    """
    env = hubfix.client_env(hub, tmp_path / "home")
    got = _result(_run([PY, "-c", DIGEST_CHECK, repo, str(HUB_DIR)], env, tmp_path))
    assert got["variant"] == NOARCH and got["agree"] is True  # the downloaded cache (symlinks) hashes like ours
    if repo != TAMPERED:
        assert got["violations"] == []
        return
    assert len(got["violations"]) == 1 and got["violations"][0].startswith("File hash mismatch for __init__.py")
    loaded = _result(_get_kernel(hub, tmp_path, TAMPERED, versions=(1,)))
    assert loaded["hello"]["1"] == _label("flat", 1, NOARCH)


@pytest.mark.parametrize("layout", kr.LAYOUTS)
def test_digest_writer_agrees_with_kernels_on_disk(tmp_path, layout):
    """kernel_repos' digest (pure Python) equals kernels' Digest.hash_variant, for every file kind it skips."""
    variant = kr.write_variant(tmp_path, NOARCH, layout=layout, name=KNAME, files={
        **kr.demo_package(KNAME, "x", so=b"\x7fELF" + _blob("so", 1000)),
        "layers/__init__.py": b"class ReLU:\n    pass\n",
        "data/metadata.json": b"{}",  # only the variant's own metadata.json is skipped
        "d\u00e4ta/\u00fcml\u00e4ut.txt": "non-ASCII names".encode(),
    })
    meta = Metadata.read_from_file(variant / "metadata.json")
    actual = Digest.hash_variant(DigestAlgorithm.SHA256, variant)
    meta.digest.validate(actual)
    assert meta.digest.files == actual.files == kr.digest_files(variant)
    assert json.loads((variant / "metadata.json").read_bytes())["digest"]["files"] == actual.files
    # files the digest never covers, added after the build: still valid for both
    (variant / "metadata.json.sigstore").write_bytes(b"{}")
    (variant / "__pycache__").mkdir()
    (variant / "__pycache__" / "x.cpython-311.pyc").write_bytes(b"\0")
    (variant / "stray.pyc").write_bytes(b"\0")
    meta.digest.validate(Digest.hash_variant(DigestAlgorithm.SHA256, variant))
    assert kr.digest_files(variant) == actual.files
    # a changed file is refused by kernels, and kernel_repos' digest sees the same change
    (variant / ("_ops.py" if layout != "nested" else "my_relu/_ops.py")).write_bytes(b"ops = 1\n")
    with pytest.raises(DigestValidationError) as e:
        meta.digest.validate(Digest.hash_variant(DigestAlgorithm.SHA256, variant))
    assert [str(v).split(":")[0] for v in e.value.violations] == [
        f"File hash mismatch for {'my_relu/' if layout == 'nested' else ''}_ops.py"]
    assert kr.digest_files(variant) == Digest.hash_variant(DigestAlgorithm.SHA256, variant).files


def test_digest_walk_matches_kernels_on_odd_files(tmp_path):
    """Symlinks (the HF cache's snapshots are symlinks), dot files, case, nested metadata.json."""
    (tmp_path / "sub").mkdir()
    for rel, data in {".pyc": b"a", "x.pyc": b"b", "PYC.PYC": b"c", "metadata.json": b"{}",
                      "metadata.json.sigstore": b"sig", "sub/metadata.json": b"{}", ".hidden": b""}.items():
        (tmp_path / rel).write_bytes(data)
    (tmp_path / "dirlink").symlink_to(tmp_path / "sub")  # not descended into
    (tmp_path / "filelink").symlink_to(tmp_path / "PYC.PYC")  # hashed under its own name
    ours = kr.digest_files(tmp_path)
    assert list(ours) == [".hidden", ".pyc", "PYC.PYC", "filelink", "sub/metadata.json"]
    assert ours == Digest.hash_variant(DigestAlgorithm.SHA256, tmp_path).files
    assert kr.digest_files(tmp_path, "sha512") == Digest.hash_variant(DigestAlgorithm.SHA512, tmp_path).files


def test_metadata_json_is_what_kernels_reads(tmp_path):
    """Every field kernel_repos writes reads back through kernels' Metadata (kernels-data's parser)."""
    variant = kr.write_variant(tmp_path, CUDA_ARCH, layout="flat", name=KNAME, version=2, license="MIT",
                               files=kr.demo_package(KNAME, "x"), archs=["9.0", "8.0", "9.0"],
                               python_depends=["einops"], kernels_minver="0.17.0",
                               upstream="https://github.com/example/relu.git")
    m = Metadata.read_from_file(variant / "metadata.json")
    assert (str(m.name), m.name.python_name, m.version, m.license) == (KNAME, "my_relu", 2, "MIT")
    assert str(m.backend.backend_type) == "cuda" and m.backend.archs == ["8.0", "9.0"]
    assert m.python_depends == ["einops"] and str(m.kernels_minver) == "0.17.0"
    assert m.upstream == "https://github.com/example/relu.git" and m.id.startswith("_my_relu_cuda_")
    raw = (variant / "metadata.json").read_bytes()
    assert not raw.endswith(b"\n") and raw.startswith(b'{\n  "name": "my-relu",\n  "id": ')  # serde pretty
    assert kr.variant_tree(NOARCH, layout="flat", name=KNAME, files={"__init__.py": b""}, with_metadata=False) == {
        f"build/{NOARCH}/__init__.py": b""}


def test_compat_module_reexports_the_flat_package(tmp_path):
    """The compat dir works the way kernel-builder meant it: `import <pkg>` with build/<v> on sys.path."""
    variant = kr.write_variant(tmp_path, NOARCH, layout="compat", name=KNAME, files=kr.demo_package(KNAME, "compat!"))
    assert (variant / "my_relu" / "__init__.py").read_bytes() == kr.COMPAT_INIT
    r = _run([PY, "-c", "import my_relu; print(my_relu.hello(), my_relu.add_op_namespace_prefix('f'))"],
             {**os.environ, "PYTHONPATH": str(variant)}, tmp_path)
    assert r.returncode == 0 and r.stdout.split() == ["compat!", "_my_relu::f"], r.stderr


# --------------------------------------------------------------------------- faults

SO = f"build/{CU126}/img2gray/_img2gray_abc123.abi3.so"


def _get(hub, tmp_path, filename, revision="v0.1.1", **kw) -> Path:
    return Path(hf_hub_download(REPO, filename, revision=revision, endpoint=hub.endpoint,
                                cache_dir=tmp_path / "cache", token=False, **kw))


CHUNK = 10 * 1024 * 1024  # huggingface_hub writes (and so can resume) in 10 MiB chunks


@pytest.mark.parametrize("listener,filename,after,expect", [
    # A drop inside the first 10 MiB loses the whole buffered chunk: the client starts over.
    ("hub", f"build/{CU126}/img2gray/__init__.py", 7, lambda n: [(200, 7, None), (200, n, None)]),
    # Past the first chunk, it resumes with a Range request the CDN answers with 206.
    ("cdn", "data/big.bin", BIG - 50,
     lambda n: [(200, BIG - 50, None), (206, n - CHUNK, f"bytes={CHUNK}-")]),
])
def test_fault_drop_mid_file_is_recovered(hub, tmp_path, listener, filename, after, expect):
    f = hub.add_fault("drop", listener=listener, method="GET", after_bytes=after)
    assert _get(hub, tmp_path, filename).read_bytes() == C1[filename]
    gets = hub.log(listener=listener, method="GET")
    assert [(e["status"], e["bytes"], e["range"]) for e in gets] == expect(len(C1[filename]))
    assert gets[0]["fault"] == {"id": f["id"], "kind": "drop"} and hub.fault(f["id"])["fired"] == 1


def test_fault_corrupt_same_length_wrong_bytes(hub, tmp_path):
    hub.add_fault("corrupt", listener="cdn", path="/repos/*", offset=10, count=4)
    data = _get(hub, tmp_path, SO).read_bytes()
    assert len(data) == len(C1[SO]) and data != C1[SO]
    assert data[:10] == C1[SO][:10] and data[14:] == C1[SO][14:]
    lfs = next(f for f in HfApi(endpoint=hub.endpoint, token=False).list_repo_tree(
        REPO, path_in_repo=f"build/{CU126}/img2gray", revision="v0.1.1") if f.path == SO).lfs
    assert hashlib.sha256(data).hexdigest() != lfs.sha256  # what a verifying client must notice


def test_fault_429_retry_after_is_honoured(hub, tmp_path):
    hub.add_fault("status", status=429, retry_after=0, listener="cdn", method="GET")
    assert _get(hub, tmp_path, SO).read_bytes() == C1[SO]
    assert [e["status"] for e in hub.log(listener="cdn")] == [429, 200]


def test_fault_503_survived_on_later_tree_page(hub, tmp_path):
    hub.add_fault("status", status=503, path=f"/api/models/{REPO}/tree/*", skip=1)  # the 2nd page
    path = Path(snapshot_download(REPO, revision="v0.1.0", endpoint=hub.endpoint, cache_dir=tmp_path / "c",
                                  token=False))
    _assert_snapshot(path, C0)
    statuses = [e["status"] for e in hub.log(kind="tree")]
    assert statuses[:3] == [200, 503, 200]


def test_fault_500_and_503_fail_clearly_when_not_retried(hub, tmp_path):
    hub.add_fault("status", status=500, path=f"/api/models/{REPO}/revision/*")
    with pytest.raises(LocalEntryNotFoundError, match="500"):
        snapshot_download(REPO, revision="v0.1.0", endpoint=hub.endpoint, cache_dir=tmp_path / "c", token=False)
    hub.add_fault("status", status=503, path=f"/api/models/{REPO}/refs")
    with pytest.raises(HfHubHTTPError) as e:
        HfApi(endpoint=hub.endpoint, token=False).list_repo_refs(REPO)
    assert e.value.response.status_code == 503


def test_fault_slow_response(hub, tmp_path):
    hub.add_fault("slow", listener="cdn", method="GET", delay=0.3, bytes_per_sec=100_000)
    t = time.monotonic()
    assert _get(hub, tmp_path, SO).read_bytes() == C1[SO]
    assert time.monotonic() - t >= 0.3 + len(C1[SO]) / 100_000 * 0.9
    assert hub.log(listener="cdn")[0]["fault"]["kind"] == "slow"


def test_fault_redirect_loop(hub, tmp_path):
    hub.add_fault("redirect_loop", path=f"/{REPO}/resolve/*", method="HEAD", times=None)
    with pytest.raises(httpx2.TooManyRedirects):
        _get(hub, tmp_path, "README.md")
    heads = hub.log(method="HEAD")
    assert len(heads) >= 20 and all(e["status"] == 302 for e in heads)


def test_fault_truncated_json(hub):
    hub.add_fault("truncate_json", path=f"/api/models/{REPO}/refs")
    with pytest.raises(ValueError):  # json.JSONDecodeError
        HfApi(endpoint=hub.endpoint, token=False).list_repo_refs(REPO)
    e = hub.log(kind="refs")[0]
    assert e["status"] == 200 and 0 < e["bytes"] and e["fault"]["kind"] == "truncate_json"


def test_fault_tree_lies_about_size_and_hash(hub):
    api = HfApi(endpoint=hub.endpoint, token=False)
    hub.add_fault("tree_lie", field="size", file="README.md", delta=5)
    hub.add_fault("tree_lie", field="lfs_oid", file=SO)
    tree = {f.path: f for f in api.list_repo_tree(REPO, revision="v0.1.1")}
    assert tree["README.md"].size == len(C1["README.md"]) + 5
    sib = {s.rfilename: s for s in api.model_info(REPO, revision="v0.1.1", files_metadata=True).siblings}
    assert sib[SO].lfs.sha256 != hashlib.sha256(C1[SO]).hexdigest()
    assert sib["README.md"].size == len(C1["README.md"])  # one lie each, then the truth
    assert [f["fired"] for f in hub.faults()] == [1, 1]


def test_fault_disconnect_without_answer(hub, tmp_path):
    hub.add_fault("disconnect", path=f"/{REPO}/resolve/*", method="HEAD")
    with pytest.raises(httpx2.RemoteProtocolError):
        _get(hub, tmp_path, "README.md")
    assert _get(hub, tmp_path, "README.md").read_bytes() == C1["README.md"]  # next attempt is served
    assert [e["status"] for e in hub.log(method="HEAD")] == [None, 200]


def test_fault_missing_header(hub, tmp_path):
    hub.add_fault("headers", remove=["X-Repo-Commit"], path=f"/{REPO}/resolve/*", method="HEAD", times=2)
    with pytest.raises(LocalEntryNotFoundError) as e:
        _get(hub, tmp_path, "README.md")
    assert "X-Repo-Commit" in str(e.value.__cause__ or e.value)


def test_fault_api_rejects_bad_specs(hub):
    with pytest.raises(RuntimeError, match="unknown fault kind"):
        hub.add_fault("explode")
    assert hub.faults() == []


def test_server_cli_handshake_and_sigterm(tmp_path):
    p = subprocess.Popen([PY, str(hubfix.SERVER), "--root", str(tmp_path), "--port", "0", "--cdn-port", "0"],
                         stdout=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True)
    try:
        info = json.loads(p.stdout.readline())
        assert urlsplit(info["endpoint"]).hostname == "127.0.0.1" and urlsplit(info["cdn"]).hostname == "localhost"
        with httpx2.Client(trust_env=False) as c:
            assert c.get(info["endpoint"] + "/_fixture/health").json()["ok"] is True
            r = c.get(info["endpoint"] + "/api/models/nobody/nothing")
            assert r.status_code == 401 and r.headers["x-error-code"] == "RepoNotFound"
        p.send_signal(signal.SIGTERM)
        assert p.wait(timeout=10) == 0
    finally:
        if p.poll() is None:
            p.kill()
