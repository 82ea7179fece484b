"""Issue 14, hostile networks: a Hub or index that drips, answers without end,
or answers JSON built to cost memory; and secrets handed back in other
encodings than the one kwheel sent. The real kwheel binary against real
local servers (hostile_servers.py: http.server in threads, and the fixture
Hub's `slow` fault). Each test asserts the behaviour (exit code, one-line
error naming the URL and the limit, what the server saw) and, for the
memory cases, kwheel's peak RSS, which must stay under 64 MB.
"""
from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
import tempfile
import urllib.parse
from pathlib import Path

import pytest

import hostile_servers as HS
import hubtest as H
from hubtest import hubfix
from kwheel_fixtures import make_kernel_repo

TOKEN = "hf_kwheelHostileNetTOKEN_4b1d9e7c2a"
PASSWORD = "pw:Hostile/Net@x 9+q"  # characters URLs, forms and base64 treat specially
USER = "uploader"
NETWORK = 4
RSS_LIMIT_KB = 64 * 1024

# A sanitized build's allocator keeps freed memory in quarantine: its RSS says
# nothing about kwheel's. The memory bound is asserted on normal builds only.
SANITIZED = b"__asan_init" in Path(H.KWHEEL).read_bytes()

# Runs kwheel as its only child and writes the child's peak RSS (KiB).
_LAUNCHER = ("import resource, subprocess, sys\n"
             "rc = subprocess.call(sys.argv[2:])\n"
             "open(sys.argv[1], 'w').write(str(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss))\n"
             "sys.exit(rc)\n")


class Run(H.Run):
    rss_kb: int = 0


def kwheel(*args, env=None, timeout: float = 60) -> Run:
    """kwheel ... --json, with its peak RSS."""
    argv = [str(a) for a in args] + ["--json"]
    with tempfile.NamedTemporaryFile("r", suffix=".rss") as rss:
        p = subprocess.run([sys.executable, "-c", _LAUNCHER, rss.name, H.KWHEEL, *argv], capture_output=True, text=True,
                           env=env if env is not None else H.clean_env(), timeout=timeout)
        r = Run(argv, p.returncode, p.stdout, p.stderr)
        r.rss_kb = int(rss.read() or 0)
    try:
        r.json = json.loads(r.stdout) if r.stdout.strip() else None
    except ValueError:
        r.json = None
    return r


def hub_args(url: str, tmp_path: Path, *extra) -> list:
    return ["variants", HS.REPO, "--endpoint", url, "--token", TOKEN, "--cache-dir", tmp_path / "cache", *extra]


def one_line_error(r: Run, code: int, *needles: str) -> str:
    assert r.returncode == code, str(r)
    assert r.json and r.json["ok"] is False and r.json["exit_code"] == code, str(r)
    err = r.json["error"]
    assert "\n" not in err and "internal error" not in r.stderr, str(r)
    assert [ln for ln in r.stderr.splitlines() if ln.startswith("kwheel: error:")] == [f"kwheel: error: {err}"], str(r)
    for n in needles:
        assert n.lower() in err.lower(), f"{n!r} not in {err!r}"
    return err


def within_memory(r: Run) -> None:
    assert r.rss_kb > 0
    if not SANITIZED:
        assert r.rss_kb < RSS_LIMIT_KB, f"peak RSS {r.rss_kb} KiB: {r}"


# ------------------------------------------------------------------ A: deadlines and size caps


@pytest.fixture(scope="module")
def fixture_hub(tmp_path_factory):
    root = tmp_path_factory.mktemp("hostile-store") / "root"
    files = {"README.md": b"# img2gray\n", **H.kernel_files("torch27-cxx11-cpu-x86_64-linux", "h", so_size=4000)}
    hubfix.make_repo(root, "user/img2gray", [files], tags={"v0.1.0": 0})
    with hubfix.hub_server(root, token=TOKEN) as srv:
        yield srv


@pytest.mark.parametrize("where", ["api", "resolve"])
def test_dripping_answer_is_dropped_and_retried(fixture_hub, tmp_path, where):
    """3 bytes a second keeps a "no byte for --stall-timeout" rule happy forever. Below the
    minimum rate (1 KiB/s over --stall-timeout) the transfer is dropped and retried; the
    retry is answered. Before the fix kwheel took the drip (10 s here) and never retried."""
    fixture_hub.clear_log()
    path = "/api/kernels/user/img2gray/tree/*" if where == "api" else "/kernels/user/img2gray/resolve/*.so"
    fault = fixture_hub.add_fault("slow", path=path, bytes_per_sec=3, max_seconds=10)
    try:
        r = kwheel("build", "user/img2gray", "--revision", "main", "--endpoint", fixture_hub.endpoint, "--token", TOKEN,
                   "--cache-dir", tmp_path / "cache", "-o", tmp_path / "dist", "--stall-timeout", "1",
                   env=H.clean_env(tmp_path / "home"))
        fired = fixture_hub.fault(fault["id"])["fired"]
    finally:
        fixture_hub.clear_faults()
    assert r.returncode == 0, str(r)
    assert fired == 1  # the drip was served once...
    assert r.json["transfers"]["retries"] >= 1, str(r)  # ...given up on, and asked for again


