"""Faults from docs/reliability.md's matrix that no other file covers: TLS (a
self-signed HTTPS Hub refused by default, trusted with --ca-bundle), a full
disk while a wheel or a download is written (RLIMIT_FSIZE), and two builds
sharing one cache and one -o at the same time. Real kwheel binary, real
fixture Hub (tests/hub/server.py), real openssl certificates."""
from __future__ import annotations

import concurrent.futures
import os
import resource
import signal
import subprocess
import time
from pathlib import Path

import pytest

import hubtest as H
from hubtest import hubfix, kwheel

TOKEN = "hf_kwheelReliabilityTOKEN_9e8d7c6b5a"
REPO = "user/img2gray"
CU126 = "torch27-cxx11-cu126-x86_64-linux"
CPU = "torch27-cxx11-cpu-x86_64-linux"
CU128 = "torch210-cxx11-cu128-x86_64-linux"
FILES = {"README.md": b"# img2gray\n",
         **H.kernel_files(CU126, "r", so_size=3_000_000), **H.kernel_files(CPU, "r", so_size=3_000_000),
         **H.kernel_files(CU128, "r", so_size=3_000_000)}


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    root = tmp_path_factory.mktemp("relstore") / "root"
    repo = hubfix.make_repo(root, REPO, [FILES], tags={"v0.1.0": 0})
    return {"root": root, "dir": repo.dir / "commits" / repo.shas[0]}


@pytest.fixture(scope="module")
def clean(store, tmp_path_factory) -> Path:
    """The -o of the wheels built from the commit's directory, no network. A Hub build gives
    the same bytes but for the "Hub revision" Project-URL (H.assert_like_directory_build)."""
    out = tmp_path_factory.mktemp("clean") / "dist"
    r = kwheel("build", store["dir"], "--version", "0.1.0", "--name", "img2gray", "-o", out)
    assert r.returncode == 0, str(r)
    assert H.dir_shas(out) == H.wheel_shas(r)
    return out


@pytest.fixture(scope="module")
def hub(store):
    with hubfix.hub_server(store["root"], token=TOKEN) as srv:
        yield srv


def one_line_error(r: H.Run, exit_code: int, *needles: str) -> str:
    assert r.returncode == exit_code, str(r)
    assert r.json and r.json["ok"] is False and r.json["exit_code"] == exit_code, str(r)
    err = r.json["error"]
    assert err and "\n" not in err
    assert [ln for ln in r.stderr.splitlines() if ln.startswith("kwheel: error:")] == [f"kwheel: error: {err}"], str(r)
    for n in needles:
        assert n.lower() in err.lower(), f"{n!r} not in {err!r}"
    assert TOKEN not in r.output
    return err


def no_temps(d: Path) -> None:
    assert not [p.name for p in d.rglob("*") if ".kwheel-tmp-" in p.name], sorted(os.listdir(d))


# --------------------------------------------------------------------------- TLS


@pytest.fixture(scope="module")
def tls_hub(store, pki):
    with hubfix.hub_server(store["root"], token=TOKEN, tls=(pki["cert"], pki["key"], pki["ca"])) as srv:
        assert srv.endpoint.startswith("https://") and srv.cdn.startswith("https://")
        yield srv


# The CA variables every command reads (connection.hpp), in its order.
CA_VARIABLES = ("KWHEEL_CA_BUNDLE", "SSL_CERT_FILE", "REQUESTS_CA_BUNDLE", "PIP_CERT")


def tls_env(home, **extra):
    """clean_env without the machine's own CA variables (a proxy's): the test's CA decides."""
    env = {k: v for k, v in H.clean_env(home).items() if k not in CA_VARIABLES + ("SSL_CERT_DIR", "CURL_CA_BUNDLE")}
    env.update({k: str(v) for k, v in extra.items()})
    return env


def tls_build(tls_hub, tmp_path, *extra, env=None):
    return kwheel("build", REPO, "--revision", "main", "--endpoint", tls_hub.endpoint, "--token", TOKEN,
                  "--cache-dir", tmp_path / "cache", "-o", tmp_path / "dist", *extra,
                  env=env or tls_env(tmp_path / "home"))


def test_tls_self_signed_hub_is_refused_by_default(tls_hub, tmp_path):
    tls_hub.clear_log()
    r = tls_build(tls_hub, tmp_path)
    err = one_line_error(r, 4, tls_hub.endpoint, "certificate", "--cert FILE", "the system's")
    assert not (tmp_path / "dist").exists()
    # refused during the handshake: the server never saw a request (nor the token)
    assert tls_hub.log() == [], err


def test_tls_ca_bundle_option_trusts_the_private_ca(tls_hub, pki, tmp_path, clean):
    r = tls_build(tls_hub, tmp_path, "--ca-bundle", pki["ca"])
    assert r.returncode == 0, str(r)
    H.assert_like_directory_build(r, tmp_path / "dist", clean, REPO)
    # LFS files came through the CDN listener, over TLS too
    assert any(e["listener"] == "cdn" for e in tls_hub.log())


