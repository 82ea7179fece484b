"""The team's private index, end to end (issue 37, "What must be shown").

The index is set up the way teams set one up: pypiserver 2.4 wanting a password for every read
(`-a list,download,update`), behind Debian's nginx terminating TLS with a certificate from a CA
made in the test (local_servers.private_index). The kernel declares `python-depends: ["einops"]`;
einops is the real wheel from PyPI (tests/realbin, by version and sha256), served by the same
index. The credentials reach pin, pip, uv and validate through a netrc file only (HOME's
.netrc, mode 600), the CA through `--cert` (pip's name) or SSL_CERT_FILE for uv. Then:

  1. `kwheel pin INDEX --cert ca.pem --python TARGET -o requirements.txt`;
  2. real pip `install --require-hashes -r requirements.txt --cert ca.pem` into a fresh venv,
     then the kernel and einops import;
  3. `kwheel pin ... -o pylock.toml`, then pip 26 `install -r pylock.toml` and
     `uv pip install -r pylock.toml` into fresh venvs, then import;
  4. `kwheel validate DIST --index-url INDEX --cert ca.pem --python TARGET` PASSes (the kernel's
     own check runs einops on a torch tensor).

Every kwheel step runs once with --json; the password must be in none of those documents, in
no output, and in no file kwheel writes (dist, requirements.txt, pylock.toml, a site). Without
credentials pin fails in one line naming the URL and how to give them (exit 6); with another
CA it fails naming --cert. conftest's suite-wide check also scans every output and file for
PASSWORD.

The environment of every command is built here: this machine's own CA variables
(REQUESTS_CA_BUNDLE, SSL_CERT_FILE, PIP_CERT, ...), PIP_* and UV_* settings are removed, so
only what a step passes on purpose reaches it.
"""

from __future__ import annotations

import json
import os
import re
import stat
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(ROOT / "tests" / "hub"))
sys.path.insert(0, str(HERE))
import kernel_repos as kr  # noqa: E402
import realbin  # noqa: E402
from local_servers import private_index, private_index_log  # noqa: E402

TARGET_PY = "/usr/bin/python3"  # Debian's, with python3-torch
USER = "ci-reader"
PASSWORD = "pr1vate-index-pw-37"
KERNEL = "swiglu"
AUTH_EXIT = 6  # kwheel --help: 6 authentication
EINOPS_SHA256 = "54058201ac7087911181bfec4af6091bb59380360f069276601256a76af08193"  # tests/realbin/requirements.txt

# Every variable that could point a tool at a CA, a config or credentials of this machine's.
_DROPPED = re.compile(r"^(PIP_|UV_|TWINE_|HF_|KWHEEL_|PYTHON|VIRTUAL_ENV$|NETRC$|SOURCE_DATE_EPOCH$|TZ$)"
                      r"|CA_BUNDLE|CA_CERTS|CERT_FILE|CERT_DIR|SSL_CERT|_CAINFO|SSL_ROOTS")


def env_for(home: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not _DROPPED.search(k)}
    env.update(HOME=str(home), PIP_CONFIG_FILE=os.devnull, PIP_DISABLE_PIP_VERSION_CHECK="1",
               PIP_NO_CACHE_DIR="1", PIP_NO_INPUT="1", UV_NO_CONFIG="1", NO_PROXY="127.0.0.1,localhost",
               no_proxy="127.0.0.1,localhost")
    # The user's uv (pin resolves the kernel's einops with it): the tools venv's 0.13.9, as KWHEEL_UV.
    env["KWHEEL_UV"] = str(Path(sys.executable).parent / "uv")
    env.update(extra)
    return env


def run(argv, env, timeout=600, cwd=None) -> subprocess.CompletedProcess:
    return subprocess.run([str(a) for a in argv], env=env, capture_output=True, text=True, timeout=timeout, cwd=cwd)


def ok(r: subprocess.CompletedProcess) -> subprocess.CompletedProcess:
    assert r.returncode == 0, f"`{' '.join(map(str, r.args))}` exited {r.returncode}\nstdout:\n{r.stdout}\nstderr:\n{r.stderr}"
    return r


def no_secret(r: subprocess.CompletedProcess) -> None:
    """The password is in neither stream (a --json document included)."""
    assert PASSWORD not in r.stdout + r.stderr, f"`{' '.join(map(str, r.args))}` printed the password"


