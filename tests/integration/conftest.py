"""Shared fixtures for the integration tests: the kwheel binary, the tools
venv, a private CA for HTTPS servers, and a factory for kernel repos on disk
(kwheel_fixtures.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import kwheel_fixtures  # noqa: E402

ROOT = HERE.parent.parent


@pytest.fixture(scope="session")
def kwheel_bin() -> Path:
    p = Path(os.environ.get("KWHEEL_BIN", ROOT / "build" / "kwheel"))
    if not p.is_file():
        pytest.fail(f"kwheel binary not found at {p}; build it or set KWHEEL_BIN")
    return p


@pytest.fixture(scope="session")
def venv_python() -> Path:
    """The tools venv's interpreter (pip, uv, installer, twine, ... live beside it)."""
    p = Path(os.environ.get("KWHEEL_VENV_PYTHON", ROOT / ".venv" / "bin" / "python"))
    if not p.exists():
        p = Path(sys.executable)
    return p


@pytest.fixture(scope="session")
def venv_bin(venv_python) -> Path:
    return venv_python.parent


def torch_version(python: str) -> str | None:
    """The torch version `python` imports, or None when it cannot run or import torch."""
    if not os.access(python, os.X_OK):
        return None
    r = subprocess.run([python, "-c", "import torch; print(torch.__version__)"], capture_output=True, text=True)
    return r.stdout.strip() if r.returncode == 0 else None


def clean_env(**extra: str) -> dict[str, str]:
    """The environment without anything that changes wheel bytes or output."""
    env = {k: v for k, v in os.environ.items() if k not in {"SOURCE_DATE_EPOCH", "TZ"}}
    env.update(extra)
    return env


@pytest.fixture(scope="session")
def run_kwheel(kwheel_bin):
    def run(*args, env: dict[str, str] | None = None, cwd=None, check: bool | None = None) -> subprocess.CompletedProcess:
        r = subprocess.run([str(kwheel_bin), *map(str, args)], capture_output=True, text=True, env=env or clean_env(), cwd=cwd, timeout=120)
        if check and r.returncode != 0:
            pytest.fail(f"kwheel {' '.join(map(str, args))} exited {r.returncode}\nstdout:\n{r.stdout}\nstderr:\n{r.stderr}")
        return r

    return run


@pytest.fixture(scope="session")
def build_json(run_kwheel):
    """kwheel build ... --json, checked, parsed."""

    def build(repo, out, *extra, env=None) -> dict:
        r = run_kwheel("build", repo, "--version", "0.1.0", "-o", out, "--json", *extra, env=env, check=True)
        return json.loads(r.stdout)

    return build


@pytest.fixture(scope="session")
def pki(tmp_path_factory) -> dict[str, Path]:
    """A private CA and a server certificate it signed for 127.0.0.1 and localhost (the CDN host)."""
    d = tmp_path_factory.mktemp("pki")

    def ossl(*args):
        subprocess.run(["openssl", *map(str, args)], check=True, capture_output=True)

    ossl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=kwheel test CA",
         "-keyout", d / "ca.key", "-out", d / "ca.pem")
    ossl("req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=127.0.0.1", "-keyout", d / "srv.key", "-out", d / "srv.csr")
    (d / "ext").write_text("subjectAltName=IP:127.0.0.1,DNS:localhost\nbasicConstraints=CA:FALSE\n")
    ossl("x509", "-req", "-in", d / "srv.csr", "-CA", d / "ca.pem", "-CAkey", d / "ca.key", "-CAcreateserial",
         "-days", "2", "-extfile", d / "ext", "-out", d / "srv.pem")
    ossl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=another CA",
         "-keyout", d / "other.key", "-out", d / "other.pem")
    # A client certificate from the same CA, for servers that require one (mutual TLS): "client" is
    # certificate and key in one PEM file, the form pip's and kwheel's --client-cert take.
    ossl("req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=kwheel test client", "-keyout", d / "client.key", "-out", d / "client.csr")
    (d / "client-ext").write_text("extendedKeyUsage=clientAuth\nbasicConstraints=CA:FALSE\n")
    ossl("x509", "-req", "-in", d / "client.csr", "-CA", d / "ca.pem", "-CAkey", d / "ca.key", "-CAcreateserial",
         "-days", "2", "-extfile", d / "client-ext", "-out", d / "client.crt")
    (d / "client.pem").write_bytes((d / "client.crt").read_bytes() + (d / "client.key").read_bytes())
    return {"ca": d / "ca.pem", "cert": d / "srv.pem", "key": d / "srv.key", "other_ca": d / "other.pem",
            "client": d / "client.pem"}


@pytest.fixture(scope="session")
def make_repo():
    """make_repo(root, name="img2gray", variants=None (all), extra={path: bytes})."""
    return kwheel_fixtures.make_kernel_repo


# ----------------------------------------------------------------- secrets, suite-wide
# Every test module names its secrets in module constants (TOKEN, WRONG_TOKEN,
# PASSWORD, ...). At the end of the session, the output of every process the
# tests ran (through subprocess's communicate(), which run() uses too) and
# every file the session left under its temp directory are searched for them.
# Files whose job is to hold a secret, written by the tests as input, are
# named below; anything else holding one is a leak and fails the session.

_OUTPUTS: list[tuple[str, str]] = []
_communicate = subprocess.Popen.communicate


def _recording_communicate(self, *args, **kwargs):
    out, err = _communicate(self, *args, **kwargs)
    what = " ".join(map(str, self.args)) if isinstance(self.args, (list, tuple)) else str(self.args)
    text = "".join(x.decode("utf-8", "replace") if isinstance(x, bytes) else x for x in (out, err) if x)
    _OUTPUTS.append((what[:200], text))
    return out, err


subprocess.Popen.communicate = _recording_communicate

# Inputs the tests write on purpose: a token file for the HF token lookup, a
# .pypirc with a password (any name containing "pypirc"), a netrc file with
# an index's credentials (any name containing "netrc"), a fake `keyring`
# program that prints a password. Matched on the name.
SECRET_INPUT_NAMES = {"token", "keyring"}


def _test_secrets(session) -> set[str]:
    import re

    secrets: set[str] = set()
    for mod in {item.module for item in session.items if getattr(item, "module", None)}:
        for name, value in vars(mod).items():
            if re.search(r"TOKEN|PASSWORD|SECRET", name) and isinstance(value, str) and len(value) >= 8:
                secrets.add(value)
    return secrets


def pytest_sessionfinish(session, exitstatus):
    secrets = _test_secrets(session)
    if not secrets:
        return
    leaks = [f"output of `{what}`" for what, text in _OUTPUTS if any(s in text for s in secrets)]
    factory = getattr(session.config, "_tmp_path_factory", None)
    base = factory.getbasetemp() if factory is not None else None
    scanned = 0
    if base is not None and base.exists():
        for p in base.rglob("*"):
            try:
                if p.is_symlink() or not p.is_file() or p.name in SECRET_INPUT_NAMES or "pypirc" in p.name \
                        or "netrc" in p.name:
                    continue
                if p.stat().st_size > 64 << 20:
                    continue
                data = p.read_bytes()
            except OSError:
                continue
            scanned += 1
            if any(s.encode() in data for s in secrets):
                leaks.append(f"file {p}")
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    if reporter is not None:
        reporter.write_line(f"secret check: {len(secrets)} test secrets, {len(_OUTPUTS)} process outputs, "
                            f"{scanned} files: {len(leaks)} leak(s)")
        for leak in leaks[:20]:
            reporter.write_line(f"  SECRET LEAKED in {leak}", red=True)
    if leaks:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
