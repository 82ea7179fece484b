"""Today's Hub kernels, end to end: kernel-type repos with integer version
branches in all three layouts, served by the fixture Hub, built by kwheel,
installed by pip and compared with what kernels 0.17.2 loads from the same repo.

Expected values come from the peers, not from kwheel: history lengths from
huggingface_hub's list_repo_commits, locks from `kernels lock`, version order
from pip, kernel results from the formula in kernels/img2gray/__init__.py.
"""

from __future__ import annotations

import hashlib
import json
import re
import os
import shutil
import subprocess
import sys
import urllib.parse
from pathlib import Path

import pytest
from huggingface_hub import HfApi

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(ROOT / "tests" / "hub"))
sys.path.insert(0, str(HERE))
import fixture as hubfix  # noqa: E402
import hubtest as H  # noqa: E402
import kernel_repos as kr  # noqa: E402
from elfgen import cuda_shared_object  # noqa: E402

ORG = "kernels-test"
RELU = f"{ORG}/my-relu"          # v1 compat, v2 flat
NESTED = f"{ORG}/nested-relu"    # v1 nested with metadata.json
LEGACY = f"{ORG}/old-relu"       # a model repo with a vX.Y.Z tag, no metadata
IMG2GRAY = f"{ORG}/img2gray"     # the real kernel: v1 compat, v2 flat
CU126 = "torch27-cxx11-cu126-x86_64-linux"
DEBIAN_DIST = Path("/usr/lib/python3/dist-packages")


def relu_tree(layout: str, n: int) -> dict[str, bytes]:
    tree = kr.variant_tree("torch-cpu", layout=layout, name="my-relu", version=n,
                           files=kr.demo_package("my-relu", f"relu v{n} {layout}"),
                           python_depends=["einops", "tvm-ffi"], upstream="git@github.com:example/relu.git")
    tree.update(kr.variant_tree(CU126, layout=layout, name="my-relu", version=n, archs=["9.0", "8.0"], kernel_id="_my_relu_0123abc",
                                files=kr.demo_package("my-relu", f"relu v{n} {layout}", so=cuda_shared_object(["sm_80", "sm_90"]))))
    return tree


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    root = tmp_path_factory.mktemp("kstore") / "root"
    hubfix.set_org(root, ORG, trustedKernelPublisher=True)
    relu = kr.make_kernel_repo(root, RELU, {1: relu_tree("compat", 1), 2: relu_tree("flat", 2)})
    nested = kr.make_kernel_repo(root, NESTED, {1: kr.variant_tree("torch-cpu", layout="nested", name="nested-relu",
                                                                     files=kr.demo_package("nested-relu", "nested"))})
    legacy = hubfix.make_repo(root, LEGACY, [{"build/torch-universal/old_relu/__init__.py": b"def hello():\n    return 'old'\n"}],
                              branches={"main": 0}, tags={"v0.1.0": 0}, types=["model"])
    return {"root": root, "relu": relu, "nested": nested, "legacy": legacy}


@pytest.fixture(scope="module")
def hub(store):
    with hubfix.hub_server(store["root"]) as srv:
        yield srv


@pytest.fixture
def env(tmp_path, hub):
    return H.clean_env(tmp_path / "home", HF_ENDPOINT=hub.endpoint)


def history_length(hub, repo: str, sha: str) -> int:
    return len(HfApi(endpoint=hub.endpoint, token=False).list_repo_commits(repo, repo_type="kernel", revision=sha))


def built(run) -> list[dict]:
    assert run.returncode == 0, str(run)
    return [v for v in run.json["variants"] if v["status"] == "built"]


def pip_target(wheels: Path, requirement: str, target: Path, *extra) -> str:
    """Installs with real pip from a directory of wheels; returns the installed version."""
    r = subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--disable-pip-version-check", "--no-deps", "--no-index",
                        "--find-links", str(wheels), "--target", str(target), *extra, requirement],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    (meta,) = list(target.glob("*.dist-info/METADATA"))
    return next(line.split(": ", 1)[1] for line in meta.read_text().splitlines() if line.startswith("Version: "))


# --------------------------------------------------------------------------- versions and layouts


def test_default_is_the_highest_version_and_says_so(hub, store, env, tmp_path):
    run = H.kwheel("build", RELU, "-o", tmp_path / "out", env=env)
    wheels = built(run)
    v2 = store["relu"].versions[2]
    n = history_length(hub, RELU, v2)
    assert n == 2  # README commit on main, then the v2 build forked from it
    assert {w["version"].split("+")[0] for w in wheels} == {f"2.{n}"}
    src = run.json["source"]
    assert (src["repo_type"], src["ref"], src["commit"], src["latest"], src["kernel_version"]) == ("kernel", "v2", v2, True, 2)
    assert all(e["path"].startswith(("/api/kernels/", "/kernels/")) for e in hub.log() if e["repo"] == RELU)
    text = H.kwheel("build", RELU, "-o", tmp_path / "out2", env=env, json_out=False)
    assert text.returncode == 0 and "v2 (the highest version)" in text.stderr, str(text)
    # the HF cache is shared with huggingface_hub and kernels: kernels--org--name
    assert (tmp_path / "home" / "hub" / "kernels--kernels-test--my-relu" / "snapshots" / v2).is_dir()


