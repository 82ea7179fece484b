"""Helpers for tests that need the fixture Hub (tests/hub/server.py).

Build a repo store, start the server as a subprocess, drive its control API:

    from fixture import make_repo, hub_server

    repo = make_repo(root, "org/img2gray",
                     commits=[{"build/torch-universal/img2gray/__init__.py": b"..."}, tree_dir],
                     branches={"main": -1, "v0": 0}, tags={"v0.1.0": 0, "v0.1.1": 1})
    with hub_server(root, token="hf_secret", page_size=3) as hub:
        snapshot_download(repo.repo_id, endpoint=hub.endpoint, ...)
        assert not any(e["auth"] for e in hub.log(listener="cdn"))

Standard library only (pytest is optional: `hub` fixture at the bottom).
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import json
import os
import selectors
import ssl
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

HUB_DIR = Path(__file__).resolve().parent
SERVER = HUB_DIR / "server.py"

_spec = importlib.util.spec_from_file_location("_kwheel_fixture_hub_server", SERVER)
server = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(server)

git_blob_oid = server.git_blob_oid
lfs_pointer = server.lfs_pointer
is_lfs = server.is_lfs
LFS_THRESHOLD = server.LFS_THRESHOLD

EPOCH = 1735689600  # 2025-01-01T00:00:00Z; commit i is dated EPOCH + i hours


# --------------------------------------------------------------------------- store


def _iso(ts: int) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime(ts))


def _load_meta(repo_dir: Path) -> dict:
    p = repo_dir / "repo.json"
    if p.exists():
        return json.loads(p.read_text())
    return {"private": False, "gated": False, "refs": {"branches": {}, "tags": {}}, "commits": {}}


def _save_meta(repo_dir: Path, meta: dict) -> None:
    repo_dir.mkdir(parents=True, exist_ok=True)
    tmp = repo_dir / "repo.json.tmp"
    tmp.write_text(json.dumps(meta, indent=2, sort_keys=True) + "\n")
    os.replace(tmp, repo_dir / "repo.json")


def files_of(src) -> dict[str, bytes | Path]:
    """Normalise a commit's content: a directory (its files, recursively) or {repo path: bytes|str|Path}."""
    if isinstance(src, (str, os.PathLike)) and Path(src).is_dir():
        root = Path(src)
        return {p.relative_to(root).as_posix(): p for p in sorted(root.rglob("*")) if p.is_file()}
    if isinstance(src, dict):
        out = {}
        for k, v in src.items():
            k = str(k).strip("/")
            if not k or any(part in ("", ".", "..") for part in k.split("/")):
                raise ValueError(f"bad repo path {k!r}")
            out[k] = v.encode() if isinstance(v, str) else v
        return out
    raise TypeError(f"commit content must be a directory or a dict, not {type(src).__name__}")


def add_commit(repo_dir, src, *, message: str | None = None, branch: str | None = "main",
               parents: list[str] | None = None, timestamp: int | None = None,
               lfs_threshold: int = LFS_THRESHOLD) -> str:
    """Store one commit (the full tree `src`) in `repo_dir`; return its sha.

    The sha is a real git commit id over the real git tree (LFS files enter the
    tree as their pointers), with a fixed author and date, so the same content,
    parents and message always give the same sha. `parents` defaults to the
    current head of `branch`; `branch` (if not None) is moved to the new commit.
    """
    repo_dir = Path(repo_dir)
    meta = _load_meta(repo_dir)
    branches = meta.setdefault("refs", {}).setdefault("branches", {})
    meta["refs"].setdefault("tags", {})
    commits = meta.setdefault("commits", {})
    if parents is None:
        parents = [branches[branch]] if branch and branch in branches else []
    if timestamp is None:
        timestamp = EPOCH + 3600 * len(commits)
    message = message or f"Commit {len(commits) + 1}"
    (repo_dir / "commits").mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=".tmp-", dir=repo_dir / "commits"))
    try:
        for path, content in files_of(src).items():
            dst = tmp / path
            dst.parent.mkdir(parents=True, exist_ok=True)
            if isinstance(content, (bytes, bytearray)):
                dst.write_bytes(content)
            else:
                shutil.copyfile(content, dst)
        tree = server.Tree(str(tmp), lfs_threshold)
        ident = f"Fixture <fixture@example.invalid> {timestamp} +0000"
        body = f"tree {tree.root_oid}\n" + "".join(f"parent {p}\n" for p in parents)
        body += f"author {ident}\ncommitter {ident}\n\n{message}\n"
        raw = body.encode()
        sha = hashlib.sha1(b"commit %d\0" % len(raw) + raw).hexdigest()
        final = repo_dir / "commits" / sha
        if final.exists():
            shutil.rmtree(tmp)
        else:
            os.rename(tmp, final)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    commits[sha] = {"title": message.splitlines()[0], "message": message, "date": _iso(timestamp),
                    "parents": list(parents), "authors": ["fixture"]}
    if branch:
        branches[branch] = sha
    _save_meta(repo_dir, meta)
    return sha