def test_tls_ca_bundle_from_environment(tls_hub, pki, tmp_path, clean):
    for var in CA_VARIABLES:
        d = tmp_path / var
        r = tls_build(tls_hub, d, env=tls_env(d / "home", **{var: pki["ca"]}))
        assert r.returncode == 0, str(r)
        H.assert_like_directory_build(r, d / "dist", clean, REPO)


def test_tls_cert_is_the_hub_commands_flag_too(tls_hub, pki, tmp_path, clean):
    """--cert (pip's name) beats a wrong CA in every variable; --ca-bundle is its older name."""
    wrong = {var: pki["other_ca"] for var in CA_VARIABLES}
    r = tls_build(tls_hub, tmp_path, "--cert", pki["ca"], env=tls_env(tmp_path / "home", **wrong))
    assert r.returncode == 0, str(r)
    H.assert_like_directory_build(r, tmp_path / "dist", clean, REPO)
    r = tls_build(tls_hub, tmp_path / "both", "--cert", pki["ca"], "--ca-bundle", pki["ca"])
    one_line_error(r, 2, "--cert and --ca-bundle are one option")


def test_tls_wrong_ca_bundle_names_the_file_in_use(tls_hub, pki, tmp_path):
    r = tls_build(tls_hub, tmp_path, "--ca-bundle", pki["other_ca"])  # a CA that did not sign the server's
    one_line_error(r, 4, "certificate", str(pki["other_ca"]), "--ca-bundle")


def test_tls_missing_ca_bundle_is_a_usage_error(tls_hub, tmp_path):
    r = tls_build(tls_hub, tmp_path, "--ca-bundle", tmp_path / "nope.pem")
    one_line_error(r, 2, "--ca-bundle", "nope.pem", "readable")


# --------------------------------------------------------------------------- stalled transfer


def test_stalled_download_times_out_and_is_retried(hub, tmp_path, clean):
    """A server that accepts the request and then sends nothing: after --stall-timeout seconds
    without a byte the transfer is dropped and retried (the retry is answered)."""
    hub.clear_log()
    fault = hub.add_fault("hold", path=f"*/build/{CPU}/img2gray/*.so", max_seconds=60)
    try:
        r = kwheel("build", REPO, "--revision", "main", "--endpoint", hub.endpoint, "--token", TOKEN,
                   "--cache-dir", tmp_path / "cache", "-o", tmp_path / "dist", "--stall-timeout", "2",
                   env=H.clean_env(tmp_path / "home"),
                   timeout=45)  # held 60 s: a run still going at 45 s did not apply the 2 s timeout
    finally:
        hub.release(fault["id"])
    assert r.returncode == 0, str(r)
    H.assert_like_directory_build(r, tmp_path / "dist", clean, REPO)
    assert r.json["transfers"]["retries"] >= 1
    gets = [e for e in hub.log() if e["method"] == "GET" and f"/build/{CPU}/img2gray/" in e["path"] and e["path"].endswith(".so")]
    # The held request is logged as it arrives ("held"); whether its late answer after the release
    # is logged before this line runs is a race, so only the retry's answer is asserted.
    held = [e for e in gets if e.get("held")]
    answered = [e for e in gets if not e.get("held") and e.get("status") in (200, 206, 302)]
    assert held and answered, gets


def test_stall_timeout_must_be_whole_seconds(tmp_path):
    for bad in ("0", "1.5", "x"):
        r = kwheel("build", REPO, "--endpoint", "http://127.0.0.1:9", "--stall-timeout", bad,
                   env=H.clean_env(tmp_path / "home"))
        one_line_error(r, 2, "--stall-timeout", bad)


# --------------------------------------------------------------------------- disk full


def _file_size_limit(limit: int):
    def apply():
        # Ignored SIGXFSZ turns the limit into EFBIG from write(2): what a full disk looks like to kwheel.
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
    return apply


def run_limited(limit: int, *args, env: dict) -> H.Run:
    argv = [str(a) for a in args] + ["--json"]
    p = subprocess.run([H.KWHEEL, *argv], env=env, capture_output=True, text=True, timeout=120,
                       preexec_fn=_file_size_limit(limit))
    run = H.Run(argv, p.returncode, p.stdout, p.stderr)
    run.json = __import__("json").loads(p.stdout) if p.stdout.strip() else None
    return run


def test_disk_full_while_writing_a_wheel_leaves_out_as_it_was(store, tmp_path):
    out = tmp_path / "dist"
    out.mkdir()
    (out / "keep.txt").write_text("not kwheel's\n")
    before = H.dir_shas(out)
    r = run_limited(1_000_000, "build", store["dir"], "--version", "0.1.0", "--name", "img2gray", "-o", out,
                    "--compression-level", "0", env=H.clean_env(tmp_path / "home"))
    # a per-variant failure (the build report), exit code io
    assert r.returncode == 7 and r.json and r.json["ok"] is False and not r.json["committed"], str(r)
    failed = [v for v in r.json["variants"] if v["status"] == "failed"]
    assert failed, str(r)
    for v in failed:
        assert ".whl" in v["error"] and "file too large" in v["error"].lower() and "-o" in v["error"], v
        assert "\n" not in v["error"]
    assert H.dir_shas(out) == before, str(r)
    no_temps(out)
    # and with room again, the same command succeeds
    r = kwheel("build", store["dir"], "--version", "0.1.0", "--name", "img2gray", "-o", out)
    assert r.returncode == 0, str(r)


