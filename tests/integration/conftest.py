"""Shared fixtures for the integration tests: the kwheel binary, the tools
venv, and a factory for kernel repos on disk (kwheel_fixtures.py)."""

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
def make_repo():
    """make_repo(root, name="img2gray", variants=None (all), extra={path: bytes})."""
    return kwheel_fixtures.make_kernel_repo
