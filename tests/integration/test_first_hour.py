"""Issue #33, items 3 and 9: where a newcomer's first hour with kwheel went unlike pip,
uv, twine, `kernels` and `hf`. The newcomer's path, for real: kernels on the fixture Hub
(tests/hub/server.py), a lock written by kernels 0.17.2's `kernels lock`, a pypiserver
with a password, `pin`, and the real kwheel binary.

-q prints nothing on success, for every command (pin without -o keeps its product,
the requirement lines: `kwheel pin -q > requirements.txt` must not write an empty
file); what went wrong still goes to stderr; --json is unaffected by -q. A mistyped
command or option is named with the nearest real one; --version v2 gets "did you mean
2"; -o is one flag (pin's --output stays as a hidden alias); options have types in
--help; --lock DIR points to --project DIR; -o naming a file is refused before the Hub
is asked; Ctrl-C prints one line and removes the -o directory the run created; every
--help ends with examples that use only that command's options."""
from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import hubtest as H
from hubtest import hubfix

sys.path.insert(0, str(H.ROOT / "tests" / "hub"))
import kernel_repos as kr  # noqa: E402

VENV_BIN = Path(sys.executable).parent
TORCH_PYTHON = "/usr/bin/python3"
HF_TOKEN = "hf_kwheelFirstHourTOKEN_1a2b3c4d5e6f"
PASSWORD = "pw-first-hour-Xy71-never-printed"
REPO = "acme/img2gray"
CPU = "torch27-cxx11-cpu-x86_64-linux"
UNIVERSAL = "torch-universal"
COMMANDS = ["build", "variants", "validate", "inspect", "publish", "index", "pin", "verify", "link"]


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    """acme/img2gray as kernel-builder uploads it (flat layout, branch v1): a CPU variant with a
    2 MB .so, and a pure-Python one that validate can PASS with Debian's torch."""
    root = tmp_path_factory.mktemp("firsthour") / "root"
    cpu = kr.variant_tree(CPU, layout="flat", name="img2gray",
                          files=kr.demo_package("img2gray", "cpu", so=H.elf_base() + H.blob("cpu", 2_000_000)),
                          kernel_id="_img2gray_0123abc")  # the id demo_package's .so is named by
    universal = kr.variant_tree(UNIVERSAL, layout="flat", name="img2gray", files=kr.demo_package("img2gray", "universal"))
    kr.make_kernel_repo(root, REPO, {1: {**cpu, **universal}})
    return root


@pytest.fixture(scope="module")
def hub(store):
    with hubfix.hub_server(store, token=HF_TOKEN) as srv:
        yield srv


@pytest.fixture
def env(hub, tmp_path):
    """kwheel's environment as the newcomer had it: the Hub and its token from HF_*."""
    return H.clean_env(tmp_path / "home", HF_ENDPOINT=hub.endpoint, HF_TOKEN=HF_TOKEN, HF_HUB_CACHE=tmp_path / "cache")


