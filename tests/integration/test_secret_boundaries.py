"""Where a secret the user holds must never arrive, with the real binary.

* The published site: `kwheel index --deps-index-url` / `--base-url` with
  user:password@ would put the password into every page, kwheel-index.json
  and --json; they are refused, and a site an older kwheel wrote with one
  kept in kwheel-index.json is refused on re-index until a clean URL
  replaces it.
* Child processes: every variable a secret comes in (the Hub token under
  either name, twine's password, pip's and uv's index URLs) is missing from
  the environment of the kernel code `validate` imports (Hub-supplied), the
  interpreter probe, pip (a dependency it builds from source runs our
  build backend), uv and keyring. Each records what it inherited.
* Messages: a URL with a password that kwheel refuses, for whatever reason
  (a capital scheme, another scheme, no scheme, percent-encoded), is quoted
  without it, on stderr and in --json's error.

Each secret is a module constant whose name says so: conftest's session
check also looks for them in every output and every file under the test's
temporary directories.
"""

from __future__ import annotations

import base64
import hashlib
import http.server
import io
import json
import os
import shutil
import subprocess
import tarfile
import zipfile
from contextlib import contextmanager
from pathlib import Path

import pytest

from conftest import torch_version
from kwheel_fixtures import one_error_line
from local_servers import serve_in_thread

ROOT = Path(__file__).resolve().parents[2]
KWHEEL = os.environ.get("KWHEEL_BIN") or str(ROOT / "build" / "kwheel")
UV = ROOT / ".venv" / "bin" / "uv"
TORCH_PYTHON = "/usr/bin/python3"
USAGE, INPUT, NOT_FOUND, AUTH = 2, 3, 5, 6

LEGACY_HUB_TOKEN = "hf_legacyHubTokenNotForChildren_7c1d9e"
TWINE_PASSWORD = "twinePasswordNotForChildren-41b7"
PIP_INDEX_PASSWORD = "pipIndexPasswordNotForChildren-9a2c"
UV_INDEX_PASSWORD = "uvIndexPasswordNotForChildren-5e80"
ENDPOINT_PASSWORD = "endpointPasswordNotForChildren-c3f1"
URL_PASSWORD = "urlPasswordNotInMessages-0d6b"
SITE_PASSWORD = "sitePasswordNotOnPages-77e2"
CHILD_SECRETS = [LEGACY_HUB_TOKEN, TWINE_PASSWORD, PIP_INDEX_PASSWORD, UV_INDEX_PASSWORD, ENDPOINT_PASSWORD]


def run(argv, *, env=None, cwd=None, timeout=600) -> subprocess.CompletedProcess:
    return subprocess.run([str(a) for a in argv], capture_output=True, text=True, env=env, cwd=cwd, timeout=timeout)


def base_env(**extra) -> dict:
    """This machine's environment without pip's, uv's, twine's or the Hub's settings."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PIP_", "UV_", "TWINE_", "HF_", "HUGGING", "KWHEEL_"))}
    env.update({k: str(v) for k, v in extra.items()})
    return env


def secret_env(**extra) -> dict:
    """The environment of a user who has every kind of secret set, the Hub
    token under its older name (HF_TOKEN unset, so that one is read)."""
    return base_env(HUGGING_FACE_HUB_TOKEN=LEGACY_HUB_TOKEN, TWINE_USERNAME="alice", TWINE_PASSWORD=TWINE_PASSWORD,
                    PIP_INDEX_URL=f"https://ci:{PIP_INDEX_PASSWORD}@127.0.0.1:9/simple/",
                    UV_INDEX=f"team=https://ci:{UV_INDEX_PASSWORD}@127.0.0.1:9/simple/",
                    HF_ENDPOINT=f"https://ci:{ENDPOINT_PASSWORD}@127.0.0.1:9", KWHEEL_TEST_INHERITED="present", **extra)


def kwheel_build(repo: Path, dist: Path) -> Path:
    p = run([KWHEEL, "build", repo, "--version", "0.1.0", "-o", dist, "-q"], env=base_env())
    assert p.returncode == 0, p.stderr
    (wheel,) = dist.glob("*.whl")
    return wheel


def universal_wheel(work: Path) -> Path:
    repo = work / "repo-universal"
    pkg = repo / "build" / "torch-universal" / "sitekern"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("def hello():\n    return 'sitekern'\n")
    return kwheel_build(repo, work / "dist-universal")


def assert_refused(p: subprocess.CompletedProcess, code: int, *needles: str, secrets=(URL_PASSWORD,)) -> str:
    """Exit `code`, one error line naming `needles`, and no secret on stdout or stderr."""
    for s in secrets:
        assert s not in p.stdout + p.stderr, (p.stdout, p.stderr)
    return one_error_line(p, code, *needles)


def refused_both_ways(argv, code, *needles, env=None, cwd=None, secrets=(URL_PASSWORD,)) -> str:
    """The same refusal on the console and in --json's error."""
    line = assert_refused(run([KWHEEL, *argv], env=env or base_env(), cwd=cwd), code, *needles, secrets=secrets)
    p = run([KWHEEL, *argv, "--json"], env=env or base_env(), cwd=cwd)
    assert_refused(p, code, secrets=secrets)
    report = json.loads(p.stdout)
    assert report["ok"] is False and report["exit_code"] == code, report
    assert report["error"] == line.removeprefix("kwheel: error: "), report
    return line