def set_ref(repo_dir, name: str, sha: str, *, tag: bool = False) -> None:
    """Point branch (or tag) `name` at `sha`."""
    repo_dir = Path(repo_dir)
    meta = _load_meta(repo_dir)
    meta.setdefault("refs", {}).setdefault("tags" if tag else "branches", {})[name] = sha
    _save_meta(repo_dir, meta)


def delete_ref(repo_dir, name: str, *, tag: bool = False) -> None:
    repo_dir = Path(repo_dir)
    meta = _load_meta(repo_dir)
    meta.get("refs", {}).get("tags" if tag else "branches", {}).pop(name, None)
    _save_meta(repo_dir, meta)


def set_repo_options(repo_dir, **options) -> None:
    """Set repo.json keys: private, gated (False|"auto"|"manual"), gated_granted, types, default_branch, ..."""
    repo_dir = Path(repo_dir)
    meta = _load_meta(repo_dir)
    meta.update(options)
    _save_meta(repo_dir, meta)


def set_org(root, org: str, **fields) -> None:
    """Write ROOT/<org>/org.json, e.g. set_org(root, "org", trustedKernelPublisher=True)."""
    d = Path(root) / org
    d.mkdir(parents=True, exist_ok=True)
    (d / "org.json").write_text(json.dumps(fields, indent=2, sort_keys=True) + "\n")


def set_user(root, name: str) -> None:
    """Mark ROOT/<name> a user's namespace: /api/organizations/<name>/overview answers 404, as the Hub does."""
    d = Path(root) / name
    d.mkdir(parents=True, exist_ok=True)
    (d / "user.json").write_text("{}\n")


@dataclass
class RepoHandle:
    repo_id: str
    dir: Path
    shas: list[str] = field(default_factory=list)  # commit i -> sha
    versions: dict[int, str] = field(default_factory=dict)  # kernel version N -> sha (kernel_repos.make_kernel_repo)

    def sha(self, ref) -> str:
        return self.shas[ref] if isinstance(ref, int) else ref


def make_repo(root, repo_id: str, commits: list, *, branches: dict | None = None, tags: dict | None = None,
              private: bool = False, gated=False, gated_granted: bool = True, types: list[str] | None = None,
              messages: list[str] | None = None, lfs_threshold: int = LFS_THRESHOLD) -> RepoHandle:
    """Create ROOT/<org>/<name> from a linear history of commits.

    commits:  each a directory (e.g. a Hub-layout tree with `build/<variant>/<pkg>/...`)
              or a {repo path: bytes|str|Path} mapping; each is the commit's full tree.
    branches, tags: {name: commit index (negative ok) or sha}; default {"main": -1}.
    """
    org, _, name = repo_id.partition("/")
    if not org or not name or "/" in name:
        raise ValueError("repo_id must be 'org/name'")
    repo_dir = Path(root) / org / name
    if repo_dir.exists():
        shutil.rmtree(repo_dir)
    handle = RepoHandle(repo_id, repo_dir)
    for i, content in enumerate(commits):
        msg = messages[i] if messages else None
        parents = [handle.shas[-1]] if handle.shas else []
        handle.shas.append(add_commit(repo_dir, content, message=msg, branch=None, parents=parents,
                                      lfs_threshold=lfs_threshold))
    meta = _load_meta(repo_dir)
    meta["private"] = private
    meta["gated"] = gated
    meta["gated_granted"] = gated_granted
    if types is not None:
        meta["types"] = types
    refs = {"branches": {}, "tags": {}}
    for kind, spec in (("branches", branches if branches is not None else {"main": -1}), ("tags", tags or {})):
        for ref_name, ref in spec.items():
            refs[kind][ref_name] = handle.sha(ref)
    meta["refs"] = refs
    _save_meta(repo_dir, meta)
    if not (Path(root) / org / "org.json").exists():
        # A test's repo comes from a trusted kernel publisher unless the test says otherwise with
        # set_org(root, org, trustedKernelPublisher=False): the Hub's own default is false, and
        # kwheel and kernels refuse such repos.
        set_org(root, org, trustedKernelPublisher=True)
    return handle


