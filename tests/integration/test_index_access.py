"""Reaching a private index the way teams run one: HTTPS from the team's own CA, a
password for every read, sometimes a client certificate (issue 37).

The servers are started here, in-process: an HTTPS simple index (PEP 503 pages and
the wheels) that answers 401 to any request without one of its users' Basic
credentials, as pypiserver `-a list,download,update` does; a second origin that
serves wheels the page links and records what it was sent; and an index that wants
a client certificate signed by the test CA. Every kwheel run gets an environment
without this machine's own CA variables, ~/.netrc or keyring: each test gives only
the source it is about.

Shown here, for `kwheel pin URL`:
* --cert and netrc credentials work, and pip itself downloads the pinned file with
  the same netrc and --cert (the written index URL carries no credentials);
* each CA variable alone works, and of any two the one earlier in the documented
  order wins; --cert beats a wrong CA in every variable;
* each credential source (the URL's userinfo, NETRC, a keyring program) works, and
  userinfo beats netrc beats keyring (pip's order), keyring asked only after a 401;
* no credentials, and refused ones, each give one line with exit code 6;
* the wheels `pin --lock` downloads get the credentials on the index's origin and
  none on another origin;
* --client-cert works against a server that wants one, and without it the error
  names --client-cert.
The passwords appear in no output, no --json and no file kwheel writes.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import http.server
import json
import os
import re
import shutil
import socket
import ssl
import subprocess
import sys
import urllib.parse
import zipfile
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from elfgen import shared_object  # noqa: E402
from kwheel_fixtures import one_error_line  # noqa: E402
from local_servers import serve_in_thread  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
KWHEEL = os.environ.get("KWHEEL_BIN") or str(ROOT / "build" / "kwheel")
PY = sys.executable

# One password per source, so a test can tell which source was used.
PASSWORD_URL = "url-Pw-7q2x-not-in-any-output"
PASSWORD_NETRC = "netrc-Pw-5k8m-not-in-any-output"
PASSWORD_KEYRING = "keyring-Pw-3j6v-not-in-any-output"
PASSWORD_WRONG = "wrong-Pw-9d4t-not-in-any-output"
USERS = {"url-user": PASSWORD_URL, "netrc-user": PASSWORD_NETRC, "kr-user": PASSWORD_KEYRING}
PASSWORDS = (PASSWORD_URL, PASSWORD_NETRC, PASSWORD_KEYRING, PASSWORD_WRONG)

CA_VARIABLES = ("KWHEEL_CA_BUNDLE", "SSL_CERT_FILE", "REQUESTS_CA_BUNDLE", "PIP_CERT")  # the documented order
VARIANT = "torch27-cxx11-cu126-x86_64-linux"
REPO = "acme/img2gray"
COMMIT = "0123456789abcdef0123456789abcdef01234567"
USAGE, NETWORK, AUTH = 2, 4, 6

pytestmark = pytest.mark.skipif(not os.access(KWHEEL, os.X_OK), reason=f"kwheel not built at {KWHEEL} (set KWHEEL_BIN)")


# --------------------------------------------------------------------------- servers


class Handler(http.server.BaseHTTPRequestHandler):
    server: "IndexServer"

    def log_message(self, *args):
        pass

    def do_HEAD(self):
        self.answer(head=True)

    def do_GET(self):
        self.answer(head=False)

    def answer(self, head: bool):
        auth = self.headers.get("Authorization")
        self.server.seen.append({"method": self.command, "path": self.path, "authorization": auth})
        if self.server.users is not None and self.server.user_of(auth) is None:
            return self.send(401, b"credentials, please", "text/plain", head, {"WWW-Authenticate": 'Basic realm="index"'})
        body = self.server.files.get(urllib.parse.unquote(self.path.split("?")[0]))
        if body is None:
            return self.send(404, b"not here", "text/plain", head)
        kind = "text/html" if self.path.endswith("/") else "application/octet-stream"
        self.send(200, body, kind, head)

    def send(self, status, body, kind, head, extra=None):
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        for k, v in (extra or {}).items():
            self.send_header(k, v)
        self.end_headers()
        if not head:
            self.wfile.write(body)


class IndexServer(http.server.ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, pki, users, client_ca=None):
        super().__init__(("127.0.0.1", 0), Handler)
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(pki["cert"], pki["key"])
        if client_ca:
            ctx.verify_mode = ssl.CERT_REQUIRED
            ctx.load_verify_locations(client_ca)
        self.ctx = ctx
        self.users = users
        self.files: dict[str, bytes] = {}
        self.seen: list[dict] = []
        self.url = f"https://127.0.0.1:{self.server_address[1]}"

    def finish_request(self, request, client_address):
        """TLS in the request's own thread. A failed handshake (a client that refused our
        certificate, or had none to give) is closed as nginx closes it, lingering: the client
        reads the alert, not a reset."""
        conn = self.ctx.wrap_socket(request, server_side=True, do_handshake_on_connect=False)
        try:
            conn.do_handshake()
        except (ssl.SSLError, OSError):
            raw = socket.socket(fileno=conn.detach())
            with contextlib.suppress(OSError):
                raw.shutdown(socket.SHUT_WR)
                raw.settimeout(2)
                while raw.recv(65536):
                    pass
            raw.close()
            return
        try:
            self.RequestHandlerClass(conn, client_address, self)
        finally:
            with contextlib.suppress(OSError):
                conn.close()

    def handle_error(self, request, client_address):
        pass  # a client that hung up: the test reads kwheel's side

    def user_of(self, authorization):
        if not authorization or not authorization.startswith("Basic "):
            return None
        user, _, password = base64.b64decode(authorization[6:]).decode().partition(":")
        return user if self.users.get(user) == password else None

    def users_seen(self):
        return [self.user_of(s["authorization"]) for s in self.seen if s["authorization"]]

    def publish(self, wheel: Path, file_base: str | None = None):
        """The root page, the project page linking `wheel` (on `file_base`, default this server)."""
        data = wheel.read_bytes()
        self.files["/simple/"] = b'<!DOCTYPE html><html><body><a href="img2gray/">img2gray</a></body></html>'
        href = f"{file_base or ''}/files/{wheel.name}#sha256={hashlib.sha256(data).hexdigest()}"
        self.files["/simple/img2gray/"] = f'<!DOCTYPE html><html><body><a href="{href}">{wheel.name}</a></body></html>'.encode()
        if file_base is None:
            self.files[f"/files/{wheel.name}"] = data


@contextlib.contextmanager
def serving(pki, users, client_ca=None):
    with serve_in_thread(IndexServer(pki, users, client_ca)) as srv:
        yield srv


# --------------------------------------------------------------------------- wheels


def write_variant(root: Path) -> None:
    pkg = root / "build" / VARIANT / "img2gray"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("from ._ops import ops\n")
    (pkg / "_ops.py").write_text("import torch\nfrom . import _img2gray_0c0ffee\nops = torch.ops._img2gray_0c0ffee\n")
    (pkg / "_img2gray_0c0ffee.abi3.so").write_bytes(shared_object("x86_64", VARIANT.encode()))


def with_hub_revision(wheel: Path, out: Path) -> Path:
    """`wheel` as a Hub build of REPO at COMMIT records itself (the one METADATA line a Hub
    build adds), RECORD's row for METADATA updated: what `pin --lock` looks for."""
    out.mkdir(parents=True, exist_ok=True)
    dest = out / wheel.name
    line = f"Project-URL: Hub revision, https://huggingface.co/kernels/{REPO}/tree/{COMMIT}\n"
    with zipfile.ZipFile(wheel) as src, zipfile.ZipFile(dest, "w", zipfile.ZIP_DEFLATED) as dst:
        names = src.namelist()
        meta = next(n for n in names if n.endswith(".dist-info/METADATA"))
        record = next(n for n in names if n.endswith(".dist-info/RECORD"))
        text = src.read(meta).decode()
        head, sep, body = text.partition("\n\n")
        new_meta = (head + "\n" + line.rstrip("\n") + sep + body).encode()
        digest = base64.urlsafe_b64encode(hashlib.sha256(new_meta).digest()).rstrip(b"=").decode()
        rows = [f"{meta},sha256={digest},{len(new_meta)}" if r.startswith(meta + ",") else r
                for r in src.read(record).decode().splitlines()]
        for n in names:
            data = new_meta if n == meta else ("\n".join(rows) + "\n").encode() if n == record else src.read(n)
            dst.writestr(n, data)
    return dest


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    work = tmp_path_factory.mktemp("index-access")
    write_variant(work / "src")
    p = subprocess.run([KWHEEL, "build", work / "src", "--version", "0.1.0", "--name", "img2gray", "-o", work / "dist", "-q"],
                       capture_output=True, text=True, env=base_env(work / "home"))
    assert p.returncode == 0, p.stdout + p.stderr
    [w] = sorted((work / "dist").glob("*.whl"))
    return with_hub_revision(w, work / "locked")


