"""Hub input is data (issue 30): publisher trust as kernels 0.17.2 decides it, metadata.json
that cannot reach past the wheel, and wheel bytes that are a function of the commit alone.

Each attack is built as an attacker would build it: a kernel repo on the fixture Hub
(tests/hub/) carrying it, driven through the real kwheel binary. What is right is decided by
peers kwheel does not control: kernels 0.17.2 (get_kernel and `kernels lock`) for trust, pip for
what an install fetches, packaging for what a requirement means.
"""

from __future__ import annotations

import http.server
import json
import re
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from packaging.metadata import Metadata
from packaging.requirements import Requirement

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(ROOT / "tests" / "hub"))
sys.path.insert(0, str(HERE))
import fixture as hubfix  # noqa: E402
import hubtest as H  # noqa: E402
import kernel_repos as kr  # noqa: E402

PY = sys.executable
KERNELS_CLI = str(Path(sys.executable).parent / "kernels")  # kernels 0.17.2's console script
ORG = "acme"                 # make_repo marks it trustedKernelPublisher
STRANGER_ORG = "stranger"    # the Hub does not
ACT = f"{ORG}/act"
RELU = f"{ORG}/relu"         # kernel-depends on acme/act version 1
STRANGER = f"{STRANGER_ORG}/relu"
USER = "someone"             # a user's namespace: the Hub has no organization overview for it (404)
USER_REPO = f"{USER}/relu"
WRONG_TOKEN = "hf_wrongTokenForTrust_7c2e"
MIRROR_PREFIX = "/artifactory/api/huggingfaceml/hub"  # an Artifactory-style remote repository
VARIANT = "torch-cpu"        # pure Python: pip installs it beside Debian's torch


def tree(name: str, *, depends=(), license: str = "Apache-2.0") -> dict[str, bytes]:
    return kr.variant_tree(VARIANT, layout="flat", name=name, version=1, license=license,
                           files=kr.demo_package(name, f"{name} v1"), kernel_depends=list(depends))


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    root = tmp_path_factory.mktemp("input-store") / "root"
    repos = {
        ACT: kr.make_kernel_repo(root, ACT, {1: tree("act")}),
        RELU: kr.make_kernel_repo(root, RELU, {1: tree("relu", depends=[{"repo-id": ACT, "version": 1}])}),
        STRANGER: kr.make_kernel_repo(root, STRANGER, {1: tree("relu")}),
        USER_REPO: kr.make_kernel_repo(root, USER_REPO, {1: tree("relu")}),
    }
    hubfix.set_org(root, STRANGER_ORG, trustedKernelPublisher=False)
    hubfix.set_user(root, USER)
    return {"root": root, "repos": repos}


@pytest.fixture(scope="module")
def hub(store):
    with hubfix.hub_server(store["root"]) as srv:
        yield srv


@pytest.fixture(autouse=True)
def _fresh_log(hub):
    hub.clear_log()
    yield


def env_for(hub, home: Path, **extra) -> dict:
    return H.clean_env(home, HF_ENDPOINT=hub.endpoint, **extra)


def build(hub, tmp_path: Path, repo: str, *args, home: str = "home", json_out: bool = True) -> H.Run:
    return H.kwheel("build", repo, "-o", tmp_path / "dist", *args, env=env_for(hub, tmp_path / home), json_out=json_out)


def add_hostile(store, repo: str, **tree_args) -> None:
    """A trusted publisher's repo whose one variant carries the attack."""
    kr.make_kernel_repo(store["root"], repo, {1: tree(repo.split("/")[1], **tree_args)})


# --------------------------------------------------------------------------- publisher trust


def test_a_trusted_publisher_builds_and_the_report_says_why(hub, tmp_path):
    r = build(hub, tmp_path, ACT)
    assert r.returncode == 0, str(r)
    assert r.json["source"]["trust"] == {"repo": ACT, "publisher": ORG, "checked": True, "basis": "trusted-publisher"}
    overview = hub.log(kind="organizations")
    assert [e["path"] for e in overview] == [f"/api/organizations/{ORG}/overview"]
    assert hub.log()[0]["kind"] == "organizations"  # asked before anything else