def files_under(d: Path):
    return [p for p in d.rglob("*") if p.is_file()]


# --------------------------------------------------------------------------- item: the published site


@pytest.fixture(scope="module")
def site_wheel(tmp_path_factory) -> Path:
    return universal_wheel(tmp_path_factory.mktemp("site-wheel"))


@pytest.mark.parametrize("option", ["--deps-index-url", "--base-url"])
@pytest.mark.parametrize("url", [f"https://ci:{SITE_PASSWORD}@mirror.example/simple/", f"HTTPS://ci:{SITE_PASSWORD}@mirror.example/simple/",
                                 f"https://{SITE_PASSWORD}@mirror.example/simple/"])
def test_index_refuses_a_url_with_a_login_and_writes_nothing(site_wheel, tmp_path, option, url):
    site = tmp_path / "site"
    line = refused_both_ways(["index", site_wheel, "-o", site, option, url], USAGE, f"{option} must not carry user:password@",
                             "~/.netrc or keyring", secrets=(SITE_PASSWORD,))
    assert "kwheel pin" in line, line
    assert not site.exists() or not files_under(site)


def test_a_login_kept_in_an_older_sites_manifest_is_refused_until_replaced(site_wheel, tmp_path):
    site = tmp_path / "site"
    p = run([KWHEEL, "index", site_wheel, "-o", site, "-q"], env=base_env())
    assert p.returncode == 0, p.stderr
    # What a kwheel that did not refuse it wrote: the setting kept for later runs.
    manifest = site / "kwheel-index.json"
    m = json.loads(manifest.read_text())
    m["deps_index"] = f"https://ci:{SITE_PASSWORD}@mirror.example/simple/"
    manifest.write_text(json.dumps(m))
    p = run([KWHEEL, "index", site_wheel, "-o", site, "--json"], env=base_env())
    line = assert_refused(p, INPUT, "kwheel-index.json", "--deps-index-url URL without it", "change that password", secrets=(SITE_PASSWORD,))
    assert json.loads(p.stdout)["error"] == line.removeprefix("kwheel: error: ")
    # A clean --deps-index-url replaces it; no page, no manifest keeps the password.
    p = run([KWHEEL, "index", site_wheel, "-o", site, "--deps-index-url", "https://mirror.example/simple/", "--json"], env=base_env())
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout)["deps_index"] == "https://mirror.example/simple/"
    for f in files_under(site):
        assert SITE_PASSWORD.encode() not in f.read_bytes(), f
    assert "https://mirror.example/simple/" in (site / "kernels" / "sitekern.html").read_text()


# --------------------------------------------------------------------------- item: what children inherit


