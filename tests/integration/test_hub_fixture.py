"""The fixture Hub (tests/hub/server.py) is only useful if real clients accept it.

These tests drive it with huggingface_hub 1.33 (in process), with the `kernels`
0.10.5 CLI (our `to-wheel` anchor, in a subprocess) and with the latest
`kernels` (0.17.2, installed on demand into a side directory so the pinned venv
is left alone), and show that every injectable fault fires.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
import zipfile
from pathlib import Path
from urllib.parse import urlsplit

import httpx
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

REPO_ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO_ROOT / "tests" / "hub"))
import fixture as hubfix  # noqa: E402

PY = sys.executable
KERNELS_CLI = str(Path(sys.executable).parent / "kernels")
KERNELS_LATEST = "0.17.2"
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
CPU113 = "torch113-cxx11-cpu-x86_64-linux"  # matches Debian's python3-torch 1.13
UNIVERSAL = "torch-universal"


def _blob(seed: str, n: int) -> bytes:
    out, i = bytearray(), 0
    while len(out) < n:
        out += hashlib.sha256(f"{seed}:{i}".encode()).digest()
        i += 1
    return bytes(out[:n])


def _variant(variant: str, rev: str) -> dict[str, bytes]:
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


def _write_tree(dst: Path, files: dict[str, bytes]) -> Path:
    for rel, data in files.items():
        p = dst / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(data)
    return dst


# Three commits, each the full tree; a variant is byte-identical across commits unless it changes.
C0 = {"README.md": b"# img2gray\n", **_variant(CU126, "a"), **_variant(CPU, "a"), **_variant(UNIVERSAL, "a")}
C1 = {**C0, **_variant(CU126, "b"), **_variant(CPU113, "b"), "data/big.bin": _blob("big", BIG)}
C2 = {**C1, **_variant(UNIVERSAL, "c"), "README.md": b"# img2gray\n\nv0.2.0\n"}
COMMITS = [C0, C1, C2]


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
    return {"root": root, "shas": repo.shas}


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


# --------------------------------------------------------------------------- huggingface_hub


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
    with httpx.Client(trust_env=False) as c:
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
    with httpx.Client(trust_env=False) as c:
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


# --------------------------------------------------------------------------- kernels 0.10.5


def _run(cmd, env, cwd, timeout=120):
    r = subprocess.run(cmd, env=env, cwd=cwd, capture_output=True, text=True, timeout=timeout)
    return r


def test_kernels_0_10_to_wheel(hub, tmp_path):
    if not Path(KERNELS_CLI).exists():
        pytest.skip("kernels 0.10.5 CLI not installed in the venv")
    out = tmp_path / "wheels"
    out.mkdir()
    env = hubfix.client_env(hub, tmp_path / "home")
    r = _run([KERNELS_CLI, "to-wheel", REPO, "0.1.1"], env, out)
    assert r.returncode == 0, r.stderr
    wheels = sorted(p.name for p in out.glob("*.whl"))
    assert len(wheels) == 4, wheels
    assert "img2gray-0.1.1-py39-none-any.whl" in wheels
    assert "img2gray-0.1.1+torch27cu126cxx11-cp39-abi3-manylinux_2_28_x86_64.whl" in wheels
    for whl in out.glob("*.whl"):
        variant = {"py39-none-any": UNIVERSAL, "cu126": CU126, "torch113": CPU113, "cucpu": CPU}
        v = next(val for key, val in variant.items() if key in whl.name)
        with zipfile.ZipFile(whl) as z:
            for name in ("__init__.py", "_ops.py", "_img2gray_abc123.abi3.so"):
                assert z.read(f"img2gray/{name}") == C1[f"build/{v}/img2gray/{name}"], (whl.name, name)
    log = hub.log()
    assert any(e["path"] == f"/api/models/{REPO}/revision/v0.1.1" for e in log)
    assert len([e for e in log if e["kind"] == "tree"]) > 1
    assert not any(e["auth"] for e in log)


def test_kernels_0_10_lock_download_and_corruption(hub, store, tmp_path):
    if not Path(KERNELS_CLI).exists():
        pytest.skip("kernels 0.10.5 CLI not installed in the venv")
    proj = tmp_path / "proj"
    proj.mkdir()
    (proj / "pyproject.toml").write_text(
        f'[project]\nname = "p"\nversion = "0"\n\n[tool.kernels.dependencies]\n"{REPO}" = ">=0.1.0,<0.2"\n')
    env = hubfix.client_env(hub, tmp_path / "home")
    r = _run([KERNELS_CLI, "lock", str(proj)], env, tmp_path)
    assert r.returncode == 0, r.stderr
    lock = json.loads((proj / "kernels.lock").read_text())
    assert lock[0]["sha"] == store["shas"][1]  # newest tag matching the spec: v0.1.1
    assert set(lock[0]["variants"]) == {CU126, CPU, CPU113, UNIVERSAL}
    assert any("blobs=true" in e["query"] for e in hub.log())

    # download re-hashes every blob against the lock: proves the ETag/blob naming is right
    r = _run([KERNELS_CLI, "download", "--all-variants", str(proj)], env, tmp_path)
    assert r.returncode == 0, r.stderr

    # same length, wrong bytes on the CDN: the lock check must catch it
    fault = hub.add_fault("corrupt", listener="cdn", method="GET", times=None, offset=100, count=8)
    env2 = hubfix.client_env(hub, tmp_path / "home2")
    r = _run([KERNELS_CLI, "download", "--all-variants", str(proj)], env2, tmp_path)
    assert r.returncode != 0 and "Lock file specifies kernel with hash" in r.stderr, r.stderr
    assert hub.fault(fault["id"])["fired"] >= 1


# --------------------------------------------------------------------------- latest kernels


@pytest.fixture(scope="session")
def kernels_latest(tmp_path_factory):
    """kernels==0.17.2 in a side directory (--no-deps: it runs on the venv's huggingface_hub 1.33)."""
    target = Path(os.environ.get("KWHEEL_KERNELS_LATEST_DIR")
                  or Path(sys.prefix) / "kwheel-extra" / f"kernels-{KERNELS_LATEST}")
    if not (target / "kernels" / "__init__.py").exists():
        tmp = target.with_name(target.name + f".tmp{os.getpid()}")
        shutil.rmtree(tmp, ignore_errors=True)
        r = subprocess.run([PY, "-m", "pip", "install", "-q", "--disable-pip-version-check", "--no-deps",
                            "--target", str(tmp), f"kernels=={KERNELS_LATEST}"], capture_output=True, text=True,
                           timeout=300)
        if r.returncode != 0:
            pytest.skip(f"cannot install kernels=={KERNELS_LATEST}: {r.stderr.strip()[-400:]}")
        shutil.rmtree(target, ignore_errors=True)
        os.replace(tmp, target)
    return target


# The CLI of kernels 0.17 imports sigstore (only `verify-signature` uses it); stub it out.
LATEST_CLI = r"""
import sys, types
class _NoSigstore(Exception): pass
def _stub(name, **attrs):
    m = types.ModuleType(name); m.__dict__.update(attrs); sys.modules[name] = m
_stub("sigstore"); _stub("sigstore.errors", VerificationError=_NoSigstore)
_stub("sigstore.models", Bundle=object, InvalidBundle=_NoSigstore)
_stub("sigstore.verify", Verifier=object, policy=types.SimpleNamespace())
_stub("sigstore.verify.policy", VerificationPolicy=object)
from kernels.cli import main
main()
"""

LATEST_GET_KERNEL = r"""
import sys
if sys.argv[1] == "debian":
    sys.path.append(sys.argv[2])  # Debian's python3-torch, after the venv's packages
    import torch
from kernels import get_kernel
from kernels.install import install_kernel_all_variants
k = get_kernel(sys.argv[3], version=0, backend="cpu")
print("HELLO", k.hello())
p = install_kernel_all_variants(sys.argv[3], version=0)
print("VARIANTS", sorted(x.name for x in p.iterdir()))
"""


def test_kernels_latest_cli_lock_and_download(hub, store, tmp_path, kernels_latest):
    proj = tmp_path / "proj"
    proj.mkdir()
    (proj / "pyproject.toml").write_text(
        f'[project]\nname = "p"\nversion = "0"\n\n[tool.kernels.dependencies]\n"{REPO}" = 0\n')
    env = hubfix.client_env(hub, tmp_path / "home", PYTHONPATH=kernels_latest)
    r = _run([PY, "-c", LATEST_CLI, "lock", str(proj)], env, tmp_path)
    assert r.returncode == 0, r.stderr
    lock = json.loads((proj / "kernels.lock").read_text())
    assert lock[0]["lock"]["commit"] == store["shas"][1]  # branch v0
    r = _run([PY, "-c", LATEST_CLI, "download", "--all-variants", str(proj)], env, tmp_path)
    assert r.returncode == 0, r.stderr
    snap = tmp_path / "home" / "hub" / "kernels--kernels-test--img2gray" / "snapshots" / store["shas"][1]
    _assert_snapshot(snap, {k: v for k, v in C1.items() if k.startswith("build/")})
    log = hub.log()
    assert any(e["path"] == f"/api/kernels/{REPO}/refs" for e in log)
    assert any(e["path"].startswith(f"/kernels/{REPO}/resolve/") for e in log)
    assert any(e["path"] == f"/api/organizations/{ORG}/overview" for e in log)
    assert not any(e["path"].startswith("/api/models/") for e in log)


@pytest.mark.parametrize("torch", ["none", "debian"])
def test_kernels_latest_get_kernel(hub, tmp_path, kernels_latest, torch):
    if torch == "debian" and not (DEBIAN_DIST / "torch" / "__init__.py").exists():
        pytest.skip("Debian's python3-torch is not installed")
    env = hubfix.client_env(hub, tmp_path / "home", PYTHONPATH=kernels_latest)
    r = _run([PY, "-c", LATEST_GET_KERNEL, torch, str(DEBIAN_DIST), REPO], env, tmp_path)
    assert r.returncode == 0, r.stderr
    # branch v0 is C1: its torch113 variant is new in C1 ("b"), torch-universal is still C0's ("a")
    expected = f"HELLO img2gray b {CPU113}" if torch == "debian" else f"HELLO img2gray a {UNIVERSAL}"
    assert expected in r.stdout, r.stdout
    assert f"VARIANTS {sorted([CU126, CPU, CPU113, UNIVERSAL])}" in r.stdout


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
    with pytest.raises(httpx.TooManyRedirects):
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
    with pytest.raises(httpx.RemoteProtocolError):
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
        with httpx.Client(trust_env=False) as c:
            assert c.get(info["endpoint"] + "/_fixture/health").json()["ok"] is True
            r = c.get(info["endpoint"] + "/api/models/nobody/nothing")
            assert r.status_code == 401 and r.headers["x-error-code"] == "RepoNotFound"
        p.send_signal(signal.SIGTERM)
        assert p.wait(timeout=10) == 0
    finally:
        if p.poll() is None:
            p.kill()