def test_an_untrusted_publisher_is_refused_before_anything_is_fetched(hub, tmp_path):
    r = build(hub, tmp_path, STRANGER, json_out=False)
    assert r.returncode == 9, str(r)
    (line,) = r.stderr.splitlines()
    for part in (f"'{STRANGER_ORG}'", f"--trust-repo {STRANGER}", "--trust-remote-code", "trustedKernelPublisher"):
        assert part in line, line
    assert {e["kind"] for e in hub.log()} == {"organizations"}
    assert not (tmp_path / "dist").exists()
    r = build(hub, tmp_path, STRANGER)
    assert r.returncode == 9 and r.json == {"ok": False, "error": line.removeprefix("kwheel: error: "), "exit_code": 9}, str(r)


@pytest.mark.parametrize("args,basis", [(["--trust-repo", STRANGER], "trusted-repo"),
                                        (["--trust-repo", "other/x", "--trust-repo", STRANGER], "trusted-repo"),
                                        (["--trust-remote-code"], "trust-remote-code")])
def test_opting_in_builds_the_repo_without_asking_the_hub(hub, tmp_path, args, basis):
    r = build(hub, tmp_path, STRANGER, *args)
    assert r.returncode == 0, str(r)
    assert r.json["source"]["trust"] == {"repo": STRANGER, "publisher": STRANGER_ORG, "checked": True, "basis": basis}
    assert hub.log(kind="organizations") == []


def test_naming_another_repo_or_a_bad_id_does_not_opt_in(hub, tmp_path):
    assert build(hub, tmp_path, STRANGER, "--trust-repo", f"{STRANGER_ORG}/other").returncode == 9
    r = build(hub, tmp_path, STRANGER, "--trust-repo", STRANGER_ORG, json_out=False)
    assert r.returncode == 2 and f"--trust-repo '{STRANGER_ORG}'" in r.stderr, str(r)


def test_variants_applies_the_same_rule(hub, tmp_path):
    env = env_for(hub, tmp_path / "home")
    assert H.kwheel("variants", STRANGER, env=env).returncode == 9
    r = H.kwheel("variants", STRANGER, "--trust-repo", STRANGER, env=env)
    assert r.returncode == 0 and [v["variant"] for v in r.json["variants"]] == [VARIANT], str(r)


# Issue 38, 10: every failure of the publisher check used to end in "could not verify whether its
# publisher is trusted ...; pass --trust-repo". Failing closed stays; the cause comes first, with
# its own exit code, and the trust flags are offered only when the Hub answered "not trusted" or
# "no such organization".

CA_VARIABLES = ("REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE", "SSL_CERT_FILE", "SSL_CERT_DIR", "PIP_CERT", "KWHEEL_CA_BUNDLE")


@pytest.fixture(scope="module")
def tls_hub(store, pki):
    with hubfix.hub_server(store["root"], tls=(pki["cert"], pki["key"], pki["ca"])) as srv:
        yield srv


def trust_failure(case: str, hub, tls_hub, pki, tmp_path: Path) -> tuple[H.Run, str]:
    """Builds ACT (a trusted publisher's repo) or the case's repo the way the case breaks the
    check; returns the run and the overview URL it asked."""
    env, repo, args = env_for(hub, tmp_path / "home"), ACT, []
    endpoint = hub.endpoint
    if case == "wrong-token":
        env["HF_TOKEN"] = WRONG_TOKEN
    elif case == "hub-down":
        (tmp_path / "empty-store").mkdir()
        with hubfix.hub_server(tmp_path / "empty-store") as srv:
            endpoint = srv.endpoint  # a port that was just listening, now closed
    elif case == "wrong-endpoint-path":
        endpoint = hub.endpoint + "/no/such/prefix"
    elif case == "tls":
        env = {k: v for k, v in env.items() if k not in CA_VARIABLES}  # this machine's proxy CA must not decide
        endpoint, args = tls_hub.endpoint, ["--ca-bundle", pki["other_ca"]]
    elif case == "org-404":
        repo = USER_REPO
    elif case == "untrusted":
        repo = STRANGER
    elif case == "neither-org-nor-repo":
        repo = "nobody/nothing"
    env["HF_ENDPOINT"] = endpoint
    r = H.kwheel("build", repo, "-o", tmp_path / "dist", *args, env=env, json_out=False)
    return r, f"{endpoint}/api/organizations/{repo.split('/')[0]}/overview"