def test_compat_layout_packs_the_flat_package_and_leaves_the_shim_out(hub, env, tmp_path):
    run = H.kwheel("build", RELU, "--version", "1", "-o", tmp_path / "out", env=env)
    (cpu,) = [v for v in built(run) if v["variant"] == "torch-cpu"]
    assert (cpu["layout"], cpu["package"], cpu["name"]) == ("flat+compat", "my_relu", "my-relu")
    assert cpu["ignored_files"] == ["my_relu/__init__.py"]
    assert cpu["kernel"]["version"] == 1 and cpu["kernel"]["digest"] == "sha256"
    w = H.read_wheel(cpu["wheel"])
    assert sorted(w.package_files()) == ["my_relu/__init__.py", "my_relu/_ops.py", "my_relu/metadata.json"]
    assert H.check_record(cpu["wheel"]) == 7  # 3 package files, hub_kernel.json, METADATA, WHEEL, RECORD
    assert json.loads(w.files[w.dist_info + "/hub_kernel.json"]) == {
        "package": "my_relu", "repo_id": RELU, "revision": run.json["source"]["commit"], "variant": "torch-cpu", "version": 1}
    served = kr.variant_tree("torch-cpu", layout="compat", name="my-relu", version=1,
                             files=kr.demo_package("my-relu", "relu v1 compat"),
                             python_depends=["einops", "tvm-ffi"], upstream="git@github.com:example/relu.git")
    assert w.files["my_relu/__init__.py"] == served["build/torch-cpu/__init__.py"]  # the flat one, not the shim
    assert w.files["my_relu/metadata.json"] == served["build/torch-cpu/metadata.json"]
    table = H.kwheel("build", RELU, "--version", "1", "-o", tmp_path / "out", env=env, json_out=False)
    assert "left out (flat+compat layout): my_relu/__init__.py" in table.stdout, str(table)


def test_metadata_becomes_wheel_metadata(hub, store, env, tmp_path):
    run = H.kwheel("build", RELU, "-o", tmp_path / "out", env=env)
    by = {v["variant"]: v for v in built(run)}
    w = H.read_wheel(by["torch-cpu"]["wheel"])
    assert w.meta("License-Expression") == ["Apache-2.0"]
    assert sorted(w.meta("Requires-Dist")) == ["apache-tvm-ffi", "einops", "torch"]  # tvm-ffi through kernels' mapping
    sha = store["relu"].versions[2]
    assert w.meta("Project-URL") == ["Upstream, https://github.com/example/relu.git",
                                     f"Hub revision, https://huggingface.co/kernels/{RELU}/tree/{sha}"]
    # packaging (what pip and twine use) accepts the METADATA as valid 2.4
    from packaging.metadata import Metadata
    Metadata.from_email(w.files[f"{w.dist_info}/METADATA"], validate=True)
    ins = H.kwheel("inspect", by[CU126]["wheel"], env=env)
    assert ins.json["hub_revision"] == {"repo_id": RELU, "commit": sha}, str(ins)
    assert ins.json["kernel"]["archs"] == ["8.0", "9.0"] and ins.json["kernel"]["backend"] == "cuda"
    assert by[CU126]["kernel"]["archs"] == ["8.0", "9.0"]


def test_pip_orders_versions(hub, env, tmp_path):
    out = tmp_path / "dist"
    for n in ("1", "2"):
        built(H.kwheel("build", RELU, "--version", n, "--variant", "torch-cpu", "-o", out, env=env))
    assert pip_target(out, "my-relu", tmp_path / "latest").startswith("2.")
    assert pip_target(out, "my-relu>=1,<2", tmp_path / "v1").startswith("1.")
    assert (tmp_path / "v1" / "my_relu" / "metadata.json").is_file()  # readable from site-packages


def test_later_commits_on_a_version_branch_sort_higher(hub, store, env, tmp_path):
    repo = store["relu"]
    before = built(H.kwheel("build", RELU, "--version", "1", "--variant", "torch-cpu", "-o", tmp_path / "a", env=env))[0]
    sha = hubfix.add_commit(repo.dir, {"README.md": b"# my-relu\n", **relu_tree("compat", 1)}, message="Rebuild v1", branch="v1")
    try:
        after = built(H.kwheel("build", RELU, "--version", "1", "--variant", "torch-cpu", "-o", tmp_path / "b", env=env))[0]
    finally:
        hubfix.set_ref(repo.dir, "v1", repo.versions[1])
    from packaging.version import Version
    assert Version(after["version"]) > Version(before["version"])
    assert after["version"].split("+")[0] == f"1.{history_length(hub, RELU, sha)}"
    again = built(H.kwheel("build", RELU, "--revision", repo.versions[1], "--variant", "torch-cpu", "-o", tmp_path / "c", env=env))[0]
    assert again["version"] == before["version"]  # a pure function of the commit, however it is reached