def json_of(r: subprocess.CompletedProcess) -> dict:
    no_secret(r)
    try:
        return json.loads(r.stdout)
    except json.JSONDecodeError:
        pytest.fail(f"`{' '.join(map(str, r.args))}` (exit {r.returncode}) printed no JSON document:\n{r.stdout}\n{r.stderr}")


def files_without_secret(*roots: Path) -> int:
    """Every file below roots holds neither the password nor user:password@; how many were read."""
    n = 0
    for top in roots:
        for p in ([top] if top.is_file() else sorted(top.rglob("*"))):
            if p.is_file():
                data = p.read_bytes()
                assert PASSWORD.encode() not in data, f"kwheel wrote the password into {p}"
                assert f"{USER}:".encode() not in data, f"kwheel wrote userinfo into {p}"
                n += 1
    assert n, f"nothing to check in {roots}"
    return n


def pinned(text: str) -> dict[str, tuple[str, set[str]]]:
    """requirements.txt lines (continuations joined) -> {name: (version, {sha256, ...})}."""
    out = {}
    for line in text.replace("\\\n", " ").splitlines():
        if m := re.match(r"^([A-Za-z0-9][-A-Za-z0-9_.]*)==(\S+)(.*)$", line.strip()):
            out[m.group(1).lower()] = (m.group(2), set(re.findall(r"--hash=sha256:([0-9a-f]{64})", m.group(3))))
    return out


def fresh_venv(where: Path, env: dict[str, str], pip: bool = False) -> Path:
    """A venv of the target interpreter that sees its torch (its own pip, Debian's, if asked)."""
    ok(run([TARGET_PY, "-m", "venv", "--system-site-packages", *([] if pip else ["--without-pip"]), where], env, timeout=300))
    return where / "bin" / "python"


def imports(py: Path, env: dict[str, str]) -> str:
    """The kernel and einops import in that environment, from that environment (not from torch's
    site-packages), and the kernel's einops code runs on a torch tensor."""
    code = (f"import sys, {KERNEL}, einops; assert {KERNEL}.__file__.startswith(sys.prefix), {KERNEL}.__file__; "
            f"assert einops.__file__.startswith(sys.prefix), einops.__file__; "
            f"print({KERNEL}.hello(), einops.__version__, {KERNEL}.transpose_rows())")
    return ok(run([py, "-c", code], env, timeout=120)).stdout.strip()


def served(work: Path, since: int = 0) -> list[dict[str, str]]:
    """What the module's index front served (user name, path, status per request)."""
    return private_index_log(work / "index")[since:]


# --------------------------------------------------------------------------- fixtures


def kernel_files() -> dict[str, bytes]:
    files = kr.demo_package(KERNEL, f"{KERNEL} v1")
    files["__init__.py"] = (b"import einops  # python-depends\n\n" + files["__init__.py"] +
                            b"\n\ndef transpose_rows():\n    import torch\n"
                            b"    return einops.rearrange(torch.arange(6).reshape(2, 3), 'a b -> b a').tolist()\n")
    # validate runs this: einops on a torch tensor, in the isolated environment.
    files["_kwheel_check.py"] = (b"def run(device):\n    import einops, torch\n"
                                 b"    y = einops.rearrange(torch.arange(6, device=device).reshape(2, 3), 'a b -> b a')\n"
                                 b"    assert y.tolist() == [[0, 3], [1, 4], [2, 5]], y\n"
                                 b"    return {'einops': einops.__version__}\n")
    return files


@pytest.fixture(scope="module")
def target():
    r = subprocess.run([TARGET_PY, "-c", "import torch; print(torch.__version__)"], capture_output=True, text=True)
    if r.returncode != 0:
        pytest.skip(f"{TARGET_PY} cannot import torch (Debian's python3-torch): {r.stderr.strip()[-200:]}")
    return r.stdout.strip()


@pytest.fixture(scope="module")
def einops_wheel() -> Path:
    return realbin.wheel("einops")  # skips, saying why, without the fetched corpus


