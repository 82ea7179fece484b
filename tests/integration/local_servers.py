"""Starting and stopping the real servers the tests run on 127.0.0.1 (pypiserver, devpi, ...)."""

from __future__ import annotations

import contextlib
import os
import re
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_listening(proc: subprocess.Popen, port: int, what: str, deadline_s: float = 30) -> None:
    """Ready when a TCP connect succeeds; fails at once if the server died."""
    end = time.monotonic() + deadline_s
    while time.monotonic() < end:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            try:
                proc.wait(timeout=0.05)  # returns only if the server exited
                pytest.fail(f"{what} exited with {proc.returncode} before listening")
            except subprocess.TimeoutExpired:
                pass
    pytest.fail(f"{what} did not listen on port {port} within {deadline_s} s")


def stop(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@contextlib.contextmanager
def pypiserver(work: Path, users: dict[str, str]):
    """A real pypiserver on 127.0.0.1: uploads need one of `users` (htpasswd), downloads are open.
    Yields its root URL (uploads to ROOT/, the simple index at ROOT/simple/)."""
    from passlib.apache import HtpasswdFile

    packages = work / "packages"
    packages.mkdir(parents=True)
    htpasswd = HtpasswdFile(str(work / "htpasswd"), new=True)
    for user, password in users.items():
        htpasswd.set_password(user, password)
    htpasswd.save()
    port = free_port()
    with open(work / "stderr.log", "w") as err:
        proc = subprocess.Popen([Path(sys.executable).parent / "pypi-server", "run", "-p", str(port), "-i", "127.0.0.1",
                                 "-a", "update", "-P", work / "htpasswd", "--disable-fallback", packages],
                                stdout=subprocess.DEVNULL, stderr=err)
    try:
        wait_listening(proc, port, "pypiserver")
        yield f"http://127.0.0.1:{port}"
    finally:
        stop(proc)


NGINX = "/usr/sbin/nginx"


def _https_status(url: str, ca: Path, auth: tuple[str, str] | None = None, client: Path | None = None) -> int:
    """One GET through the TLS front, trusting only the test CA; the HTTP status."""
    import base64
    import ssl
    import urllib.error
    import urllib.request

    ctx = ssl.create_default_context(cafile=str(ca))
    if client is not None:
        ctx.load_cert_chain(str(client))
    req = urllib.request.Request(url)
    if auth is not None:
        req.add_header("Authorization", "Basic " + base64.b64encode(f"{auth[0]}:{auth[1]}".encode()).decode())
    try:
        with urllib.request.build_opener(urllib.request.HTTPSHandler(context=ctx), urllib.request.ProxyHandler({})).open(req, timeout=10) as r:
            return r.status
    except urllib.error.HTTPError as e:
        return e.code


@contextlib.contextmanager
def private_index(work: Path, users: dict[str, str], pki: dict[str, Path], *, client_certs: bool = False):
    """A private index as teams run one: pypiserver 2.4 wanting a password for every read and
    upload (`-a list,download,update`, htpasswd), on 127.0.0.1 plain HTTP, behind Debian's nginx
    terminating TLS with a certificate from the test CA (`pki`). With client_certs, nginx also
    requires a client certificate the test CA signed (`ssl_verify_client on`).

    nginx runs as a user would run it in a directory: its own nginx.conf, `daemon off`, pid, logs
    (work/nginx/access.log: private_index_log) and temp files under `work`. It passes `Host` (so
    pypiserver's absolute URLs name the front's host and port) and `X-Forwarded-Proto: https`;
    waitress, pypiserver's server, drops the latter, so nginx rewrites the `Location` of
    pypiserver's redirects (/simple -> /simple/, non-normalized names) from http:// to https://.
    The simple pages link files as `/packages/<file>#sha256=<hex>` (root-relative: they resolve
    through the front). Ready means one real read through the whole chain answered 200 with the
    first user's password and 401 without. Yields the https root URL (`ROOT/` takes uploads,
    `ROOT/simple/` is the index)."""
    from passlib.apache import HtpasswdFile

    if not Path(NGINX).is_file():
        pytest.skip(f"{NGINX} is not installed (scripts/setup installs Debian's nginx)")
    work.mkdir(parents=True, exist_ok=True)
    packages = work / "packages"
    packages.mkdir()
    htpasswd = HtpasswdFile(str(work / "htpasswd"), new=True)
    for user, password in users.items():
        htpasswd.set_password(user, password)
    htpasswd.save()
    backend_port, port = free_port(), free_port()
    nginx_dir = work / "nginx"
    for d in ("body", "proxy", "fastcgi", "uwsgi", "scgi"):
        (nginx_dir / "tmp" / d).mkdir(parents=True)
    # As root, nginx's workers would drop to `nobody`, who cannot enter the test's 0700 temp dir.
    nginx_user = ""
    if os.geteuid() == 0:
        import grp
        import pwd
        nginx_user = f"user {pwd.getpwuid(os.getuid()).pw_name} {grp.getgrgid(os.getgid()).gr_name};\n"
    mtls = (f"        ssl_verify_client on;\n        ssl_client_certificate {pki['ca']};\n" if client_certs else "")
    (nginx_dir / "nginx.conf").write_text(f"""{nginx_user}daemon off;
master_process on;
worker_processes 1;
pid {nginx_dir}/nginx.pid;
error_log {nginx_dir}/error.log info;
events {{ worker_connections 64; }}
http {{
    access_log {nginx_dir}/access.log;
    client_body_temp_path {nginx_dir}/tmp/body;
    proxy_temp_path {nginx_dir}/tmp/proxy;
    fastcgi_temp_path {nginx_dir}/tmp/fastcgi;
    uwsgi_temp_path {nginx_dir}/tmp/uwsgi;
    scgi_temp_path {nginx_dir}/tmp/scgi;
    client_max_body_size 0;
    server {{
        listen 127.0.0.1:{port} ssl;
        server_name 127.0.0.1 localhost;
        ssl_certificate {pki['cert']};
        ssl_certificate_key {pki['key']};
{mtls}        location / {{
            proxy_pass http://127.0.0.1:{backend_port};
            proxy_set_header Host $http_host;
            proxy_set_header X-Forwarded-Proto https;
            proxy_set_header X-Forwarded-For $remote_addr;
            # pypiserver runs on waitress 3, which drops X-Forwarded-* from a peer it was not told
            # to trust (clear_untrusted_proxy_headers), and pypiserver has no option to tell it: its
            # redirects say http://HOST/... . Rewrite them, as a team's front must.
            proxy_redirect http:// https://;
        }}
    }}
}}
""")
    with open(work / "pypiserver.log", "w") as err:
        pypi = subprocess.Popen([Path(sys.executable).parent / "pypi-server", "run", "-p", str(backend_port), "-i", "127.0.0.1",
                                 "-a", "list,download,update", "-P", work / "htpasswd", "--hash-algo", "sha256",
                                 "--disable-fallback", packages], stdout=subprocess.DEVNULL, stderr=err)
    front = None
    try:
        wait_listening(pypi, backend_port, "pypiserver")
        with open(nginx_dir / "stderr.log", "w") as err:
            front = subprocess.Popen([NGINX, "-p", nginx_dir, "-c", nginx_dir / "nginx.conf", "-e", nginx_dir / "error.log"],
                                     stdout=subprocess.DEVNULL, stderr=err)
        wait_listening(front, port, "nginx")
        root = f"https://127.0.0.1:{port}"
        # Ready means the whole chain answers: TLS from the test CA, the proxy, pypiserver's auth.
        client = pki.get("client") if client_certs else None
        user, password = next(iter(users.items()))
        if (got := _https_status(f"{root}/simple/", pki["ca"], (user, password), client)) != 200:
            pytest.fail(f"the private index at {root}/simple/ answered {got} with valid credentials "
                        f"(logs: {nginx_dir / 'error.log'}, {work / 'pypiserver.log'})")
        if (got := _https_status(f"{root}/simple/", pki["ca"], None, client)) != 401:
            pytest.fail(f"the private index at {root}/simple/ answered {got} without credentials, not 401")
        yield root
    finally:
        if front is not None:
            stop(front)
        stop(pypi)


def private_index_log(work: Path) -> list[dict[str, str]]:
    """The requests the TLS front of private_index(work, ...) served, in order: user (from Basic
    auth, "-" for none; nginx logs the name, never the password), method, path, status, agent."""
    log = work / "nginx" / "access.log"
    rx = re.compile(r'^\S+ - (\S+) \[[^\]]+\] "(\S+) (\S+) [^"]*" (\d{3}) \S+ "[^"]*" "([^"]*)"')
    return [dict(zip(("user", "method", "path", "status", "agent"), m.groups()))
            for line in (log.read_text().splitlines() if log.exists() else []) if (m := rx.match(line))]


@contextlib.contextmanager
def serve_in_thread(srv):
    """A socketserver serving on a daemon thread until the block ends; shut down and closed after it."""
    t = threading.Thread(target=srv.serve_forever, daemon=True)
    t.start()
    try:
        yield srv
    finally:
        srv.shutdown()
        srv.server_close()
        t.join()
