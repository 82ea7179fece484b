#!/usr/bin/env python3
"""Fixture Hugging Face Hub server for the kwheel tests.

Serves kernel repos from a directory tree with the HTTP API that
huggingface_hub (2.4) and the `kernels` package (0.17) speak to the real Hub, plus a
second "CDN" listener on another host name for LFS objects, a fault-injection
control API and a request log.  Standard library only, so it runs anywhere.

Store layout (see tests/hub/README.md and fixture.py, which writes it):

    ROOT/<org>/org.json                       optional {"trustedKernelPublisher": bool, ...}
    ROOT/<org>/user.json                      optional: a user's namespace, no organization (overview 404)
    ROOT/<org>/<name>/repo.json               {"private", "gated", "refs": {"branches", "tags"}, ...}
    ROOT/<org>/<name>/commits/<sha40>/<files> the full file tree of each commit

LFS rule: a file is stored "in LFS" when its path ends in `.so` or it is at
least LFS_THRESHOLD bytes (10 MiB, `--lfs-threshold`).  LFS files are listed
with an `lfs` block, their git oid is the oid of their LFS pointer, and
`resolve` answers them with a 302 to the CDN listener.

Usage:
    python tests/hub/server.py --root DIR [--port 0] [--cdn-port 0] [--token T ...]
                               [--page-size N] [--commits-page-size N] [--lfs-threshold BYTES]

Once both listeners accept connections it prints one JSON line on stdout,
    {"endpoint": "http://127.0.0.1:PORT", "cdn": "http://localhost:PORT", ...}
and serves until SIGTERM/SIGINT, or until stdin reaches EOF when stdin is a pipe.
"""

from __future__ import annotations

import argparse
import base64
import fnmatch
import hashlib
import hmac
import html
import json
import os
import secrets
import signal
import ssl
import stat
import sys
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, quote, unquote, urlencode, urlsplit

LFS_THRESHOLD = 10 * 1024 * 1024
LFS_SUFFIXES = (".so",)
DEFAULT_PAGE_SIZE = 1000
DEFAULT_COMMITS_PAGE_SIZE = 50  # the commits listing pages on its own (`p`, `limit`), like the Hub's
MAX_COMMITS_LIMIT = 1000
CHUNK = 64 * 1024
MAX_BODY = 16 * 1024 * 1024  # request bodies (control API, paths-info)
MAX_SLEEP = 60.0  # upper bound on any injected sleep, per request
MAX_LOG = 100_000
URL_TTL = 3600  # lifetime of signed CDN URLs, seconds
DEFAULT_DATE = "2025-01-01T00:00:00.000Z"
REPO_TYPES = {"models": "model", "kernels": "kernel", "datasets": "dataset", "spaces": "space"}
URL_PREFIXES = {"kernels": "kernel", "datasets": "dataset", "spaces": "space"}  # /{prefix}/{repo}/resolve/...
DEFAULT_TYPES = ["model", "kernel"]


# --------------------------------------------------------------------------- hashing


def git_blob_oid(data: bytes) -> str:
    """Git blob id (sha1 of "blob <len>\\0" + data)."""
    h = hashlib.sha1(b"blob %d\0" % len(data))
    h.update(data)
    return h.hexdigest()


def lfs_pointer(sha256: str, size: int) -> bytes:
    """The git-lfs pointer file stored in git in place of an LFS object."""
    return f"version https://git-lfs.github.com/spec/v1\noid sha256:{sha256}\nsize {size}\n".encode()


def is_lfs(path: str, size: int, threshold: int = LFS_THRESHOLD) -> bool:
    """The fixture's LFS rule: `*.so`, or `threshold` bytes or more."""
    return path.endswith(LFS_SUFFIXES) or size >= threshold


def git_tree_oid(entries: list[tuple[str, str, str]]) -> str:
    """Git tree id from (mode, name, hex oid) entries, sorted the way git sorts them."""

    def key(e):
        mode, name, _ = e
        return name.encode() + (b"/" if mode == "40000" else b"")

    body = b"".join(b"%s %s\0%s" % (m.encode(), n.encode(), bytes.fromhex(o)) for m, n, o in sorted(entries, key=key))
    return hashlib.sha1(b"tree %d\0" % len(body) + body).hexdigest()


class FileInfo:
    __slots__ = ("path", "abspath", "size", "sha256", "md5", "lfs", "oid", "pointer_size", "git_oid")

    def __init__(self, path, abspath, size, sha256, md5, lfs, oid, pointer_size):
        self.path = path  # path in the repo, "/"-separated
        self.abspath = abspath
        self.size = size
        self.sha256 = sha256
        self.md5 = md5
        self.lfs = lfs
        self.oid = oid  # git blob id of what git stores: the content, or the LFS pointer
        self.pointer_size = pointer_size
        self.git_oid = oid


_hash_cache: dict = {}
_hash_lock = threading.Lock()


def file_info(path: str, abspath: str, threshold: int) -> FileInfo:
    st = os.stat(abspath)
    key = (abspath, st.st_size, st.st_mtime_ns, threshold)
    with _hash_lock:
        hit = _hash_cache.get(key)
    if hit is not None:
        return hit
    size = st.st_size
    sha256, md5, sha1 = hashlib.sha256(), hashlib.md5(), hashlib.sha1(b"blob %d\0" % size)
    with open(abspath, "rb") as f:
        while True:
            chunk = f.read(1 << 20)
            if not chunk:
                break
            sha256.update(chunk)
            md5.update(chunk)
            sha1.update(chunk)
    lfs = is_lfs(path, size, threshold)
    if lfs:
        pointer = lfs_pointer(sha256.hexdigest(), size)
        oid, pointer_size = git_blob_oid(pointer), len(pointer)
    else:
        oid, pointer_size = sha1.hexdigest(), None
    info = FileInfo(path, abspath, size, sha256.hexdigest(), md5.hexdigest(), lfs, oid, pointer_size)
    with _hash_lock:
        _hash_cache[key] = info
    return info


# --------------------------------------------------------------------------- store


class Tree:
    """The file tree of one commit: files, directories and their git ids."""

    def __init__(self, commit_dir: str, threshold: int):
        self.files: dict[str, FileInfo] = {}
        for dirpath, dirnames, filenames in os.walk(commit_dir):
            dirnames.sort()
            for fn in sorted(filenames):
                abspath = os.path.join(dirpath, fn)
                if not os.path.isfile(abspath):
                    continue
                rel = os.path.relpath(abspath, commit_dir).replace(os.sep, "/")
                self.files[rel] = file_info(rel, abspath, threshold)
        # directories and their tree ids
        children: dict[str, dict[str, tuple[str, str]]] = {"": {}}
        for rel in self.files:
            parts = rel.split("/")
            for i in range(1, len(parts)):
                d = "/".join(parts[:i])
                children.setdefault(d, {})
        self.dirs: dict[str, str] = {}
        # compute tree ids bottom-up
        for rel, info in self.files.items():
            parent, _, name = rel.rpartition("/")
            children[parent][name] = ("100644", info.oid)
        for d in sorted((p for p in children if p), key=lambda p: p.count("/"), reverse=True):
            oid = git_tree_oid([(m, n, o) for n, (m, o) in children[d].items()])
            self.dirs[d] = oid
            parent, _, name = d.rpartition("/")
            children[parent][name] = ("40000", oid)
        self.root_oid = git_tree_oid([(m, n, o) for n, (m, o) in children[""].items()])
        self.children = {d: sorted(c) for d, c in children.items()}

    def oid_at(self, path: str) -> str | None:
        if path == "":
            return self.root_oid
        if path in self.files:
            return self.files[path].oid
        return self.dirs.get(path)

    def walk(self, path: str, recursive: bool):
        """(kind, path) below directory `path`, in git order (a directory before its contents)."""
        for name in self.children.get(path, []):
            full = f"{path}/{name}" if path else name
            if full in self.dirs:
                yield "directory", full
                if recursive:
                    yield from self.walk(full, True)
            else:
                yield "file", full