@pytest.mark.parametrize("case,code,starts", [
    ("wrong-token", 6, "GET {overview} answered HTTP 401 (Invalid credentials in Authorization header): the Hub at {endpoint} rejected the token (from HF_TOKEN)"),
    ("hub-down", 4, "cannot reach the Hub at {endpoint} while checking whether publisher 'acme' of repo 'acme/act' is trusted: "),
    ("wrong-endpoint-path", 4, "the endpoint {endpoint} does not answer as a Hugging Face Hub: GET {overview} answered HTTP 404 and "),
    ("tls", 4, "cannot reach the Hub at {endpoint} while checking whether publisher 'acme' of repo 'acme/act' is trusted: "),
    ("org-404", 9, "repo 'someone/relu' is not from a trusted publisher: the Hub at {endpoint} has no organization 'someone' (GET {overview} answered HTTP 404"),
    ("untrusted", 9, "repo 'stranger/relu' is not from a trusted publisher: the Hub at {endpoint} does not mark 'stranger' trustedKernelPublisher"),
    ("neither-org-nor-repo", 5, "repo 'nobody/nothing' at {endpoint} was not found or is not accessible"),
])
def test_a_failed_publisher_check_names_its_cause_and_offers_trust_only_for_the_hubs_no(hub, tls_hub, pki, tmp_path, case, code, starts):
    r, overview = trust_failure(case, hub, tls_hub, pki, tmp_path)
    endpoint = overview.split("/api/")[0]
    assert r.returncode == code, str(r)
    (line,) = r.stderr.splitlines()
    assert line.startswith("kwheel: error: " + starts.format(overview=overview, endpoint=endpoint)), line
    offered = "--trust-repo" in line or "--trust-remote-code" in line
    assert offered == (code == 9), line
    if case == "tls":
        assert "certificate" in line and "--ca-bundle" in line, line
    assert WRONG_TOKEN not in r.stdout + r.stderr
    assert not (tmp_path / "dist").exists()


GET_KERNEL = r"""
import json, sys
from kernels import get_kernel
trust = json.loads(sys.argv[2])
try:
    print("HELLO", get_kernel(sys.argv[1], version=1, backend="cpu", trust_remote_code=trust).hello())
except ValueError as e:
    print("REFUSED", e)
"""