@pytest.fixture(scope="module")
def lock(tmp_path_factory) -> Path:
    p = tmp_path_factory.mktemp("lock") / "kernels.lock"
    p.write_text(json.dumps([{"repo_id": REPO, "sha": COMMIT}]))
    return p


@pytest.fixture(scope="module")
def client_pem(pki) -> Path:
    """One PEM file with a client certificate the test CA signed and its key (pip's --client-cert)."""
    d = pki["ca"].parent / "client"
    d.mkdir(exist_ok=True)

    def ossl(*args):
        subprocess.run(["openssl", *map(str, args)], check=True, capture_output=True)

    ossl("req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=kwheel client", "-keyout", d / "client.key", "-out", d / "client.csr")
    (d / "ext").write_text("extendedKeyUsage=clientAuth\nbasicConstraints=CA:FALSE\n")
    ossl("x509", "-req", "-in", d / "client.csr", "-CA", pki["ca"], "-CAkey", pki["ca"].parent / "ca.key", "-CAcreateserial",
         "-days", "2", "-extfile", d / "ext", "-out", d / "client.crt")
    pem = d / "client.pem"
    pem.write_bytes((d / "client.crt").read_bytes() + (d / "client.key").read_bytes())
    return pem


# --------------------------------------------------------------------------- running kwheel