def recording_script(path: Path, log: Path, then: str) -> Path:
    """A shell script that appends its environment to `log`, then execs `then`."""
    path.write_text(f'#!/bin/sh\n{{ env; echo "--- end"; }} >> "{log}"\nexec {then} "$@"\n')
    path.chmod(0o755)
    return path


def env_dump(path: Path) -> str:
    assert path.is_file(), f"{path} was not written: the child did not run"
    text = path.read_text()
    assert "KWHEEL_TEST_INHERITED" in text, "the child saw none of kwheel's environment"
    return text


def child_leaks(path: Path, *, also=()) -> list[str]:
    """What of the secrets reached the child whose environment is in `path`."""
    text = env_dump(path)
    names = [n for n in ("HUGGING_FACE_HUB_TOKEN", "TWINE_PASSWORD", "PIP_INDEX_URL", "HF_ENDPOINT", *also)
             if f'"{n}"' in text or f"\n{n}=" in "\n" + text]
    return [f"{n} reached {path.stem}" for n in names] + [f"a secret value reached {path.stem}" for s in CHILD_SECRETS if s in text]


def einops_sdist(d: Path, log: Path) -> Path:
    """A stand-in einops-0.0.1.tar.gz (a python-depends kernels knows), built
    by an in-tree PEP 517 backend that records the environment pip gives it
    (requires = []: nothing to fetch)."""
    backend = f'''import base64, hashlib, json, os, zipfile
LOG = {str(log)!r}

def _record():
    with open(LOG, "a") as f:
        f.write(json.dumps(dict(os.environ)) + "\\n")

def get_requires_for_build_wheel(config_settings=None):
    _record()
    return []

def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    _record()
    files = {{"einops/__init__.py": b"",
             "einops-0.0.1.dist-info/METADATA": b"Metadata-Version: 2.1\\nName: einops\\nVersion: 0.0.1\\n",
             "einops-0.0.1.dist-info/WHEEL": b"Wheel-Version: 1.0\\nGenerator: test\\nRoot-Is-Purelib: true\\nTag: py3-none-any\\n"}}
    rows = "".join(k + ",sha256=" + base64.urlsafe_b64encode(hashlib.sha256(v).digest()).rstrip(b"=").decode() + "," + str(len(v)) + "\\n"
                   for k, v in files.items())
    files["einops-0.0.1.dist-info/RECORD"] = (rows + "einops-0.0.1.dist-info/RECORD,,\\n").encode()
    name = "einops-0.0.1-py3-none-any.whl"
    with zipfile.ZipFile(os.path.join(wheel_directory, name), "w") as z:
        for k, v in files.items():
            z.writestr(k, v)
    return name
'''
    members = {"einops-0.0.1/pyproject.toml": '[build-system]\nrequires = []\nbuild-backend = "backend"\nbackend-path = ["."]\n',
               "einops-0.0.1/backend.py": backend,
               "einops-0.0.1/PKG-INFO": "Metadata-Version: 2.1\nName: einops\nVersion: 0.0.1\n"}
    d.mkdir(parents=True, exist_ok=True)
    path = d / "einops-0.0.1.tar.gz"
    with tarfile.open(path, "w:gz") as t:
        for name, text in members.items():
            data = text.encode()
            info = tarfile.TarInfo(name)
            info.size = len(data)
            t.addfile(info, io.BytesIO(data))
    return path


def einops_wheel(d: Path) -> Path:
    """The stand-in einops as a wheel, for uv to resolve."""
    files = {"einops/__init__.py": b"", "einops-0.0.1.dist-info/METADATA": b"Metadata-Version: 2.1\nName: einops\nVersion: 0.0.1\n",
             "einops-0.0.1.dist-info/WHEEL": b"Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n"}
    rows = "".join(f"{k},sha256={base64.urlsafe_b64encode(hashlib.sha256(v).digest()).rstrip(b'=').decode()},{len(v)}\n" for k, v in files.items())
    files["einops-0.0.1.dist-info/RECORD"] = (rows + "einops-0.0.1.dist-info/RECORD,,\n").encode()
    path = d / "einops-0.0.1-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as z:
        for k, v in files.items():
            z.writestr(k, v)
    return path