@pytest.mark.parametrize("repo,trust", [(ACT, False), (STRANGER, False), (STRANGER, [STRANGER]), (STRANGER, True)])
def test_kernels_get_kernel_makes_the_same_decision(hub, tmp_path, repo, trust):
    theirs = subprocess.run([PY, "-c", GET_KERNEL, repo, json.dumps(trust)], env=hubfix.client_env(hub, tmp_path / "khome"),
                            capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert theirs.returncode == 0, theirs.stderr
    if trust is True:
        opt_in = ["--trust-remote-code"]
    else:
        opt_in = [a for r in (trust or []) for a in ("--trust-repo", r)]
    mine = build(hub, tmp_path, repo, *opt_in)
    assert mine.returncode in (0, 9), str(mine)
    assert theirs.stdout.startswith("HELLO") == (mine.returncode == 0), (theirs.stdout, str(mine))
    if mine.returncode == 9:
        assert "is not from a trusted publisher" in theirs.stdout


def project(tmp_path: Path, deps: dict[str, int]) -> Path:
    proj = tmp_path / "proj"
    proj.mkdir(parents=True, exist_ok=True)
    lines = "".join(f'"{repo}" = {n}\n' for repo, n in deps.items())
    (proj / "pyproject.toml").write_text(f'[project]\nname = "p"\nversion = "0"\n\n[tool.kernels.dependencies]\n{lines}')
    return proj


def test_kernels_lock_and_kwheel_lock_and_project_builds_agree(hub, store, tmp_path):
    kenv = hubfix.client_env(hub, tmp_path / "khome")
    # kernels refuses to lock a stranger's kernel; kwheel refuses to build it from a project
    refused = project(tmp_path / "a", {STRANGER: 1})
    r = subprocess.run([KERNELS_CLI, "lock", str(refused)], env=kenv, capture_output=True, text=True, timeout=120)
    assert r.returncode != 0 and "is not from a trusted publisher" in r.stderr, r.stderr
    mine = H.kwheel("build", "--project", refused, "-o", tmp_path / "dist", env=env_for(hub, tmp_path / "home"), json_out=False)
    assert mine.returncode == 9 and f"dependency '{STRANGER}'" in mine.stderr and "--trust-repo" in mine.stderr, str(mine)
    # a trusted one locks, and kwheel builds the lock kernels wrote
    ok = project(tmp_path / "b", {RELU: 1, ACT: 1})
    r = subprocess.run([KERNELS_CLI, "lock", str(ok)], env=kenv, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    mine = H.kwheel("build", "--lock", ok / "kernels.lock", "-o", tmp_path / "dist", env=env_for(hub, tmp_path / "home"))
    assert mine.returncode == 0, str(mine)
    assert {k["source"]["trust"]["basis"] for k in mine.json["kernels"]} == {"trusted-publisher"}
    # a lock naming a stranger's commit (written by hand, as kernels would not) is refused, then opted in
    lock = tmp_path / "stranger.lock"
    lock.write_text(json.dumps([{"dependency": {"repo-id": STRANGER, "version": 1},
                                 "lock": {"commit": store["repos"][STRANGER].versions[1]}}]))
    mine = H.kwheel("build", "--lock", lock, "-o", tmp_path / "dist2", env=env_for(hub, tmp_path / "home"), json_out=False)
    assert mine.returncode == 9 and f"lock entry '{STRANGER}'" in mine.stderr, str(mine)
    mine = H.kwheel("build", "--lock", lock, "--trust-repo", STRANGER, "-o", tmp_path / "dist2", env=env_for(hub, tmp_path / "home"))
    assert mine.returncode == 0 and mine.json["kernels"][0]["source"]["trust"]["basis"] == "trusted-repo", str(mine)


def test_offline_it_warns_and_builds_from_the_cache_as_kernels_does(hub, tmp_path):
    assert build(hub, tmp_path, STRANGER, "--trust-repo", STRANGER).returncode == 0
    hub.clear_log()
    r = build(hub, tmp_path, STRANGER, "--offline")
    assert r.returncode == 0, str(r)
    assert r.json["source"]["trust"] == {"repo": STRANGER, "publisher": STRANGER_ORG, "checked": False, "basis": "offline-unchecked"}
    assert f"skipping the publisher trust check for '{STRANGER}'" in r.stderr
    assert hub.log() == []


# --------------------------------------------------------------------------- metadata.json is data


class Trap:
    """An HTTP server that answers nothing useful and records every request: where an injected
    direct-URL requirement would send pip."""

    def __init__(self):
        self.requests: list[str] = []
        trap = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):  # noqa: N802
                trap.requests.append(self.path)
                self.send_error(404)

            do_HEAD = do_GET  # noqa: N815

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def trap():
    with Trap() as t:
        yield t


INJECTIONS = {
    "direct-url": "{org}/act @ {trap}/act-1.0-py3-none-any.whl",
    "marker": "{org}/act; python_version > '3'",
    "extra": "{org}/act[evil]",
    "index-option": "{org}/act --index-url {trap}/simple",
    "deep-path": "{org}/a/b",
    "dot-dot": "{org}/..",
}


@pytest.mark.parametrize("kind", sorted(INJECTIONS))
def test_an_injected_requirement_refuses_the_variant_and_nothing_is_written(hub, store, tmp_path, trap, kind):
    repo = f"{ORG}/inject-{kind}"
    add_hostile(store, repo, depends=[{"repo-id": INJECTIONS[kind].format(org=ORG, trap=trap.url), "version": 1}])
    r = build(hub, tmp_path, repo, json_out=False)
    assert r.returncode == 3, str(r)
    assert "'kernel-depends'" in r.output and "not a Hub repo id" in r.output, str(r)
    assert not (tmp_path / "dist").exists()
    assert trap.requests == []


def test_a_version_that_would_wrap_is_refused(hub, store, tmp_path):
    add_hostile(store, f"{ORG}/wraps", depends=[{"repo-id": ACT, "version": 2**64 - 1}])
    r = build(hub, tmp_path, f"{ORG}/wraps", json_out=False)
    assert r.returncode == 3 and "'kernel-depends'" in r.output and "from 0 to 99999999" in r.output, str(r)


@pytest.mark.parametrize("license", ["\x1b]8;;http://127.0.0.1:9/\x1b\\MIT\x1b]8;;\x1b\\", "MIT\x00", "MIT\x7f", "MIT\u009b31m"])
def test_control_characters_never_reach_metadata_or_the_terminal(hub, store, tmp_path, license):
    repo = f"{ORG}/ctl-{abs(hash(license)) % 10_000}"
    add_hostile(store, repo, license=license)
    r = build(hub, tmp_path, repo, json_out=False)
    assert r.returncode == 3 and "'license'" in r.output and "control character" in r.output, str(r)
    assert not any(c in r.output for c in "\x1b\x00\x7f\u009b")
    assert not (tmp_path / "dist").exists()


def test_other_unicode_in_the_license_stays(hub, store, tmp_path):
    add_hostile(store, f"{ORG}/unicode", license="Licence libre \u2014 \u00a9 Acme")
    r = build(hub, tmp_path, f"{ORG}/unicode")
    assert r.returncode == 0, str(r)
    (w,) = [H.read_wheel(tmp_path / "dist" / name) for name in H.wheel_shas(r)]
    # packaging, not our reader, says what the METADATA holds (it decodes UTF-8 and validates)
    assert Metadata.from_email(w.files[f"{w.dist_info}/METADATA"], validate=True).license == "Licence libre \u2014 \u00a9 Acme"


def test_a_dependency_on_the_framework_name_is_refused_unless_prefixed(hub, store, tmp_path):
    add_hostile(store, f"{ORG}/takes-torch", depends=[{"repo-id": f"{ORG}/torch", "version": 1}])
    r = build(hub, tmp_path, f"{ORG}/takes-torch", json_out=False)
    assert r.returncode == 3 and "'torch>=1,<2'" in r.output and "--name-prefix" in r.output, str(r)
    r = build(hub, tmp_path, f"{ORG}/takes-torch", "--name-prefix", "acme-")
    assert r.returncode == 0, str(r)
    (w,) = [H.read_wheel(tmp_path / "dist" / name) for name in H.wheel_shas(r)]
    assert sorted(w.meta("Requires-Dist")) == ["acme-torch>=1,<2", "torch"]


def test_without_a_prefix_the_build_warns_of_dependency_confusion(hub, tmp_path):
    r = build(hub, tmp_path, RELU)
    assert r.returncode == 0, str(r)
    (line,) = [ln for ln in r.stderr.splitlines() if "--name-prefix" in ln]
    assert RELU in line and "act>=1,<2" in line
    assert "--name-prefix" not in build(hub, tmp_path, ACT).stderr  # no kernel-depends, no warning


def test_prefixed_kernels_require_each_other_and_pip_fetches_nothing(hub, tmp_path, trap):
    """The names a prefix gives resolve to the wheels kwheel built: pip installs both from the
    wheels alone, and nothing is asked of any server (the trap stands where an injection would point)."""
    env = env_for(hub, tmp_path / "home")
    for repo in (RELU, ACT):
        r = H.kwheel("build", repo, "--name-prefix", "acme-", "-o", tmp_path / "dist", env=env)
        assert r.returncode == 0 and "--name-prefix" not in r.stderr, str(r)
    wheels = {H.read_wheel(p).meta("Name")[0]: H.read_wheel(p) for p in (tmp_path / "dist").glob("*.whl")}
    assert set(wheels) == {"acme-relu", "acme-act"}
    reqs = [Requirement(x) for x in wheels["acme-relu"].meta("Requires-Dist")]
    dep = next(q for q in reqs if q.name == "acme-act")
    assert dep.url is None and dep.marker is None and not dep.extras and str(dep.specifier) == "<2,>=1"
    venv = tmp_path / "venv"
    subprocess.run(["/usr/bin/python3", "-m", "venv", "--system-site-packages", str(venv)], check=True, timeout=120)
    pip = subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "install", "--no-index", "--find-links", str(tmp_path / "dist"),
                          "acme-relu"], capture_output=True, text=True, timeout=300,
                         env={**env, "PIP_CONFIG_FILE": "/dev/null", "PIP_DISABLE_PIP_VERSION_CHECK": "1"})
    assert pip.returncode == 0, pip.stdout + pip.stderr
    (done,) = [ln for ln in pip.stdout.splitlines() if ln.startswith("Successfully installed")]
    assert sorted(done.split()[2:]) == sorted(f"{n}-{w.meta('Version')[0]}" for n, w in wheels.items()), done
    assert trap.requests == []