def test_nested_model_repo_and_missing_versions(hub, store, env, tmp_path):
    nested = built(H.kwheel("build", NESTED, "-o", tmp_path / "n", env=env))[0]
    assert (nested["layout"], nested["package"]) == ("nested", "nested_relu")
    run = H.kwheel("build", LEGACY, "--version", "0.1.0", "-o", tmp_path / "old", env=env)
    (old,) = built(run)
    assert old["version"] == "0.1.0" and run.json["source"]["repo_type"] == "model"
    assert run.json["source"]["repo_type_fallback"] is True
    text = H.kwheel("build", LEGACY, "--version", "0.1.0", "-o", tmp_path / "old2", env=env, json_out=False)
    assert "is a model repo, not a kernel repo" in text.stderr, str(text)
    forced = H.kwheel("build", LEGACY, "--version", "0.1.0", "--repo-type", "kernel", "-o", tmp_path / "x", env=env)
    assert forced.returncode == 5 and "not found" in forced.stderr, str(forced)
    none = H.kwheel("build", LEGACY, "-o", tmp_path / "y", env=env)
    assert none.returncode == 5, str(none)
    assert "has no version branch vN (branches: main; tags: v0.1.0)" in none.stderr
    assert len(none.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "x").exists() and not (tmp_path / "y").exists()


# --------------------------------------------------------------------------- integrity and bad input


def test_digest_mismatch_is_refused_naming_the_file(hub, store, env, tmp_path):
    tree = relu_tree("flat", 3)
    tree["build/torch-cpu/_ops.py"] += b"# tampered after hashing\n"
    kr.make_kernel_repo(store["root"], f"{ORG}/tampered", {3: tree})
    run = H.kwheel("build", f"{ORG}/tampered", "-o", tmp_path / "out", env=env)
    assert run.returncode == 3, str(run)
    (bad,) = [v for v in run.json["variants"] if v["status"] == "failed"]
    assert bad["variant"] == "torch-cpu"
    assert "'_ops.py' does not match its sha256 in metadata.json's digest" in bad["error"]
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("case, metadata, expect", [
    ("malformed", b"{", "metadata.json is not valid JSON"),
    ("wrong type", b'{"name": "my-relu", "version": "1"}', "field 'version' must be an integer from 0 to 99999999"),
    ("oversized", b'{"license": "' + b"x" * (1 << 20) + b'"}', "over the 1 MiB limit"),
    ("unknown python-depends", b'{"name": "my-relu", "python-depends": ["numpy"]}', "python-depends names 'numpy'"),
    ("name disagrees", b'{"name": "relu"}', "names the kernel 'relu' but its package directory is 'my_relu/'"),
])
def test_bad_metadata_is_one_line_naming_the_variant(tmp_path, case, metadata, expect):
    d = tmp_path / "repo"
    kr.write_tree(d, {"build/torch-cpu/metadata.json": metadata, "build/torch-cpu/my_relu/__init__.py": b""})
    (tmp_path / "dist").mkdir()
    (tmp_path / "dist" / "keep.txt").write_text("mine")
    run = H.kwheel("build", d, "--version", "1.0", "-o", tmp_path / "dist", json_out=False)
    assert run.returncode == 3, str(run)
    (line,) = [l for l in run.stdout.splitlines() if l.startswith("torch-cpu")]
    assert "variant 'torch-cpu'" in line and expect in line, line
    assert sorted(p.name for p in (tmp_path / "dist").iterdir()) == ["keep.txt"]


def test_flat_directory_build_is_named_by_its_metadata(tmp_path):
    d = tmp_path / "clone-of-whatever"
    kr.write_variant(d, "torch-cpu", layout="flat", name="my-relu", files=kr.demo_package("my-relu", "dir"))
    run = H.kwheel("build", d, "--version", "1.0", "-o", tmp_path / "dist")
    (w,) = built(run)
    assert w["filename"] == "my_relu-1.0+torch.cpu-py3-none-any.whl" and w["package"] == "my_relu"
    bare = tmp_path / "bare"
    kr.write_variant(bare, "torch-cpu", layout="flat", name="my-relu", files=kr.demo_package("my-relu", "x"), with_metadata=False)
    run = H.kwheel("build", bare, "--version", "1.0", "-o", tmp_path / "d2", json_out=False)
    assert run.returncode == 3 and "is flat (its __init__.py is at the top) but has no metadata.json" in run.stdout, str(run)