_tree_cache: dict = {}
_tree_lock = threading.Lock()


class Repo:
    def __init__(self, root: str, repo_id: str, meta: dict, threshold: int):
        self.root = root
        self.id = repo_id
        self.dir = os.path.join(root, *repo_id.split("/"))
        self.meta = meta
        self.threshold = threshold
        refs = meta.get("refs", {})
        self.branches: dict[str, str] = dict(refs.get("branches", {}))
        self.tags: dict[str, str] = dict(refs.get("tags", {}))
        self.pulls: dict[str, str] = dict(refs.get("pulls", {}))
        self.private = bool(meta.get("private", False))
        self.gated = meta.get("gated", False) or False
        self.gated_granted = bool(meta.get("gated_granted", True))
        self.types = list(meta.get("types", DEFAULT_TYPES))
        self.default_branch = meta.get("default_branch", "main")
        self.commits_meta: dict[str, dict] = meta.get("commits", {})

    def commit_dir(self, sha: str) -> str:
        return os.path.join(self.dir, "commits", sha)

    def all_commits(self) -> list[str]:
        try:
            return sorted(n for n in os.listdir(os.path.join(self.dir, "commits")) if len(n) == 40)
        except FileNotFoundError:
            return []

    def resolve_rev(self, rev: str) -> str | None:
        if rev in self.branches:
            return self.branches[rev]
        if rev in self.tags:
            return self.tags[rev]
        if rev.startswith("refs/heads/") and rev[11:] in self.branches:
            return self.branches[rev[11:]]
        if rev.startswith("refs/tags/") and rev[10:] in self.tags:
            return self.tags[rev[10:]]
        if rev.startswith("refs/pr/") and rev[8:] in self.pulls:
            return self.pulls[rev[8:]]
        low = rev.lower()
        if 7 <= len(low) <= 40 and all(c in "0123456789abcdef" for c in low):
            if len(low) == 40:
                return low if os.path.isdir(self.commit_dir(low)) else None
            hits = [c for c in self.all_commits() if c.startswith(low)]
            if len(hits) == 1:
                return hits[0]
        return None

    def tree(self, sha: str) -> Tree:
        key = (self.commit_dir(sha), self.threshold)
        with _tree_lock:
            t = _tree_cache.get(key)
        if t is None:
            t = Tree(self.commit_dir(sha), self.threshold)
            with _tree_lock:
                _tree_cache[key] = t
        return t

    def commit(self, sha: str) -> dict:
        m = self.commits_meta.get(sha, {})
        return {
            "id": sha,
            "title": m.get("title", "Fixture commit"),
            "message": m.get("message", m.get("title", "Fixture commit")),
            "date": m.get("date", DEFAULT_DATE),
            "authors": m.get("authors", ["fixture"]),
            "parents": [p for p in m.get("parents", []) if os.path.isdir(self.commit_dir(p))],
        }

    def last_commit(self, sha: str, path: str) -> dict:
        """The newest commit (first-parent history from `sha`) that changed `path`."""
        cur = sha
        oid = self.tree(cur).oid_at(path)
        for _ in range(10_000):
            parents = self.commit(cur)["parents"]
            if not parents or self.tree(parents[0]).oid_at(path) != oid:
                break
            cur = parents[0]
        c = self.commit(cur)
        return {"id": c["id"], "title": c["title"], "date": c["date"]}


class Store:
    def __init__(self, root: str, threshold: int):
        self.root = os.path.abspath(root)
        self.threshold = threshold

    @staticmethod
    def _valid(seg: str) -> bool:
        return bool(seg) and seg not in (".", "..") and "/" not in seg and "\\" not in seg and "\0" not in seg

    def repo(self, org: str, name: str) -> Repo | None:
        if not (self._valid(org) and self._valid(name)):
            return None
        path = os.path.join(self.root, org, name, "repo.json")
        try:
            with open(path) as f:
                meta = json.load(f)
        except (FileNotFoundError, NotADirectoryError):
            return None
        return Repo(self.root, f"{org}/{name}", meta, self.threshold)

    def org(self, org: str) -> dict | None:
        if not self._valid(org) or not os.path.isdir(os.path.join(self.root, org)):
            return None
        if os.path.exists(os.path.join(self.root, org, "user.json")):
            return None  # a user's namespace: the Hub has no organization overview for it (404)
        try:
            with open(os.path.join(self.root, org, "org.json")) as f:
                return json.load(f)
        except FileNotFoundError:
            return {}


# --------------------------------------------------------------------------- faults & log

FAULT_KINDS = {
    "status",  # answer `status` (429, 500, 503, ...) with an error body, optional `retry_after`
    "disconnect",  # close the connection without answering
    "redirect_loop",  # 302 back to the very same URL
    "drop",  # send the headers and `after_bytes` of the body, then close the connection
    "corrupt",  # same length, wrong bytes: XOR 0xFF over [offset, offset+count) of the body
    "slow",  # sleep `delay` s before answering, then send at `bytes_per_sec` (bounded)
    "truncate_json",  # JSON answers cut to `keep_bytes` (default: half), Content-Length adjusted
    "tree_lie",  # tree/paths-info/siblings entries matching `file` lie about `field` (or are listed twice)
    "headers",  # `remove` some response headers and/or `set` others
    "hold",  # withhold the answer until POST /_fixture/faults/{id}/release (or `max_seconds`, default 60)
}
PRE_KINDS = {"status", "disconnect", "redirect_loop"}
BODY_KINDS = {"drop", "corrupt", "slow", "truncate_json", "headers", "hold"}


