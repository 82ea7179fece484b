"""The netrc file as pip reads it, shown with real pip against the same servers.

`kwheel pin` takes an index's credentials from the netrc file as pip does (requests'
get_netrc_auth over Python's netrc module). Each test runs kwheel and real pip (the
tools venv's pip 26 on Python 3.11) with the same NETRC against an HTTPS index on
127.0.0.1 (test_index_access's server: Basic credentials on every read, or none), and
asserts the login that reached the server:

* tokens Python reads differently from a naive reader (`password #tok`, a lone `#`
  comment after a login, a quoted password with escaped quotes in a file NETRC names
  as ~/...) give kwheel the login and password pip sends;
* a netrc Python cannot parse (a trailing `macdef` for another host) is skipped by
  pip, which goes on without credentials: kwheel pins an open index with one warning
  line naming the file (never a token of it), and a private one fails as having no
  credentials;
* the checked-in corpus the unit test holds kwheel's reader to
  (tests/data/netrc/corpus.json) is what this Python and pip make of its files.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_index_access import PY, base_env, pin, serving, wheel  # noqa: E402,F401  (wheel: a fixture)

ROOT = Path(__file__).resolve().parents[2]
AUTH, INPUT = 6, 3

# Each name holds PASSWORD: the session's leak check looks for them in every output and file.
PASSWORD_HASH = "#tok-3v8w-netrc"
PASSWORD_AFTER_COMMENT = "#second-7k2p-netrc"
PASSWORD_QUOTED = 'q "x" 9f4m-netrc'
PASSWORD_SKIPPED = "skipped-5d1r-netrc"

# (netrc text, the user pip sends, its password): each read one way by Python's lexer
# (the last one also named as NETRC=~/..., which requests expands).
TRICKY = {
    "password-starting-with-hash": (f"machine 127.0.0.1 login ci password {PASSWORD_HASH}\n", "ci", PASSWORD_HASH),
    "lone-hash-comment-then-hash-password": (
        "# the team's index\nmachine 127.0.0.1\n  login ci2 # the CI user\n"
        f"  password {PASSWORD_AFTER_COMMENT}\n", "ci2", PASSWORD_AFTER_COMMENT),
    "quoted-with-escaped-quotes-netrc-named-with-tilde": ('machine 127.0.0.1 login "ci 3" password "q \\"x\\" 9f4m-netrc"\n', "ci 3", PASSWORD_QUOTED),
}

# Python's netrc raises NetrcParseError (the macro has no empty line after it).
UNPARSEABLE = (f"machine 127.0.0.1 login ci password {PASSWORD_SKIPPED}\n"
               "machine other.example login o password elsewhere\nmacdef init")
SECRETS = (PASSWORD_HASH, PASSWORD_AFTER_COMMENT, PASSWORD_QUOTED, PASSWORD_SKIPPED, "elsewhere")


def write(path: Path, text: str) -> Path:
    path.write_text(text)
    path.chmod(0o600)
    return path


def pip_download(srv, pki, env, dest: Path) -> subprocess.CompletedProcess:
    return subprocess.run([PY, "-m", "pip", "download", "--no-deps", "img2gray", "-d", dest, "--index-url", f"{srv.url}/simple/",
                           "--cert", pki["ca"], "--retries", "0"], capture_output=True, text=True, env=env, timeout=300)


def no_secret(p: subprocess.CompletedProcess) -> None:
    for s in SECRETS:
        assert s not in p.stdout + p.stderr, "a netrc token reached kwheel's output"


@pytest.mark.parametrize("case", sorted(TRICKY))
def test_pin_sends_the_login_pip_reads_from_the_netrc(case, pki, wheel, tmp_path):
    text, user, password = TRICKY[case]
    with serving(pki, {user: password}) as srv:
        srv.publish(wheel)
        home = tmp_path / "home"
        home.mkdir()
        netrc = write(home / "team.netrc", text)
        env = base_env(home, NETRC="~/team.netrc" if "tilde" in case else netrc)
        # pip first: Python's netrc reads this login and password (the server takes nothing else).
        d = pip_download(srv, pki, env, tmp_path / "got")
        assert d.returncode == 0, d.stdout + d.stderr
        assert set(srv.users_seen()) == {user}
        srv.seen.clear()
        p, report = pin(f"{srv.url}/simple/", "--cert", pki["ca"], env=env)
        no_secret(p)
        assert p.returncode == 0, p.stderr
        assert report["connection"]["credentials_from"] == str(netrc)
        assert srv.seen and set(srv.users_seen()) == {user}, srv.seen


def test_a_netrc_python_cannot_parse_is_skipped_on_an_open_index(pki, wheel, tmp_path):
    with serving(pki, None) as srv:
        srv.publish(wheel)
        netrc = write(tmp_path / "netrc", UNPARSEABLE)
        env = base_env(tmp_path / "home", NETRC=netrc)
        # pip goes on without the file (requests catches NetrcParseError): no credentials sent.
        d = pip_download(srv, pki, env, tmp_path / "got")
        assert d.returncode == 0, d.stdout + d.stderr
        assert not any(s["authorization"] for s in srv.seen), srv.seen
        srv.seen.clear()
        p, report = pin(f"{srv.url}/simple/", "--cert", pki["ca"], env=env)
        no_secret(p)
        assert p.returncode == 0, p.stderr
        assert report["connection"]["credentials_from"] == ""
        assert srv.seen and not any(s["authorization"] for s in srv.seen), srv.seen
        warnings = [ln for ln in p.stderr.splitlines() if ln.startswith("kwheel: warning:")]
        assert len(warnings) == 1, p.stderr
        assert f"netrc file '{netrc}' line 3" in warnings[0] and "no credentials are taken from it" in warnings[0], warnings


def test_a_netrc_python_cannot_parse_gives_no_credentials_to_a_private_index(pki, wheel, tmp_path):
    with serving(pki, {"ci": PASSWORD_SKIPPED}) as srv:
        srv.publish(wheel)
        netrc = write(tmp_path / "netrc", UNPARSEABLE)
        p, _ = pin(f"{srv.url}/simple/", "--cert", pki["ca"], env=base_env(tmp_path / "home", NETRC=netrc))
        no_secret(p)
        assert p.returncode == AUTH, p.stderr
        errors = [ln for ln in p.stderr.splitlines() if ln.startswith("kwheel: error:")]
        assert len(errors) == 1 and "wants credentials (HTTP 401) and none were found for 127.0.0.1" in errors[0], p.stderr
        assert sum(ln.startswith("kwheel: warning: netrc file") for ln in p.stderr.splitlines()) == 1, p.stderr
        assert not srv.users_seen()


def test_the_corpus_is_what_this_python_and_pip_read():
    """The unit test's expectations come from Python, not kwheel: recomputed here."""
    p = subprocess.run([PY, ROOT / "scripts" / "update-netrc-corpus", "--check"], capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stdout + p.stderr