def test_a_bad_name_prefix_is_a_usage_error(hub, tmp_path):
    r = build(hub, tmp_path, ACT, "--name-prefix", "acme @ http://x/", json_out=False)
    assert r.returncode == 2 and "--name-prefix 'acme @ http://x/'" in r.stderr, str(r)
    assert hub.log() == []


# --------------------------------------------------------------------------- bytes from the commit alone


def test_a_mirror_under_a_path_prefix_gives_the_same_bytes(hub, store, tmp_path):
    """The same commit built through the Hub, a mirror on another port under an Artifactory-style
    path, and a lock: byte-identical wheels, recording the repo and commit, not the endpoint."""
    direct = build(hub, tmp_path / "direct", RELU, "--name-prefix", "acme-")
    assert direct.returncode == 0, str(direct)
    commit = direct.json["source"]["commit"]
    with hubfix.hub_server(store["root"], path_prefix=MIRROR_PREFIX) as mirror:
        assert mirror.endpoint.endswith(MIRROR_PREFIX)
        via = build(mirror, tmp_path / "mirror", RELU, "--name-prefix", "acme-")
        assert via.returncode == 0, str(via)
        assert mirror.log(kind="organizations") and mirror.log(kind="tree")  # the mirror, not the Hub, answered
        lock = tmp_path / "kernels.lock"
        lock.write_text(json.dumps([{"dependency": {"repo-id": RELU, "version": 1}, "lock": {"commit": commit}}]))
        locked = H.kwheel("build", "--lock", lock, "--name-prefix", "acme-", "-o", tmp_path / "locked" / "dist",
                          env=env_for(mirror, tmp_path / "locked" / "home"))
        assert locked.returncode == 0, str(locked)
    shas = H.dir_shas(tmp_path / "direct" / "dist")
    assert shas and shas == H.dir_shas(tmp_path / "mirror" / "dist") == H.dir_shas(tmp_path / "locked" / "dist")
    (w,) = [H.read_wheel(p) for p in (tmp_path / "direct" / "dist").glob("*.whl")]
    assert w.meta("Project-URL")[-1] == f"Hub revision, https://huggingface.co/kernels/{RELU}/tree/{commit}"
    assert "127.0.0.1" not in "".join(v for _, v in w.metadata)