# --------------------------------------------------------------------------- locks


def kernels_lock(hub, tmp_path, deps: dict[str, int]) -> Path:
    """kernels.lock as kernels 0.17.2's own `kernels lock` writes it."""
    proj = tmp_path / "proj"
    proj.mkdir(exist_ok=True)
    lines = "".join(f'"{repo}" = {n}\n' for repo, n in deps.items())
    (proj / "pyproject.toml").write_text(f'[project]\nname = "p"\nversion = "0"\n\n[tool.kernels.dependencies]\n{lines}')
    r = subprocess.run([str(Path(sys.executable).parent / "kernels"), "lock", str(proj)], env=hubfix.client_env(hub, tmp_path / "khome"),
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    return proj / "kernels.lock"


def legacy_lock(entries: dict[str, str], path: Path) -> Path:
    """The pre-0.17 format: [{"repo_id", "sha", "variants": {...}}]."""
    path.write_text(json.dumps([{"repo_id": repo, "sha": sha, "variants": {}} for repo, sha in entries.items()], indent=2))
    return path


@pytest.mark.parametrize("fmt", ["0.17", "legacy"])
def test_lock_to_pinned_requirements(hub, store, env, tmp_path, fmt):
    v1, nested = store["relu"].versions[1], store["nested"].versions[1]
    if fmt == "0.17":
        lock = kernels_lock(hub, tmp_path, {RELU: 1, NESTED: 1})
        assert {e["lock"]["commit"] for e in json.loads(lock.read_text())} == {v1, nested}
    else:
        lock = legacy_lock({RELU: v1, NESTED: nested}, tmp_path / "kernels.lock")
    out = tmp_path / "dist"
    built(H.kwheel("build", RELU, "--version", "2", "-o", out, env=env))  # a newer build the lock must not pick
    run = H.kwheel("build", "--lock", lock, "-o", out, env=env)
    assert run.returncode == 0, str(run)
    assert [k["source"]["commit"] for k in run.json["kernels"]] == [v1, nested]
    pin = H.kwheel("pin", "--no-deps", out, "--lock", lock, "--torch", "2.7", "--cpu", env=env, json_out=False)
    assert pin.returncode == 0, str(pin)
    req = tmp_path / "requirements.txt"
    req.write_text(pin.stdout)
    reqs = [l for l in pin.stdout.splitlines() if l and not l.startswith("#")]
    assert len(reqs) == 2 and all("--hash=sha256:" in l for l in reqs), pin.stdout
    assert any(l.startswith(f"my-relu==1.{history_length(hub, RELU, v1)}+torch.cpu ") for l in reqs), pin.stdout
    target = tmp_path / "site"
    r = subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--disable-pip-version-check", "--no-deps", "--no-index",
                        "--find-links", str(out), "--require-hashes", "--target", str(target), "-r", str(req)],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert sorted(p.name for p in target.iterdir() if not p.name.endswith(".dist-info")) == ["my_relu", "nested_relu"]


def relu_site(env, tmp_path) -> Path:
    """A kwheel index of my-relu's v1 and v2 builds (two commits)."""
    out = tmp_path / "dist"
    for n in ("1", "2"):
        built(H.kwheel("build", RELU, "--version", n, "-o", out, env=env))
    site = tmp_path / "site"
    assert H.kwheel("index", out, "--out", site, env=env).returncode == 0
    return site


def pin_over_http(site: Path, seen: list[str], *args, env):
    """kwheel pin ARGS against SITE served by http.server; the paths it asked for go to `seen`."""
    import functools
    import http.server
    import threading

    class Handler(http.server.SimpleHTTPRequestHandler):
        def log_message(self, fmt, *args):
            seen.append(self.path)

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Handler, directory=str(site)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    index = f"http://127.0.0.1:{server.server_address[1]}/simple/"
    try:
        return index, H.kwheel("pin", "--no-deps", index, *args, env=env)
    finally:
        server.shutdown()
        server.server_close()


def test_pin_lock_from_an_index_reads_pep658_metadata(hub, store, env, tmp_path):
    """Through a kwheel index, pin --lock learns each wheel's commit from its PEP 658 metadata file."""
    v1 = store["relu"].versions[1]
    lock = legacy_lock({RELU: v1}, tmp_path / "kernels.lock")
    seen: list[str] = []
    index, pin = pin_over_http(relu_site(env, tmp_path), seen, "--lock", lock, "--torch", "2.7", "--cuda", "12.6", env=env)
    assert pin.returncode == 0, str(pin)
    (k,) = pin.json["kernels"]
    assert k["version"] == f"1.{history_length(hub, RELU, v1)}+torch2.7.cu126", k
    assert f"--index-url {index}" in pin.json["requirements"]
    assert any(p.endswith(".whl.metadata") for p in seen) and not any(p.endswith(".whl") for p in seen), seen
    # v2's newer builds were candidates, all refused: its CUDA build for its commit (its torch-cpu
    # build does not fit a CUDA target at all, kernels' backend rule)
    assert all(not c["fits"] for c in k["candidates"] if c["filename"].startswith("my_relu-2.")), k["candidates"]
    reasons = [c.get("reason", "") for c in k["candidates"] if c["filename"].startswith("my_relu-2.") and "+torch2.7.cu126" in c["filename"]]
    assert reasons and all(f"not the locked {v1[:12]}" in r for r in reasons), k["candidates"]


