"""`kwheel publish`, `kwheel index` and `kwheel pin` against real index
servers and real installers, all on 127.0.0.1, started here:

* pypiserver 2.4.2 with an htpasswd file (`-a update`) and
  `--disable-fallback`: publish, re-publish, wrong password, `__token__`,
  .pypirc; then pip and uv install the exact bytes. `--skip-existing`
  compares the sha256 on its /simple/ page: other bytes under a published
  name fail, naming both hashes.
* an in-process upload recorder: the form kwheel sends is the form twine 7
  sends; 5xx are retried, 4xx are not; redirects are not followed (no
  credentials for another origin); server echoes of the password are redacted.
* `python -m http.server` and file:// serving a `kwheel index` site: pip
  picks the right build per sub-index, fetches PEP 658 `.metadata` files,
  pypi-simple parses the pages, the JSON pages have PEP 691's shape.
* `kwheel pin` output installs with `pip install --require-hashes`, and
  stops installing when one byte of the served wheel changes.

* devpi-server 6.20.3 (a user, a non-volatile index, offline mode): publish,
  identical re-upload (devpi answers 200 "identical"), a different file under
  a published name (409; with `--skip-existing`, its +simple page's sha256
  differs: a failure), wrong password; pip installs the exact bytes.

Wheels: the real img2gray CPU build for Debian's torch (scripts/build-kernel,
as test_validate.py does) and synthetic CUDA/universal variants whose .so is a
tiny real ELF (elfgen.py). Nothing here needs a GPU or torch in the venv.
"""

from __future__ import annotations

import base64
import email.parser
import email.policy
import hashlib
import http.server
import json
import os
import random
import re
import shutil
import socket
import ssl
import subprocess
import sys
import threading
import time
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from elfgen import shared_object  # noqa: E402
from local_servers import free_port, stop, wait_listening  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
KWHEEL = os.environ.get("KWHEEL_BIN") or str(ROOT / "build" / "kwheel")
BUILD_SCRIPT = ROOT / "scripts" / "build-kernel"
TORCH_PYTHON = "/usr/bin/python3"
PY = sys.executable
VENV_BIN = Path(sys.executable).parent
UV = shutil.which("uv", path=str(VENV_BIN)) or shutil.which("uv")
PASSWORD = "pw-Zq81-not-in-any-output"
TOKEN = "pypi-AgEIcHlwaS5vcmcCJGtoZWVsLXRva2VuLXRlc3Q"

# ErrorKind exit codes (include/kwheel/base/error.hpp)
USAGE, INPUT, NETWORK, NOT_FOUND, AUTH = 2, 3, 4, 5, 6


def _have(module: str) -> bool:
    return subprocess.run([PY, "-c", f"import {module}"], capture_output=True).returncode == 0


pytestmark = [
    pytest.mark.skipif(not os.access(KWHEEL, os.X_OK), reason=f"kwheel not built at {KWHEEL} (set KWHEEL_BIN)"),
    pytest.mark.skipif(not (_have("pypiserver") and _have("passlib") and _have("twine") and _have("pypi_simple")),
                       reason="needs the test venv (scripts/requirements-test.txt)"),
]


# --------------------------------------------------------------------------- helpers


def run(argv, *, env=None, cwd=None, timeout=300) -> subprocess.CompletedProcess:
    return subprocess.run([str(a) for a in argv], capture_output=True, text=True, env=env, cwd=cwd, timeout=timeout)