def base_env(home: Path, **extra) -> dict:
    """This machine's environment without its CA variables, proxies, pip/uv/twine settings, NETRC
    or keyring; HOME a fresh directory (no ~/.netrc)."""
    drop = set(CA_VARIABLES) | {"SSL_CERT_DIR", "CURL_CA_BUNDLE", "SSL_CLIENT_CERT", "PIP_CLIENT_CERT", "NETRC"}
    env = {k: v for k, v in os.environ.items()
           if k not in drop and not k.startswith(("PIP_", "UV_", "TWINE_", "KWHEEL_")) and "proxy" not in k.lower()}
    home.mkdir(parents=True, exist_ok=True)
    env.update(HOME=str(home), PATH="/usr/bin:/bin", PIP_CONFIG_FILE=os.devnull, PIP_DISABLE_PIP_VERSION_CHECK="1", PIP_NO_INPUT="1")
    env.update({k: str(v) for k, v in extra.items()})
    return env


def pin(url, *args, env, cwd=None):
    """kwheel pin URL for torch 2.7 + CUDA 12.6, with --json: (process, report or None)."""
    p = subprocess.run([KWHEEL, "pin", url, "--torch", "2.7", "--cuda", "12.6", "--json", *map(str, args)],
                       capture_output=True, text=True, env=env, cwd=cwd, timeout=120)
    for secret in PASSWORDS:
        assert secret not in p.stdout + p.stderr, "a password reached kwheel's output"
    report = json.loads(p.stdout) if p.returncode == 0 else None
    return p, report


def write_netrc(path: Path, user: str, password: str) -> Path:
    path.write_text(f"machine 127.0.0.1\n  login {user}\n  password {password}\n")
    path.chmod(0o600)
    return path