def envkern_wheel(work: Path, log: Path) -> Path:
    """A pure-Python torch-cpu kernel that needs einops and, when imported,
    records the environment it runs in: Hub-supplied code, as validate sees it."""
    repo = work / "repo-envkern"
    pkg = repo / "build" / "torch-cpu" / "envkern"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text(f"import json, os\nwith open({str(log)!r}, 'a') as f:\n    f.write(json.dumps(dict(os.environ)) + '\\n')\n\n"
                                     "def hello():\n    return 'envkern'\n")
    meta = {"name": "envkern", "version": 1, "license": "Apache-2.0", "python-depends": ["einops"], "backend": {"type": "cpu"}}
    (repo / "build" / "torch-cpu" / "metadata.json").write_text(json.dumps(meta))
    return kwheel_build(repo, work / "dist-envkern")


needs_torch = pytest.mark.skipif(torch_version(TORCH_PYTHON) is None, reason=f"needs torch importable by {TORCH_PYTHON}")


@needs_torch
def test_validate_children_inherit_no_secret(tmp_path):
    logs = tmp_path / "logs"
    logs.mkdir()
    wheel = envkern_wheel(tmp_path, logs / "kernel-code.json")
    links = tmp_path / "links"
    einops_sdist(links, logs / "pip-build.json")
    probe = recording_script(tmp_path / "python3", logs / "probe.env", TORCH_PYTHON)
    p = run([KWHEEL, "validate", wheel, "--python", probe, "--device", "cpu", "--find-links", links, "--json"], env=secret_env())
    for s in CHILD_SECRETS:
        assert s not in p.stdout + p.stderr
    report = json.loads(p.stdout)
    assert p.returncode == 0 and report["wheels"][0]["result"] == "PASS", report
    # The kernel's own code, run by the check; the interpreter probe (and the
    # venv it makes); pip, through the build backend it runs.
    leaks = child_leaks(logs / "kernel-code.json") + child_leaks(logs / "probe.env") + child_leaks(logs / "pip-build.json")
    assert not leaks, sorted(set(leaks))


@needs_torch
def test_uv_and_the_probe_inherit_no_secret(tmp_path):
    logs = tmp_path / "logs"
    logs.mkdir()
    dist = tmp_path / "dist"
    dist.mkdir()
    shutil.copy(envkern_wheel(tmp_path, logs / "unused.json"), dist)
    einops_wheel(dist)
    uv = recording_script(tmp_path / "uv", logs / "uv.env", str(UV))
    python = recording_script(tmp_path / "python3", logs / "python.env", TORCH_PYTHON)
    p = run([KWHEEL, "pin", dist, "--name", "envkern", "--python", python, "--json"], env=secret_env(KWHEEL_UV=uv))
    for s in CHILD_SECRETS:
        assert s not in p.stdout + p.stderr
    assert p.returncode == 0, p.stderr
    assert [d["name"] for d in json.loads(p.stdout)["dependencies"]] == ["einops"]
    # uv, and the probe (with uv's own look at the interpreter, when it runs it).
    leaks = child_leaks(logs / "uv.env", also=("UV_INDEX",)) + child_leaks(logs / "python.env")
    assert not leaks, sorted(set(leaks))


class _Unauthorized(http.server.BaseHTTPRequestHandler):
    def do_GET(self):  # noqa: N802 (http.server's name)
        self.send_response(401)
        self.send_header("WWW-Authenticate", 'Basic realm="index"')
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args):
        pass


@contextmanager
def unauthorized_index():
    with serve_in_thread(http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Unauthorized)) as srv:
        yield f"http://127.0.0.1:{srv.server_address[1]}"


def test_keyring_inherits_no_secret(tmp_path):
    logs = tmp_path / "logs"
    logs.mkdir()
    bindir = tmp_path / "bin"
    bindir.mkdir()
    (bindir / "keyring").write_text(f'#!/bin/sh\n{{ env; echo "--- end"; }} >> "{logs / "keyring.env"}"\nexit 1\n')
    (bindir / "keyring").chmod(0o755)
    with unauthorized_index() as url:
        p = run([KWHEEL, "pin", f"{url}/simple/", "--torch", "2.9", "--cpu"], env=secret_env(PATH=f"{bindir}:/usr/bin:/bin", HOME=tmp_path))
    assert_refused(p, AUTH, "wants credentials", secrets=CHILD_SECRETS)
    leaks = child_leaks(logs / "keyring.env")
    assert not leaks, sorted(set(leaks))