def clean_env(**extra) -> dict:
    """The environment without the user's pip/uv/twine settings."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PIP_", "UV_", "TWINE_"))}
    env.update(PIP_CONFIG_FILE=os.devnull, PIP_DISABLE_PIP_VERSION_CHECK="1", PIP_NO_INPUT="1", UV_NO_CONFIG="1",
               PYTHONDONTWRITEBYTECODE="1")
    env.update({k: str(v) for k, v in extra.items()})
    return env


def kwheel(*args, env=None) -> subprocess.CompletedProcess:
    return run([KWHEEL, *args], env=env or clean_env())


def kwheel_json(*args, env=None) -> tuple[subprocess.CompletedProcess, dict]:
    p = kwheel(*args, "--json", env=env)
    try:
        return p, json.loads(p.stdout)
    except json.JSONDecodeError:
        pytest.fail(f"kwheel {' '.join(map(str, args))} printed no JSON (exit {p.returncode}):\n{p.stdout}\n{p.stderr}")


def sha256(path: Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def pip_pick(index_url: str, requirement: str, *extra: str) -> dict:
    """What `pip install` would install (dry run, --report): the one item."""
    p = run([PY, "-m", "pip", "install", "--dry-run", "--ignore-installed", "--no-deps", "--no-cache-dir", "-q",
             "--report", "-", "--index-url", index_url, requirement, *extra], env=clean_env())
    assert p.returncode == 0, p.stdout + p.stderr
    report = json.loads(p.stdout)
    assert len(report["install"]) == 1, report["install"]
    return report["install"][0]


def picked_filename(item: dict) -> str:
    from urllib.parse import unquote
    return unquote(item["download_info"]["url"].rsplit("/", 1)[-1])


def wheel_metadata(wheel: Path) -> bytes:
    with zipfile.ZipFile(wheel) as z:
        [name] = [n for n in z.namelist() if n.endswith(".dist-info/METADATA")]
        return z.read(name)


def write_variant(root: Path, variant: str) -> None:
    pkg = root / "build" / variant / "img2gray"
    pkg.mkdir(parents=True)
    if variant.startswith("torch-"):
        (pkg / "__init__.py").write_text("KIND = 'universal'\n")
        return
    (pkg / "__init__.py").write_text("from ._ops import ops\n")
    (pkg / "_ops.py").write_text("import torch\nfrom . import _img2gray_0c0ffee\nops = torch.ops._img2gray_0c0ffee\n")
    (pkg / "_img2gray_0c0ffee.abi3.so").write_bytes(shared_object("x86_64", variant.encode()))


def kwheel_build(src: Path, out: Path, version: str = "0.1.0") -> list[Path]:
    p = kwheel("build", src, "--version", version, "--name", "img2gray", "-o", out, "-q")
    assert p.returncode == 0, p.stdout + p.stderr
    return sorted(out.glob("*.whl"))


# --------------------------------------------------------------------------- servers


@dataclass
class PypiServer:
    url: str
    packages: Path
    log: Path
    htpasswd: Path

    def stored(self) -> list[str]:
        return re.findall(r"stored '([^']+)'", self.log.read_text())


@pytest.fixture(scope="module")
def pypiserver(work) -> PypiServer:
    from passlib.apache import HtpasswdFile

    d = work / "pypiserver"
    packages = d / "packages"
    packages.mkdir(parents=True)
    htpasswd = d / "htpasswd"
    h = HtpasswdFile(str(htpasswd), new=True)
    h.set_password("alice", PASSWORD)
    h.set_password("__token__", TOKEN)
    h.save()
    port = free_port()
    log = d / "server.log"
    with open(d / "stderr.log", "w") as err:
        proc = subprocess.Popen([VENV_BIN / "pypi-server", "run", "-p", str(port), "-i", "127.0.0.1", "-a", "update", "-P", htpasswd,
                                 "--disable-fallback", "-v", "--log-file", log, packages],
                                stdout=subprocess.DEVNULL, stderr=err)
    try:
        wait_listening(proc, port, "pypiserver")
        yield PypiServer(f"http://127.0.0.1:{port}", packages, log, htpasswd)
    finally:
        stop(proc)


@dataclass
class Devpi:
    url: str       # server root
    index: str     # upload URL of alice/dev
    log: Path


@pytest.fixture(scope="module")
def devpi(work) -> Devpi:
    server = VENV_BIN / "devpi-server"
    if not server.exists():
        pytest.skip("devpi-server is not in the venv (scripts/requirements-test.txt installs it)")
    import urllib.request

    d = work / "devpi"
    r = run([VENV_BIN / "devpi-init", "--serverdir", d, "--root-passwd", "root-" + PASSWORD], env=clean_env())
    assert r.returncode == 0, r.stdout + r.stderr
    port = free_port()
    log = d / "server.log"
    with open(log, "w") as out:
        proc = subprocess.Popen([server, "--serverdir", d, "--host", "127.0.0.1", "--port", str(port), "--offline-mode"],
                                stdout=out, stderr=subprocess.STDOUT, env=clean_env())
    try:
        wait_listening(proc, port, "devpi-server", deadline_s=60)
        url = f"http://127.0.0.1:{port}"

        def call(method, path, payload, headers=None):
            req = urllib.request.Request(url + path, data=json.dumps(payload).encode(), method=method,
                                         headers={"Content-Type": "application/json", "Accept": "application/json", **(headers or {})})
            with urllib.request.urlopen(req, timeout=30) as resp:
                return json.loads(resp.read())

        call("PUT", "/alice", {"password": PASSWORD, "email": "alice@example.org"})
        token = call("POST", "/+login", {"user": "alice", "password": PASSWORD})["result"]["password"]
        auth = base64.b64encode(f"alice:{token}".encode()).decode()
        call("PUT", "/alice/dev", {"type": "stage", "bases": "", "volatile": False}, {"X-Devpi-Auth": auth})
        yield Devpi(url, f"{url}/alice/dev/", log)
    finally:
        stop(proc)


@dataclass
class StaticServer:
    url: str
    log: Path

    def requests(self) -> list[str]:
        return re.findall(r'"GET ([^ ]+) HTTP', self.log.read_text())


@pytest.fixture(scope="module")
def serve(work):
    """Starts `python -m http.server` on a free loopback port for a directory."""
    procs = []

    def start(directory: Path) -> StaticServer:
        log = work / f"http-{len(procs)}.log"
        err = open(log, "w")
        proc = subprocess.Popen([PY, "-u", "-m", "http.server", "0", "--bind", "127.0.0.1", "--directory", directory],
                                stdout=subprocess.PIPE, stderr=err, text=True)
        procs.append(proc)
        # "Serving HTTP on 127.0.0.1 port N (...)" is printed once the socket listens.
        line = proc.stdout.readline()
        m = re.search(r"port (\d+)", line)
        assert m, f"http.server said {line!r}"
        return StaticServer(f"http://127.0.0.1:{m.group(1)}", log)

    yield start
    for p in procs:
        stop(p)


@dataclass
class Recorded:
    path: str
    headers: dict
    fields: list  # (name, value str) of text parts
    files: list   # (name, filename, content type, bytes)


@dataclass
class UploadRecorder:
    """A legacy-upload endpoint that records every POST and answers from a script.
    An answer is (status, reason, body), or a fault: ("drop",) closes the
    connection after a random part of the body; ("lost",) reads the whole
    upload, records it, and closes without an answer (the index stored it,
    the client never heard); ("stall",) reads the whole upload and then sends
    nothing until the test ends. GET /simple/<project>/ is a PEP 503 page of
    the files it recorded, each with the sha256 of the bytes it received."""
    answers: list  # the last one repeats
    requests: list = field(default_factory=list)
    dropped_at: list = field(default_factory=list)  # (offset, length) of each ("drop",)
    url: str = ""
    released: threading.Event = field(default_factory=threading.Event)

    def answer(self):
        return self.answers.pop(0) if len(self.answers) > 1 else self.answers[0]

    @property
    def simple(self) -> str:
        return self.url.replace("/legacy/", "/simple/")


@pytest.fixture
def recorder():
    servers = []

    def start(*answers, tls: dict | None = None) -> UploadRecorder:
        """tls: the `pki` fixture; the endpoint is then HTTPS with the server certificate it holds."""
        rec = UploadRecorder(list(answers) or [(200, "OK", "")])

        class Handler(http.server.BaseHTTPRequestHandler):
            def hang_up(self):
                """Closes the connection with no answer, as a crashed or cut-off index does."""
                self.close_connection = True
                self.connection.shutdown(socket.SHUT_RDWR)

            def do_POST(self):  # noqa: N802
                length = int(self.headers.get("Content-Length", "0"))
                answer = rec.answer()
                if answer == ("drop",):
                    offset = random.randrange(1, length)
                    rec.dropped_at.append((offset, length))
                    self.rfile.read(offset)
                    return self.hang_up()
                body = self.rfile.read(length)
                msg = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(
                    b"Content-Type: " + self.headers["Content-Type"].encode() + b"\r\n\r\n" + body)
                fields, files = [], []
                for part in msg.iter_parts():
                    name = part.get_param("name", header="content-disposition")
                    if part.get_filename():
                        files.append((name, part.get_filename(), part.get_content_type(), part.get_payload(decode=True)))
                    else:
                        fields.append((name, part.get_payload(decode=True).decode()))
                rec.requests.append(Recorded(self.path, dict(self.headers), fields, files))
                if answer in (("lost",), ("stall",)):
                    if answer == ("stall",):
                        rec.released.wait(timeout=120)
                    return self.hang_up()
                status, reason, text = answer
                data = text.encode()
                self.send_response(status, reason)
                if status in (301, 302, 307, 308):
                    self.send_header("Location", text)
                    data = b""
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self):  # noqa: N802
                m = re.fullmatch(r"/simple/([^/]+)/", self.path)
                files = [f for r in rec.requests for f in r.files
                         if m and re.sub(r"[-_.]+", "-", f[1].split("-")[0]).lower() == m.group(1)]
                if not files:
                    self.send_error(404)
                    return
                data = "".join(f'<a href="/files/{f[1]}#sha256={hashlib.sha256(f[3]).hexdigest()}">{f[1]}</a>\n'
                               for f in files).encode()
                self.send_response(200)
                self.send_header("Content-Type", "text/html")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args):
                pass

        srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        if tls:
            ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            ctx.load_cert_chain(tls["cert"], tls["key"])
            srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
        threading.Thread(target=srv.serve_forever, daemon=True).start()
        srv.recorder = rec
        servers.append(srv)
        rec.url = f"{'https' if tls else 'http'}://127.0.0.1:{srv.server_address[1]}/legacy/"
        return rec

    yield start
    for s in servers:
        s.recorder.released.set()
        s.shutdown()
        s.server_close()


# --------------------------------------------------------------------------- wheels


@pytest.fixture(scope="module")
def work(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("publish")


def _torch_ok() -> bool:
    if not os.access(TORCH_PYTHON, os.X_OK) or shutil.which("cmake") is None:
        return False
    return run([TORCH_PYTHON, "-c", "import torch"]).returncode == 0


@pytest.fixture(scope="module")
def cpu_wheel(work) -> Path:
    """The real img2gray CPU build for Debian's torch, as `kwheel build` packs it."""
    if not _torch_ok():
        pytest.skip(f"needs cmake and torch importable by {TORCH_PYTHON} (Debian python3-torch)")
    p = run([BUILD_SCRIPT, "--python", TORCH_PYTHON, "--out", work / "kernel", "--cpu"], timeout=900)
    assert p.returncode == 0, p.stdout + p.stderr
    [wheel] = kwheel_build(work / "kernel", work / "dist-cpu")
    assert "+torch1.13.cpu-" in wheel.name, wheel.name
    return wheel


SYNTHETIC = ["torch27-cxx11-cu126-x86_64-linux", "torch29-cxx11-cu130-x86_64-linux",
             "torch210-cxx11-cu130-x86_64-linux", "torch-universal"]