class Faults:
    def __init__(self):
        self.lock = threading.Lock()
        self.items: list[dict] = []
        self.releases: dict[int, threading.Event] = {}
        self.next_id = 1

    def add(self, spec: dict) -> dict:
        if not isinstance(spec, dict):
            raise ValueError("a fault is a JSON object")
        kind = spec.get("kind")
        if kind not in FAULT_KINDS:
            raise ValueError(f"unknown fault kind {kind!r}; known: {sorted(FAULT_KINDS)}")
        f = dict(spec)
        f.setdefault("path", "*")
        f.setdefault("listener", "any")
        f.setdefault("method", None)
        f.setdefault("times", 1)
        f.setdefault("skip", 0)
        if f["listener"] not in ("hub", "cdn", "any"):
            raise ValueError("listener must be hub, cdn or any")
        if f["times"] is not None and not isinstance(f["times"], int):
            raise ValueError("times must be an integer or null")
        if kind == "status":
            f.setdefault("status", 503)
        if kind == "tree_lie":
            f.setdefault("field", "size")
            f.setdefault("file", "*")
            if f["field"] not in ("size", "oid", "lfs_oid", "lfs_size", "path", "duplicate"):
                raise ValueError("tree_lie field must be size, oid, lfs_oid, lfs_size, path or duplicate")
            if f["field"] == "path" and not isinstance(f.get("value"), str):
                raise ValueError("tree_lie field path needs the string `value` to list instead")
        with self.lock:
            f["id"] = self.next_id
            self.next_id += 1
            f["fired"] = 0
            f["seen"] = 0
            if kind == "hold":
                self.releases[f["id"]] = threading.Event()
            self.items.append(f)
            return dict(f)

    def release(self, fid: int) -> bool:
        with self.lock:
            ev = self.releases.get(fid)
        if ev is not None:
            ev.set()
        return ev is not None

    def wait_released(self, fault: dict) -> bool:
        with self.lock:
            ev = self.releases.get(fault["id"])
        return ev is not None and ev.wait(min(float(fault.get("max_seconds", 60.0)), MAX_SLEEP))

    def clear(self, fid: int | None = None) -> int:
        with self.lock:
            before = len(self.items)
            self.items = [f for f in self.items if fid is not None and f["id"] != fid]
            return before - len(self.items)

    def snapshot(self) -> list[dict]:
        with self.lock:
            return [dict(f) for f in self.items]

    def take(self, listener: str, method: str, path: str, kinds: set, ok=None) -> dict | None:
        """Consume and return the first armed fault of `kinds` matching this request."""
        with self.lock:
            for f in self.items:
                if f["kind"] not in kinds:
                    continue
                if f["listener"] not in ("any", listener):
                    continue
                if f["method"] and f["method"].upper() != method:
                    continue
                if not fnmatch.fnmatchcase(path, f["path"]):
                    continue
                if ok is not None and not ok(f):
                    continue
                if f["times"] is not None and 0 <= f["times"] <= f["fired"]:
                    continue
                f["seen"] += 1
                if f["seen"] <= f["skip"]:
                    continue
                f["fired"] += 1
                return dict(f)
        return None


class RequestLog:
    def __init__(self):
        self.lock = threading.Lock()
        self.entries: list[dict] = []
        self.seq = 0

    def add(self, entry: dict):
        with self.lock:
            self.seq += 1
            entry["seq"] = self.seq
            self.entries.append(entry)
            if len(self.entries) > MAX_LOG:
                del self.entries[: len(self.entries) - MAX_LOG]

    def get(self, filters: dict) -> list[dict]:
        with self.lock:
            out = list(self.entries)
        for k, v in filters.items():
            out = [e for e in out if str(e.get(k)) == v]
        return out

    def clear(self):
        with self.lock:
            self.entries = []


class State:
    def __init__(self, store: Store, tokens: list[str], page_size: int,
                 commits_page_size: int = DEFAULT_COMMITS_PAGE_SIZE):
        self.store = store
        self.tokens = set(tokens)
        self.page_size = page_size
        self.commits_page_size = commits_page_size
        self.faults = Faults()
        self.log = RequestLog()
        self.secret = secrets.token_bytes(32)
        self.hub_url = ""
        self.path_prefix = ""  # --path-prefix: the Hub answers only below it
        self.commits_api = True  # --no-commits-api: a proxy that does not route the commit history
        self.cdn_url = ""
        self.blobs: dict[str, FileInfo] = {}  # sha256 -> LFS object on disk, for the CDN
        self.blobs_lock = threading.Lock()

    def sign(self, path: str, disposition: str, expires: int) -> str:
        msg = f"{path}\n{disposition}\n{expires}".encode()
        return hmac.new(self.secret, msg, hashlib.sha256).hexdigest()


# --------------------------------------------------------------------------- HTTP


class HubError(Exception):
    def __init__(self, status: int, message: str, code: str | None = None, headers: dict | None = None):
        super().__init__(message)
        self.status = status
        self.message = message
        self.code = code
        self.headers = headers or {}


class Response:
    def __init__(self, status=200, headers=None, body=b"", file=None, length=None, json_body=False):
        self.status = status
        self.headers: list[tuple[str, str]] = list(headers or [])
        self.body = body  # bytes, or None when `file` is set
        self.file = file  # (abspath, start) when the body comes from disk
        self.length = len(body) if length is None else length
        self.json = json_body

    def header(self, name: str) -> str | None:
        for k, v in self.headers:
            if k.lower() == name.lower():
                return v
        return None


def json_response(obj, status=200, headers=None) -> Response:
    body = json.dumps(obj, separators=(",", ":")).encode()
    return Response(status, [("Content-Type", "application/json; charset=utf-8")] + list(headers or []), body,
                    json_body=True)


def is_true(v: str | None) -> bool:
    return v is not None and v.lower() in ("1", "true", "yes", "on")


def parse_range(header: str, size: int):
    """-> (start, end_inclusive) | None (serve whole) | "invalid" (416)."""
    h = header.strip()
    if not h.lower().startswith("bytes="):
        return None
    spec = h[6:].strip()
    if "," in spec:
        return None  # multiple ranges: ignore the header, serve the whole body (allowed by RFC 9110)
    first, sep, last = spec.partition("-")
    if not sep:
        return "invalid"
    try:
        if first.strip() == "":
            n = int(last)
            if n <= 0:
                return "invalid"
            return (max(0, size - n), size - 1) if size else "invalid"
        start = int(first)
        end = int(last) if last.strip() else size - 1
    except ValueError:
        return "invalid"
    if start >= size or start < 0 or end < start:
        return "invalid"
    return start, min(end, size - 1)


