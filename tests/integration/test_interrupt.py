"""An interrupted build leaves no partial file behind, and the next run
succeeds with the same bytes an uninterrupted build gives."""

import hashlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from elfgen import shared_object  # noqa: E402

KWHEEL = os.environ.get("KWHEEL_BIN", str(Path(__file__).resolve().parents[2] / "build" / "kwheel"))
VARIANTS = ["torch27-cxx11-cu126-x86_64-linux", "torch28-cxx11-cu126-x86_64-linux"]


def make_repo(root: Path, mib: int = 96) -> Path:
    # Compressible but not trivial, so deflate takes long enough to interrupt.
    block = hashlib.sha256(b"seed").digest() * 2048
    for i, v in enumerate(VARIANTS):
        pkg = root / "build" / v / "img2gray"
        pkg.mkdir(parents=True)
        (pkg / "__init__.py").write_text("x = 1\n")
        with open(pkg / "_img2gray_abc1234.abi3.so", "wb") as f:
            f.write(shared_object())
            for k in range(mib * 16):
                f.write(block[(k * 7 + i) % 64:] + bytes([k % 251]) * 97)
    return root


def temps(out: Path) -> list[str]:
    return sorted(p.name for p in out.iterdir() if ".kwheel-tmp-" in p.name) if out.exists() else []


def wait_for_temp(out: Path, proc: subprocess.Popen, deadline_s: float = 60.0) -> None:
    end = time.monotonic() + deadline_s
    while not temps(out):
        assert proc.poll() is None, "the build finished before it could be interrupted"
        assert time.monotonic() < end, "no temp file appeared"
        time.sleep(0.02)  # polling for a file to appear, not a synchronisation sleep


def build(repo: Path, out: Path, *extra: str) -> subprocess.CompletedProcess:
    return subprocess.run([KWHEEL, "build", str(repo), "--version", "0.1.0", "--name", "img2gray", "-o", str(out), "--json", *extra],
                          capture_output=True, text=True)


def hashes(out: Path) -> dict:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in out.glob("*.whl")}