@pytest.fixture(scope="module")
def syn_wheels(work) -> dict[str, Path]:
    """Synthetic variants (tiny real ELF .so), keyed by local label ('' = universal)."""
    src = work / "synthetic"
    for v in SYNTHETIC:
        write_variant(src, v)
    wheels = kwheel_build(src, work / "dist-syn")
    out = {}
    for w in wheels:
        m = re.match(r"img2gray-0\.1\.0(?:\+([^-]+))?-", w.name)
        out[m.group(1) or ""] = w
    assert set(out) == {"torch2.7.cu126", "torch2.9.cu130", "torch2.10.cu130", ""}, out
    return out


@pytest.fixture(scope="module")
def all_wheels(work, cpu_wheel, syn_wheels) -> Path:
    d = work / "dist-all"
    d.mkdir()
    for w in [cpu_wheel, *syn_wheels.values()]:
        shutil.copy2(w, d / w.name)
    return d


@pytest.fixture(scope="module")
def site(work, cpu_wheel, syn_wheels) -> Path:
    """A site built in two runs: the CPU wheel first, then the synthetic ones."""
    s = work / "site"
    p = kwheel("index", cpu_wheel, "--out", s, "-q")
    assert p.returncode == 0, p.stderr
    p, report = kwheel_json("index", *syn_wheels.values(), "--out", s)
    assert p.returncode == 0, p.stderr
    assert report["kept"] == [cpu_wheel.name]
    return s


# =========================================================================== publish: the form


def handcrafted_wheel(d: Path, metadata_version: str) -> Path:
    """A wheel whose METADATA exercises twine's field rewriting: safe_name,
    Keywords re-joined, Project-URL "label, url", repeated fields, License-File
    (dropped below Metadata-Version 2.4), a multi-line body."""
    d.mkdir(parents=True, exist_ok=True)
    name, version = "my_odd.kernel", "1.2.0+torch2.7.cu126"
    dist = f"my_odd.kernel-{version}.dist-info"
    metadata = (f"Metadata-Version: {metadata_version}\nName: {name}\nVersion: {version}\nSummary: An odd kernel\n"
                "Keywords: gpu,kernel , torch\nAuthor-email: A <a@example.org>\n"
                + ("License-Expression: MIT\n" if metadata_version == "2.4" else "License: MIT\n") + "License-File: LICENSE\n"
                "Classifier: Programming Language :: Python :: 3\nClassifier: License :: OSI Approved :: MIT License\n"
                "Project-URL: Source,https://example.org/src\nProject-URL: Docs ,  https://example.org/docs\n"
                "Requires-Python: >=3.9\nRequires-Dist: torch==2.7.*\nRequires-Dist: numpy; extra == \"test\"\nProvides-Extra: test\n"
                "Description-Content-Type: text/markdown\n\n# My odd kernel\n\nSecond paragraph.\n")
    files = {"my_odd_kernel/__init__.py": b"X = 1\n", f"{dist}/METADATA": metadata.encode(),
             f"{dist}/WHEEL": b"Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
             f"{dist}/licenses/LICENSE": b"MIT\n"}
    record = "".join(f"{n},sha256={base64.urlsafe_b64encode(hashlib.sha256(b).digest()).rstrip(b'=').decode()},{len(b)}\n"
                     for n, b in files.items()) + f"{dist}/RECORD,,\n"
    path = d / f"my_odd.kernel-{version}-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as z:
        for n, b in files.items():
            z.writestr(n, b)
        z.writestr(f"{dist}/RECORD", record)
    return path


@pytest.mark.parametrize("which", ["kernel", "metadata-2.4", "metadata-2.1"])
def test_upload_form_is_the_one_twine_sends(recorder, cpu_wheel, work, which):
    wheel = cpu_wheel if which == "kernel" else handcrafted_wheel(work / f"hand-{which}", which.split("-")[1])
    rec = recorder()
    env = clean_env()
    t = run([PY, "-m", "twine", "upload", "--repository-url", rec.url, "-u", "alice", "-p", PASSWORD,
             "--disable-progress-bar", "--non-interactive", wheel], env=env)
    assert t.returncode == 0, t.stdout + t.stderr
    p = kwheel("publish", wheel, "--repository-url", rec.url, "-u", "alice", env=clean_env(TWINE_PASSWORD=PASSWORD))
    assert p.returncode == 0, p.stdout + p.stderr
    twine_req, ours = rec.requests
    # blake2_256_digest: twine adds it where hashlib has BLAKE2b-256; OpenSSL 3.0 cannot size BLAKE2b, and
    # sha256_digest is what indexes verify.
    twine_fields = sorted(f for f in twine_req.fields if f[0] != "blake2_256_digest")
    assert sorted(ours.fields) == twine_fields
    if which != "kernel":
        assert ("name", "my-odd.kernel") in ours.fields and ("keywords", "gpu, kernel, torch") in ours.fields
        assert ("project_urls", "Docs, https://example.org/docs") in ours.fields
        assert (("license_file", "LICENSE") in ours.fields) == (which == "metadata-2.4")
        assert dict(ours.fields)["description"] == "# My odd kernel\n\nSecond paragraph.\n"
        return
    names = [n for n, _ in ours.fields]
    for required in (":action", "protocol_version", "name", "version", "metadata_version", "filetype", "pyversion",
                     "sha256_digest", "requires_python", "requires_dist", "summary", "description"):
        assert required in names, required
    assert dict(ours.fields)[":action"] == "file_upload" and dict(ours.fields)["protocol_version"] == "1"
    assert dict(ours.fields)["sha256_digest"] == sha256(wheel)
    assert dict(ours.fields)["pyversion"] == "cp39" and dict(ours.fields)["filetype"] == "bdist_wheel"
    # The file part: same name, type and bytes.
    assert ours.files == twine_req.files
    assert ours.files[0][:3] == ("content", wheel.name, "application/octet-stream")
    assert ours.files[0][3] == wheel.read_bytes()
    # Same Basic credentials, sent to the repository URL's path.
    assert ours.headers["Authorization"] == twine_req.headers["Authorization"] == \
        "Basic " + base64.b64encode(f"alice:{PASSWORD}".encode()).decode()
    assert ours.path == "/legacy/"
    assert ours.headers["User-Agent"].startswith("kwheel/")


def test_5xx_is_retried_with_backoff_4xx_is_not(recorder, cpu_wheel):
    env = clean_env(TWINE_PASSWORD=PASSWORD)
    rec = recorder((503, "Service Unavailable", "busy"), (502, "Bad Gateway", ""), (200, "OK", ""))
    start = time.monotonic()
    p, report = kwheel_json("publish", cpu_wheel, "--repository-url", rec.url, "-u", "alice", env=env)
    elapsed = time.monotonic() - start
    assert p.returncode == 0, p.stderr
    assert len(rec.requests) == 3
    assert report["files"][0]["attempts"] == 3 and report["files"][0]["status"] == "uploaded"
    assert elapsed >= 0.5 + 1.0 - 0.1, elapsed  # backoff 0.5 s, then 1 s

    rec = recorder((400, "Bad Request", "Invalid value for classifiers"))
    p, report = kwheel_json("publish", cpu_wheel, "--repository-url", rec.url, "-u", "alice", env=env)
    assert p.returncode == INPUT, p.stderr
    assert len(rec.requests) == 1
    assert "Invalid value for classifiers" in report["files"][0]["message"]

    rec = recorder((503, "Service Unavailable", ""))
    p, report = kwheel_json("publish", cpu_wheel, "--repository-url", rec.url, "-u", "alice", "--attempts", "2", env=env)
    assert p.returncode == NETWORK and len(rec.requests) == 2
    assert "after 2 attempts" in report["files"][0]["message"]