@pytest.fixture(scope="module")
def work(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("private-index")


@pytest.fixture(scope="module")
def home(work) -> Path:
    """The user's home: the index's credentials in .netrc (mode 600), nowhere else."""
    h = work / "home"
    h.mkdir()
    netrc = h / ".netrc"
    netrc.write_text(f"machine 127.0.0.1\n  login {USER}\n  password {PASSWORD}\n")
    netrc.chmod(stat.S_IRUSR | stat.S_IWUSR)
    return h


@pytest.fixture(scope="module")
def bare_home(work) -> Path:
    """A home without any credentials."""
    h = work / "bare-home"
    h.mkdir()
    return h


@pytest.fixture(scope="module")
def dist(kwheel_bin, work, target, home) -> Path:
    """`kwheel build` of a CPU kernel whose metadata.json says python-depends: ["einops"]."""
    repo = work / "repo"
    kr.write_variant(repo, "torch-cpu", layout="flat", name=KERNEL, files=kernel_files(), python_depends=["einops"])
    out = work / "dist"
    r = run([kwheel_bin, "build", repo, "--version", "1.0", "-o", out, "--json"], env_for(home))
    report = json_of(ok(r))
    (wheel,) = out.glob("*.whl")
    meta = subprocess.run(["unzip", "-p", wheel, "*.dist-info/METADATA"], capture_output=True, text=True, check=True).stdout
    assert re.search(r"^Requires-Dist: einops\b", meta, re.M), meta
    assert report, report
    return out


@pytest.fixture(scope="module")
def index(work, pki, home, dist, einops_wheel, kwheel_bin, venv_bin):
    """The private index holding the kernel (kwheel publish) and einops (twine), https root URL."""
    with private_index(work / "index", {USER: PASSWORD}, pki) as root:
        upload = env_for(home, TWINE_USERNAME=USER, TWINE_PASSWORD=PASSWORD)
        r = run([kwheel_bin, "publish", dist, "--repository-url", f"{root}/", "--cert", pki["ca"], "--json"], upload)
        report = json_of(ok(r))
        assert report, report
        ok(run([venv_bin / "twine", "upload", "--non-interactive", "--disable-progress-bar", "--repository-url", f"{root}/",
                "--cert", pki["ca"], einops_wheel], upload))
        stored = sorted(p.name for p in (work / "index" / "packages").iterdir())
        assert einops_wheel.name in stored and any(n.startswith(f"{KERNEL}-") for n in stored), stored
        yield root


# --------------------------------------------------------------------------- the front itself


def test_the_index_wants_a_password_for_reads_and_serves_through_the_tls_front(index, pki, home, bare_home, work, venv_python):
    """What the other tests rely on: reads need the password, files are linked with their sha256
    and resolve through the front, pypiserver's redirects stay on https. Judged by pip."""
    env = env_for(home)
    # pip with the netrc in HOME and --cert: a dry-run resolution of einops from the index.
    r = ok(run([venv_python, "-m", "pip", "download", "--no-deps", "--index-url", f"{index}/simple/", "--cert", pki["ca"],
                "einops==0.8.2", "-d", Path(home).parent / "pip-download"], env))
    assert (Path(home).parent / "pip-download" / "einops-0.8.2-py3-none-any.whl").is_file(), r.stdout
    got = served(work, since=0)
    assert [(g["user"], g["path"], g["status"]) for g in got[-2:]] == \
        [(USER, "/simple/einops/", "200"), (USER, "/packages/einops-0.8.2-py3-none-any.whl", "200")], got
    # Without the netrc pip is refused: pypiserver answers 401 to a read, pip finds nothing.
    before = len(served(work))
    r = run([venv_python, "-m", "pip", "download", "--no-deps", "--index-url", f"{index}/simple/", "--cert", pki["ca"],
             "einops==0.8.2", "-d", Path(home).parent / "pip-refused"], env_for(bare_home))
    assert r.returncode != 0 and "from versions: none" in r.stderr, r.stdout + r.stderr
    assert [(g["user"], g["path"], g["status"]) for g in served(work)[before:]] == [("-", "/simple/einops/", "401")]
    # The page links a root-relative /packages/FILE#sha256=HEX and a redirect goes to https.
    page = ok(run(["curl", "-sS", "--netrc", "--cacert", pki["ca"], f"{index}/simple/einops/"], env)).stdout
    assert re.search(r'href="/packages/einops-0\.8\.2-py3-none-any\.whl#sha256=[0-9a-f]{64}"', page), page
    head = ok(run(["curl", "-sS", "-o", "/dev/null", "-w", "%{http_code} %{redirect_url}", "--netrc", "--cacert", pki["ca"],
                   f"{index}/simple/einops"], env)).stdout
    assert head == f"301 {index}/simple/einops/", head


# --------------------------------------------------------------------------- 1 and 2: requirements.txt


def test_pin_with_netrc_and_cert_then_pip_installs_with_hashes(index, pki, home, dist, work, kwheel_bin, target):
    env = env_for(home)
    out = work / "pinned"
    out.mkdir(exist_ok=True)
    reqs = out / "requirements.txt"
    before = len(served(work))
    r = run([kwheel_bin, "pin", f"{index}/simple/", "--name", KERNEL, "--cert", pki["ca"], "--python", TARGET_PY,
             "-o", reqs, "--json"], env)
    report = json_of(ok(r))
    assert report, report
    # pin read the kernel's page through the front as the netrc's user (nginx logs the name only).
    assert any(g["agent"].startswith("kwheel/") and g["user"] == USER and g["path"] == f"/simple/{KERNEL}/"
               and g["status"] == "200" for g in served(work)[before:]), served(work)[before:]
    text = reqs.read_text()
    assert f"--index-url {index}/simple/" in text, text  # no userinfo: pip finds the netrc itself
    pins = pinned(text)
    assert pins[KERNEL][0].startswith("1.0+torch.cpu") and pins[KERNEL][1], pins
    assert pins["einops"] == ("0.8.2", {EINOPS_SHA256}), pins  # the one file the index has, by its real sha256
    files_without_secret(reqs, dist)

    # 2. real pip, the netrc of the same HOME, the CA with --cert.
    py = fresh_venv(work / "venv-reqs", env, pip=True)
    ok(run([py, "-m", "pip", "install", "--require-hashes", "-r", reqs, "--cert", pki["ca"]], env))
    shown = imports(py, env)
    assert shown == f"{KERNEL} v1 0.8.2 [[0, 3], [1, 4], [2, 5]]", shown
    torch_now = ok(run([py, "-c", "import torch; print(torch.__version__)"], env)).stdout.strip()
    assert torch_now == target  # the target's torch was kept, not replaced from the index


# --------------------------------------------------------------------------- 3: pylock.toml


def test_pin_to_pylock_then_pip_26_and_uv_install_it(index, pki, home, dist, work, kwheel_bin, venv_python, venv_bin):
    env = env_for(home)
    out = work / "locked"
    out.mkdir(exist_ok=True)
    lock = out / "pylock.toml"
    r = run([kwheel_bin, "pin", f"{index}/simple/", "--name", KERNEL, "--cert", pki["ca"], "--python", TARGET_PY,
             "-o", lock, "--json"], env)
    json_of(ok(r))
    files_without_secret(lock)
    doc = tomllib.loads(lock.read_text())
    assert doc.get("lock-version") == "1.0", doc
    packages = {p["name"]: p for p in doc["packages"]}
    assert {KERNEL, "einops"} <= set(packages), packages
    for name in (KERNEL, "einops"):
        assert (packages[name].get("index") or "").rstrip("/") == f"{index}/simple", packages[name]  # PEP 751 packages.index
        wheels = packages[name].get("wheels") or []
        assert wheels and all(w["url"].startswith(f"{index}/") and re.fullmatch(r"[0-9a-f]{64}", w["hashes"]["sha256"])
                              for w in wheels), packages[name]
    assert packages["einops"]["version"] == "0.8.2"

    # pip 26 (the tools venv's): `pip install -r pylock.toml`, into the fresh venv with --python.
    pip_venv = fresh_venv(work / "venv-pylock-pip", env)
    ok(run([venv_python, "-m", "pip", "--python", pip_venv, "install", "-r", lock, "--cert", pki["ca"]], env))
    assert imports(pip_venv, env).startswith(f"{KERNEL} v1 0.8.2")

    # uv: the CA from SSL_CERT_FILE, the credentials from the same netrc.
    uv_venv = fresh_venv(work / "venv-pylock-uv", env)
    uv_env = env_for(home, SSL_CERT_FILE=str(pki["ca"]), UV_CACHE_DIR=str(work / "uv-cache"))
    r = run([venv_bin / "uv", "pip", "install", "--python", uv_venv, "-r", lock], uv_env)
    no_secret(ok(r))
    assert imports(uv_venv, env).startswith(f"{KERNEL} v1 0.8.2")


# --------------------------------------------------------------------------- 4: validate --index-url


def test_validate_installs_the_dependencies_from_the_index_and_passes(index, pki, home, dist, kwheel_bin):
    r = run([kwheel_bin, "validate", dist, "--index-url", f"{index}/simple/", "--cert", pki["ca"], "--python", TARGET_PY,
             "--device", "cpu", "--json"], env_for(home))
    report = json_of(r)
    assert r.returncode == 0 and report.get("passed") == 1, f"exit {r.returncode}: {json.dumps(report, indent=1)}\n{r.stderr}"
    (w,) = report["wheels"]
    assert w["result"] == "PASS", w
    assert w["details"].get("check") == f"{KERNEL}._kwheel_check", w
    assert w["details"].get("details", {}).get("einops") == "0.8.2", w


# --------------------------------------------------------------------------- the site


def test_the_site_holds_no_credentials(index, dist, work, home, kwheel_bin):
    site = work / "site"
    r = run([kwheel_bin, "index", dist, "-o", site, "--deps-index-url", f"{index}/simple/", "--json"], env_for(home))
    json_of(ok(r))
    files_without_secret(site)


# --------------------------------------------------------------------------- failures


def one_line(text: str) -> str:
    lines = [line for line in text.splitlines() if line.strip()]
    assert len(lines) == 1, f"expected one line, got:\n{text}"
    return lines[0]


def test_pin_without_credentials_says_which_url_and_how(index, pki, bare_home, kwheel_bin):
    r = run([kwheel_bin, "pin", f"{index}/simple/", "--name", KERNEL, "--cert", pki["ca"], "--python", TARGET_PY],
            env_for(bare_home))
    assert r.returncode == AUTH_EXIT, (r.returncode, r.stderr)
    line = one_line(r.stderr)
    assert f"{index}/simple/" in line and "netrc" in line, line
    no_secret(r)


@pytest.mark.parametrize("ca", ["other_ca", None], ids=["another-ca", "system-cas"])
def test_pin_with_the_wrong_ca_names_cert(index, pki, home, dist, kwheel_bin, ca):
    """A CA that did not sign the front's certificate, given with --cert or (None) none at all, the
    system's CAs: refused, in one line naming the host and --cert, with publish's exit code."""
    cert = ["--cert", pki[ca]] if ca else []
    r = run([kwheel_bin, "pin", f"{index}/simple/", "--name", KERNEL, *cert, "--python", TARGET_PY], env_for(home))
    assert r.returncode not in (0, 2), (r.returncode, r.stderr)  # refused, and not as a usage error
    line = one_line(r.stderr)
    assert "--cert" in line and "127.0.0.1" in line, line
    no_secret(r)
    # publish, which has had --cert all along, fails the same way with the same CA.
    pub = run([kwheel_bin, "publish", dist, "--repository-url", f"{index}/", *cert],
              env_for(home, TWINE_USERNAME=USER, TWINE_PASSWORD=PASSWORD))
    assert pub.returncode == r.returncode, (pub.returncode, pub.stderr)
    no_secret(pub)


def test_mutual_tls_index_needs_the_client_certificate(work, pki, home, dist, kwheel_bin, venv_python, venv_bin, einops_wheel):
    """An index whose front also wants a client certificate from the CA (`ssl_verify_client on`):
    twine and pip get in with --client-cert and are refused without; so must kwheel publish and pin.
    (nginx completes the handshake without one and answers 400 "No required SSL certificate was
    sent".)"""
    with private_index(work / "mtls-index", {USER: PASSWORD}, pki, client_certs=True) as root:
        env = env_for(home)
        upload = env_for(home, TWINE_USERNAME=USER, TWINE_PASSWORD=PASSWORD)
        ok(run([venv_bin / "twine", "upload", "--non-interactive", "--disable-progress-bar", "--repository-url", f"{root}/",
                "--cert", pki["ca"], "--client-cert", pki["client"], einops_wheel], upload))
        dl = [venv_python, "-m", "pip", "download", "--no-deps", "--index-url", f"{root}/simple/", "--cert", pki["ca"],
              "einops==0.8.2", "-d", work / "mtls-download"]
        assert run(dl, env).returncode != 0
        assert private_index_log(work / "mtls-index")[-1]["status"] == "400"  # no client certificate
        ok(run([*dl, "--client-cert", pki["client"]], env))
        assert (work / "mtls-download" / einops_wheel.name).is_file()

        publish = [kwheel_bin, "publish", dist, "--repository-url", f"{root}/", "--cert", pki["ca"]]
        refused = run(publish, upload)
        assert refused.returncode not in (0, 2), refused.stderr
        no_secret(ok(run([*publish, "--client-cert", pki["client"]], upload)))
        pin = [kwheel_bin, "pin", f"{root}/simple/", "--name", KERNEL, "--cert", pki["ca"], "--torch", "1.13", "--cpu"]
        refused = run(pin, env)
        assert refused.returncode not in (0, 2), refused.stderr
        line = one_line(refused.stderr)
        assert "--client-cert" in line or "certificate" in line.lower(), line
        r = ok(run([*pin, "--client-cert", pki["client"]], env))
        assert pinned(r.stdout)[KERNEL][1], r.stdout
        no_secret(r)
