"""Fixtures for the release wheel's checks (scripts/release-wheel runs them
with KWHEEL_RELEASE_WHEEL set): the integration suite's helpers (the test CA,
kernel repos on disk), loaded from tests/integration/."""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
INTEGRATION = ROOT / "tests" / "integration"
sys.path.insert(0, str(INTEGRATION))

# The integration suite's conftest under another name: its fixtures, not its
# session hooks.
_spec = importlib.util.spec_from_file_location("integration_conftest", INTEGRATION / "conftest.py")
integration = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(integration)
pki = integration.pki
venv_python = integration.venv_python
venv_bin = integration.venv_bin


@pytest.fixture(scope="session")
def release_wheel() -> Path:
    p = os.environ.get("KWHEEL_RELEASE_WHEEL")
    if not p or not Path(p).is_file():
        pytest.fail("KWHEEL_RELEASE_WHEEL names no wheel; run scripts/release-wheel DIR, which sets it")
    return Path(p)