def test_upload_dropped_mid_body_is_retried(recorder, cpu_wheel):
    """The index closes the connection at a random offset of the upload, twice: kwheel sends it
    again whole, and the index receives the exact wheel."""
    rec = recorder(("drop",), ("drop",), (200, "OK", ""))
    p, report = kwheel_json("publish", cpu_wheel, "--repository-url", rec.url, "-u", "alice",
                            env=clean_env(TWINE_PASSWORD=PASSWORD))
    assert p.returncode == 0, (p.stderr, rec.dropped_at)
    assert len(rec.dropped_at) == 2 and all(0 < o < n for o, n in rec.dropped_at), rec.dropped_at
    assert report["files"][0]["status"] == "uploaded" and report["files"][0]["attempts"] == 3
    assert len(rec.requests) == 1 and rec.requests[0].files[0][3] == cpu_wheel.read_bytes()


def test_upload_whose_answer_is_lost_then_409_says_so(recorder, cpu_wheel):
    """The index stores the upload but the connection drops before its answer; the retry gets
    409. Without --skip-existing that is an error that says an earlier attempt may have stored
    it; with it, the file counts as on the index."""
    env = clean_env(TWINE_PASSWORD=PASSWORD)
    rec = recorder(("lost",), (409, "Conflict", "File already exists"))
    p, report = kwheel_json("publish", cpu_wheel, "--repository-url", rec.url, "-u", "alice", env=env)
    assert p.returncode == INPUT, p.stderr
    assert len(rec.requests) == 2
    message = report["files"][0]["message"]
    assert "interrupted attempt" in message and "--skip-existing" in message, message

    # With it, the index's page gives the file the sha256 of the bytes it received: ours.
    rec = recorder(("lost",), (409, "Conflict", "File already exists"))
    p, report = kwheel_json("publish", cpu_wheel, "--repository-url", rec.url, "-u", "alice", "--skip-existing",
                            "--index-url", rec.simple, env=env)
    assert p.returncode == 0, p.stderr
    assert report["files"][0]["status"] == "exists" and report["files"][0]["attempts"] == 2
    assert "same bytes (sha256 compared on" in report["files"][0]["message"], report


@pytest.mark.parametrize("given", ["flag", "env"])
def test_stalled_upload_times_out_and_is_retried(recorder, cpu_wheel, given):
    """The index reads the upload and never answers: after the stall timeout kwheel drops the
    connection and retries (default 60 s; 2 s here, from --stall-timeout or KWHEEL_STALL_TIMEOUT)."""
    rec = recorder(("stall",), (200, "OK", ""))
    flag = ["--stall-timeout", "2"] if given == "flag" else []
    env = clean_env(TWINE_PASSWORD=PASSWORD, **({"KWHEEL_STALL_TIMEOUT": "2"} if given == "env" else {}))
    # The stalled answer never comes: only the 2 s timeout ends that attempt. A run still going
    # at 45 s (under the 60 s default) means the option was not applied, and fails the test.
    p = run([KWHEEL, "publish", cpu_wheel, "--repository-url", rec.url, "-u", "alice", *flag, "--json"], env=env, timeout=45)
    assert p.returncode == 0, p.stderr
    report = json.loads(p.stdout)
    assert report["files"][0]["status"] == "uploaded" and report["files"][0]["attempts"] == 2
    assert len(rec.requests) == 2


def test_tls_index_is_refused_by_default_and_trusted_with_its_ca(recorder, cpu_wheel, pki):
    """An index whose certificate a private CA signed: refused during the handshake (nothing
    uploaded, the password never sent), with a message naming --cert; trusted with --cert or
    TWINE_CERT; a CA that did not sign it is named in the error."""
    rec = recorder(tls=pki)
    p, report = kwheel_json("publish", cpu_wheel, "--repository-url", rec.url, "-u", "alice", env=clean_env(TWINE_PASSWORD=PASSWORD))
    assert p.returncode == NETWORK, p.stderr
    message = report["files"][0]["message"]
    assert "certificate" in message and "--cert" in message and "\n" not in message, message
    assert rec.requests == [] and report["files"][0]["attempts"] == 1
    assert PASSWORD not in p.stdout + p.stderr

    p, report = kwheel_json("publish", cpu_wheel, "--repository-url", rec.url, "-u", "alice", "--cert", pki["other_ca"],
                            env=clean_env(TWINE_PASSWORD=PASSWORD))
    assert p.returncode == NETWORK and str(pki["other_ca"]) in report["files"][0]["message"], p.stdout
    assert rec.requests == []

    for how in ("flag", "env"):
        rec = recorder(tls=pki)
        flag = ["--cert", pki["ca"]] if how == "flag" else []
        env = clean_env(TWINE_PASSWORD=PASSWORD, **({"TWINE_CERT": pki["ca"]} if how == "env" else {}))
        p, report = kwheel_json("publish", cpu_wheel, "--repository-url", rec.url, "-u", "alice", *flag, env=env)
        assert p.returncode == 0, (how, p.stderr)
        assert report["files"][0]["status"] == "uploaded"
        assert len(rec.requests) == 1 and rec.requests[0].files[0][3] == cpu_wheel.read_bytes()


def test_publish_stall_timeout_must_be_whole_seconds(cpu_wheel):
    for bad in ("0", "1.5", "x"):
        p = kwheel("publish", cpu_wheel, "--repository-url", "http://127.0.0.1:9/", "--stall-timeout", bad)
        assert p.returncode == USAGE and p.stdout == "", p
        lines = p.stderr.strip().splitlines()
        assert len(lines) == 1 and "--stall-timeout" in lines[0] and f"'{bad}'" in lines[0], p.stderr


def test_redirects_are_not_followed_and_credentials_stay_home(recorder, cpu_wheel):
    other = recorder()
    rec = recorder((307, "Temporary Redirect", other.url.replace("127.0.0.1", "localhost")))
    p, report = kwheel_json("publish", cpu_wheel, "--repository-url", rec.url, "-u", "alice", env=clean_env(TWINE_PASSWORD=PASSWORD))
    assert p.returncode == USAGE, p.stderr
    assert len(rec.requests) == 1 and other.requests == []
    assert report["ok"] is False and report["exit_code"] == USAGE, report
    assert "not redirected" in report["error"] and "--repository-url" in report["error"]


def test_server_echo_of_the_password_is_redacted(recorder, cpu_wheel):
    rec = recorder((401, "Unauthorized", f"<html><body><pre>bad password '{PASSWORD}' for alice</pre></body></html>"))
    p = kwheel("publish", cpu_wheel, "--repository-url", rec.url, "-u", "alice", env=clean_env(TWINE_PASSWORD=PASSWORD))
    assert p.returncode == AUTH
    assert PASSWORD not in p.stdout + p.stderr
    assert "bad password '***' for alice" in p.stderr
    p = kwheel("publish", cpu_wheel, "--repository-url", rec.url, "-u", "alice", "--json", env=clean_env(TWINE_PASSWORD=PASSWORD))
    assert PASSWORD not in p.stdout + p.stderr