def fake_keyring(bindir: Path, user: str | None, password: str | None) -> Path:
    """A `keyring` program that appends its argv to keyring.log and answers as keyring 25 does."""
    bindir.mkdir(parents=True, exist_ok=True)
    log = bindir / "keyring.log"
    answer = f"echo '{json.dumps({'username': user, 'password': password})}'" if user else "exit 1"
    exe = bindir / "keyring"
    exe.write_text(f'#!/bin/sh\necho "$@" >> "{log}"\n{answer}\n')
    exe.chmod(0o755)
    return log


def assert_no_password_in(*paths: Path) -> None:
    for p in paths:
        data = p.read_bytes()
        for secret in PASSWORDS:
            assert secret.encode() not in data, f"a password is in {p}"


# --------------------------------------------------------------------------- tests


def test_pin_with_cert_and_netrc_then_pip_downloads_with_the_same(pki, wheel, tmp_path):
    with serving(pki, USERS) as srv:
        srv.publish(wheel)
        netrc = write_netrc(tmp_path / "netrc", "netrc-user", PASSWORD_NETRC)
        env = base_env(tmp_path / "home", NETRC=netrc)
        req = tmp_path / "requirements.txt"
        p, report = pin(f"{srv.url}/simple/", "--cert", pki["ca"], "-o", req, env=env)
        assert p.returncode == 0, p.stderr
        assert report["connection"] == {"ca_from": "--cert", "credentials_from": str(netrc)}
        assert f"--index-url {srv.url}/simple/\n" in req.read_text()
        assert set(srv.users_seen()) == {"netrc-user"}
        assert_no_password_in(req)
        # pip finds the same credentials in the same netrc, and trusts the same CA from --cert.
        d = subprocess.run([PY, "-m", "pip", "download", "--no-deps", "--require-hashes", "-r", req, "-d", tmp_path / "got",
                            "--cert", pki["ca"]], capture_output=True, text=True, env=env, timeout=300)
        assert d.returncode == 0, d.stdout + d.stderr
        assert (tmp_path / "got" / wheel.name).read_bytes() == wheel.read_bytes()


def test_no_credentials_and_refused_credentials_are_one_line_each(pki, wheel, tmp_path):
    with serving(pki, USERS) as srv:
        srv.publish(wheel)
        p, _ = pin(f"{srv.url}/simple/", "--cert", pki["ca"], env=base_env(tmp_path / "home"))
        one_error_line(p, AUTH, f"{srv.url}/simple/ wants credentials (HTTP 401)", "none were found for 127.0.0.1", "netrc", "keyring",
                       "USER:PASSWORD@")
        netrc = write_netrc(tmp_path / "netrc", "netrc-user", PASSWORD_WRONG)
        p, _ = pin(f"{srv.url}/simple/", "--cert", pki["ca"], env=base_env(tmp_path / "home", NETRC=netrc))
        one_error_line(p, AUTH, f"credentials from {netrc} for 127.0.0.1 were refused")


def test_each_ca_variable_alone_works(pki, wheel, tmp_path):
    with serving(pki, USERS) as srv:
        srv.publish(wheel)
        netrc = write_netrc(tmp_path / "netrc", "netrc-user", PASSWORD_NETRC)
        for var in CA_VARIABLES:
            p, report = pin(f"{srv.url}/simple/", env=base_env(tmp_path / "home", NETRC=netrc, **{var: pki["ca"]}))
            assert p.returncode == 0, (var, p.stderr)
            assert report["connection"]["ca_from"] == var