# --------------------------------------------------------------------------- server process


class HubServer:
    """The fixture Hub as a subprocess. Use as a context manager (or start()/stop())."""

    def __init__(self, root, *, token: str | list[str] | None = None, page_size: int | None = None,
                 lfs_threshold: int | None = None, cdn_host: str | None = None, extra_args=(),
                 startup_timeout: float = 30.0, tls: tuple[str, str, str] | None = None,
                 commits_page_size: int | None = None, path_prefix: str = "", no_commits_api: bool = False):
        """tls: (certificate, key, CA file) to serve HTTPS; the control API then trusts the CA file.
        path_prefix: serve the Hub below this path, as a mirror does; .endpoint then ends with it.
        no_commits_api: answer the commits listing 404 RepoNotFound, as a proxy without that route does."""
        self.root = Path(root)
        self.tokens = [token] if isinstance(token, str) else list(token or [])
        self.page_size = page_size
        self.commits_page_size = commits_page_size
        self.lfs_threshold = lfs_threshold
        self.cdn_host = cdn_host
        self.extra_args = list(extra_args)
        self.path_prefix = path_prefix
        self.no_commits_api = no_commits_api
        self.startup_timeout = startup_timeout
        self.proc: subprocess.Popen | None = None
        self.endpoint = self.cdn = ""
        self._stderr = None
        self.tls = tls
        handlers = [urllib.request.ProxyHandler({})]
        if tls:
            handlers.append(urllib.request.HTTPSHandler(context=ssl.create_default_context(cafile=str(tls[2]))))
        self._opener = urllib.request.build_opener(*handlers)

    def start(self) -> "HubServer":
        self.root.mkdir(parents=True, exist_ok=True)
        cmd = [sys.executable, str(SERVER), "--root", str(self.root), "--port", "0", "--cdn-port", "0"]
        for t in self.tokens:
            cmd += ["--token", t]
        if self.page_size is not None:
            cmd += ["--page-size", str(self.page_size)]
        if self.commits_page_size is not None:
            cmd += ["--commits-page-size", str(self.commits_page_size)]
        if self.lfs_threshold is not None:
            cmd += ["--lfs-threshold", str(self.lfs_threshold)]
        if self.cdn_host is not None:
            cmd += ["--cdn-host", self.cdn_host]
        if self.tls:
            cmd += ["--tls-cert", str(self.tls[0]), "--tls-key", str(self.tls[1])]
        if self.path_prefix:
            cmd += ["--path-prefix", self.path_prefix]
        if self.no_commits_api:
            cmd += ["--no-commits-api"]
        cmd += self.extra_args
        self._stderr = tempfile.TemporaryFile()
        self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._stderr)
        sel = selectors.DefaultSelector()
        sel.register(self.proc.stdout, selectors.EVENT_READ)
        line = b""
        deadline = time.monotonic() + self.startup_timeout
        while not line.endswith(b"\n"):
            left = deadline - time.monotonic()
            if left <= 0 or not sel.select(left):
                self.stop()
                raise RuntimeError(f"fixture hub did not start within {self.startup_timeout}s: {self.stderr_text()}")
            chunk = os.read(self.proc.stdout.fileno(), 4096)
            if not chunk:
                self.stop()
                raise RuntimeError(f"fixture hub exited during start-up: {self.stderr_text()}")
            line += chunk
        sel.close()
        info = json.loads(line.decode())
        self.endpoint, self.cdn, self.pid = info["endpoint"], info["cdn"], info["pid"]
        return self

    def stop(self) -> None:
        p, self.proc = self.proc, None
        if p is None:
            return
        with contextlib.suppress(Exception):
            p.stdin.close()  # the server exits when its stdin closes ...
        try:
            p.wait(timeout=5)
        except subprocess.TimeoutExpired:
            p.send_signal(signal.SIGTERM)  # ... or on SIGTERM
            try:
                p.wait(timeout=5)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        with contextlib.suppress(Exception):
            p.stdout.close()

    def __enter__(self) -> "HubServer":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    def stderr_text(self) -> str:
        if self._stderr is None:
            return ""
        self._stderr.seek(0)
        return self._stderr.read().decode(errors="replace")

    # ---- control API

    def control(self, method: str, sub: str, body=None, query: dict | None = None):
        url = f"{self.endpoint}/_fixture/{sub}"
        if query:
            url += "?" + urllib.parse.urlencode(query)
        data = json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request(url, data=data, method=method,
                                     headers={"Content-Type": "application/json"} if data else {})
        try:
            with self._opener.open(req, timeout=30) as r:
                return json.loads(r.read())
        except urllib.error.HTTPError as e:
            raise RuntimeError(f"control {method} {sub}: {e.code} {e.read().decode(errors='replace')}") from None

    def log(self, **filters) -> list[dict]:
        """Request log entries, oldest first; filters match entry fields exactly (as strings)."""
        return self.control("GET", "log", query={k: str(v) for k, v in filters.items()})

    def clear_log(self) -> None:
        self.control("DELETE", "log")

    def add_fault(self, kind: str, **spec) -> dict:
        """Arm a fault; returns it with its id. See README.md for kinds and fields."""
        return self.control("POST", "faults", {"kind": kind, **spec})

    def release(self, fid: int) -> None:
        """Let a `hold` fault's withheld answer go."""
        self.control("POST", f"faults/{fid}/release")

    def faults(self) -> list[dict]:
        return self.control("GET", "faults")

    def fault(self, fid: int) -> dict:
        return next(f for f in self.faults() if f["id"] == fid)

    def clear_faults(self) -> None:
        self.control("DELETE", "faults")

    def set_page_size(self, n: int) -> None:
        self.control("POST", "config", {"page_size": n})

    def set_commits_page_size(self, n: int) -> None:
        """Page size of /commits listings that carry no `limit` (huggingface_hub sends none)."""
        self.control("POST", "config", {"commits_page_size": n})

    def downloads(self, file: str | None = None) -> int:
        """Number of file bodies served: resolve GETs answered 200/206 on the Hub plus CDN GETs."""
        n = 0
        for e in self.log():
            if e["method"] != "GET" or e["status"] not in (200, 206):
                continue
            if e["kind"] == "resolve" and (file is None or e["file"] == file):
                n += 1
            elif e["kind"] == "cdn" and file is None:
                n += 1
        return n