def test_credentials_from_pypirc_url_and_environment(recorder, cpu_wheel, work):
    rec = recorder()
    rc = work / "pypirc"
    rc.write_text("[distutils]\nindex-servers =\n    pypi\n    private\n\n"
                  f"[private]\nrepository: {rec.url}\nusername = __token__\npassword = {TOKEN}\n")
    expect = lambda u, pw: "Basic " + base64.b64encode(f"{u}:{pw}".encode()).decode()  # noqa: E731
    p = kwheel("publish", cpu_wheel, "-r", "private", "--config-file", rc)
    assert p.returncode == 0, p.stdout + p.stderr
    assert rec.requests[-1].headers["Authorization"] == expect("__token__", TOKEN)
    # TWINE_PASSWORD outranks the file, as in twine.
    p = kwheel("publish", cpu_wheel, "-r", "private", "--config-file", rc, env=clean_env(TWINE_PASSWORD="from-env"))
    assert p.returncode == 0 and rec.requests[-1].headers["Authorization"] == expect("__token__", "from-env")
    # ~/.pypirc by default, TWINE_REPOSITORY naming the section.
    home = work / "home"
    home.mkdir()
    shutil.copy(rc, home / ".pypirc")
    p = kwheel("publish", cpu_wheel, env=clean_env(HOME=home, TWINE_REPOSITORY="private"))
    assert p.returncode == 0, p.stderr
    # user:password@ in --repository-url, never echoed.
    p = kwheel("publish", cpu_wheel, "--repository-url", rec.url.replace("://", f"://bob:{PASSWORD}@"))
    assert p.returncode == 0, p.stderr
    assert rec.requests[-1].headers["Authorization"] == expect("bob", PASSWORD)
    assert PASSWORD not in p.stdout + p.stderr
    # A section twine would not read (not in index-servers) is named in the error; values never are.
    rc.write_text(f"[other]\nrepository = {rec.url}\npassword = {TOKEN}\n")
    p = kwheel("publish", cpu_wheel, "-r", "other", "--config-file", rc)
    assert p.returncode == INPUT and "index-servers" in p.stderr and TOKEN not in p.stderr
    rc.write_text(f"[distutils]\nindex-servers = private\n[private]\nrepository = {rec.url}\nusername = carol\n")
    p = kwheel("publish", cpu_wheel, "-r", "private", "--config-file", rc)
    assert p.returncode == AUTH and "no password for user 'carol'" in p.stderr
    p = kwheel("publish", cpu_wheel)
    assert p.returncode == USAGE and "--repository-url" in p.stderr


# =========================================================================== publish: pypiserver


def test_publish_to_pypiserver_then_pip_and_uv_install_the_exact_wheel(pypiserver, all_wheels, cpu_wheel, work):
    wheels = sorted(all_wheels.glob("*.whl"))
    p, report = kwheel_json("publish", all_wheels, "--repository-url", pypiserver.url, "-u", "alice", "-j", "3",
                            env=clean_env(TWINE_PASSWORD=PASSWORD))
    assert p.returncode == 0, p.stdout + p.stderr
    assert report["uploaded"] == len(wheels) and report["failed"] == 0
    assert sorted(f.name for f in pypiserver.packages.iterdir()) == [w.name for w in wheels]
    for w in wheels:
        assert sha256(pypiserver.packages / w.name) == sha256(w)
    assert sorted(pypiserver.stored()) == [w.name for w in wheels]
    assert PASSWORD not in p.stdout + p.stderr + pypiserver.log.read_text()

    version = re.match(r"img2gray-([^-]+)-", cpu_wheel.name).group(1)
    target = work / "pip-target"
    r = run([PY, "-m", "pip", "install", "--no-deps", "--no-cache-dir", "--target", target, "--report", work / "pip-report.json",
             "--index-url", f"{pypiserver.url}/simple/", f"img2gray=={version}"], env=clean_env())
    assert r.returncode == 0, r.stdout + r.stderr
    [item] = json.loads((work / "pip-report.json").read_text())["install"]
    assert item["download_info"]["archive_info"]["hashes"]["sha256"] == sha256(cpu_wheel)
    assert picked_filename(item) == cpu_wheel.name
    assert (target / f"img2gray-{version}.dist-info").is_dir()

    # uv, fed the lines `kwheel pin` writes for this server (HTML from a real server).
    req = work / "uv-requirements.txt"
    p, pinned = kwheel_json("pin", f"{pypiserver.url}/simple", "--python", TORCH_PYTHON, "-o", req)
    assert p.returncode == 0, p.stderr
    assert pinned["page_format"] == "html" and pinned["output"] == str(req)
    text = req.read_text()
    assert f"img2gray=={version} --hash=sha256:{sha256(cpu_wheel)}" in text
    assert f"--index-url {pypiserver.url}/simple/" in text
    r = run([UV, "pip", "install", "--no-deps", "--require-hashes", "--target", work / "uv-target", "--python", PY,
             "--cache-dir", work / "uv-cache", "-r", req], env=clean_env())
    assert r.returncode == 0, r.stdout + r.stderr
    record = (work / "uv-target" / f"img2gray-{version}.dist-info" / "RECORD").read_text()
    with zipfile.ZipFile(cpu_wheel) as z:
        so = [n for n in z.namelist() if n.endswith(".so")][0]
        so_hash = base64.urlsafe_b64encode(hashlib.sha256(z.read(so)).digest()).rstrip(b"=").decode()
    assert f"{so},sha256={so_hash}," in record


def test_republish_fails_clearly_and_skip_existing_uploads_nothing(pypiserver, all_wheels, cpu_wheel):
    # Runs after the upload above (file order); make sure the file is there either way.
    env = clean_env(TWINE_PASSWORD=PASSWORD)
    kwheel("publish", cpu_wheel, "--repository-url", pypiserver.url, "-u", "alice", "--skip-existing", env=env)
    stored_before = pypiserver.stored()
    mtimes = {f.name: f.stat().st_mtime_ns for f in pypiserver.packages.iterdir()}

    p = kwheel("publish", cpu_wheel, "--repository-url", pypiserver.url, "-u", "alice", env=env)
    assert p.returncode == INPUT, p.stdout + p.stderr
    assert re.search(r"^FAILED +" + re.escape(cpu_wheel.name), p.stdout, re.M)
    assert "already on" in p.stdout and "HTTP 409" in p.stdout and "--skip-existing" in p.stdout

    p, report = kwheel_json("publish", all_wheels, "--repository-url", pypiserver.url, "-u", "alice", "--skip-existing", env=env)
    assert p.returncode == 0, p.stderr
    assert report["uploaded"] == 0 and report["existing"] == len(list(all_wheels.glob("*.whl")))
    assert {f["status"] for f in report["files"]} == {"exists"}
    page = f"{pypiserver.url}/simple/img2gray/"
    assert all(f"same bytes (sha256 compared on {page})" in f["message"] for f in report["files"]), report
    assert pypiserver.stored() == stored_before
    assert {f.name: f.stat().st_mtime_ns for f in pypiserver.packages.iterdir()} == mtimes


def test_skip_existing_on_pypiserver_compares_the_bytes(pypiserver, syn_wheels, work):
    """pypiserver's 409 names a file, not its bytes: --skip-existing reads its /simple/ page and
    counts the file as published only when the sha256 there is this file's. Other bytes under the
    name fail, naming both hashes; an index that does not say fails closed."""
    env = clean_env(TWINE_PASSWORD=PASSWORD)
    wheel = syn_wheels[""]
    publish = lambda *args: kwheel_json("publish", *args, "--repository-url", pypiserver.url, "-u", "alice",  # noqa: E731
                                        "--skip-existing", env=env)
    p, report = publish(wheel)
    assert p.returncode == 0, p.stdout + p.stderr
    stored = pypiserver.packages / wheel.name
    assert sha256(stored) == sha256(wheel)
    p, report = publish(wheel)
    assert p.returncode == 0 and report["files"][0]["status"] == "exists", report
    assert f"same bytes (sha256 compared on {pypiserver.url}/simple/img2gray/)" in report["files"][0]["message"], report

    src = work / "skip-impostor-src"
    write_variant(src, "torch-universal")
    (src / "build" / "torch-universal" / "img2gray" / "__init__.py").write_text("KIND = 'impostor'\n")
    [other] = kwheel_build(src, work / "skip-impostor-dist")
    assert other.name == wheel.name and sha256(other) != sha256(wheel)
    p = kwheel("publish", other, "--repository-url", pypiserver.url, "-u", "alice", "--skip-existing", env=env)
    assert p.returncode == INPUT, p.stdout + p.stderr
    assert re.search(r"^FAILED +" + re.escape(wheel.name), p.stdout, re.M), p.stdout
    [line] = [l for l in p.stdout.splitlines() if "other bytes" in l]
    assert f"this file's sha256 is {sha256(other)}, the index's is {sha256(wheel)}" in line, line
    assert "publish a new version" in line, line
    p, report = publish(other)
    assert p.returncode == INPUT and report["files"][0]["status"] == "failed" and report["failed"] == 1, report
    assert sha256(other) in report["files"][0]["message"] and sha256(wheel) in report["files"][0]["message"]
    assert sha256(stored) == sha256(wheel)  # the index kept its file
    assert PASSWORD not in p.stdout + p.stderr

    # No simple page where --index-url says: kwheel cannot compare, and fails rather than skip.
    p, report = publish(wheel, "--index-url", f"{pypiserver.url}/elsewhere/")
    assert p.returncode == NOT_FOUND and report["files"][0]["status"] == "failed", report
    message = report["files"][0]["message"]
    assert f"cannot compare the bytes: no project page at {pypiserver.url}/elsewhere/img2gray/ (HTTP 404)" in message, message
    assert "pass --index-url URL" in message and "\n" not in message, message


