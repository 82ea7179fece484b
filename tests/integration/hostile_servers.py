"""Small hostile HTTP servers for test_hostile_network.py (and for measuring
kwheel's peak RSS by hand: `python tests/integration/hostile_servers.py`).

Each is a ThreadingHTTPServer on 127.0.0.1 in a daemon thread, answering
from a table of routes: path (no query) -> function(handler). Answers that
never end (drips, endless bodies) stop when the client hangs up or the
server is closed. The fixture Hub (tests/hub/server.py) speaks the real API;
these speak just enough of it to reach the code under attack.
"""
from __future__ import annotations

import hashlib
import http.server
import json
import threading
from typing import Callable

SHA = "0123456789abcdef0123456789abcdef01234567"
REPO = "org/hostile"
API = f"/api/kernels/{REPO}"
OVERVIEW = "/api/organizations/org/overview"  # publisher trust, asked first
VARIANT = "torch27-cxx11-cpu-x86_64-linux"

Route = Callable[["Handler"], None]


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: "_Server"

    def log_message(self, *args) -> None:  # quiet
        pass

    def _dispatch(self) -> None:
        path = self.path.split("?", 1)[0]
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        self.server.owner.record(self.command, self.path, dict(self.headers.items()), body)
        route = self.server.owner.routes.get(path)
        if route is None:
            return self.send_json({"error": "not here"}, status=404)
        try:
            route(self)
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True

    do_GET = do_POST = do_HEAD = _dispatch

    # ---------------------------------------------------------------- answers
    def send_json(self, obj, status: int = 200, headers: dict[str, str] | None = None) -> None:
        self.send_bytes(obj if isinstance(obj, bytes) else json.dumps(obj).encode(), status, headers)

    def send_bytes(self, data: bytes, status: int = 200, headers: dict[str, str] | None = None,
                   content_type: str = "application/json") -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)

    def endless(self, status: int = 200, chunk: bytes = b"[" * 65536) -> None:
        """A body with no length that never ends (close-delimited)."""
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Connection", "close")
        self.end_headers()
        self.close_connection = True
        while not self.server.owner.closed.is_set():
            self.wfile.write(chunk)

    def drip(self, bytes_per_second: float = 4.0, total: int = 1_000_000) -> None:
        """Announces `total` bytes, then sends one every 1/bytes_per_second s: moving, but
        far below any working link."""
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(total))
        self.end_headers()
        self.close_connection = True
        for _ in range(total):
            self.wfile.write(b" ")
            self.wfile.flush()
            if self.server.owner.closed.wait(1 / bytes_per_second):
                return


class _Server(http.server.ThreadingHTTPServer):
    daemon_threads = True
    owner: "HostileServer"


class HostileServer:
    def __init__(self, routes: dict[str, Route] | None = None):
        self.routes: dict[str, Route] = dict(routes or {})
        self.requests: list[dict] = []
        self.closed = threading.Event()
        self._lock = threading.Lock()
        self._srv = _Server(("127.0.0.1", 0), Handler)
        self._srv.owner = self
        self.url = f"http://127.0.0.1:{self._srv.server_address[1]}"
        self._thread = threading.Thread(target=self._srv.serve_forever, daemon=True)

    def record(self, method: str, path: str, headers: dict, body: bytes) -> None:
        with self._lock:
            self.requests.append({"method": method, "path": path, "headers": headers, "body": body})

    def hits(self, path_prefix: str) -> list[dict]:
        with self._lock:
            return [r for r in self.requests if r["path"].startswith(path_prefix)]

    def __enter__(self) -> "HostileServer":
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.closed.set()
        self._srv.shutdown()
        self._srv.server_close()


# -------------------------------------------------------------------- Hub answers


def refs(h: Handler) -> None:
    h.send_json({"branches": [{"name": "v1", "ref": "refs/heads/v1", "targetCommit": SHA}], "tags": [], "converts": []})


def entry(i: int) -> dict:
    return {"type": "file", "path": f"build/{VARIANT}/hostile/f{i}.py", "size": 1,
            "oid": hashlib.sha1(str(i).encode()).hexdigest()}


def tree_pages(per_page: int, pages: int | None = None) -> Route:
    """Pages of `per_page` valid entries, each linking to the next: `pages` of them, or forever."""
    def route(h: Handler) -> None:
        q = h.path.split("cursor=", 1)
        page = int(q[1]) if len(q) == 2 else 0
        headers = {}
        if pages is None or page + 1 < pages:
            headers["Link"] = f'<{h.server.owner.url}{API}/tree/{SHA}/build?recursive=true&cursor={page + 1}>; rel="next"'
        h.send_json([entry(page * per_page + i) for i in range(per_page)], headers=headers)
    return route


def deep(n: int = 20_000_000) -> bytes:
    """`n` nested arrays: 2n bytes of JSON."""
    return b"[" * n + b"]" * n


def wide(n: int = 4_000_000) -> bytes:
    """An array of `n` empty arrays: ~3n bytes of JSON, ~n tree values."""
    return b"[" + b"[]," * n + b"[]]"


def hub(**overrides: Route) -> dict[str, Route]:
    """The routes `kwheel variants org/hostile` takes: the publisher's overview (a trusted one),
    refs, then the tree of build/ at SHA."""
    routes: dict[str, Route] = {OVERVIEW: lambda h: h.send_json({"name": "org", "trustedKernelPublisher": True}),
                                f"{API}/refs": refs, f"{API}/tree/{SHA}/build": tree_pages(2, 1),
                                f"{API}/revision/{SHA}": lambda h: h.send_json({"sha": SHA}),
                                f"{API}/commits/{SHA}": lambda h: h.send_json([{"id": SHA}])}
    for name, route in overrides.items():
        routes[{"refs": f"{API}/refs", "tree": f"{API}/tree/{SHA}/build", "revision": f"{API}/revision/{SHA}",
                "commits": f"{API}/commits/{SHA}", "overview": OVERVIEW}.get(name, name)] = route
    return routes


if __name__ == "__main__":
    # Serves one hostile Hub per case until interrupted, for /usr/bin/time -v by hand.
    import sys

    cases = {
        "refs-deep": hub(refs=lambda h: h.send_bytes(deep(33_000_000))),
        "refs-deep-8mb": hub(refs=lambda h: h.send_bytes(deep(4_000_000))),
        # just under the value cap, in the costliest shapes per value
        "refs-objects": hub(refs=lambda h: h.send_bytes(b"[" + b",".join([b'{"ab":[]}'] * 66_000) + b"]")),
        "refs-strings": hub(refs=lambda h: h.send_bytes(json.dumps(["x" * 38] * 199_000).encode())),
        "refs-wide": hub(refs=lambda h: h.send_bytes(wide(2_700_000))),
        "refs-endless": hub(refs=lambda h: h.endless()),
        "refs-drip": hub(refs=lambda h: h.drip()),
        "revision-deep": hub(revision=lambda h: h.send_bytes(deep(3_000_000))),
        "tree-deep": hub(tree=lambda h: h.send_bytes(deep(3_000_000))),
        "tree-wide": hub(tree=lambda h: h.send_bytes(wide(2_700_000))),
        "tree-pages": hub(tree=tree_pages(1000)),
        "tree-pages-19k": hub(tree=tree_pages(1000, 19)),
        "tree-300k-pages": hub(tree=tree_pages(300_000)),
    }
    with HostileServer(cases[sys.argv[1]]) as s:
        print(s.url, flush=True)
        threading.Event().wait()