def test_of_two_ca_variables_the_earlier_wins_and_the_flag_beats_all(pki, wheel, tmp_path):
    """For each pair, the right CA in one and a wrong one in the other: it works exactly when the
    right one is in the variable that comes first in the documented order."""
    with serving(pki, USERS) as srv:
        srv.publish(wheel)
        netrc = write_netrc(tmp_path / "netrc", "netrc-user", PASSWORD_NETRC)
        url = f"{srv.url}/simple/"
        for i, first in enumerate(CA_VARIABLES):
            for later in CA_VARIABLES[i + 1:]:
                good_first = base_env(tmp_path / "home", NETRC=netrc, **{first: pki["ca"], later: pki["other_ca"]})
                p, report = pin(url, env=good_first)
                assert p.returncode == 0 and report["connection"]["ca_from"] == first, (first, later, p.stderr)
                bad_first = base_env(tmp_path / "home", NETRC=netrc, **{first: pki["other_ca"], later: pki["ca"]})
                p, _ = pin(url, env=bad_first)
                one_error_line(p, NETWORK, "certificate", f"from {first}", "--cert FILE")
        wrong_everywhere = base_env(tmp_path / "home", NETRC=netrc, **{v: pki["other_ca"] for v in CA_VARIABLES})
        p, report = pin(url, "--cert", pki["ca"], env=wrong_everywhere)
        assert p.returncode == 0 and report["connection"]["ca_from"] == "--cert", p.stderr
        p, _ = pin(url, env=base_env(tmp_path / "home", NETRC=netrc))  # the system CAs do not know the test CA
        one_error_line(p, NETWORK, "certificate", "the system's", "--cert FILE")
        p, _ = pin(url, env=base_env(tmp_path / "home", SSL_CERT_FILE=tmp_path / "nope.pem"))
        one_error_line(p, USAGE, f"SSL_CERT_FILE '{tmp_path / 'nope.pem'}' is not a readable file")


def test_each_credential_source_alone(pki, wheel, tmp_path):
    with serving(pki, USERS) as srv:
        srv.publish(wheel)
        url = f"{srv.url}/simple/"
        authority = url.split("://", 1)[1]
        # The URL's userinfo (percent-encoding is decoded, as pip decodes it)
        p, report = pin(f"https://url-user:{PASSWORD_URL.replace('-', '%2D')}@{authority}", "--cert", pki["ca"],
                        env=base_env(tmp_path / "home"))
        assert p.returncode == 0, p.stderr
        assert report["connection"]["credentials_from"] == "the URL"
        assert report["index_line"] == f"--index-url {url}" and "@" not in report["requirements"]
        assert set(srv.users_seen()) == {"url-user"}
        # NETRC
        srv.seen.clear()
        netrc = write_netrc(tmp_path / "netrc", "netrc-user", PASSWORD_NETRC)
        p, report = pin(url, "--cert", pki["ca"], env=base_env(tmp_path / "home", NETRC=netrc))
        assert p.returncode == 0 and report["connection"]["credentials_from"] == str(netrc), p.stderr
        assert set(srv.users_seen()) == {"netrc-user"}
        # keyring, asked after the first 401, for the index URL, with pip's argv
        srv.seen.clear()
        bindir = tmp_path / "bin"
        log = fake_keyring(bindir, "kr-user", PASSWORD_KEYRING)
        env = base_env(tmp_path / "home", PATH=f"{bindir}:/usr/bin:/bin")
        p, report = pin(url, "--cert", pki["ca"], env=env)
        assert p.returncode == 0, p.stderr
        assert report["connection"]["credentials_from"] == f"keyring ({bindir / 'keyring'})"
        assert srv.seen[0]["authorization"] is None and set(srv.users_seen()) == {"kr-user"}
        assert log.read_text().splitlines()[0] == f"--mode=creds --output=json get {url}"
        # --keyring-provider disabled: pip's meaning, no keyring asked
        log.unlink()
        p, _ = pin(url, "--cert", pki["ca"], "--keyring-provider", "disabled", env=env)
        one_error_line(p, AUTH, "none were found")
        assert not log.exists()