def test_pin_lock_refuses_a_pep658_metadata_file_the_page_does_not_hash_to(hub, store, env, tmp_path):
    """The index's .metadata of a v2 build (commit B) replaced by the METADATA of the v1 build
    (the locked commit A): trusted, it would make pin lock v2's wheel as commit A's. The page's
    data-core-metadata sha256 still names the real file, so kwheel refuses, naming the file and
    both hashes (PEP 658/714, as pip checks)."""
    v1 = store["relu"].versions[1]
    lock = legacy_lock({RELU: v1}, tmp_path / "kernels.lock")
    site = relu_site(env, tmp_path)
    files = site / "files"
    [v2_cuda] = [p for p in files.glob("my_relu-2.*cu126*.whl")]
    [v1_cuda] = [p for p in files.glob("my_relu-1.*cu126*.whl")]
    tampered = files / (v2_cuda.name + ".metadata")
    page_sha = hashlib.sha256(tampered.read_bytes()).hexdigest()
    tampered.write_bytes((files / (v1_cuda.name + ".metadata")).read_bytes())
    served_sha = hashlib.sha256(tampered.read_bytes()).hexdigest()
    assert f"sha256={page_sha}" in (site / "simple" / "my-relu" / "index.html").read_text()
    seen: list[str] = []
    _, pin = pin_over_http(site, seen, "--lock", lock, "--torch", "2.7", "--cuda", "12.6", env=env)
    assert pin.returncode == 3, str(pin)
    assert pin.json["ok"] is False, pin.json
    [line] = [l for l in pin.stderr.splitlines() if "sha256" in l]
    assert f"lock entry '{RELU}'" in line and v2_cuda.name + ".metadata" in line, line
    assert f"the page gives sha256 {page_sha}, the served bytes have sha256 {served_sha}" in line, line
    assert any(p.endswith(".whl.metadata") for p in seen), seen


def without_pep658(site: Path) -> None:
    """The site as pypiserver, Artifactory or Nexus serve it: no .metadata files, no attribute."""
    for m in (site / "files").glob("*.metadata"):
        m.unlink()
    for page in (site / "simple").rglob("index.html"):
        page.write_text(re.sub(r' data-(?:dist-info|core)-metadata="[^"]*"', "", page.read_text()))
    for page in (site / "simple").rglob("index.json"):
        page.unlink()


def test_pin_lock_without_pep658_reads_the_wheel_the_page_hashes(hub, store, env, tmp_path):
    """An index with no PEP 658 metadata: pin fetches the fitting wheels, as pip would, and learns
    each one's commit from its own METADATA, once its bytes match the page's sha256."""
    v1 = store["relu"].versions[1]
    lock = legacy_lock({RELU: v1}, tmp_path / "kernels.lock")
    site = relu_site(env, tmp_path)
    without_pep658(site)
    seen: list[str] = []
    _, pin = pin_over_http(site, seen, "--lock", lock, "--torch", "2.7", "--cuda", "12.6", env=env)
    assert pin.returncode == 0, str(pin)
    [v1_cuda] = [p.name for p in (site / "files").glob("my_relu-1.*cu126*.whl")]
    assert v1_cuda in pin.stdout, pin.stdout
    fetched = [urllib.parse.unquote(p) for p in seen]
    assert f"/files/{v1_cuda}" in fetched and not any(p.endswith(".metadata") for p in fetched), fetched


def test_pin_lock_without_pep658_refuses_a_wheel_the_page_does_not_hash_to(hub, store, env, tmp_path):
    """v2's wheel replaced by v1's bytes (the locked commit A) under v2's name: its METADATA would
    say commit A. The page still gives v2's sha256, so the pin fails, naming the file."""
    v1 = store["relu"].versions[1]
    lock = legacy_lock({RELU: v1}, tmp_path / "kernels.lock")
    site = relu_site(env, tmp_path)
    without_pep658(site)
    files = site / "files"
    [v2_cuda] = [p for p in files.glob("my_relu-2.*cu126*.whl")]
    [v1_cuda] = [p for p in files.glob("my_relu-1.*cu126*.whl")]
    v1_cuda.unlink()  # only the impostor fits now
    v2_cuda.write_bytes((tmp_path / "dist" / v1_cuda.name).read_bytes())
    seen: list[str] = []
    _, pin = pin_over_http(site, seen, "--lock", lock, "--torch", "2.7", "--cuda", "12.6", env=env)
    # The transfer cannot tell tampering from corruption on the way, so it is retried, then fails
    # as a download does (exit 4), naming the file and both hashes; nothing is pinned.
    assert pin.returncode == 4 and pin.stdout.count("==") == 0, str(pin)
    [line] = [l for l in pin.stderr.splitlines() if "sha256 mismatch" in l]
    assert v2_cuda.name in line and hashlib.sha256(v2_cuda.read_bytes()).hexdigest() in line, line