@contextlib.contextmanager
def hub_server(root, **kwargs):
    """Context manager: a started HubServer over the store at `root`."""
    srv = HubServer(root, **kwargs)
    srv.start()
    try:
        yield srv
    finally:
        srv.stop()


def client_env(hub: HubServer, home, **extra) -> dict:
    """Environment for a subprocess client (huggingface_hub, kernels) pointed at `hub`.

    HF_HUB_DISABLE_TELEMETRY is deliberately not set: kernels 0.17.2 then builds an empty
    user agent that huggingface_hub 2.4 turns into an illegal header value ("...; "), so its
    requests fail before they are sent (get_kernel reports "could not verify publisher trust").
    """
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("HF_", "HUGGINGFACE_")) and k.lower() not in ("http_proxy", "https_proxy",
                                                                              "all_proxy")}
    env.update({
        "HF_ENDPOINT": hub.endpoint,
        "HF_HOME": str(home),
        "HF_HUB_DISABLE_PROGRESS_BARS": "1",
        "HF_HUB_DISABLE_UPDATE_CHECK": "1",
        "HF_HUB_DISABLE_IMPLICIT_TOKEN": "1",
        "NO_PROXY": "127.0.0.1,localhost",
        "no_proxy": "127.0.0.1,localhost",
    })
    env.update({k: str(v) for k, v in extra.items()})
    return env


try:  # optional pytest integration
    import pytest

    @pytest.fixture
    def hub(tmp_path):
        """A running fixture Hub over an empty store at tmp_path/'hub' (add repos with make_repo(hub.root, ...))."""
        with hub_server(tmp_path / "hub") as srv:
            yield srv

except ImportError:  # pragma: no cover
    pass