def test_sigint_removes_partial_wheels_and_next_run_succeeds(tmp_path):
    """Ctrl-C, a kill, and a closed terminal, in turn, each mid-write: each run dies of its
    signal and leaves -o as it was."""
    repo = make_repo(tmp_path / "repo")
    out = tmp_path / "dist"
    out.mkdir()
    (out / "keep.txt").write_text("user file\n")
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        proc = subprocess.Popen([KWHEEL, "build", str(repo), "--version", "0.1.0", "--name", "img2gray", "-o", str(out), "-q"],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        wait_for_temp(out, proc)
        proc.send_signal(sig)
        proc.communicate(timeout=60)
        assert proc.returncode == -sig, sig
        assert temps(out) == [], sig
        assert sorted(p.name for p in out.iterdir()) == ["keep.txt"], sig

    again = build(repo, out)
    assert again.returncode == 0, again.stderr
    reference = build(repo, tmp_path / "reference")
    assert reference.returncode == 0
    assert hashes(out) == hashes(tmp_path / "reference") and len(hashes(out)) == 2


def test_sigkill_leftovers_are_swept_by_the_next_run(tmp_path):
    repo = make_repo(tmp_path / "repo", mib=48)
    out = tmp_path / "dist"
    proc = subprocess.Popen([KWHEEL, "build", str(repo), "--version", "0.1.0", "--name", "img2gray", "-o", str(out), "-q"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    wait_for_temp(out, proc)
    proc.kill()
    proc.communicate(timeout=60)
    assert temps(out), "SIGKILL cannot clean up: leftovers are expected here"
    again = build(repo, out)
    assert again.returncode == 0, again.stderr
    assert temps(out) == []
    assert len(list(out.glob("*.whl"))) == 2


def _unshare_works() -> bool:
    try:
        return subprocess.run(["unshare", "--pid", "--fork", "true"], capture_output=True).returncode == 0
    except FileNotFoundError:
        return False


needs_unshare = pytest.mark.skipif(not _unshare_works(), reason="needs unshare(1) with PID namespaces (root or user namespaces)")


@needs_unshare
def test_temps_are_owned_by_a_lock_not_a_pid(tmp_path):
    """Scratch left in -o by a dead kwheel is swept; scratch whose owner lock is held by a
    live process in another PID namespace (a second container on the same volume, where
    PIDs mean nothing to us) is kept, whatever PID-like numbers its name has."""
    repo = make_repo(tmp_path / "repo", mib=1)
    out = tmp_path / "dist"
    out.mkdir()
    live, dead = "0123456789abcdef", "fedcba9876543210"
    (out / f".a-0.1.0-py3-none-any.whl.kwheel-tmp-{live}-0").write_bytes(b"live")
    (out / f".kwheel-owner-{live}").touch()
    (out / f".b-0.1.0-py3-none-any.whl.kwheel-tmp-{dead}-0").write_bytes(b"dead")
    (out / f".b-0.1.0-py3-none-any.whl.kwheel-tmp-{dead}-0.AbC123").write_bytes(b"libzip's")
    (out / f".kwheel-owner-{dead}").touch()
    holder = subprocess.Popen(["unshare", "--pid", "--fork", "flock", str(out / f".kwheel-owner-{live}"), "sleep", "600"])
    try:
        end = time.monotonic() + 30
        while not _held(out / f".kwheel-owner-{live}"):
            assert holder.poll() is None and time.monotonic() < end, "the holder never took its lock"
            time.sleep(0.02)  # polling for the lock to be taken, not a synchronisation sleep
        r = build(repo, out)
        assert r.returncode == 0, r.stderr
        left = sorted(p.name for p in out.iterdir() if p.name.startswith("."))
        assert left == sorted([f".a-0.1.0-py3-none-any.whl.kwheel-tmp-{live}-0", f".kwheel-owner-{live}", ".kwheel"]), left
    finally:
        holder.kill()
        holder.wait()


def _held(lock: Path) -> bool:
    import fcntl
    with open(lock, "rb") as f:
        try:
            fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        fcntl.flock(f, fcntl.LOCK_UN)
        return False


@needs_unshare
def test_a_build_in_another_pid_namespace_survives_a_build_here(tmp_path):
    """The probe's case, for real: a build running as PID 1 of its own namespace, and a
    second build into the same -o started here while the first has temps in flight. The
    first used to lose its temps to the second's sweep (exit 7); now both succeed, and the
    first's wheels are the bytes an undisturbed build gives."""
    repo = make_repo(tmp_path / "repo", mib=48)
    other = make_repo(tmp_path / "other", mib=1)
    out = tmp_path / "dist"
    first = subprocess.Popen(["unshare", "--pid", "--fork", "--mount-proc", KWHEEL, "build", str(repo), "--version", "0.1.0",
                              "--name", "img2gray", "-o", str(out), "-q"], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    wait_for_temp(out, first)
    second = subprocess.run([KWHEEL, "build", str(other), "--version", "0.1.0", "--name", "othername", "-o", str(out), "-q"],
                            capture_output=True, text=True)
    assert second.returncode == 0, second.stderr
    _, err = first.communicate(timeout=300)
    assert first.returncode == 0, err
    reference = build(repo, tmp_path / "reference")
    assert reference.returncode == 0
    built = {k: v for k, v in hashes(out).items() if not k.startswith("othername-")}
    assert built == hashes(tmp_path / "reference") and len(built) == 2
    assert temps(out) == []


# --------------------------------------------------------------------------- the sweep deletes only what kwheel made (#38, 3)
#
# The sweep used to remove any entry whose name merely contained
# "kwheel-<letters>-<16 hex>-", lock or no lock, whatever it was and whoever
# owned it, in build's -o even when the build wrote nothing. Look-alikes of
# every shape are laid out in the -o directory, its parent and $TMPDIR; after
# each command every one of them is as it was, while scratch exactly as a
# killed kwheel leaves it (its entries and an unheld, empty owner lock) is
# swept from the directory the command writes into.

LOOKALIKE_TOKEN = "3af4e79c0ffee123"  # has a dead owner lock: only its genuine scratch may go
NOLOCK_TOKEN = "0123456789abcdef"     # no lock file at all: nothing proves it kwheel's
OTHER_UID = 4242


def lay_out_lookalikes(d: Path, elsewhere: Path) -> list[Path]:
    """Everything that must survive in `d`; returns the paths."""
    d.mkdir(parents=True, exist_ok=True)
    t, n = LOOKALIKE_TOKEN, NOLOCK_TOKEN
    made = []

    def file(name: str, text: str = "user data\n") -> None:
        (d / name).write_text(text)
        made.append(d / name)

    def directory(name: str) -> None:
        (d / name).mkdir()
        (d / name / "inside.txt").write_text("user data\n")
        made.append(d / name)

    def symlink(name: str, target: Path) -> None:
        (d / name).symlink_to(target)
        made.append(d / name)

    (d / f".kwheel-owner-{t}").write_bytes(b"")  # dead: its genuine scratch goes, with it
    file(f"ci-kwheel-build-{t}-log.txt")           # the probe's name
    file(f"kwheel-build-{t}-log.txt")
    file(f".x.whl.kwheel-tmp-{t}-0.bak")
    file(f"notes-.kwheel-owner-{t}")
    directory(f"kwheel-validate-{t}-notes")
    directory(f"kwheel-build-{t}-")
    directory(f"kwheel-validate-{n}-AbCdEf")       # exact names, but no owner lock
    file(f".a.whl.kwheel-tmp-{n}-0")
    target = elsewhere / d.name
    target.mkdir(parents=True, exist_ok=True)
    (target / "precious.txt").write_text("user data\n")
    symlink(f"kwheel-validate-{t}-SyMlNk", target)   # exact names under the dead token, but not what kwheel makes there
    symlink(f".b.whl.kwheel-tmp-{t}-7", target / "precious.txt")
    directory(f".c.whl.kwheel-tmp-{t}-8")
    file(f"kwheel-inspect-{t}-FiLe12")
    if os.geteuid() == 0:  # another user's scratch, under the dead token and under a lock of theirs
        file(f".d.whl.kwheel-tmp-{t}-9")
        os.lchown(d / f".d.whl.kwheel-tmp-{t}-9", OTHER_UID, OTHER_UID)
        other = "fedcba9876543210"
        (d / f".kwheel-owner-{other}").write_bytes(b"")
        os.lchown(d / f".kwheel-owner-{other}", OTHER_UID, OTHER_UID)
        made.append(d / f".kwheel-owner-{other}")
        file(f".e.whl.kwheel-tmp-{other}-0")
        os.lchown(d / f".e.whl.kwheel-tmp-{other}-0", OTHER_UID, OTHER_UID)
    return made


def genuine_stale(d: Path) -> list[Path]:
    """Exactly what a SIGKILLed kwheel leaves under the dead token: a partial wheel, libzip's
    temp beside it, an index's scratch site."""
    t = LOOKALIKE_TOKEN
    paths = [d / f".w-1.0-py3-none-any.whl.kwheel-tmp-{t}-0", d / f".w-1.0-py3-none-any.whl.kwheel-tmp-{t}-0.Ab12Cd",
             d / f".site.kwheel-new-{t}-Xy98Zw"]
    paths[0].write_bytes(b"partial")
    paths[1].write_bytes(b"libzip's")
    paths[2].mkdir()
    (paths[2] / "index.html").write_text("half a site")
    return paths


def snapshot(paths: list[Path]) -> dict:
    """Each path as it is: type, owner, and content or link target, recursively."""
    def one(p: Path):
        st = p.lstat()
        if p.is_symlink():
            return ("link", st.st_uid, os.readlink(p))
        if p.is_dir():
            return ("dir", st.st_uid, {c.name: one(c) for c in sorted(p.iterdir())})
        return ("file", st.st_uid, p.read_bytes())
    return {str(p): one(p) if os.path.lexists(p) else None for p in paths}


@pytest.mark.parametrize("command", ["build", "build-writing-nothing", "index", "pin"])
def test_the_sweep_touches_nothing_kwheel_did_not_make(tmp_path, command):
    repo = make_repo(tmp_path / "repo", mib=0)  # small and not a "bomb" to index's reader
    wheels = tmp_path / "wheels"
    assert build(repo, wheels).returncode == 0
    parent, tmpdir, elsewhere = tmp_path / "parent", tmp_path / "tmp", tmp_path / "elsewhere"
    out = parent / "out"
    if command == "build-writing-nothing":  # its wheels are there and up to date: the build writes nothing
        assert build(repo, out).returncode == 0
    kept = [p for d in (parent, out, tmpdir) for p in lay_out_lookalikes(d, elsewhere)]
    kept += [elsewhere]
    stale = genuine_stale(out)
    before = snapshot(kept + stale)

    env = {**os.environ, "TMPDIR": str(tmpdir)}
    argv = {"build": ["build", str(repo), "--version", "0.1.0", "--name", "img2gray", "-o", str(out)],
            "build-writing-nothing": ["build", str(repo), "--version", "0.1.0", "--name", "img2gray", "-o", str(out)],
            "index": ["index", str(wheels), "-o", str(out / "site")],
            "pin": ["pin", str(wheels), "--torch", "2.7", "--cuda", "12.6", "-o", str(out / "requirements.txt")]}[command]
    r = subprocess.run([KWHEEL, *argv, "-q"], capture_output=True, text=True, env=env, timeout=300)
    assert r.returncode == 0, r.stderr

    after = snapshot(kept + stale)
    assert {p: after[p] for p in map(str, kept)} == {p: before[p] for p in map(str, kept)}
    if command == "build-writing-nothing":  # nothing written in -o, so nothing swept there
        assert after == before
    else:
        assert [p for p in stale if os.path.lexists(p)] == [], "a dead kwheel's scratch is still swept"
        assert not (out / f".kwheel-owner-{LOOKALIKE_TOKEN}").exists()