def test_a_proxy_without_the_commits_api_names_the_request_and_the_ways_on(hub, store, tmp_path):
    """Issue #33: a mirror that serves refs, tree and resolve but not /api/kernels/{repo}/commits/{rev}.
    The wheel version N.B needs the history length B, and no history-free version would give the
    commit the Hub build's bytes: the build stops before downloading, with one line naming the
    request, its status and the two ways on (docs/wheel-naming.md). Both ways give the very bytes of
    the build through the Hub."""
    direct = build(hub, tmp_path / "direct", RELU, "--name-prefix", "acme-")
    assert direct.returncode == 0, str(direct)
    commit = direct.json["source"]["commit"]
    (version,) = {v["version"].split("+")[0] for v in direct.json["variants"]}
    with hubfix.hub_server(store["root"], path_prefix=MIRROR_PREFIX, no_commits_api=True) as proxy:
        r = build(proxy, tmp_path / "proxy", RELU, "--name-prefix", "acme-", json_out=False)
        assert r.returncode == 5, str(r)
        (line,) = [ln for ln in r.stderr.splitlines() if ln.startswith("kwheel: error: ")]
        url = f"{proxy.endpoint}/api/kernels/{RELU}/commits/{commit}"
        for part in (f"GET {url} answered HTTP 404 (RepoNotFound)", f"{commit[:12]} of '{RELU}'", "commit-history API",
                     "--wheel-version", "same cache", "docs/wheel-naming.md"):
            assert part in line, (part, line)
        assert "was not found or is not accessible" not in line, line
        assert proxy.log(kind="commits") and not proxy.log(kind="resolve"), "it downloaded before refusing"
        assert not (tmp_path / "proxy" / "dist").exists()
        r = build(proxy, tmp_path / "proxy", RELU, "--name-prefix", "acme-")
        assert r.returncode == 5 and r.json["error"] == line.removeprefix("kwheel: error: "), str(r)

        # The first way: --wheel-version, the version the Hub build gave this commit.
        via = build(proxy, tmp_path / "proxy-version", RELU, "--name-prefix", "acme-", "--wheel-version", version)
        assert via.returncode == 0, str(via)
        # The second: the same cache as a build through the Hub, which keeps the history length.
        proxy.clear_log()
        cached = build(proxy, tmp_path / "proxy-cached", RELU, "--name-prefix", "acme-", home=str(tmp_path / "direct" / "home"))
        assert cached.returncode == 0, str(cached)
        assert proxy.log(kind="commits") == []
    shas = H.dir_shas(tmp_path / "direct" / "dist")
    assert shas and shas == H.dir_shas(tmp_path / "proxy-version" / "dist") == H.dir_shas(tmp_path / "proxy-cached" / "dist")


