"""Starting and stopping the real servers the tests run on 127.0.0.1 (pypiserver, devpi, ...)."""

from __future__ import annotations

import contextlib
import socket
import subprocess
import sys
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