@pytest.mark.parametrize("answer", ["endless", "declared-10GB"])
def test_hub_answer_over_the_cap_is_cut_off(tmp_path, answer):
    """An answer that never ends, or says it is 10 GB, is refused at 8 MiB (or at once),
    not buffered: one line naming the URL (no credentials), the cap and what to check."""
    route = (lambda h: h.endless()) if answer == "endless" else \
        (lambda h: h.send_bytes(b"[]", headers={"Content-Length": "10000000000"}))
    with HS.HostileServer(HS.hub(refs=route)) as srv:
        url = srv.url.replace("http://", f"http://someone:{urllib.parse.quote(PASSWORD, safe='')}@")
        r = kwheel(*hub_args(url, tmp_path))
    err = one_line_error(r, NETWORK, f"{srv.url}{HS.API}/refs", "larger than 8 MiB", "Hugging Face Hub")
    assert "someone" not in err
    within_memory(r)


def upload(url: str, wheel: Path, *extra, env=None) -> Run:
    return kwheel("publish", wheel, "--repository-url", url, "--username", USER, *extra,
                  env=env or H.clean_env(TWINE_PASSWORD=PASSWORD))


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("hostile-wheel")
    repo = make_kernel_repo(d / "src", variants=["torch-universal"])
    r = H.kwheel("build", repo, "--version", "0.1.0", "-o", d / "dist")
    assert r.returncode == 0, str(r)
    (whl,) = (d / "dist").glob("*.whl")
    return whl


def test_endless_upload_answer_is_cut_off(tmp_path, wheel):
    with HS.HostileServer({"/": lambda h: h.endless()}) as srv:
        r = upload(srv.url + "/", wheel, "--attempts", "1")
    assert r.returncode == NETWORK, str(r)
    (f,) = r.json["files"]
    assert f["status"] == "failed" and "larger than 1 MiB" in f["message"] and srv.url in f["message"], f
    within_memory(r)


@pytest.mark.parametrize("attempts", [1, 2])
def test_dripping_upload_answer_is_dropped_each_attempt(tmp_path, wheel, attempts):
    """The index takes the upload, then drips its answer: each attempt is dropped after
    --stall-timeout and the run ends after --attempts (retries do not make it endless)."""
    with HS.HostileServer({"/": lambda h: h.drip()}) as srv:
        r = upload(srv.url + "/", wheel, "--attempts", str(attempts), "--stall-timeout", "1")
        posts = len(srv.hits("/"))
    assert r.returncode == NETWORK, str(r)
    (f,) = r.json["files"]
    assert f["status"] == "failed" and srv.url in f["message"], f
    assert posts == attempts


def test_endless_error_answer_to_a_download_ends_it(tmp_path):
    """A 404 whose body never ends: kwheel keeps its first 4 KiB and hangs up, instead of
    reading forever."""
    resolve = f"/kernels/{HS.REPO}/resolve/{HS.SHA}/build/{HS.VARIANT}/hostile/f0.py"
    routes = HS.hub(tree=lambda h: h.send_json([HS.entry(0)]))
    routes[resolve] = lambda h: h.endless(status=404, chunk=b"not found " * 4096)
    with HS.HostileServer(routes) as srv:
        r = kwheel("build", HS.REPO, "--endpoint", srv.url, "--token", TOKEN, "--cache-dir", tmp_path / "cache",
                   "-o", tmp_path / "dist", env=H.clean_env(tmp_path / "home"))
        got = srv.hits(resolve)
    one_line_error(r, 5, "HTTP 404", "f0.py")
    assert len(got) == 1
    within_memory(r)


# ------------------------------------------------------------------ B: JSON that costs memory