def test_one_failed_variant_leaves_the_others_not_written_and_comes_first(hub, store, tmp_path):
    """Issue #33: all or nothing is right, but the table said `built` for wheels it then did not
    write. The failed variant comes first with its reason; the others say `not written`."""
    repo = f"{ORG}/half"
    files = {}
    for variant in ("torch-cpu", "torch-cuda", "torch-universal"):
        files.update(kr.variant_tree(variant, layout="flat", name="half", version=1, files=kr.demo_package("half", variant)))
    files["build/torch-cuda/__init__.py"] += b"# changed after metadata.json was hashed\n"
    kr.make_kernel_repo(store["root"], repo, {1: files})
    r = build(hub, tmp_path, repo, json_out=False)
    assert r.returncode == 3, str(r)
    rows = r.stdout.splitlines()
    assert rows[0].split() == ["VARIANT", "STATUS", "WHEEL", "/", "REASON"], r.stdout
    assert rows[1].split()[:2] == ["torch-cuda", "failed"] and "digest" in rows[1], r.stdout
    body = [ln for ln in rows[2:] if not ln.startswith(" ")]
    assert sorted(ln.split()[0] for ln in body) == ["torch-cpu", "torch-universal"], r.stdout
    for ln in body:
        assert re.match(r"^torch-\S+ +not written +half-1\.\d+\S*\.whl ", ln), ln
    assert not re.search(r"^\S+ +built ", r.stdout, re.M), r.stdout
    assert "no wheel was written" in r.stderr
    assert not (tmp_path / "dist").exists()
    r = build(hub, tmp_path, repo)
    assert r.returncode == 3 and r.json["committed"] is False, str(r)
    written = {v["variant"]: v.get("written") for v in r.json["variants"]}
    assert written == {"torch-cuda": None, "torch-cpu": False, "torch-universal": False}, written


def test_two_kernel_depends_of_one_name_are_refused(hub, store, tmp_path):
    """org-a/act and org-b/act would both become 'act>=1,<2': two requirements on one name, which
    no install can tell apart. Refused, as a collision with the framework's name is."""
    add_hostile(store, f"{ORG}/twice", depends=[{"repo-id": ACT, "version": 1}, {"repo-id": "elsewhere/act", "version": 2}])
    r = build(hub, tmp_path, f"{ORG}/twice", json_out=False)
    assert r.returncode == 3 and "'act>=2,<3'" in r.output and "another kernel-depends" in r.output, str(r)