def kw(*args, env=None, timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run([H.KWHEEL, *map(str, args)], capture_output=True, text=True, env=env or H.clean_env(), timeout=timeout)


def usage_error(p: subprocess.CompletedProcess, *needles: str) -> str:
    """Exit 2, one `kwheel: error:` line on stderr holding every needle, nothing on stdout."""
    assert p.returncode == 2, (p.returncode, p.stdout, p.stderr)
    assert p.stdout == "", p.stdout
    lines = p.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("kwheel: error: "), p.stderr
    for n in needles:
        assert n in lines[0], (n, lines[0])
    return lines[0]


def free_port() -> int:
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def pypiserver(tmp_path_factory):
    from passlib.apache import HtpasswdFile
    import socket
    d = tmp_path_factory.mktemp("pypiserver")
    (d / "packages").mkdir()
    h = HtpasswdFile(str(d / "htpasswd"), new=True)
    h.set_password("alice", PASSWORD)
    h.save()
    port = free_port()
    proc = subprocess.Popen([VENV_BIN / "pypi-server", "run", "-p", str(port), "-i", "127.0.0.1", "-a", "update", "-P", d / "htpasswd",
                             "--disable-fallback", d / "packages"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        end = time.monotonic() + 30
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                assert proc.poll() is None and time.monotonic() < end, "pypiserver did not start"
                time.sleep(0.05)  # polling for the port to open, not a synchronisation sleep
        yield f"http://127.0.0.1:{port}"
    finally:
        proc.terminate()
        proc.wait(timeout=10)


# =========================================================================== item 3: -q


def quiet_ok(p: subprocess.CompletedProcess, *, stderr_empty: bool = True) -> None:
    assert p.returncode == 0, (p.returncode, p.stdout, p.stderr)
    assert p.stdout == "", p.stdout
    if stderr_empty:
        assert p.stderr == "", p.stderr
    else:  # a build of unsigned fixture variants warns, as it must; nothing else
        assert all(ln.startswith("kwheel: warning: ") for ln in p.stderr.splitlines()), p.stderr


def json_doc(p: subprocess.CompletedProcess) -> dict:
    assert p.returncode == 0, (p.returncode, p.stdout, p.stderr)
    return json.loads(p.stdout)


def test_quiet_prints_nothing_on_success_for_every_command(hub, env, pypiserver, tmp_path):
    """The newcomer's hour with -q on every command: build from the Hub, variants, inspect,
    verify, validate, publish to a pypiserver with a password, index, pin."""
    dist = tmp_path / "dist"
    quiet_ok(kw("build", REPO, "-o", dist, "-q", env=env), stderr_empty=False)
    wheels = sorted(dist.glob("*.whl"))
    assert len(wheels) == 2, wheels
    universal = next(w for w in wheels if w.name.endswith("-py3-none-any.whl"))
    cpu = next(w for w in wheels if w != universal)
    quiet_ok(kw("variants", REPO, "-q", env=env))
    quiet_ok(kw("inspect", cpu, "-q"))
    quiet_ok(kw("verify", dist, "--allow-unsigned", "-q"))
    quiet_ok(kw("validate", dist, "--python", TORCH_PYTHON, "--device", "cpu", "-q"))
    publish_env = {**env, "TWINE_USERNAME": "alice", "TWINE_PASSWORD": PASSWORD}
    quiet_ok(kw("publish", dist, "--repository-url", pypiserver + "/", "-q", env=publish_env))
    quiet_ok(kw("index", dist, "-o", tmp_path / "site", "-q"))  # unsigned wheels are neutral: counted without -q, silent with it
    req = tmp_path / "requirements.txt"
    quiet_ok(kw("pin", pypiserver + "/simple/", "--torch", "2.7", "--cpu", "-o", req, "-q"))
    assert "--hash=sha256:" in req.read_text()
    # pin's product is its stdout: -q keeps it, byte for byte what -o wrote.
    p = kw("pin", pypiserver + "/simple/", "--torch", "2.7", "--cpu", "-q")
    assert p.returncode == 0 and p.stderr == "", p.stderr
    assert p.stdout == req.read_text()
    # Without -q each of these did print (so the assertions above can fail).
    assert kw("inspect", cpu).stdout and kw("variants", REPO, env=env).stdout
    assert kw("index", dist, "-o", tmp_path / "site").stdout
    assert kw("publish", dist, "--repository-url", pypiserver + "/", "--skip-existing", env=publish_env).stdout


def test_quiet_does_not_touch_json(hub, env, tmp_path):
    """--json is one document on stdout whatever -q says: the same document."""
    dist = tmp_path / "dist"
    built = json_doc(kw("build", REPO, "-o", dist, "--json", "-q", env=env))
    assert built["committed"] is True and len(list(dist.glob("*.whl"))) == 2
    cpu = next(w for w in dist.glob("*.whl") if not w.name.endswith("-py3-none-any.whl"))
    for args, e in ((("variants", REPO), env), (("inspect", cpu), None), (("verify", dist, "--allow-unsigned"), None),
                    (("pin", dist, "--torch", "2.7", "--cpu"), None)):
        loud, quiet = kw(*args, "--json", env=e), kw(*args, "--json", "-q", env=e)
        assert json_doc(quiet) == json_doc(loud), args
        assert quiet.stderr == "", quiet.stderr


def test_quiet_still_says_what_failed_on_stderr(hub, env, pypiserver, tmp_path):
    """A -q run that fails says why on stderr, and nothing on stdout."""
    bad = tmp_path / "bad.whl"
    bad.write_bytes(b"not a zip")
    p = kw("inspect", bad, "-q")
    assert p.returncode != 0 and p.stdout == "" and "kwheel: error:" in p.stderr, p
    # Variants that fail to build (unsigned, with --require-signature): the table is gone, the
    # failures are not.
    p = kw("build", REPO, "--require-signature", "-o", tmp_path / "dist", "-q", env=env)
    assert p.returncode != 0 and p.stdout == "", (p.returncode, p.stdout, p.stderr)
    for v in (CPU, UNIVERSAL):
        assert re.search(rf"^kwheel: error: variant {v}: .*sign", p.stderr, re.M), p.stderr
    # Uploads the index refuses (a wrong password): one error for the run (item 10), still under -q.
    dist = tmp_path / "dist"
    assert kw("build", REPO, "-o", dist, "-q", env=env).returncode == 0
    p = kw("publish", dist, "--repository-url", pypiserver + "/", "-q", env={**env, "TWINE_USERNAME": "alice", "TWINE_PASSWORD": "wrong"})
    assert p.returncode == 6 and p.stdout == "", (p.returncode, p.stdout, p.stderr)
    (line,) = [ln for ln in p.stderr.splitlines() if ln.startswith("kwheel: error: ")]
    assert "refused the credentials of user 'alice'" in line and f"none of the {len(list(dist.glob('*.whl')))} files" in line, line


# =========================================================================== item 9: the CLI


def test_a_mistyped_command_is_named_with_a_suggestion(tmp_path):
    line = usage_error(kw("biuld", REPO), "'biuld' is not a kwheel command", "did you mean 'build'?")
    assert "A subcommand is required" not in line
    usage_error(kw("publsih", "dist"), "did you mean 'publish'?")
    line = usage_error(kw("frobnicate"), "'frobnicate' is not a kwheel command", "commands: build, ")
    assert "did you mean" not in line
    p = kw("biuld", REPO, "--json")
    assert p.returncode == 2 and json.loads(p.stdout)["error"].startswith("'biuld' is not a kwheel command")
    usage_error(kw("--verison"), "'--verison'", "did you mean '--version'?")
    # And an option, within its command.
    usage_error(kw("build", REPO, "--outt", tmp_path / "d"), "'--outt'", "did you mean '--out'?", "kwheel build --help")
    usage_error(kw("--jsn", "build", REPO), "'--jsn'", "did you mean '--json'?")


def test_version_v2_is_refused_with_the_number_before_the_hub_is_asked(hub, env, tmp_path):
    for cmd in (["build", REPO, "-o", tmp_path / "dist"], ["variants", REPO]):
        hub.clear_log()
        usage_error(kw(*cmd, "--version", "v2", env=env), "--version 'v2'", "did you mean --version 2?", "--revision v2")
        assert hub.log() == []
    assert not (tmp_path / "dist").exists()
    # The number it suggests is the spelling that works (branch v1 here).
    p = kw("variants", REPO, "--version", "1", "-q", env=env)
    assert p.returncode == 0, p.stderr


def test_o_naming_a_file_is_refused_before_the_hub_is_asked(hub, env, tmp_path):
    target = tmp_path / "dist"
    target.write_text("a file the user already had\n")
    hub.clear_log()
    usage_error(kw("build", REPO, "-o", target, env=env), f"-o '{target}' is a file, not a directory")
    assert hub.log() == []
    assert target.read_text() == "a file the user already had\n"
    usage_error(kw("index", tmp_path, "-o", target), "is a file, not a directory")
    # pin's -o is a file: a directory is what it refuses, before any index is asked.
    usage_error(kw("pin", "http://127.0.0.1:9/simple/", "--torch", "2.7", "--cpu", "-o", tmp_path), "is a directory",
                str(tmp_path / "requirements.txt"))


def test_lock_given_a_directory_points_to_project(hub, tmp_path):
    """The project directory `kernels lock` wrote its lock into, given to --lock."""
    proj = tmp_path / "proj"
    proj.mkdir()
    (proj / "pyproject.toml").write_text(f'[project]\nname = "team"\nversion = "0"\n\n[tool.kernels.dependencies]\n"{REPO}" = 1\n')
    r = subprocess.run([str(VENV_BIN / "kernels"), "lock", str(proj)], env=hubfix.client_env(hub, tmp_path / "khome", HF_TOKEN=HF_TOKEN),
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and (proj / "kernels.lock").is_file(), r.stderr
    env = H.clean_env(tmp_path / "home", HF_ENDPOINT=hub.endpoint, HF_TOKEN=HF_TOKEN)
    hub.clear_log()
    usage_error(kw("build", "--lock", proj, "-o", tmp_path / "dist", env=env), f"--lock '{proj}' is a directory", f"--project {proj}")
    assert hub.log() == []
    usage_error(kw("pin", tmp_path, "--lock", proj, "--torch", "2.7", "--cpu"), "is a directory", str(proj / "kernels.lock"))
    # The suggestion works.
    p = kw("build", "--project", proj, "-o", tmp_path / "dist", "-q", env=env)
    assert p.returncode == 0 and p.stdout == "", p.stderr
    assert len(list((tmp_path / "dist").glob("*.whl"))) == 2


def help_text(*cmd: str) -> str:
    p = kw(*cmd, "--help")
    assert p.returncode == 0, p.stderr
    return p.stdout


def test_one_output_flag_and_pins_old_name_still_works(tmp_path, hub, env):
    for cmd in ("build", "index", "pin"):
        assert re.search(r"^\s*-o,\s*--out\b", help_text(cmd), re.M), cmd
    assert "--output" not in help_text("pin")
    dist = tmp_path / "dist"
    assert kw("build", REPO, "-o", dist, "-q", env=env).returncode == 0
    by_out, by_output = tmp_path / "a.txt", tmp_path / "b.txt"
    assert kw("pin", dist, "--torch", "2.7", "--cpu", "--out", by_out).returncode == 0
    p = kw("pin", dist, "--torch", "2.7", "--cpu", "--output", by_output)
    assert p.returncode == 0, p.stderr
    assert by_out.read_text() == by_output.read_text() and "--hash=sha256:" in by_out.read_text()
    usage_error(kw("pin", dist, "--torch", "2.7", "--cpu", "--out", by_out, "--output", by_output), "--output")


def test_options_show_their_types(hub, env, tmp_path):
    for cmd in ("build", "variants", "publish"):
        text = help_text(cmd)
        assert re.search(r"--stall-timeout SECONDS\b", text), cmd
    build = help_text("build")
    assert re.search(r"--compression-level INT:INT in \[0 - 9\]", build), build
    # Typed means refused at once: no request reaches the Hub.
    hub.clear_log()
    p = kw("build", REPO, "--compression-level", "12", "-o", tmp_path / "d", env=env)
    assert p.returncode == 2 and "--compression-level" in p.stderr, p.stderr
    p = kw("build", REPO, "--stall-timeout", "30s", "-o", tmp_path / "d", env=env)
    assert p.returncode == 2 and "--stall-timeout" in p.stderr, p.stderr
    assert hub.log() == []


def test_every_help_ends_with_examples_that_use_its_own_options():
    for cmd in COMMANDS:
        text = help_text(cmd)
        examples = text.split("Examples:\n", 1)
        assert len(examples) == 2, cmd
        lines = [ln.strip() for ln in examples[1].splitlines() if ln.strip().startswith("kwheel ")]
        assert 2 <= len(lines) <= 3, (cmd, lines)
        options = set(re.findall(r"(?<![\w-])(--?[A-Za-z][\w-]*)", examples[0]))
        for ln in lines:
            argv = ln.split("#", 1)[0].split()
            assert argv[1] == cmd, ln
            for word in argv:
                if word.startswith("-"):
                    assert word.split("=", 1)[0] in options, (cmd, word)
    top = help_text()
    assert "Examples:" in top and top.rstrip().endswith("Each command's --help has its own.")


# --------------------------------------------------------------------------- Ctrl-C


def _owner_lock_in(out: Path) -> bool:
    return out.is_dir() and any(p.name.startswith(".kwheel-owner-") for p in out.iterdir())


def _interrupt_held_build(hub, env, out: Path) -> subprocess.CompletedProcess:
    """A build whose CPU .so the Hub withholds; SIGINT once the Hub holds that request and the
    build has taken -o (its owner lock is there)."""
    hub.clear_log()
    fault = hub.add_fault("hold", path=f"*/build/{CPU}/*.so", max_seconds=120)
    try:
        proc = subprocess.Popen([H.KWHEEL, "build", REPO, "-o", str(out)], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True)
        end = time.monotonic() + 60
        while not (any(e.get("held") for e in hub.log()) and _owner_lock_in(out)):
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < end, "the build never reached the held download"
            time.sleep(0.02)  # polling the Hub's log and the disk, not a synchronisation sleep
        proc.send_signal(signal.SIGINT)
        stdout, stderr = proc.communicate(timeout=60)
    finally:
        hub.release(fault["id"])
    return subprocess.CompletedProcess(proc.args, proc.returncode, stdout, stderr)


def test_ctrl_c_says_so_once_and_removes_the_out_dir_it_created(hub, env, tmp_path):
    out = tmp_path / "new" / "dist"
    p = _interrupt_held_build(hub, env, out)
    assert p.returncode == -signal.SIGINT, p  # a shell shows 130
    assert [ln for ln in p.stderr.splitlines() if "interrupted" in ln] == ["kwheel: interrupted"], p.stderr
    assert p.stderr.splitlines()[-1] == "kwheel: interrupted"
    assert "Traceback" not in p.stderr and "error" not in p.stderr, p.stderr
    assert not (tmp_path / "new").exists()  # -o and the parent the run made for it


def test_ctrl_c_leaves_an_out_dir_that_was_there_as_it_was(hub, env, tmp_path):
    out = tmp_path / "dist"
    out.mkdir()
    (out / "keep.txt").write_text("the user's\n")
    p = _interrupt_held_build(hub, env, out)
    assert p.returncode == -signal.SIGINT, p
    assert p.stderr.splitlines()[-1] == "kwheel: interrupted", p.stderr
    assert sorted(x.name for x in out.iterdir()) == ["keep.txt"], list(out.iterdir())
    assert (out / "keep.txt").read_text() == "the user's\n"