def test_lock_naming_a_missing_commit_or_repo(hub, store, env, tmp_path):
    out = tmp_path / "dist"
    lock = legacy_lock({RELU: store["relu"].versions[1], f"{ORG}/no-such-kernel": "a" * 40}, tmp_path / "kernels.lock")
    run = H.kwheel("build", "--lock", lock, "-o", out, env=env, json_out=False)
    assert run.returncode == 5, str(run)
    (line,) = [l for l in run.stderr.splitlines() if "lock entry" in l]
    assert f"lock entry '{ORG}/no-such-kernel' (commit aaaaaaaaaaaa) of {lock}: " in line and "not found" in line, line
    assert not out.exists()  # the first kernel's staged wheels went too
    lock = legacy_lock({RELU: "b" * 40}, tmp_path / "k2.lock")
    run = H.kwheel("build", "--lock", lock, "-o", out, env=env, json_out=False)
    assert run.returncode == 5 and f"lock entry '{RELU}' (commit bbbbbbbbbbbb)" in run.stderr, str(run)


def test_project_without_lock_builds_declared_versions(hub, store, env, tmp_path):
    proj = tmp_path / "proj"
    proj.mkdir()
    (proj / "pyproject.toml").write_text(f'[tool.kernels.dependencies]\n"{RELU}" = 1\n"{NESTED}" = 1\n')
    run = H.kwheel("build", "--project", proj, "-o", tmp_path / "dist", env=env)
    assert run.returncode == 0, str(run)
    assert [k["source"]["commit"] for k in run.json["kernels"]] == [store["relu"].versions[1], store["nested"].versions[1]]


# --------------------------------------------------------------------------- the real kernel


@pytest.fixture(scope="module")
def img2gray_repo(store, tmp_path_factory):
    if not (DEBIAN_DIST / "torch" / "__init__.py").exists():
        pytest.fail("Debian's python3-torch is not installed; run scripts/setup")
    trees = {}
    for n, layout in ((1, "compat"), (2, "flat")):
        out = tmp_path_factory.mktemp(f"img2gray-{layout}")
        r = subprocess.run([str(ROOT / "scripts" / "build-kernel"), "--cpu", "--layout", layout, "--kernel-version", str(n),
                            "--out", str(out)], capture_output=True, text=True, timeout=900)
        assert r.returncode == 0, r.stderr
        trees[n] = out
    return kr.make_kernel_repo(store["root"], IMG2GRAY, trees)


RUN_IMG2GRAY = r"""
import sys
if len(sys.argv) > 1:
    sys.path.append(sys.argv[1])  # Debian's python3-torch, after the venv's packages
import torch
if len(sys.argv) > 1:
    from kernels import get_kernel
    k = get_kernel("kernels-test/img2gray", version=int(sys.argv[2]), backend="cpu")
else:
    import img2gray as k
g = torch.Generator().manual_seed(7)
x = torch.randint(0, 256, (13, 17, 3), dtype=torch.uint8, generator=g)
y = k.img2gray(x)
r, gg, b = (x[..., i].to(torch.int32) for i in range(3))
assert torch.equal(y.to(torch.int32), (21 * r + 72 * gg + 7 * b + 50) // 100)
print("SUM", int(y.to(torch.int64).sum()))
"""