def test_wrong_password_and_token_auth_on_pypiserver(pypiserver, syn_wheels, work):
    wheel = syn_wheels[""]
    wrong = "wrong-" + PASSWORD[::-1]
    for how, env in ((["--password", wrong], clean_env()), ([], clean_env(TWINE_PASSWORD=wrong))):
        p = kwheel("publish", wheel, "--repository-url", pypiserver.url, "-u", "alice", *how, env=env)
        assert p.returncode == AUTH, p.stdout + p.stderr
        assert "refused the credentials of user 'alice'" in p.stderr
        assert wrong not in p.stdout + p.stderr and PASSWORD not in p.stdout + p.stderr
        assert ("--password on the command line is visible" in p.stderr) == bool(how)
    # An API token: username __token__, the token as password (from .pypirc).
    rc = work / "pypirc-token"
    rc.write_text(f"[distutils]\nindex-servers = local\n[local]\nrepository = {pypiserver.url}\nusername = __token__\npassword = {TOKEN}\n")
    p = kwheel("publish", wheel, "-r", "local", "--config-file", rc, "--skip-existing")
    assert p.returncode == 0, p.stdout + p.stderr
    assert TOKEN not in p.stdout + p.stderr


def test_wrong_password_on_pypiserver_is_one_error_for_all_wheels(pypiserver, syn_wheels, work):
    """Issue #33: a wrong password was one "HTTP 403 Forbidden: None" per wheel. It is one error
    line, without pypiserver's "None", and no wheel is sent after the first is refused."""
    dist = work / "dist-syn"
    wheels = sorted(dist.glob("*.whl"))
    assert len(wheels) == 4
    before = sorted(f.name for f in pypiserver.packages.iterdir())
    p = kwheel("publish", dist, "--repository-url", pypiserver.url, "-u", "alice", "-j", "4",
               env=clean_env(TWINE_PASSWORD="wrong-" + PASSWORD))
    assert p.returncode == AUTH, p.stdout + p.stderr
    assert p.stdout == "", p.stdout  # no per-file rows
    errors = [ln for ln in p.stderr.splitlines() if ln.startswith("kwheel: error: ")]
    assert len(errors) == 1, p.stderr
    (line,) = errors
    assert f"{pypiserver.url}/ refused the credentials of user 'alice' (HTTP 403 Forbidden); check the password" in line, line
    assert "none of the 4 files was uploaded" in line and "None" not in line.replace("none of", ""), line
    assert sorted(f.name for f in pypiserver.packages.iterdir()) == before
    p, report = kwheel_json("publish", dist, "--repository-url", pypiserver.url, "-u", "alice",
                            env=clean_env(TWINE_PASSWORD="wrong-" + PASSWORD))
    assert p.returncode == AUTH and report == {"ok": False, "error": line.removeprefix("kwheel: error: "), "exit_code": AUTH}, report


def test_refused_credentials_stop_the_run_after_one_upload(recorder, syn_wheels, work):
    rec = recorder((403, "Forbidden", ""), (200, "OK", ""))
    p = kwheel("publish", work / "dist-syn", "--repository-url", rec.url, "-u", "alice", "-j", "4",
               env=clean_env(TWINE_PASSWORD=PASSWORD))
    assert p.returncode == AUTH, p.stdout + p.stderr
    assert len(rec.requests) == 1, [r.files[0][1] for r in rec.requests]


def test_repository_without_a_pypirc_says_the_file_is_missing(recorder, syn_wheels, work):
    home = work / "home-without-pypirc"
    home.mkdir()
    p = kwheel("publish", syn_wheels[""], "-r", "private", env=clean_env(HOME=home, TWINE_PASSWORD=PASSWORD))
    assert p.returncode == INPUT, p.stdout + p.stderr
    (line,) = p.stderr.splitlines()
    assert f"there is no '{home}/.pypirc'" in line and "[private]" in line and "--repository-url" in line, line
    assert "known:" not in line and "testpypi" not in line, line


@pytest.mark.parametrize("status,reason,code", [(501, "Not Implemented", NOT_FOUND), (505, "HTTP Version Not Supported", INPUT)])
def test_a_5xx_that_cannot_succeed_is_sent_once(recorder, syn_wheels, status, reason, code):
    """503 is retried (test above); 501 and 505 say the request can never succeed there: one
    request, not --attempts of them."""
    rec = recorder((status, reason, ""))
    p = kwheel("publish", syn_wheels[""], "--repository-url", rec.url, "-u", "alice", "--attempts", "5",
               env=clean_env(TWINE_PASSWORD=PASSWORD))
    assert p.returncode == code, p.stdout + p.stderr
    assert len(rec.requests) == 1
    assert f"HTTP {status} {reason}" in p.stdout + p.stderr, p.stdout + p.stderr


def test_publish_to_devpi_then_pip_installs_the_exact_wheel(devpi, all_wheels, cpu_wheel, syn_wheels, work):
    env = clean_env(TWINE_PASSWORD=PASSWORD)
    p, report = kwheel_json("publish", all_wheels, "--repository-url", devpi.index, "-u", "alice", "-j", "3", env=env)
    assert p.returncode == 0, p.stdout + p.stderr
    assert report["uploaded"] == len(list(all_wheels.glob("*.whl")))
    version = re.match(r"img2gray-([^-]+)-", cpu_wheel.name).group(1)
    item = pip_pick(f"{devpi.index}+simple/", f"img2gray=={version}")
    assert picked_filename(item) == cpu_wheel.name
    assert item["download_info"]["archive_info"]["hashes"]["sha256"] == sha256(cpu_wheel)
    r = run([PY, "-m", "pip", "download", "--no-deps", "--no-cache-dir", "-d", work / "from-devpi", "--index-url",
             f"{devpi.index}+simple/", f"img2gray=={version}"], env=clean_env())
    assert r.returncode == 0, r.stderr
    assert sha256(work / "from-devpi" / cpu_wheel.name) == sha256(cpu_wheel)

    # kwheel pin reads devpi's PEP 691 JSON (content negotiation over HTTP).
    p, pinned = kwheel_json("pin", f"{devpi.index}+simple/", "--python", TORCH_PYTHON)
    assert p.returncode == 0, p.stderr
    assert pinned["page_format"] == "json"
    assert pinned["requirement"] == f"img2gray=={version} --hash=sha256:{sha256(cpu_wheel)}"

    # devpi takes identical bytes again without storing anything ("200 Upload of identical file"): exists.
    p, report = kwheel_json("publish", cpu_wheel, "--repository-url", devpi.index, "-u", "alice", env=env)
    assert p.returncode == 0 and report["files"][0]["status"] == "exists", report
    assert "identical" in report["files"][0]["message"]
    # Other bytes under a published name: 409, a clear failure unless --skip-existing.
    src = work / "devpi-impostor"
    write_variant(src, "torch-universal")
    (src / "build" / "torch-universal" / "img2gray" / "__init__.py").write_text("KIND = 'impostor'\n")
    [other] = kwheel_build(src, work / "devpi-impostor-dist")
    p = kwheel("publish", other, "--repository-url", devpi.index, "-u", "alice", env=env)
    assert p.returncode == INPUT and "HTTP 409" in p.stdout and "--skip-existing" in p.stdout, p.stdout
    # --skip-existing reads devpi's +simple page (JSON) and finds other bytes there: a failure naming both.
    p, report = kwheel_json("publish", other, "--repository-url", devpi.index, "-u", "alice", "--skip-existing", env=env)
    assert p.returncode == INPUT and report["files"][0]["status"] == "failed", report
    message = report["files"][0]["message"]
    assert f"this file's sha256 is {sha256(other)}, the index's is {sha256(syn_wheels[''])}" in message, message
    assert f"({devpi.index}+simple/img2gray/)" in message and "publish a new version" in message, message
    # Wrong password.
    p = kwheel("publish", cpu_wheel, "--repository-url", devpi.index, "-u", "alice", env=clean_env(TWINE_PASSWORD="nope-" + PASSWORD))
    assert p.returncode == AUTH and "refused the credentials of user 'alice'" in p.stderr and p.stdout == ""
    assert PASSWORD not in p.stdout + p.stderr + devpi.log.read_text()