HOSTILE_JSON = {
    # 40 MB of nested arrays on /refs: 2.47 GB of RSS before the fix
    "refs-deep": (dict(refs=lambda h: h.send_bytes(HS.deep(20_000_000))), "larger than 8 MiB"),
    "refs-deep-under-cap": (dict(refs=lambda h: h.send_bytes(HS.deep(4_000_000))), "nests deeper than 32"),
    "refs-wide": (dict(refs=lambda h: h.send_bytes(HS.wide(2_700_000))), "more than 200000 JSON values"),
    "revision-deep": (dict(revision=lambda h: h.send_bytes(HS.deep(4_000_000))), "nests deeper than 32"),
    "tree-deep": (dict(tree=lambda h: h.send_bytes(HS.deep(4_000_000))), "nests deeper than 32"),
    "tree-wide": (dict(tree=lambda h: h.send_bytes(HS.wide(2_700_000))), "more than 200000 JSON values"),
    # pages of 1000 entries, forever: 20,000 entries at most
    "tree-pages": (dict(tree=HS.tree_pages(1000)), "more than 20000 entries"),
    # 300k entries on one page (20 such pages cost 2.0 GB before the fix)
    "tree-300k-page": (dict(tree=HS.tree_pages(300_000)), "larger than 8 MiB"),
    # empty pages, forever
    "tree-empty-pages": (dict(tree=HS.tree_pages(0)), "past 1000 pages"),
    # the publisher's overview, asked before anything else: refused, not trusted
    "overview-deep": (dict(overview=lambda h: h.send_bytes(HS.deep(4_000_000))), "/api/organizations/org/overview"),
    "overview-endless": (dict(overview=lambda h: h.endless()), "/api/organizations/org/overview"),
}


@pytest.mark.parametrize("case", list(HOSTILE_JSON))
def test_hostile_hub_json_is_refused_within_memory(tmp_path, case):
    routes, needle = HOSTILE_JSON[case]
    extra = ["--revision", HS.SHA] if case.startswith("revision") else []
    with HS.HostileServer(HS.hub(**routes)) as srv:
        r = kwheel(*hub_args(srv.url, tmp_path, *extra), timeout=120)
    # one answer's error names its URL; the listing's limits name the repo
    one_line_error(r, NETWORK, needle, HS.REPO if "pages" in case else srv.url)
    within_memory(r)


def test_tree_just_under_the_entry_cap_is_listed_within_memory(tmp_path):
    with HS.HostileServer(HS.hub(tree=HS.tree_pages(1000, 19))) as srv:
        r = kwheel(*hub_args(srv.url, tmp_path))
    assert r.returncode == 0, str(r)
    assert [v["variant"] for v in r.json["variants"]] == [HS.VARIANT]
    within_memory(r)


ILL_TYPED = {
    "refs-name-number": (dict(refs=lambda h: h.send_json({"branches": [{"name": 1, "targetCommit": HS.SHA}]})), "malformed refs"),
    "refs-not-object": (dict(refs=lambda h: h.send_json([1, 2])), "no version branch"),
    "tree-size-string": (dict(tree=lambda h: h.send_json([{**HS.entry(0), "size": "1"}])), "lacks 'size'"),
    "tree-not-array": (dict(tree=lambda h: h.send_json({"a": 1})), "not a JSON array"),
    "revision-sha-number": (dict(revision=lambda h: h.send_json({"sha": 5})), "no commit sha"),
    "error-body-ill-typed": (dict(refs=lambda h: h.send_json({"error": ["x"]}, status=400)), "HTTP 400"),
    # before: nlohmann's type_error from .value("id", "") escaped as "internal error", exit 1
    "commits-id-number": (dict(commits=lambda h: h.send_json([{"id": 5}])), "does not start at that commit"),
}


@pytest.mark.parametrize("case", list(ILL_TYPED))
def test_ill_typed_hub_answers_are_one_line_errors(tmp_path, case):
    routes, needle = ILL_TYPED[case]
    with HS.HostileServer(HS.hub(**routes)) as srv:
        if case.startswith("commits"):
            r = kwheel("build", HS.REPO, "--endpoint", srv.url, "--cache-dir", tmp_path / "cache", "-o", tmp_path / "dist",
                       env=H.clean_env(tmp_path / "home"))
        else:
            r = kwheel(*hub_args(srv.url, tmp_path, *(["--revision", HS.SHA] if case.startswith("revision") else [])))
    one_line_error(r, 5 if needle == "no version branch" else NETWORK, needle)


# ------------------------------------------------------------------ C: secrets in other encodings


def encodings(secret: str, user: str | None = None) -> dict[str, str]:
    forms = {
        "literal": secret,
        "percent": urllib.parse.quote(secret, safe=""),
        "percent-lower": "".join(f"%{b:02x}" for b in secret.encode()),
        "form": urllib.parse.quote_plus(secret),
        "base64": base64.b64encode(secret.encode()).decode(),
        "base64url": base64.urlsafe_b64encode(secret.encode()).decode(),
        "json": json.dumps(secret)[1:-1].replace("/", "\\/"),
    }
    if user:
        forms["basic"] = base64.b64encode(f"{user}:{secret}".encode()).decode()
    return forms


def leaked(text: str, secret: str, user: str | None = None) -> list[str]:
    out = []
    for name, form in encodings(secret, user).items():
        # base64 forms leak when a run of their characters survives; 8 is less than any of them
        probes = [form] if not name.startswith("base64") and name != "basic" else [form[i:i + 12] for i in range(0, len(form) - 12, 4)]
        if any(p in text for p in probes):
            out.append(name)
    return out