def test_disk_full_while_downloading_keeps_the_cache_sound(hub, tmp_path, clean):
    env = H.clean_env(tmp_path / "home")
    args = ["build", REPO, "--revision", "main", "--endpoint", hub.endpoint, "--token", TOKEN,
            "--cache-dir", tmp_path / "cache", "-o", tmp_path / "dist"]
    r = run_limited(1_000_000, *args, env=env)
    one_line_error(r, 7, "file too large")
    assert not (tmp_path / "dist").exists()
    H.check_cache(tmp_path / "cache")  # no blob holds wrong bytes; partial downloads stay .incomplete
    r = kwheel(*args, env=env)  # resumes and completes
    assert r.returncode == 0, str(r)
    H.assert_like_directory_build(r, tmp_path / "dist", clean, REPO)
    assert H.check_cache(tmp_path / "cache")["incomplete"] == 0


# --------------------------------------------------------------------------- concurrency


def test_two_builds_share_one_cache_and_one_out(hub, tmp_path, clean):
    """Both runs succeed with the same wheels; the cache holds only sound blobs. The first
    download is held by the server until both processes are running, so they overlap."""
    hub.clear_log()
    fault = hub.add_fault("hold", path=f"*/build/{CU126}/img2gray/*.so", max_seconds=60)
    env = H.clean_env(tmp_path / "home")
    args = [H.KWHEEL, "build", REPO, "--revision", "main", "--endpoint", hub.endpoint, "--token", TOKEN,
            "--cache-dir", str(tmp_path / "cache"), "-o", str(tmp_path / "dist"), "--json"]
    procs = []
    try:
        procs = [subprocess.Popen(args, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                 for _ in range(2)]
        end = time.monotonic() + 60
        while not [e for e in hub.log() if e.get("held")]:  # polling for the request, not a timing sleep
            assert time.monotonic() < end and all(p.poll() is None for p in procs), "held request never came"
            time.sleep(0.02)
        assert all(p.poll() is None for p in procs)  # both in flight while one holds the download
    finally:
        hub.release(fault["id"])
    # Both must have ended before -o is compared: the other run may still be
    # staging its temps there.
    runs = []
    for p in procs:
        stdout, stderr = p.communicate(timeout=120)
        runs.append(H.Run(args, p.returncode, stdout, stderr, __import__("json").loads(stdout) if stdout.strip() else None))
    results = []
    for run in runs:
        assert run.returncode == 0, str(run)
        H.assert_like_directory_build(run, tmp_path / "dist", clean, REPO)
        results.append(H.wheel_shas(run))
    assert results[0] == results[1] == H.dir_shas(tmp_path / "dist")
    no_temps(tmp_path / "dist")
    counts = H.check_cache(tmp_path / "cache")
    assert counts["incomplete"] == 0 and counts["blobs"] > 0
    # each file was fetched once: the second run waited on the first one's lock
    so_gets = [e for e in hub.log() if e["method"] == "GET" and e["path"].endswith(".so") and not e.get("held")]
    assert len({e["path"] for e in so_gets}) == len(so_gets) or len(so_gets) <= 2 * 3


# --------------------------------------------------------------------------- hostile repos (on disk)


def _dir_build(tmp_path, files: dict[str, bytes]) -> tuple[H.Run, Path]:
    repo = H.write_tree(tmp_path / "repo", files)
    out = tmp_path / "dist"
    return kwheel("build", repo, "--version", "0.1.0", "--name", "img2gray", "-o", out,
                  env=H.clean_env(tmp_path / "home")), out


def test_names_differing_only_in_case_stay_distinct_members(tmp_path):
    files = {**H.kernel_files(CPU, "r"), f"build/{CPU}/img2gray/Extra.py": b"A = 1\n",
             f"build/{CPU}/img2gray/extra.py": b"a = 2\n"}
    r, out = _dir_build(tmp_path, files)
    assert r.returncode == 0, str(r)
    (wheel,) = out.glob("*.whl")
    w = H.read_wheel(wheel)
    assert w.files["img2gray/Extra.py"] == b"A = 1\n" and w.files["img2gray/extra.py"] == b"a = 2\n"
    H.check_record(wheel)


def test_zero_byte_shared_object_is_refused_with_its_name(tmp_path):
    files = H.kernel_files(CPU, "r")
    (so,) = [p for p in files if p.endswith(".so")]
    files[so] = b""
    r, out = _dir_build(tmp_path, files)
    assert r.returncode != 0 and r.json and r.json["ok"] is False, str(r)
    errors = " ".join(v.get("error", "") for v in r.json.get("variants", [])) + r.json.get("error", "")
    assert Path(so).name in errors, str(r)
    assert not out.exists() or not list(out.glob("*.whl"))