# =========================================================================== the static site


def test_site_layout_metadata_files_and_variant_sub_indexes(site, cpu_wheel, syn_wheels):
    files = sorted(p.name for p in (site / "files").iterdir())
    wheels = sorted([cpu_wheel.name, *(w.name for w in syn_wheels.values())])
    assert files == sorted(wheels + [w + ".metadata" for w in wheels])
    for w in [cpu_wheel, *syn_wheels.values()]:
        assert (site / "files" / (w.name + ".metadata")).read_bytes() == wheel_metadata(w)
        assert sha256(site / "files" / w.name) == sha256(w)
    subs = sorted(p.parent.name for p in site.glob("*/simple"))
    assert subs == ["torch1.13-cpu", "torch2.10-cu130", "torch2.7-cu126", "torch2.9-cu130"]
    page = lambda sub: json.loads((site / sub / "simple" / "img2gray" / "index.json").read_text())  # noqa: E731
    names = lambda sub: sorted(f["filename"] for f in page(sub)["files"])  # noqa: E731
    universal = syn_wheels[""].name
    assert names("torch2.7-cu126") == sorted([syn_wheels["torch2.7.cu126"].name, universal])
    assert names("torch1.13-cpu") == sorted([cpu_wheel.name, universal])
    assert len(names(".")) == 5
    html = (site / "simple" / "img2gray" / "index.html").read_text()
    assert 'data-requires-python="&gt;=3.9"' in html
    md = hashlib.sha256(wheel_metadata(cpu_wheel)).hexdigest()
    assert f'data-core-metadata="sha256={md}" data-dist-info-metadata="sha256={md}"' in html
    assert f"#sha256={sha256(cpu_wheel)}" in html
    assert "%2B" in html  # '+' of the local label escaped (S3 and friends read a raw '+' as a space)
    assert "Links for img2gray" in html


def test_base_url_makes_absolute_links(work, syn_wheels):
    s = work / "site-base"
    p = kwheel("index", syn_wheels[""], "--out", s, "--base-url", "https://kernels.example.org/idx/")
    assert p.returncode == 0, p.stderr
    page = json.loads((s / "simple" / "img2gray" / "index.json").read_text())
    assert page["files"][0]["url"] == "https://kernels.example.org/idx/files/img2gray-0.1.0-py3-none-any.whl"
    assert kwheel("index", syn_wheels[""], "--out", work / "site-bad", "--base-url", "ftp://x/").returncode == USAGE


def test_json_pages_have_pep_691_shape(site):
    hexes = re.compile(r"^[0-9a-f]{64}$")
    for root in [site / "simple", *site.glob("*/simple")]:
        top = json.loads((root / "index.json").read_text())
        assert set(top) == {"meta", "projects"} and top["meta"] == {"api-version": "1.1"}
        assert top["projects"] == [{"name": "img2gray"}]
        page = json.loads((root / "img2gray" / "index.json").read_text())
        assert set(page) == {"meta", "name", "files", "versions"}
        assert page["name"] == "img2gray" and page["meta"]["api-version"] == "1.1"
        assert page["files"] and isinstance(page["versions"], list)
        for f in page["files"]:
            assert set(f) <= {"filename", "url", "hashes", "requires-python", "core-metadata", "dist-info-metadata", "size", "yanked"}
            assert isinstance(f["filename"], str) and isinstance(f["url"], str) and isinstance(f["size"], int)
            assert hexes.match(f["hashes"]["sha256"])
            assert f["core-metadata"] == f["dist-info-metadata"] and hexes.match(f["core-metadata"]["sha256"])
        from packaging.version import Version
        assert page["versions"] == sorted(set(page["versions"]), key=Version)
        assert {re.match(r"img2gray-([^-]+)-", f["filename"]).group(1) for f in page["files"]} == set(page["versions"])


def test_pypi_simple_parses_html_and_json_pages(site, serve):
    from pypi_simple import ACCEPT_JSON_ONLY, ProjectPage, PyPISimple

    srv = serve(site)
    with PyPISimple(f"{srv.url}/torch2.7-cu126/simple/") as client:
        page = client.get_project_page("img2gray")
        assert len(page.packages) == 2
        for pkg in page.packages:
            assert pkg.project == "img2gray" and pkg.package_type == "wheel"
            assert set(pkg.digests) == {"sha256"} and pkg.has_metadata and pkg.requires_python == ">=3.9"
            assert pkg.metadata_digests and "sha256" in pkg.metadata_digests
            md = client.get_package_metadata(pkg)  # the .metadata file, digest-checked by pypi-simple
            assert md.startswith("Metadata-Version:")
        assert client.get_index_page().projects == ["img2gray"]
    data = json.loads((site / "torch2.7-cu126" / "simple" / "img2gray" / "index.json").read_text())
    jpage = ProjectPage.from_json_data(data, base_url=f"{srv.url}/torch2.7-cu126/simple/img2gray/")
    assert sorted(p.filename for p in jpage.packages) == sorted(p.filename for p in page.packages)
    assert all(p.size and p.has_metadata for p in jpage.packages)
    assert ACCEPT_JSON_ONLY  # pypi-simple knows PEP 691; static files cannot negotiate it (see docs)


def test_pip_picks_the_variant_of_each_sub_index_over_http_and_file(site, serve, cpu_wheel, syn_wheels):
    srv = serve(site)
    for base in (srv.url, site.as_uri()):
        item = pip_pick(f"{base}/torch1.13-cpu/simple", "img2gray")
        assert picked_filename(item) == cpu_wheel.name
        assert item["download_info"]["archive_info"]["hashes"]["sha256"] == sha256(cpu_wheel)
        item = pip_pick(f"{base}/torch2.7-cu126/simple", "img2gray")
        assert picked_filename(item) == syn_wheels["torch2.7.cu126"].name
    # pip read the PEP 658 metadata instead of downloading the wheel (dry run).
    got = srv.requests()
    assert "/torch1.13-cpu/simple/img2gray/" in got
    assert any(r.endswith(".whl.metadata") and "torch1.13.cpu" in r for r in got), got
    assert not any(r.endswith(".whl") for r in got), got