@pytest.mark.parametrize("form", list(encodings(TOKEN)))
def test_token_in_a_redirect_target_is_redacted(tmp_path, form):
    """The Hub redirects /refs to a URL carrying the token (in some encoding), which then
    fails: the error names that URL, without the token in any encoding."""
    shown = encodings(TOKEN)[form]
    routes = HS.hub(refs=lambda h: h.send_bytes(b"", status=302, headers={"Location": f"{HS.API}/refs2?sig={shown}"}))
    routes[f"{HS.API}/refs2"] = lambda h: h.send_json({"error": "teapot " + shown}, status=418)
    with HS.HostileServer(routes) as srv:
        r = kwheel(*hub_args(srv.url, tmp_path))
    err = one_line_error(r, NETWORK, "HTTP 418", f"{HS.API}/refs2?sig=")
    assert "***" in err
    assert leaked(r.stdout + r.stderr, TOKEN) == [], str(r)


def test_token_in_a_non_http_location_is_redacted(tmp_path):
    routes = HS.hub(refs=lambda h: h.send_bytes(b"", status=302, headers={"Location": f"ftp://x/?t={urllib.parse.quote(TOKEN)}"}))
    with HS.HostileServer(routes) as srv:
        r = kwheel(*hub_args(srv.url, tmp_path))
    one_line_error(r, NETWORK, "non-HTTP", "ftp://x/?t=***")
    assert leaked(r.stdout + r.stderr, TOKEN) == [], str(r)


def test_credentials_echoed_by_an_index_are_redacted(tmp_path, wheel):
    """The index answers 400 quoting the Authorization header it got (base64 of
    user:password) and the password in every other encoding: none reaches the output."""
    def echo(h):
        said = " ".join([h.headers.get("Authorization", ""), *encodings(PASSWORD).values()])
        h.send_bytes(f"<html><body><h1>bad request: {said}</h1></body></html>".encode(), status=400, content_type="text/html")

    with HS.HostileServer({"/": echo}) as srv:
        r = upload(srv.url + "/", wheel, "--attempts", "1")  # --json
        assert r.returncode == 3, str(r)
        assert "bad request" in r.output and "***" in r.output
        assert leaked(r.stdout + r.stderr, PASSWORD, USER) == [], str(r)
        r = H.kwheel("publish", wheel, "--repository-url", srv.url + "/", "--username", USER, "--attempts", "1",
                     env=H.clean_env(TWINE_PASSWORD=PASSWORD), json_out=False)  # the human-readable report
        assert r.returncode == 3 and "bad request" in r.output, str(r)
        assert leaked(r.stdout + r.stderr, PASSWORD, USER) == [], str(r)
        auths = {x["headers"].get("Authorization") for x in srv.hits("/")}
    assert auths == {"Basic " + encodings(PASSWORD, USER)["basic"]}


def test_upload_redirect_to_a_url_with_the_password_is_redacted(tmp_path, wheel):
    where = f"http://{USER}:{urllib.parse.quote(PASSWORD, safe='')}@elsewhere.invalid/up/"
    with HS.HostileServer({"/": lambda h: h.send_bytes(b"", status=307, headers={"Location": where})}) as srv:
        r = upload(srv.url + "/", wheel, "--attempts", "1")
    assert r.returncode == 2 and r.json["ok"] is False, str(r)
    assert "elsewhere.invalid/up/" in r.json["error"], r.json  # one error: the index refuses every upload alike
    assert leaked(r.stdout + r.stderr, PASSWORD, USER) == [], str(r)


def test_credentials_never_follow_a_redirect_to_another_host(tmp_path):
    """/refs redirects to another origin (another port): the token (Bearer) and the
    endpoint's user:password (Basic) go to the Hub only."""
    with HS.HostileServer(HS.hub()) as other:
        routes = HS.hub(refs=lambda h: h.send_bytes(b"", status=302, headers={"Location": f"{other.url}{HS.API}/refs"}))
        with HS.HostileServer(routes) as srv:
            endpoint = srv.url.replace("http://", f"http://someone:{urllib.parse.quote(PASSWORD, safe='')}@")
            r = kwheel(*hub_args(endpoint, tmp_path))
            home = srv.hits(f"{HS.API}/refs")
        away = other.hits(f"{HS.API}/refs")
    assert r.returncode == 0, str(r)
    assert home and all(h["headers"].get("Authorization") == f"Bearer {TOKEN}" for h in home), home
    assert away and all("Authorization" not in h["headers"] for h in away), away
    assert leaked(r.stdout + r.stderr, PASSWORD) == [] and leaked(r.stdout + r.stderr, TOKEN) == [], str(r)