def test_userinfo_beats_netrc_beats_keyring(pki, wheel, tmp_path):
    with serving(pki, USERS) as srv:
        srv.publish(wheel)
        url = f"{srv.url}/simple/"
        bindir = tmp_path / "bin"
        log = fake_keyring(bindir, "kr-user", PASSWORD_KEYRING)
        netrc = write_netrc(tmp_path / "netrc", "netrc-user", PASSWORD_NETRC)
        env = base_env(tmp_path / "home", NETRC=netrc, PATH=f"{bindir}:/usr/bin:/bin")
        p, report = pin(url.replace("https://", f"https://url-user:{PASSWORD_URL}@"), "--cert", pki["ca"], env=env)
        assert p.returncode == 0 and report["connection"]["credentials_from"] == "the URL", p.stderr
        assert set(srv.users_seen()) == {"url-user"}
        srv.seen.clear()
        p, report = pin(url, "--cert", pki["ca"], env=env)
        assert p.returncode == 0 and report["connection"]["credentials_from"] == str(netrc), p.stderr
        assert set(srv.users_seen()) == {"netrc-user"}
        assert not log.exists(), "keyring asked although netrc's credentials were taken"
        # pip asks keyring after a 401 to netrc's credentials; never after one to the URL's.
        write_netrc(netrc, "netrc-user", PASSWORD_WRONG)
        p, report = pin(url, "--cert", pki["ca"], env=env)
        assert p.returncode == 0 and report["connection"]["credentials_from"].startswith("keyring"), p.stderr
        log.unlink()
        p, _ = pin(url.replace("https://", f"https://url-user:{PASSWORD_WRONG}@"), "--cert", pki["ca"], env=env)
        one_error_line(p, AUTH, "credentials from the URL for 127.0.0.1 were refused")
        assert not log.exists()


def test_lock_downloads_send_credentials_on_the_index_origin_only(pki, wheel, lock, tmp_path):
    netrc = write_netrc(tmp_path / "netrc", "netrc-user", PASSWORD_NETRC)
    env = base_env(tmp_path / "home", NETRC=netrc)
    out = tmp_path / "requirements.txt"
    with serving(pki, USERS) as srv:
        # Same origin: the wheel (no PEP 658 file) is read with the credentials, which it needs.
        srv.publish(wheel)
        p, report = pin(f"{srv.url}/simple/", "--cert", pki["ca"], "--lock", lock, "-o", out, env=env)
        assert p.returncode == 0, p.stderr
        wheel_requests = [s for s in srv.seen if s["path"] == f"/files/{wheel.name}"]
        assert wheel_requests and all(srv.user_of(s["authorization"]) == "netrc-user" for s in wheel_requests)
        with serving(pki, None) as files:
            # Another origin: the page links the wheel there; it gets no credentials.
            files.files[f"/files/{wheel.name}"] = wheel.read_bytes()
            srv.publish(wheel, file_base=files.url)
            srv.seen.clear()
            p, report = pin(f"{srv.url}/simple/", "--cert", pki["ca"], "--lock", lock, "-o", out, env=env)
            assert p.returncode == 0, p.stderr
            assert [s["path"] for s in files.seen] and all(s["path"] == f"/files/{wheel.name}" for s in files.seen)
            assert all(s["authorization"] is None for s in files.seen), files.seen
            assert set(srv.users_seen()) == {"netrc-user"}
    assert_no_password_in(out)
    assert all(f["url"].startswith("https://127.0.0.1:") and "@" not in f["url"] for k in report["kernels"] for f in k["files"])


def test_client_certificate(pki, wheel, client_pem, tmp_path):
    with serving(pki, USERS, client_ca=pki["ca"]) as srv:
        srv.publish(wheel)
        netrc = write_netrc(tmp_path / "netrc", "netrc-user", PASSWORD_NETRC)
        env = base_env(tmp_path / "home", NETRC=netrc)
        p, report = pin(f"{srv.url}/simple/", "--cert", pki["ca"], "--client-cert", client_pem, env=env)
        assert p.returncode == 0, p.stderr
        assert set(srv.users_seen()) == {"netrc-user"}
        p, _ = pin(f"{srv.url}/simple/", "--cert", pki["ca"], env=env)
        one_error_line(p, NETWORK, f"{srv.url}/simple/", "--client-cert FILE")
        p, _ = pin(f"{srv.url}/simple/", "--cert", pki["ca"], "--client-cert", tmp_path / "none.pem", env=env)
        one_error_line(p, USAGE, "--client-cert", "is not a readable file", "client certificate and its private key")


def test_a_file_index_and_a_directory_ignore_the_ca_variables(wheel, tmp_path):
    """Only a server is reached over TLS: a broken CA variable does not stop pinning a directory."""
    p, report = pin(wheel.parent, env=base_env(tmp_path / "home", SSL_CERT_FILE=tmp_path / "nope.pem"))
    assert p.returncode == 0, p.stderr
    assert "connection" not in report
