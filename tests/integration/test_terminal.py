"""What a person at a terminal sees (issue 33): `kwheel build` run on a real pseudo-terminal draws
its progress line in place and ends with the table; the same run into a pipe or a file prints no
progress at all, and `-q` prints nothing on success but warnings.

The terminal is a real pty (the kernel's, through Python's `pty`), so kwheel's isatty() decides as
it does for a user; nothing is faked inside kwheel.
"""

from __future__ import annotations

import os
import pty
import re
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(ROOT / "tests" / "hub"))
sys.path.insert(0, str(HERE))
import fixture as hubfix  # noqa: E402
import hubtest as H  # noqa: E402
import kernel_repos as kr  # noqa: E402

REPO = "acme/act"
VARIANTS = ("torch-cpu", "torch-universal")  # pure Python: no binary evidence needed here


@pytest.fixture(scope="module")
def hub(tmp_path_factory):
    root = tmp_path_factory.mktemp("tty-store") / "root"
    trees = {}
    for v in VARIANTS:
        trees.update(kr.variant_tree(v, layout="flat", name="act", version=1,
                                     files={**kr.demo_package("act", "act v1"), "table.bin": H.blob(v, 300_000)}))
    kr.make_kernel_repo(root, REPO, {1: trees})
    with hubfix.hub_server(root) as srv:
        yield srv


def run_on_pty(argv: list[str], env: dict, cwd: Path) -> tuple[int, str]:
    """Runs argv with stdin, stdout and stderr on a fresh pseudo-terminal; returns (exit, screen bytes)."""
    master, slave = pty.openpty()
    proc = subprocess.Popen(argv, stdin=slave, stdout=slave, stderr=slave, env=env, cwd=cwd, close_fds=True)
    os.close(slave)
    chunks = []
    while True:
        try:
            data = os.read(master, 65536)
        except OSError:  # EIO: every holder of the slave side has closed it
            break
        if not data:
            break
        chunks.append(data)
    os.close(master)
    return proc.wait(timeout=120), b"".join(chunks).decode(errors="replace")


def test_a_terminal_gets_the_progress_line_and_the_table(hub, kwheel_bin, tmp_path):
    env = H.clean_env(tmp_path / "home", HF_ENDPOINT=hub.endpoint, TERM="xterm")
    code, screen = run_on_pty([str(kwheel_bin), "build", REPO, "-o", "dist"], env, tmp_path)
    assert code == 0, screen
    # The progress line is redrawn in place (CR, erase line) and ends on its totals.
    draws = re.findall(r"\r\x1b\[Kdownloading (\d+)/(\d+) files", screen)
    assert draws, screen
    done, total = draws[-1]
    assert done == total and int(total) >= len(VARIANTS) * 3, draws
    # Then the table, one row per variant, each built, and the closing line.
    table = screen[screen.index("VARIANT"):]
    for v in VARIANTS:
        assert re.search(rf"^{re.escape(v)}\s+built\s+act-1\.\S+\.whl", table, re.M), table
    assert "wrote 2 wheel(s) to dist/" in table


def test_a_pipe_gets_no_progress_and_quiet_gets_nothing(hub, kwheel_bin, tmp_path):
    env = H.clean_env(tmp_path / "home", HF_ENDPOINT=hub.endpoint, TERM="xterm")
    piped = subprocess.run([kwheel_bin, "build", REPO, "-o", tmp_path / "a"], env=env, capture_output=True, text=True, timeout=120)
    assert piped.returncode == 0, piped.stderr
    assert "\r" not in piped.stdout + piped.stderr and "\x1b" not in piped.stdout + piped.stderr
    assert "VARIANT" in piped.stdout
    code, screen = run_on_pty([str(kwheel_bin), "build", REPO, "-o", "b", "-q"], env, tmp_path)
    # As with pip -q, warnings (here: unsigned variants) may still reach stderr; nothing else does.
    rest = [ln for ln in screen.splitlines() if not ln.startswith("kwheel: warning: ")]
    assert code == 0 and rest == [], repr(screen)