@pytest.mark.parametrize("n", [1, 2])
def test_real_kernel_wheel_runs_like_kernels_loads_it(hub, env, tmp_path, img2gray_repo, n):
    run = H.kwheel("build", IMG2GRAY, "--version", str(n), "-o", tmp_path / "dist", env=env)
    (w,) = built(run)
    assert w["layout"] == ("flat+compat" if n == 1 else "flat")
    venv = tmp_path / "venv"
    subprocess.run(["/usr/bin/python3", "-m", "venv", "--system-site-packages", str(venv)], check=True, timeout=120)
    r = subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "install", "-q", "--no-deps", "--no-index", w["wheel"]],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    mine = subprocess.run([str(venv / "bin" / "python"), "-c", RUN_IMG2GRAY], capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert mine.returncode == 0, mine.stderr
    theirs = subprocess.run([sys.executable, "-c", RUN_IMG2GRAY, str(DEBIAN_DIST), str(n)], capture_output=True, text=True,
                            timeout=300, cwd=tmp_path, env=hubfix.client_env(hub, tmp_path / "khome"))
    assert theirs.returncode == 0, theirs.stderr
    assert mine.stdout.split()[-1] == theirs.stdout.split()[-1]


# --------------------------------------------------------------------------- the shared cache


OFFLINE_GET_KERNEL = r"""
from kernels import get_kernel
k = get_kernel("kernels-test/nested-relu", version=1, backend="cpu")
print("HELLO", k.hello())
"""


def test_cache_is_shared_with_kernels_both_ways(hub, store, env, tmp_path):
    """kwheel fills the HF cache the way huggingface_hub does (kernels--org--name,
    blobs, snapshots, refs/vN), so kernels 0.17.2 loads from it offline; and
    kwheel --offline builds the same bytes from it."""
    out = tmp_path / "online"
    online = built(H.kwheel("build", NESTED, "--version", "1", "-o", out, env=env))
    kenv = {**hubfix.client_env(hub, tmp_path / "home"), "HF_HUB_OFFLINE": "1"}
    r = subprocess.run([sys.executable, "-c", OFFLINE_GET_KERNEL], env=kenv, capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert r.returncode == 0 and "HELLO nested" in r.stdout, r.stderr
    hub.clear_log()
    offline = built(H.kwheel("build", NESTED, "--offline", "-o", tmp_path / "offline", env=env))
    assert {w["filename"]: w["sha256"] for w in offline} == {w["filename"]: w["sha256"] for w in online}
    assert hub.log() == []  # not one request


# --------------------------------------------------------------------------- the first hour (#33): pin DIR, variants


def test_pin_of_several_kernels_is_one_requirements_file(hub, store, env, tmp_path):
    """Issue #33, 5: `pin DIR` without --name pins every kernel the directory holds; --name narrows it."""
    out = tmp_path / "dist"
    built(H.kwheel("build", RELU, "--version", "2", "-o", out, env=env))
    built(H.kwheel("build", NESTED, "-o", out, env=env))
    # nested-relu has only torch-cpu, which kernels does not load on a CUDA torch: the target is CPU here.
    pin = H.kwheel("pin", "--no-deps", out, "--torch", "2.7", "--cpu", env=env, json_out=False)
    assert pin.returncode == 0, str(pin)
    reqs = [line for line in pin.stdout.splitlines() if line and not line.startswith("#")]
    assert sorted(line.split("==")[0] for line in reqs) == ["my-relu", "nested-relu"] and all("--hash=sha256:" in line for line in reqs), pin.stdout
    relu = next(line for line in reqs if line.startswith("my-relu=="))
    assert relu.split()[0].endswith("+torch.cpu")
    # For a CUDA target my-relu gets its CUDA build, and nested-relu, with nothing that fits, fails the file (#37, 6).
    cuda = H.kwheel("pin", "--no-deps", out, "--torch", "2.7", "--cuda", "12.6", "--name", "my-relu", env=env, json_out=False)
    assert cuda.returncode == 0 and cuda.stdout.splitlines()[-1].split()[0].endswith("+torch2.7.cu126"), str(cuda)
    cuda = H.kwheel("pin", "--no-deps", out, "--torch", "2.7", "--cuda", "12.6", env=env, json_out=False)
    assert cuda.returncode == 5 and "project 'nested-relu'" in cuda.stderr and cuda.stdout == "", str(cuda)
    assert "backend (cpu) does not match system backend (cuda) and is not universal" in cuda.stderr, str(cuda)
    req = tmp_path / "requirements.txt"
    req.write_text(pin.stdout)
    r = subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--disable-pip-version-check", "--no-deps", "--no-index",
                        "--find-links", str(out), "--require-hashes", "--target", str(tmp_path / "t"), "-r", str(req)],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert sorted(p.name for p in (tmp_path / "t").iterdir() if not p.name.endswith(".dist-info")) == ["my_relu", "nested_relu"]
    # --json: one entry per kernel; --name: that kernel alone, as before.
    j = H.kwheel("pin", "--no-deps", out, "--torch", "2.7", "--cpu", env=env)
    assert j.returncode == 0 and [k["project"] for k in j.json["kernels"]] == ["my-relu", "nested-relu"], str(j)
    one = H.kwheel("pin", "--no-deps", out, "--torch", "2.7", "--cpu", "--name", "nested-relu", env=env, json_out=False)
    assert one.returncode == 0 and [line.split("==")[0] for line in one.stdout.splitlines() if line and not line.startswith("#")] == ["nested-relu"]
    # The same from the site's flat index: one --index-url line, both kernels.
    site = tmp_path / "site"
    assert H.kwheel("index", out, "--out", site, env=env).returncode == 0
    idx = H.kwheel("pin", "--no-deps", (site / "simple").as_uri(), "--torch", "2.7", "--cpu", env=env, json_out=False)
    assert idx.returncode == 0, str(idx)
    assert [line for line in idx.stdout.splitlines() if line.startswith("--index-url")] == [f"--index-url {(site / 'simple').as_uri()}/"]
    assert sorted(line.split("==")[0] for line in idx.stdout.splitlines() if "==" in line and not line.startswith("#")) == ["my-relu", "nested-relu"]
    # A kernel with no fitting build (nested-relu has no 2.x) fails the whole file, naming it; nothing is printed.
    none = H.kwheel("pin", "--no-deps", out, "--torch", "2.7", "--cpu", "--version", ">=2,<3", env=env, json_out=False)
    assert none.returncode == 5 and "project 'nested-relu'" in none.stderr and "--name" in none.stderr and none.stdout == "", str(none)


def stand_in_python(where: Path, torch: str | None, cuda: str | None) -> Path:
    """A venv whose torch is a stand-in: torch/version.py is all kwheel's probe reads."""
    r = subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(where)], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    if torch:
        [site] = list(where.glob("lib/python3*/site-packages"))
        (site / "torch").mkdir()
        (site / "torch" / "__init__.py").write_text("from .version import __version__\n")
        (site / "torch" / "version.py").write_text(f"__version__ = {torch!r}\ncuda = {cuda!r}\nhip = None\n")
    return where / "bin" / "python"