# --------------------------------------------------------------------------- item: URL passwords in messages


def test_pin_a_capital_scheme_is_https_and_its_password_stays_out(tmp_path):
    # RFC 3986: HTTPS:// is https://. The index is reached, the URL's login
    # sent (and refused by this server); the message names the URL without it.
    with unauthorized_index() as url:
        authority = url.removeprefix("http://")
        line = refused_both_ways(["pin", f"HTTP://ci:{URL_PASSWORD}@{authority}/simple/", "--torch", "2.9", "--cpu"], AUTH,
                                 "credentials from the URL", f"http://{authority}/simple/", env=base_env(HOME=tmp_path))
        assert "ci:" not in line


@pytest.mark.parametrize("argv, code, needle", [
    (["pin", "dist", "--torch", "2.9", "--cpu", "--deps-index-url", f"ftp://ci:{URL_PASSWORD}@h.example/simple/"], USAGE,
     "--deps-index-url 'ftp://h.example/simple/' must be"),
    (["pin", f"ci:{URL_PASSWORD}@h.example/simple/", "--torch", "2.9", "--cpu"], NOT_FOUND, "'h.example/simple/' is neither"),
    (["pin", f"https%3A%2F%2Fci%3A{URL_PASSWORD}%40h.example%2Fsimple%2F", "--torch", "2.9", "--cpu"], NOT_FOUND, "is neither"),
    (["pin", f"git+https://ci:{URL_PASSWORD}@h.example/simple/", "--torch", "2.9", "--cpu"], USAGE,
     "index URL 'git+https://h.example/simple/' must be"),
    (["validate", "x.whl", "--index-url", f"ftp://ci:{URL_PASSWORD}@h.example/simple/"], USAGE, "--index-url 'ftp://h.example/simple/' must be"),
    (["validate", "x.whl", "--index-url", f"ci:{URL_PASSWORD}@h.example/simple/"], USAGE, "--index-url 'h.example/simple/' must be"),
    (["variants", "org/name", "--endpoint", f"ftp://ci:{URL_PASSWORD}@h.example"], USAGE, "--endpoint 'ftp://h.example' must start"),
    (["variants", f"https://ci:{URL_PASSWORD}@huggingface.co/org/name"], USAGE, "'https://huggingface.co/org/name' is not a Hub repo id"),
    (["build", f"https://ci:{URL_PASSWORD}@huggingface.co/org/name", "-o", "out"], USAGE, "is not a Hub repo id"),
    (["index", "x.whl", "-o", "site", "--deps-index-url", f"ftp://ci:{URL_PASSWORD}@h.example/simple/"], USAGE, "--deps-index-url 'ftp://h.example/simple/'"),
    (["index", "x.whl", "-o", "site", "--base-url", f"ftp://ci:{URL_PASSWORD}@h.example/"], USAGE, "--base-url 'ftp://h.example/'"),
], ids=["pin-deps-ftp", "pin-no-scheme", "pin-percent-encoded", "pin-git+https", "validate-ftp", "validate-no-scheme", "variants-endpoint",
        "variants-url-for-repo", "build-url-for-repo", "index-deps-ftp", "index-base-ftp"])
def test_a_refused_url_is_quoted_without_its_password(tmp_path, argv, code, needle):
    refused_both_ways(argv, code, needle, env=base_env(HOME=tmp_path), cwd=tmp_path)


def test_the_endpoint_variable_is_quoted_without_its_password(tmp_path):
    env = base_env(HOME=tmp_path, HF_ENDPOINT=f"ftp://ci:{URL_PASSWORD}@h.example/")
    refused_both_ways(["variants", "org/name"], USAGE, "HF_ENDPOINT 'ftp://h.example' must start", env=env)