def test_version_ordering_torch_2_10_above_2_9(work, syn_wheels):
    """docs/wheel-naming.md: labels are torch<major>.<minor>.<cuda> with numeric
    segments, so PEP 440 (and pip) order torch2.10 above torch2.9: an unpinned
    install from an index holding both gets the torch 2.10 build."""
    d = work / "dist-2.9-2.10"
    d.mkdir()
    for label in ("torch2.9.cu130", "torch2.10.cu130"):
        shutil.copy2(syn_wheels[label], d)
    s = work / "site-ordering"
    assert kwheel("index", d, "--out", s).returncode == 0
    item = pip_pick(f"{s.as_uri()}/simple", "img2gray==0.1.0")
    assert picked_filename(item) == syn_wheels["torch2.10.cu130"].name
    from packaging.version import Version
    assert Version("0.1.0+torch2.10.cu130") > Version("0.1.0+torch2.9.cu130")
    naming = ROOT / "docs" / "wheel-naming.md"
    if naming.exists():
        assert "2.10" in naming.read_text()


def test_rerun_updates_atomically_keeps_wheels_and_is_reproducible(work, cpu_wheel, syn_wheels):
    a, b = work / "site-a", work / "site-b"
    # --copy: this test later writes into a served file in place, which must not reach the
    # module's cpu_wheel (by default the site's file is a hard link of it).
    assert kwheel("index", cpu_wheel, syn_wheels["torch2.7.cu126"], "--out", a, "--copy").returncode == 0
    before = (a / "simple" / "img2gray" / "index.html").read_bytes()
    old_inode, old_page_inode = a.stat().st_ino, (a / "simple" / "img2gray" / "index.html").stat().st_ino

    # Readers during the update see the old page or the new one, never nothing.
    seen, errors, stop_reading = set(), [], threading.Event()

    def reader():
        while not stop_reading.is_set():
            try:
                seen.add((a / "simple" / "img2gray" / "index.html").read_bytes())
            except OSError as e:
                errors.append(e)

    t = threading.Thread(target=reader)
    t.start()
    try:
        p, report = kwheel_json("index", syn_wheels["torch2.9.cu130"], syn_wheels[""], "--out", a)
    finally:
        stop_reading.set()
        t.join()
    assert p.returncode == 0, p.stderr
    after = (a / "simple" / "img2gray" / "index.html").read_bytes()
    assert errors == [] and seen <= {before, after}
    # Updated in place: the directory stays, the changed page is a new file renamed over the old.
    assert a.stat().st_ino == old_inode and (a / "simple" / "img2gray" / "index.html").stat().st_ino != old_page_inode
    assert sorted(report["kept"]) == sorted([cpu_wheel.name, syn_wheels["torch2.7.cu126"].name])
    assert sorted(report["added"]) == sorted([syn_wheels["torch2.9.cu130"].name, syn_wheels[""].name])
    assert not [p for p in a.parent.iterdir() if p.name.startswith(".site-a.kwheel-new")]

    # The same wheels in one run give the same bytes.
    assert kwheel("index", cpu_wheel, syn_wheels["torch2.7.cu126"], syn_wheels["torch2.9.cu130"], syn_wheels[""], "--out", b).returncode == 0
    tree = lambda root: {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}  # noqa: E731
    assert tree(a) == tree(b)
    # Indexing a wheel again is a no-op; another wheel under a published name is refused.
    p, report = kwheel_json("index", cpu_wheel, "--out", a)
    assert p.returncode == 0 and report["unchanged"] == [cpu_wheel.name] and tree(a) == tree(b)
    rebuilt = work / "impostor-src"
    write_variant(rebuilt, "torch-universal")
    (rebuilt / "build" / "torch-universal" / "img2gray" / "__init__.py").write_text("KIND = 'other'\n")
    [other] = kwheel_build(rebuilt, work / "impostor-dist")
    assert other.name == syn_wheels[""].name and sha256(other) != sha256(syn_wheels[""])
    p = kwheel("index", other, "--out", a)
    assert p.returncode == INPUT and "already in" in p.stderr and "other bytes" in p.stderr
    assert tree(a) == tree(b)
    # A served wheel that changed since it was indexed is caught on the next run.
    served = a / "files" / cpu_wheel.name
    data = bytearray(served.read_bytes())
    data[-30] ^= 0xFF
    served.write_bytes(bytes(data))
    p = kwheel("index", syn_wheels["torch2.10.cu130"], "--out", a)
    assert p.returncode == INPUT and "no longer matches" in p.stderr
    # A directory kwheel did not write is not taken over.
    foreign = work / "not-a-site"
    foreign.mkdir()
    (foreign / "keep.txt").write_text("mine")
    p = kwheel("index", cpu_wheel, "--out", foreign)
    assert p.returncode == USAGE and (foreign / "keep.txt").read_text() == "mine"


# =========================================================================== pin


def test_pin_requirements_install_with_require_hashes_and_tampering_fails(work, site, serve, cpu_wheel):
    served = work / "site-pin"
    shutil.copytree(site, served)
    srv = serve(served)
    req = work / "requirements.txt"
    p = kwheel("pin", f"{srv.url}/simple", "--python", TORCH_PYTHON)
    assert p.returncode == 0, p.stderr
    req.write_text(p.stdout)
    lines = p.stdout.splitlines()
    version = re.match(r"img2gray-([^-]+)-", cpu_wheel.name).group(1)
    assert f"img2gray=={version} --hash=sha256:{sha256(cpu_wheel)}" in lines
    assert f"--index-url {srv.url}/simple/" in lines
    assert any(line.startswith("# variant: torch 1.13, CPU (sub-index torch1.13-cpu)") for line in lines), lines
    install = [PY, "-m", "pip", "install", "--require-hashes", "--no-deps", "--no-cache-dir", "-r", req]
    r = run([*install, "--target", work / "pinned"], env=clean_env())
    assert r.returncode == 0, r.stdout + r.stderr
    assert (work / "pinned" / f"img2gray-{version}.dist-info").is_dir()

    wheel = served / "files" / cpu_wheel.name
    data = bytearray(wheel.read_bytes())
    data[len(data) // 2] ^= 0x01
    wheel.write_bytes(bytes(data))
    r = run([*install, "--target", work / "pinned-tampered"], env=clean_env())
    assert r.returncode != 0
    assert "DO NOT MATCH THE HASHES" in r.stderr and sha256(cpu_wheel) in r.stderr, r.stderr


def test_pin_described_targets_from_dir_and_index(work, site, all_wheels, syn_wheels):
    for source in (str(all_wheels), f"{site.as_uri()}/simple", f"{site.as_uri()}/torch2.7-cu126/simple"):
        p, report = kwheel_json("pin", source, "--torch", "2.7", "--cuda", "12.6")
        assert p.returncode == 0, p.stderr
        assert report["version"] == "0.1.0+torch2.7.cu126" and report["variant"] == "torch2.7-cu126"
        assert report["requirement"] == f"img2gray==0.1.0+torch2.7.cu126 --hash=sha256:{sha256(syn_wheels['torch2.7.cu126'])}"
    p, report = kwheel_json("pin", all_wheels, "--torch", "2.10", "--cuda", "13.0")
    assert report["version"] == "0.1.0+torch2.10.cu130"
    # No build for torch 2.8: the universal wheel fits; without it, the error lists what exists.
    p, report = kwheel_json("pin", all_wheels, "--torch", "2.8", "--cuda", "12.6")
    assert p.returncode == 0 and report["version"] == "0.1.0" and report["variant"] == "universal"
    only_arch = work / "dist-arch"
    only_arch.mkdir()
    for label in ("torch2.7.cu126", "torch2.9.cu130"):
        shutil.copy2(syn_wheels[label], only_arch)
    p = kwheel("pin", only_arch, "--torch", "2.8", "--cuda", "12.6")
    assert p.returncode == NOT_FOUND
    assert "available: torch2.7-cu126 (0.1.0), torch2.9-cu130 (0.1.0)" in p.stderr, p.stderr
    p = kwheel("pin", only_arch, "--torch", "2.7", "--cpu")
    assert p.returncode == NOT_FOUND and "backend (cu126) does not match selected backend (cpu)" in p.stderr, p.stderr  # kernels' words
    p = kwheel("pin", only_arch, "--torch", "2.7")
    assert p.returncode == USAGE