def test_variants_lists_every_version_and_marks_what_fits(hub, store, env, tmp_path):
    """Issue #33, 7: `kwheel variants` lists each version branch vN, as `kernels versions` does, and with
    --torch/--cuda or --python marks the variants that fit."""
    v1, v2 = store["relu"].versions[1], store["relu"].versions[2]
    plain = H.kwheel("variants", RELU, env=env)
    assert plain.returncode == 0, str(plain)
    assert [(v["version"], v["ref"], v["commit"]) for v in plain.json["versions"]] == [(1, "v1", v1), (2, "v2", v2)]
    assert all("fits" not in x for v in plain.json["versions"] for x in v["variants"])  # no target, no verdict
    expected = {  # target -> the variants that fit, per version (written by hand from the variant names, by kernels' backend rule)
        ("--torch", "2.7", "--cuda", "12.6"): {CU126},
        ("--torch", "2.9", "--cuda", "13.0"): set(),
        ("--torch", "2.7", "--cpu"): {"torch-cpu"},
    }
    for target, fitting in expected.items():
        r = H.kwheel("variants", RELU, *target, env=env)
        assert r.returncode == 0, str(r)
        for v in r.json["versions"]:
            assert {x["variant"] for x in v["variants"] if x["fits"]} == fitting, (target, v)
            assert all(x["reason"] for x in v["variants"] if not x["fits"])
    # --python: the interpreter's torch decides, probed as validate probes it.
    cuda_py = stand_in_python(tmp_path / "cu", "2.7.1+cu126", "12.6")
    cpu_py = stand_in_python(tmp_path / "cpu", "2.7.1+cpu", None)
    bare_py = stand_in_python(tmp_path / "bare", None, None)
    for py, fitting in ((cuda_py, {CU126}), (cpu_py, {"torch-cpu"}), (bare_py, {"torch-cpu"})):
        r = H.kwheel("variants", RELU, "--python", py, env=env)
        assert r.returncode == 0, str(r)
        assert all({x["variant"] for x in v["variants"] if x["fits"]} == fitting for v in r.json["versions"]), (py, r.json)
    # The table: a VERSION column, a FITS column with ✅ on exactly the fitting rows.
    text = H.kwheel("variants", RELU, "--python", cpu_py, env=env, json_out=False)
    assert text.returncode == 0, str(text)
    lines = text.stdout.splitlines()
    assert lines[0].split() == ["VERSION", "VARIANT", "FITS", "DETAILS"]
    rows = {(line.split()[0], line.split()[1]): "\u2705" in line for line in lines[1:]}
    assert rows == {("v1", "torch-cpu"): True, ("v1", CU126): False, ("v2", "torch-cpu"): True, ("v2", CU126): False}, text.stdout
    # --version N: that version alone, as before.
    one = H.kwheel("variants", RELU, "--version", "1", "--torch", "2.7", "--cuda", "12.6", env=env)
    assert one.returncode == 0 and "versions" not in one.json and {x["variant"]: x["fits"] for x in one.json["variants"]} == {"torch-cpu": False, CU126: True}
    # Bad targets: one-line usage errors.
    for bad in (["--torch", "2.7"], ["--cuda", "12.6"], ["--torch", "2.7", "--python", str(cpu_py), "--cpu"]):
        r = H.kwheel("variants", RELU, *bad, env=env, json_out=False)
        assert r.returncode == 2 and r.stderr.strip().count("\n") == 0, (bad, str(r))