def content_disposition(path: str) -> str:
    name = path.rsplit("/", 1)[-1]
    ascii_name = name.encode("ascii", "replace").decode().replace('"', "_")
    return f"inline; filename*=UTF-8''{quote(name)}; filename=\"{ascii_name}\";"


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "kwheel-fixture-hub/1"
    timeout = 120  # idle keep-alive connections are closed after this

    state: State
    listener: str

    def log_message(self, fmt, *args):  # quiet; the request log is the record
        if os.environ.get("KWHEEL_HUB_VERBOSE"):
            sys.stderr.write("%s %s\n" % (self.listener, fmt % args))

    # ---- plumbing

    def do_GET(self):
        self._handle()

    def do_HEAD(self):
        self._handle()

    def do_POST(self):
        self._handle()

    def do_DELETE(self):
        self._handle()

    def do_PUT(self):
        self._handle()

    def _read_body(self) -> bytes:
        te = (self.headers.get("Transfer-Encoding") or "").lower()
        if "chunked" in te:
            out = bytearray()
            while True:
                line = self.rfile.readline(1024)
                n = int(line.split(b";")[0].strip() or b"0", 16)
                if n == 0:
                    while self.rfile.readline(1024) not in (b"\r\n", b"\n", b""):
                        pass
                    break
                if len(out) + n > MAX_BODY:
                    raise HubError(413, "Request body too large")
                out += self.rfile.read(n)
                self.rfile.readline(1024)
            return bytes(out)
        n = int(self.headers.get("Content-Length") or 0)
        if n > MAX_BODY:
            raise HubError(413, "Request body too large")
        return self.rfile.read(n) if n else b""

    def _strip_prefix(self) -> bool:
        """Under --path-prefix (a mirror such as Artifactory's .../api/huggingfaceml/REPO), the Hub
        answers only below the prefix; the control API answers with or without it."""
        prefix = self.state.path_prefix
        if not prefix or self.listener != "hub":
            return True
        if self.path == prefix or self.path.startswith(prefix + "/"):
            self.path = self.path[len(prefix):] or "/"
            return True
        return self.path.startswith("/_fixture")

    def _handle(self):
        st = self.state
        if not self._strip_prefix():
            self.method, self.entry = self.command.upper(), {}
            self._write(json_response({"error": "not under the mirror's path prefix"}, 404), log=False)
            return
        split = urlsplit(self.path)
        self.raw_path = split.path
        self.query_string = split.query
        self.query = parse_qs(split.query, keep_blank_values=True)
        self.upath = unquote(split.path)
        self.method = self.command.upper()
        auth = self.headers.get("Authorization")
        self.entry = {
            "time": time.time(),
            "listener": self.listener,
            "method": self.method,
            "path": self.upath,
            "raw_path": self.raw_path,
            "query": self.query_string,
            "status": None,
            "auth": auth is not None,
            "auth_sha256": hashlib.sha256(auth.encode()).hexdigest() if auth is not None else None,
            "range": self.headers.get("Range"),
            "user_agent": self.headers.get("User-Agent"),
            "download_counter": self.headers.get("X-HF-Download-Counter"),
            "bytes": 0,
            "fault": None,
            "kind": None,
            "repo": None,
            "revision": None,
            "file": None,
        }
        self._classify()
        if self.listener == "hub" and self.upath.startswith("/_fixture"):
            try:
                resp = self._control()
            except HubError as e:
                resp = json_response({"error": e.message}, e.status)
            except (ValueError, KeyError, TypeError) as e:
                resp = json_response({"error": f"bad request: {e}"}, 400)
            self._write(resp, None, log=False)
            return
        try:
            body = self._read_body() if self.method in ("POST", "PUT") else b""
            pre = st.faults.take(self.listener, self.method, self.upath, PRE_KINDS)
            if pre is not None:
                self.entry["fault"] = {"id": pre["id"], "kind": pre["kind"]}
                resp = self._pre_fault(pre)
                if resp is None:  # disconnect
                    self.close_connection = True
                    st.log.add(self.entry)
                    return
            elif self.listener == "cdn":
                resp = self._cdn()
            else:
                resp = self._hub(body)
        except HubError as e:
            resp = self._error(e)
        except BrokenPipeError:
            raise
        except Exception as e:  # a fixture bug must still answer, loudly
            import traceback

            traceback.print_exc()
            resp = json_response({"error": f"fixture server error: {e!r}"}, 500)
        self._write(resp, body_faults=True)

    def _classify(self):
        """Fill the log entry's kind/repo from the URL alone (faults may answer before routing)."""
        if self.listener == "cdn":
            self.entry["kind"] = "cdn"
            return
        segs = [unquote(s) for s in self.raw_path.split("/")[1:]]
        if len(segs) >= 4 and segs[0] == "api" and segs[1] in REPO_TYPES:
            self.entry["repo"] = f"{segs[2]}/{segs[3]}"
            action = segs[4] if len(segs) > 4 else "revision"
            self.entry["kind"] = {"revision": "info"}.get(action, action)
        elif len(segs) >= 2 and segs[0] == "api":
            self.entry["kind"] = segs[1]
        else:
            if segs and segs[0] in URL_PREFIXES:
                segs = segs[1:]
            if len(segs) >= 4 and segs[2] == "resolve":
                self.entry["repo"] = f"{segs[0]}/{segs[1]}"
                self.entry["kind"] = "resolve"

    def _self_url(self, path: str) -> str:
        """An absolute URL to `path` on the listener that got this request (scheme https under --tls-cert)."""
        base = self.state.hub_url if self.listener == "hub" else self.state.cdn_url
        prefix = self.state.path_prefix if self.listener == "hub" else ""
        return f"{urlsplit(base).scheme}://{self.headers.get('Host') or urlsplit(base).netloc}{prefix}{path}"

    def _error(self, e: HubError) -> Response:
        headers = [("X-Error-Message", e.message)]
        if e.code:
            headers.append(("X-Error-Code", e.code))
        headers += list(e.headers.items())
        return json_response({"error": e.message}, e.status, headers)

    def _pre_fault(self, f: dict) -> Response | None:
        kind = f["kind"]
        if kind == "disconnect":
            return None
        if kind == "redirect_loop":
            loc = self._self_url(self.path)
            body = f"Found. Redirecting to {loc}".encode()
            return Response(302, [("Location", loc), ("Content-Type", "text/plain; charset=utf-8")], body)
        status = int(f.get("status", 503))
        msg = f.get("message") or {429: "Too Many Requests", 500: "Internal Error", 502: "Bad Gateway",
                                   503: "Service Unavailable", 504: "Gateway Timeout"}.get(status, "Injected error")
        headers = [("X-Error-Message", msg)]
        if f.get("retry_after") is not None:
            headers.append(("Retry-After", str(f["retry_after"])))
        if f.get("ratelimit") is not None:  # e.g. '"api";r=0;t=1'
            headers.append(("RateLimit", str(f["ratelimit"])))
        return json_response({"error": msg}, status, headers)

    def _write(self, resp: Response, body_faults: bool = False, log: bool = True):
        st = self.state
        fault = None
        if body_faults:

            def ok(f):
                k = f["kind"]
                if k in ("drop", "corrupt"):
                    return self.method != "HEAD" and resp.status in (200, 206) and resp.length > 0
                if k == "truncate_json":
                    return self.method != "HEAD" and resp.json and resp.status == 200 and resp.length > 1
                return True

            fault = st.faults.take(self.listener, self.method, self.upath, BODY_KINDS, ok)
            if fault is not None:
                self.entry["fault"] = {"id": fault["id"], "kind": fault["kind"]}
        kind = fault["kind"] if fault else None
        body = resp.body
        length = resp.length
        if kind == "truncate_json":
            keep = int(fault.get("keep_bytes", length // 2))
            keep = max(0, min(keep, length - 1))
            body, length = body[:keep], keep
        if kind == "headers":
            remove = {h.lower() for h in fault.get("remove", [])}
            resp.headers = [(k, v) for k, v in resp.headers if k.lower() not in remove]
            for k, v in (fault.get("set") or {}).items():
                resp.headers = [(a, b) for a, b in resp.headers if a.lower() != k.lower()] + [(k, str(v))]
        if kind == "hold":
            # The request is logged (with this fault) before it waits, so a
            # test can see it arrive, then decide when it is answered.
            self.entry["held"] = True
            st.log.add(dict(self.entry))
            self.entry["released"] = st.faults.wait_released(fault)
        sleep_budget = min(float(fault.get("max_seconds", 10.0)) if kind == "slow" else 0.0, MAX_SLEEP)
        if kind == "slow" and fault.get("delay"):
            d = min(float(fault["delay"]), sleep_budget)
            time.sleep(d)
            sleep_budget -= d

        self.send_response(resp.status)
        names = {k.lower() for k, _ in resp.headers}
        if "x-request-id" not in names:
            self.send_header("X-Request-Id", "Root=1-" + uuid.uuid4().hex)
        for k, v in resp.headers:
            self.send_header(k, v)
        self.send_header("Content-Length", str(length))
        if self.close_connection:
            self.send_header("Connection", "close")
        self.entry["status"] = resp.status
        sent = 0
        logged = False

        def log_once(nbytes: int) -> None:
            # Logged before the response's last byte leaves: a client that
            # reads the log right after its response must find the entry.
            nonlocal logged
            self.entry["bytes"] = nbytes
            if log and not logged:
                st.log.add(self.entry)
            logged = True

        if self.method == "HEAD" or not length:
            log_once(0)
        self.end_headers()
        try:
            if self.method != "HEAD" and length:
                limit = length
                if kind == "drop":
                    limit = max(0, min(int(fault.get("after_bytes", length // 2)), length - 1))
                bps = float(fault.get("bytes_per_sec", 0)) if kind == "slow" else 0
                c_off = int(fault.get("offset", 0)) if kind == "corrupt" else 0
                c_end = c_off + int(fault.get("count", length)) if kind == "corrupt" else 0
                for chunk in self._chunks(resp, body, length, bps):
                    if sent >= limit:
                        break
                    chunk = chunk[: limit - sent]
                    if kind == "corrupt" and c_off < sent + len(chunk) and c_end > sent:
                        a, b = max(c_off - sent, 0), min(c_end - sent, len(chunk))
                        chunk = chunk[:a] + bytes(x ^ 0xFF for x in chunk[a:b]) + chunk[b:]
                    if kind != "drop" and sent + len(chunk) == length:
                        log_once(length)
                    self.wfile.write(chunk)
                    sent += len(chunk)
                    if bps > 0 and sleep_budget > 0:
                        d = min(len(chunk) / bps, sleep_budget)
                        time.sleep(d)
                        sleep_budget -= d
                if kind == "drop":
                    self.wfile.flush()
                    self.close_connection = True
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True
        finally:
            if not logged:
                log_once(sent)

    def _chunks(self, resp: Response, body: bytes, length: int, bps: float):
        size = CHUNK if bps <= 0 else max(1, min(CHUNK, int(bps / 20) or 1))
        if resp.file is None:
            for i in range(0, length, size):
                yield body[i : i + size]
            return
        path, start = resp.file
        left = length
        with open(path, "rb") as f:
            f.seek(start)
            while left > 0:
                chunk = f.read(min(size, left))
                if not chunk:
                    break
                left -= len(chunk)
                yield chunk

    # ---- auth

    def _token_ok(self) -> bool:
        """True when a valid token was sent; raises 401 for a token the Hub does not know."""
        auth = self.headers.get("Authorization")
        if auth is None:
            return False
        scheme, _, value = auth.partition(" ")
        if scheme.lower() == "bearer" and value.strip() in self.state.tokens:
            return True
        raise HubError(401, "Invalid credentials in Authorization header")

    def _repo(self, type_plural: str, org: str, name: str, files: bool) -> Repo:
        authed = self._token_ok()
        repo = self.state.store.repo(org, name)
        rtype = REPO_TYPES.get(type_plural)
        self.entry["repo"] = f"{org}/{name}"
        if repo is None or rtype not in repo.types or (repo.private and not authed):
            raise HubError(401 if not authed else 404, "Repository not found", "RepoNotFound")
        if files and repo.gated:
            what = rtype if rtype != "model" else "model"
            if not authed:
                raise HubError(401, f"Access to {what} {repo.id} is restricted. You must have access to it and be "
                                    "authenticated to access it. Please log in.", "GatedRepo")
            if not repo.gated_granted:
                raise HubError(403, f"Access to {what} {repo.id} is restricted and you are not in the authorized "
                                    f"list. Visit {self.state.hub_url}/{repo.id} to ask for access.", "GatedRepo")
        return repo

    def _rev(self, repo: Repo, segs: list[str], need_rest: bool) -> tuple[str, str, list[str]]:
        """Split raw path segments into (revision, sha, remaining segments).

        huggingface_hub sends the revision as one %-encoded segment (refs%2Fpr%2F1); other
        clients may not encode slashes, so the longest prefix naming a known ref wins.
        """
        if not segs or segs[0] == "":
            raise HubError(404, "Revision not found", "RevisionNotFound")
        first = unquote(segs[0])
        if "/" not in first:
            top = len(segs) - (1 if need_rest else 0)
            for k in range(top, 1, -1):
                cand = "/".join(unquote(s) for s in segs[:k])
                sha = repo.resolve_rev(cand)
                if sha is not None:
                    return cand, sha, segs[k:]
        sha = repo.resolve_rev(first)
        self.entry["revision"] = first
        if sha is None:
            raise HubError(404, f"Invalid rev id: {first}", "RevisionNotFound")
        return first, sha, segs[1:]

    # ---- hub routes

    def _hub(self, body: bytes) -> Response:
        segs = self.raw_path.split("/")[1:]
        if segs and segs[-1] == "" and len(segs) > 1:
            segs = segs[:-1]
        m = self.method
        # /api/...
        if len(segs) >= 1 and segs[0] == "api":
            if len(segs) >= 4 and segs[1] == "organizations" and segs[3] == "overview" and m in ("GET", "HEAD"):
                return self._org(unquote(segs[2]))
            if len(segs) == 2 and segs[1] == "agent-harnesses" and m in ("GET", "HEAD"):
                return json_response({"standardEnvVars": [], "harnesses": {}})  # detection off, as offline
            if len(segs) == 2 and segs[1] in ("whoami-v2", "whoami") and m in ("GET", "HEAD"):
                return self._whoami()
            if len(segs) >= 4 and segs[1] in REPO_TYPES:
                tp, org, name, rest = segs[1], unquote(segs[2]), unquote(segs[3]), segs[4:]
                if not rest and m in ("GET", "HEAD"):
                    self.entry["kind"] = "info"
                    return self._info(tp, org, name, None)
                action = rest[0]
                if action == "revision" and m in ("GET", "HEAD"):
                    self.entry["kind"] = "info"
                    return self._info(tp, org, name, rest[1:])
                if action == "refs" and len(rest) == 1 and m in ("GET", "HEAD"):
                    self.entry["kind"] = "refs"
                    return self._refs(tp, org, name)
                if action == "tree" and m in ("GET", "HEAD"):
                    self.entry["kind"] = "tree"
                    return self._tree(tp, org, name, rest[1:])
                if action == "paths-info" and m == "POST":
                    self.entry["kind"] = "paths-info"
                    return self._paths_info(tp, org, name, rest[1:], body)
                if action == "commits" and m in ("GET", "HEAD"):
                    self.entry["kind"] = "commits"
                    if not self.state.commits_api:  # what a proxy passing on its own "no such repo" says
                        raise HubError(404, "Repository not found", "RepoNotFound")
                    return self._commits(tp, org, name, rest[1:])
                if action == "resolve" and m in ("GET", "HEAD"):
                    self.entry["kind"] = "resolve"
                    return self._resolve(tp, org, name, rest[1:])
            raise HubError(404, "Sorry, we can't find the page you are looking for.")
        # /{prefix}/{org}/{name}/resolve/{rev}/{path} and /{org}/{name}/resolve/...
        tp = "models"
        if segs and segs[0] in URL_PREFIXES:
            tp = segs[0] + ""
            segs = segs[1:]
        if len(segs) >= 4 and segs[2] == "resolve" and m in ("GET", "HEAD"):
            self.entry["kind"] = "resolve"
            return self._resolve(tp, unquote(segs[0]), unquote(segs[1]), segs[3:])
        raise HubError(404, "Sorry, we can't find the page you are looking for.")

    def _whoami(self) -> Response:
        if not self._token_ok():
            raise HubError(401, "Invalid credentials in Authorization header")
        return json_response({"type": "user", "id": "0" * 24, "name": "fixture-user", "fullname": "Fixture User",
                              "orgs": [], "auth": {"type": "access_token",
                                                   "accessToken": {"displayName": "fixture", "role": "read"}}})

    def _org(self, org: str) -> Response:
        self._token_ok()
        info = self.state.store.org(org)
        if info is None:
            raise HubError(404, "Organization not found")
        out = {"name": org, "fullname": org, "avatarUrl": "", "isVerified": False, "numModels": 0,
               "trustedKernelPublisher": False}
        out.update(info)
        return json_response(out)

    def _siblings(self, repo: Repo, tree: Tree, blobs: bool) -> list[dict]:
        out = []
        for path, f in tree.files.items():
            s = {"rfilename": path}
            if blobs:
                s["blobId"] = f.oid
                s["size"] = f.size
                if f.lfs:
                    s["lfs"] = {"sha256": f.sha256, "size": f.size, "pointerSize": f.pointer_size}
            out.append(s)
        if blobs:
            lie = self.state.faults.take(self.listener, self.method, self.upath, {"tree_lie"})
            if lie is not None:
                self.entry["fault"] = {"id": lie["id"], "kind": "tree_lie"}
                out = _lie_all(lie, out, "rfilename", "blobId", "sha256")
        return out

    def _info(self, tp, org, name, rev_segs) -> Response:
        repo = self._repo(tp, org, name, files=False)
        if rev_segs is None or rev_segs == [] or rev_segs == [""]:
            rev = repo.default_branch
            sha = repo.resolve_rev(rev)
            if sha is None:
                raise HubError(404, f"Invalid rev id: {rev}", "RevisionNotFound")
        else:
            rev = "/".join(unquote(s) for s in rev_segs)
            sha = repo.resolve_rev(rev)
            if sha is None:
                raise HubError(404, f"Invalid rev id: {rev}", "RevisionNotFound")
        self.entry["revision"] = rev
        tree = repo.tree(sha)
        commit = repo.commit(sha)
        blobs = is_true((self.query.get("blobs") or [None])[0])
        rtype = REPO_TYPES[tp]
        full = {
            "_id": hashlib.sha1(repo.id.encode()).hexdigest()[:24],
            "id": repo.id,
            "author": org,
            "sha": sha,
            "lastModified": commit["date"],
            "createdAt": repo.meta.get("createdAt", DEFAULT_DATE),
            "private": repo.private,
            "gated": repo.gated,
            "disabled": False,
            "downloads": 0,
            "likes": 0,
            "tags": list(repo.meta.get("tags", ["kernel"] if rtype == "kernel" else [])),
            "library_name": repo.meta.get("library_name", "kernels"),
            "siblings": self._siblings(repo, tree, blobs),
            "spaces": [],
            "usedStorage": sum(f.size for f in tree.files.values()),
        }
        if is_true((self.query.get("securityStatus") or [None])[0]):
            full["securityRepoStatus"] = {"scansDone": True, "filesWithIssues": []}
        expand = self.query.get("expand", []) + self.query.get("expand[]", [])
        if expand:
            full = {k: v for k, v in full.items() if k in ("_id", "id") or k in expand}
        return json_response(full)

    def _refs(self, tp, org, name) -> Response:
        repo = self._repo(tp, org, name, files=False)

        def ref(n, prefix, sha):
            return {"name": n, "ref": f"{prefix}{n}", "targetCommit": sha}

        out = {
            "branches": [ref(n, "refs/heads/", s) for n, s in sorted(repo.branches.items())],
            "tags": [ref(n, "refs/tags/", s) for n, s in sorted(repo.tags.items())],
            "converts": [],
        }
        if is_true((self.query.get("include_prs") or [None])[0]):
            out["pullRequests"] = [{"name": f"refs/pr/{n}", "ref": f"refs/pr/{n}", "targetCommit": s}
                                   for n, s in sorted(repo.pulls.items())]
        return json_response(out)

    def _entry(self, repo: Repo, sha: str, tree: Tree, kind: str, path: str, expand: bool) -> dict:
        if kind == "directory":
            e = {"type": "directory", "oid": tree.dirs[path], "size": 0, "path": path}
        else:
            f = tree.files[path]
            e = {"type": "file", "oid": f.oid, "size": f.size, "path": path}
            if f.lfs:
                e["lfs"] = {"oid": f.sha256, "size": f.size, "pointerSize": f.pointer_size}
        if expand:
            e["lastCommit"] = repo.last_commit(sha, path)
            if kind == "file":
                e["securityFileStatus"] = {"status": "safe", "avScan": {"virusFound": False, "virusNames": None},
                                           "pickleImportScan": None}
        return e

    def _apply_tree_lie(self, entries: list[dict]):
        lie = self.state.faults.take(self.listener, self.method, self.upath, {"tree_lie"})
        if lie is None:
            return
        self.entry["fault"] = {"id": lie["id"], "kind": "tree_lie"}
        entries[:] = _lie_all(lie, entries, "path", "oid", "oid")

    def _tree(self, tp, org, name, segs) -> Response:
        repo = self._repo(tp, org, name, files=False)
        rev, sha, rest = self._rev(repo, segs, need_rest=False)
        tree = repo.tree(sha)
        path = unquote("/".join(rest)).strip("/")
        self.entry["file"] = path or None
        if path and path not in tree.dirs:
            headers = {"X-Repo-Commit": sha}
            raise HubError(404, f'"{path}" does not exist on "{rev}"', "EntryNotFound", headers)
        recursive = is_true((self.query.get("recursive") or [None])[0])
        expand = is_true((self.query.get("expand") or [None])[0])
        items = list(tree.walk(path, recursive))
        cursor = (self.query.get("cursor") or [None])[0]
        start = 0
        if cursor:
            try:
                start = int(base64.urlsafe_b64decode(cursor.encode() + b"==").decode().split(":", 1)[1])
            except Exception:
                raise HubError(400, "Invalid cursor")
        page_size = max(1, int(self.state.page_size))
        page = items[start : start + page_size]
        entries = [self._entry(repo, sha, tree, k, p, expand) for k, p in page]
        self._apply_tree_lie(entries)
        headers = [("X-Repo-Commit", sha)]
        if start + page_size < len(items):
            nxt = base64.urlsafe_b64encode(f"offset:{start + page_size}".encode()).decode().rstrip("=")
            q = [(k, v) for k, vs in self.query.items() if k != "cursor" for v in vs] + [("cursor", nxt)]
            headers.append(("Link", f'<{self._self_url(self.raw_path)}?{urlencode(q)}>; rel="next"'))
        return json_response(entries, 200, headers)

    def _paths_info(self, tp, org, name, segs, body: bytes) -> Response:
        repo = self._repo(tp, org, name, files=False)
        rev, sha, _ = self._rev(repo, segs, need_rest=False)
        tree = repo.tree(sha)
        ctype = self.headers.get("Content-Type", "")
        if "json" in ctype:
            data = json.loads(body or b"{}")
            paths, expand = data.get("paths", []), bool(data.get("expand", False))
        else:
            form = parse_qs(body.decode(), keep_blank_values=True)
            paths, expand = form.get("paths", []), is_true((form.get("expand") or [None])[0])
        entries = []
        for p in paths:
            p = p.strip("/")
            if p in tree.files:
                entries.append(self._entry(repo, sha, tree, "file", p, expand))
            elif p in tree.dirs:
                entries.append(self._entry(repo, sha, tree, "directory", p, expand))
        self._apply_tree_lie(entries)
        return json_response(entries, 200, [("X-Repo-Commit", sha)])

    def _commits(self, tp, org, name, segs) -> Response:
        """First-parent history, newest first, in pages: `p` (page, from 0) and `limit` pick the
        page, `Link: rel="next"` names the next one, `expand[]=formatted` adds HTML title/message."""
        repo = self._repo(tp, org, name, files=False)
        rev, sha, _ = self._rev(repo, segs or [repo.default_branch], need_rest=False)
        try:
            page = int((self.query.get("p") or ["0"])[0])
            limit = int((self.query.get("limit") or [str(self.state.commits_page_size)])[0])
        except ValueError:
            raise HubError(400, "Invalid pagination parameters")
        if page < 0 or not 1 <= limit <= MAX_COMMITS_LIMIT:
            raise HubError(400, "Invalid pagination parameters")
        formatted = "formatted" in self.query.get("expand[]", []) + self.query.get("expand", [])
        history, cur = [], sha
        for _ in range(100_000):
            c = repo.commit(cur)
            history.append(c)
            if not c["parents"]:
                break
            cur = c["parents"][0]
        out = []
        for c in history[page * limit : (page + 1) * limit]:
            item = {"id": c["id"], "title": c["title"], "message": c["message"], "date": c["date"],
                    "authors": [{"user": a} for a in c["authors"]]}
            if formatted:
                item["formatted"] = {"title": f"<p>{html.escape(c['title'])}</p>",
                                     "message": f"<p>{html.escape(c['message'])}</p>"}
            out.append(item)
        headers = [("X-Total-Count", str(len(history)))]
        if (page + 1) * limit < len(history):
            q = [(k, v) for k, vs in self.query.items() if k != "p" for v in vs] + [("p", str(page + 1))]
            headers.append(("Link", f'<{self._self_url(self.raw_path)}?{urlencode(q)}>; rel="next"'))
        return json_response(out, 200, headers)

    def _resolve(self, tp, org, name, segs) -> Response:
        repo = self._repo(tp, org, name, files=True)
        rev, sha, rest = self._rev(repo, segs, need_rest=True)
        path = unquote("/".join(rest))
        self.entry["file"] = path
        tree = repo.tree(sha)
        f = tree.files.get(path)
        if f is None:
            raise HubError(404, "Entry not found", "EntryNotFound", {"X-Repo-Commit": sha})
        common = [("X-Repo-Commit", sha), ("Accept-Ranges", "bytes"), ("Vary", "Origin, Accept-Encoding"),
                  ("Access-Control-Expose-Headers",
                   "X-Repo-Commit,X-Request-Id,X-Error-Code,X-Error-Message,X-Total-Count,ETag,Link,Accept-Ranges,"
                   "Content-Range,X-Linked-Size,X-Linked-ETag,X-Xet-Hash")]
        if f.lfs:
            with self.state.blobs_lock:
                self.state.blobs[f.sha256] = f
            loc = self._cdn_url(repo, f)
            body = f"Found. Redirecting to {loc}".encode()
            headers = common + [("Location", loc), ("Content-Type", "text/plain; charset=utf-8"),
                                ("ETag", f'"{f.sha256}"'), ("X-Linked-Etag", f'"{f.sha256}"'),
                                ("X-Linked-Size", str(f.size)), ("Content-Disposition", content_disposition(path))]
            return Response(302, headers, body)
        headers = common + [("ETag", f'"{f.oid}"'), ("Content-Type", "application/octet-stream"),
                            ("Content-Disposition", content_disposition(path)),
                            ("Cache-Control", "private, max-age=0, must-revalidate")]
        return self._file_response(f, headers)

    def _file_response(self, f: FileInfo, headers: list) -> Response:
        rng = self.headers.get("Range")
        if rng:
            r = parse_range(rng, f.size)
            if r == "invalid":
                return Response(416, headers + [("Content-Range", f"bytes */{f.size}")], b"")
            if r is not None:
                a, b = r
                return Response(206, headers + [("Content-Range", f"bytes {a}-{b}/{f.size}")], None,
                                file=(f.abspath, a), length=b - a + 1)
        return Response(200, headers, None, file=(f.abspath, 0), length=f.size)

    def _cdn_url(self, repo: Repo, f: FileInfo) -> str:
        rh = hashlib.sha256(repo.id.encode()).hexdigest()
        path = f"/repos/{rh[:2]}/{rh[2:4]}/{rh}/{f.sha256}"
        disp = content_disposition(f.path)
        expires = int(time.time()) + URL_TTL
        sig = self.state.sign(path, disp, expires)
        q = urlencode([("response-content-disposition", disp), ("Expires", str(expires)), ("Signature", sig),
                       ("Key-Pair-Id", "KFIXTURE")], quote_via=quote)
        return f"{self.state.cdn_url}{path}?{q}"

    # ---- CDN

    def _cdn(self) -> Response:
        self.entry["kind"] = "cdn"

        def s3_error(status, code, message):
            body = (f'<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>{code}</Code><Message>{message}</Message>'
                    f"<RequestId>{uuid.uuid4().hex[:16].upper()}</RequestId></Error>").encode()
            return Response(status, [("Content-Type", "application/xml")], body)

        if self.method not in ("GET", "HEAD"):
            return s3_error(405, "MethodNotAllowed", "The specified method is not allowed against this resource.")
        if self.headers.get("Authorization") is not None:
            sys.stderr.write(f"fixture-cdn: REJECTED request carrying an Authorization header: {self.upath}\n")
            return s3_error(400, "InvalidArgument", "Only one auth mechanism allowed; only the X-Amz-Algorithm "
                                                    "query parameter, Signature query string parameter or the "
                                                    "Authorization header should be specified")
        segs = self.raw_path.split("/")
        q = {k: v[0] for k, v in self.query.items()}
        disp = q.get("response-content-disposition", "")
        try:
            expires = int(q.get("Expires", ""))
        except ValueError:
            return s3_error(403, "AccessDenied", "Missing or invalid Expires")
        sig = q.get("Signature", "")
        if not hmac.compare_digest(sig, self.state.sign(self.raw_path, disp, expires)):
            return s3_error(403, "AccessDenied", "Invalid signature")
        if expires < time.time():
            return s3_error(403, "AccessDenied", "Request has expired")
        if len(segs) != 6 or segs[1] != "repos":
            return s3_error(404, "NoSuchKey", "The specified key does not exist.")
        sha256 = segs[5]
        with self.state.blobs_lock:
            info = self.state.blobs.get(sha256)
        if info is None or not os.path.isfile(info.abspath):
            return s3_error(404, "NoSuchKey", "The specified key does not exist.")
        self.entry["file"] = sha256
        headers = [("Content-Type", q.get("response-content-type", "application/octet-stream")),
                   ("ETag", f'"{info.md5}"'), ("Accept-Ranges", "bytes"),
                   ("Cache-Control", "public, max-age=604800, immutable"),
                   ("Last-Modified", "Wed, 01 Jan 2025 00:00:00 GMT"), ("X-Cache", "Hit from cloudfront")]
        if disp:
            headers.append(("Content-Disposition", disp))
        return self._file_response(info, headers)

    # ---- control API

    def _control(self) -> Response:
        st = self.state
        sub = self.upath[len("/_fixture"):].strip("/")
        m = self.method
        body = self._read_body() if m in ("POST", "PUT") else b""
        if sub == "health":
            return json_response({"ok": True, "endpoint": st.hub_url, "cdn": st.cdn_url})
        if sub == "log":
            if m == "DELETE":
                st.log.clear()
                return json_response({"ok": True})
            filters = {k: v[0] for k, v in self.query.items()}
            return json_response(st.log.get(filters))
        if sub == "faults":
            if m == "GET":
                return json_response(st.faults.snapshot())
            if m == "DELETE":
                return json_response({"cleared": st.faults.clear()})
            if m == "POST":
                spec = json.loads(body or b"null")
                if isinstance(spec, list):
                    return json_response([st.faults.add(s) for s in spec])
                return json_response(st.faults.add(spec))
        if sub.startswith("faults/") and sub.endswith("/release") and m == "POST":
            return json_response({"released": st.faults.release(int(sub.split("/")[1]))})
        if sub.startswith("faults/") and m == "DELETE":
            return json_response({"cleared": st.faults.clear(int(sub.split("/", 1)[1]))})
        if sub == "config":
            if m == "POST":
                cfg = json.loads(body or b"{}")
                if "page_size" in cfg:
                    st.page_size = max(1, int(cfg["page_size"]))
                if "commits_page_size" in cfg:
                    st.commits_page_size = min(max(1, int(cfg["commits_page_size"])), MAX_COMMITS_LIMIT)
                if "tokens" in cfg:
                    st.tokens = set(cfg["tokens"])
            return json_response({"page_size": st.page_size, "commits_page_size": st.commits_page_size,
                                  "tokens": len(st.tokens)})
        raise HubError(404, f"unknown control route {self.upath}")


def _lie_all(fault: dict, entries: list[dict], path_key: str, oid_key: str, lfs_oid_key: str) -> list[dict]:
    """The listing with every file entry matching the fault's `file` glob lied about."""
    out = []
    for e in entries:
        out.append(e)
        if e.get("type", "file") != "file" or not fnmatch.fnmatchcase(e[path_key], fault["file"]):
            continue
        if fault["field"] == "duplicate":
            out.append(json.loads(json.dumps(e)))
        elif fault["field"] == "path":
            e[path_key] = fault["value"]  # any string, NUL and newline included: JSON carries them
        else:
            _lie(fault, e, oid_key, lfs_oid_key)
    return out


def _lie(fault: dict, entry: dict, oid_key: str, lfs_oid_key: str):
    field = fault["field"]
    if field == "size":
        entry["size"] = entry["size"] + int(fault.get("delta", 1))
    elif field == "oid":
        entry[oid_key] = hashlib.sha1(b"lie" + entry[oid_key].encode()).hexdigest()
    elif field == "lfs_oid" and entry.get("lfs"):
        entry["lfs"][lfs_oid_key] = hashlib.sha256(b"lie" + entry["lfs"][lfs_oid_key].encode()).hexdigest()
    elif field == "lfs_size" and entry.get("lfs"):
        entry["lfs"]["size"] = entry["lfs"]["size"] + int(fault.get("delta", 1))


# --------------------------------------------------------------------------- main


class Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 128


def make_server(state: State, listener: str, host: str, port: int) -> Server:
    handler = type(f"{listener.capitalize()}Handler", (Handler,), {"state": state, "listener": listener})
    return Server((host, port), handler)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--root", required=True, help="repo store: ROOT/<org>/<name>/{repo.json,commits/<sha>/}")
    ap.add_argument("--host", default="127.0.0.1", help="address of the Hub listener (default 127.0.0.1)")
    ap.add_argument("--port", type=int, default=0, help="Hub port, 0 = pick a free one")
    ap.add_argument("--cdn-bind", default="127.0.0.1", help="address the CDN listener binds")
    ap.add_argument("--cdn-host", default="localhost",
                    help="host name put in CDN URLs; must differ from --host so clients see another host")
    ap.add_argument("--cdn-port", type=int, default=0, help="CDN port, 0 = pick a free one")
    ap.add_argument("--token", action="append", default=[], help="accepted Bearer token (repeatable)")
    ap.add_argument("--page-size", type=int, default=DEFAULT_PAGE_SIZE, help="tree listing page size")
    ap.add_argument("--commits-page-size", type=int, default=DEFAULT_COMMITS_PAGE_SIZE,
                    help="commits listing page size when the client sends no `limit`")
    ap.add_argument("--lfs-threshold", type=int, default=LFS_THRESHOLD,
                    help="files this size or larger are LFS (besides *.so)")
    ap.add_argument("--path-prefix", default="",
                    help="serve the Hub below this path, as a mirror does (e.g. /artifactory/api/huggingfaceml/hub)")
    ap.add_argument("--no-commits-api", action="store_true",
                    help="answer the commits listing 404 RepoNotFound, as a proxy serving refs, tree and resolve only does")
    ap.add_argument("--tls-cert", help="serve both listeners over HTTPS with this PEM certificate (chain)")
    ap.add_argument("--tls-key", help="the private key of --tls-cert")
    args = ap.parse_args(argv)

    state = State(Store(args.root, args.lfs_threshold), args.token, args.page_size, args.commits_page_size)
    hub = make_server(state, "hub", args.host, args.port)
    cdn = make_server(state, "cdn", args.cdn_bind, args.cdn_port)
    scheme = "http"
    if args.tls_cert:
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(args.tls_cert, args.tls_key)
        for s in (hub, cdn):
            s.socket = ctx.wrap_socket(s.socket, server_side=True)
        scheme = "https"
    hub_host = args.host if ":" not in args.host else f"[{args.host}]"
    state.hub_url = f"{scheme}://{hub_host}:{hub.server_address[1]}"
    prefix = args.path_prefix.rstrip("/")
    if prefix and not prefix.startswith("/"):
        ap.error("--path-prefix must start with /")
    state.path_prefix = prefix
    state.commits_api = not args.no_commits_api
    state.cdn_url = f"{scheme}://{args.cdn_host}:{cdn.server_address[1]}"
    threads = [threading.Thread(target=s.serve_forever, kwargs={"poll_interval": 0.2}, daemon=True)
               for s in (hub, cdn)]
    for t in threads:
        t.start()

    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.set())
    try:
        mode = os.fstat(sys.stdin.fileno()).st_mode
        watch_stdin = stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)
    except (OSError, ValueError, AttributeError):
        watch_stdin = False
    if watch_stdin:

        def _watch():
            try:
                while sys.stdin.buffer.read(4096):
                    pass
            except Exception:
                pass
            stop.set()

        threading.Thread(target=_watch, daemon=True).start()

    # Sockets are bound and listening before this line: clients may connect right away.
    sys.stdout.write(json.dumps({"endpoint": state.hub_url + state.path_prefix, "cdn": state.cdn_url, "pid": os.getpid(),
                                 "control": state.hub_url + "/_fixture"}) + "\n")
    sys.stdout.flush()
    while not stop.wait(0.5):
        pass
    for s in (hub, cdn):
        s.shutdown()
        s.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
