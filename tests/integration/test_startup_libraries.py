"""What a kwheel run loads (include/kwheel/hub/curl_library.hpp): the developer build
(KWHEEL_LAZY_CURL, CMakeLists.txt) binds libcurl, and the thirty-odd libraries a distribution's
libcurl brings, only when a command needs HTTP, so `kwheel index` on a nightly site does not pay
for them. The oracle is the loader itself: `readelf -d` says whether the binary names libcurl, and
LD_DEBUG=libs lists every library a run initialised.
"""

from __future__ import annotations

import re
import socket
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "hub"))
import kernel_repos as kr  # noqa: E402
from conftest import clean_env  # noqa: E402

NETWORK = 4


def needed(binary: Path) -> set[str]:
    out = subprocess.run(["readelf", "-d", str(binary)], capture_output=True, text=True, check=True).stdout
    return set(re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", out))


def loaded(kwheel_bin: Path, *args, **env) -> tuple[subprocess.CompletedProcess, set[str]]:
    r = subprocess.run([str(kwheel_bin), *map(str, args)], capture_output=True, text=True, timeout=300,
                       env=clean_env(LD_DEBUG="libs", **env))
    return r, {Path(p).name for p in re.findall(r"calling init: (\S+)", r.stderr)}


@pytest.fixture(scope="module")
def lazy(kwheel_bin) -> None:
    if "libcurl.so.4" in needed(kwheel_bin):
        pytest.skip("this kwheel links libcurl (KWHEEL_LAZY_CURL=OFF: the release binary and pyproject.toml's wheel)")


def closed_port() -> int:
    # A port that was free a moment ago and has no listener: connecting fails at once.
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_index_and_a_local_build_load_no_libcurl(kwheel_bin, lazy, tmp_path):
    repo = tmp_path / "relu"
    kr.write_variant(repo, "torch-universal", layout="flat", name="relu", files=kr.demo_package("relu", "torch-universal"))
    r, libs = loaded(kwheel_bin, "build", repo, "--version", "1.0.0", "-o", tmp_path / "dist", "-q")
    assert r.returncode == 0, r.stderr[-2000:]
    assert not any(n.startswith("libcurl") for n in libs), sorted(libs)
    r, libs = loaded(kwheel_bin, "index", tmp_path / "dist", "-o", tmp_path / "site", "-q")
    assert r.returncode == 0, r.stderr[-2000:]
    assert (tmp_path / "site" / "simple" / "relu" / "index.html").is_file()
    assert libs and not any(n.startswith("libcurl") for n in libs), sorted(libs)


def test_a_command_that_needs_http_loads_libcurl_and_reaches_the_network(kwheel_bin, lazy, tmp_path):
    endpoint = f"http://127.0.0.1:{closed_port()}"
    r, libs = loaded(kwheel_bin, "build", "user/relu", "-o", tmp_path / "dist", HF_ENDPOINT=endpoint)
    assert "libcurl.so.4" in libs, sorted(libs)
    # libcurl's own words for the refused connection: the call went through the bound table.
    assert r.returncode == NETWORK, r.stderr[-2000:]
    assert "Couldn't connect to server" in r.stderr or "Connection refused" in r.stderr, r.stderr[-2000:]
