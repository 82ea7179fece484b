"""Signatures in `kwheel build` (issue 31): fixture kernels on the fixture Hub, signed the way
kernel-builder signs them (metadata.json.sigstore, a Sigstore bundle over metadata.json) by the
test-only Sigstore instance of tests/sigstore/instance.py, whose trust root reaches kwheel through
--trusted-root. That instance is held to sigstore-python in test_sigstore_instance.py.

Who counts as a trusted signer is kernels 0.17.2's own default policy (kernels/verify.py:
kernels-community's build workflows on main), plus --trusted-signer.
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(ROOT / "tests" / "hub"))
sys.path.insert(0, str(ROOT / "tests" / "sigstore"))
sys.path.insert(0, str(HERE))
import fixture as hubfix  # noqa: E402
import hubtest as H  # noqa: E402
import instance as si  # noqa: E402
import kernel_repos as kr  # noqa: E402
from kwheel_fixtures import rewrite_wheel  # noqa: E402

ORG = "acme"
TRUSTED = f"{ORG}/signed"       # signed by kernels-community's build.yaml: kernels' default policy trusts it
OTHER = f"{ORG}/other-signer"   # signed by a workflow of another repository
TAMPERED = f"{ORG}/tampered"    # metadata.json changed after it was signed
UNSIGNED = f"{ORG}/unsigned"
NESTED = f"{ORG}/nested"        # the old nested layout, signed
OTHER_WORKFLOW = si.Identity.workflow("acme/kernels", "release.yml")
VARIANT = "torch-cpu"


def tree(name: str, *, sign=None, layout: str = "flat") -> dict[str, bytes]:
    return kr.variant_tree(VARIANT, layout=layout, name=name, version=1, files=kr.demo_package(name, f"{name} v1"), sign=sign)


def tampered_tree(inst) -> dict[str, bytes]:
    t = tree("tampered", sign=lambda b: si.bundle_bytes(inst.sign(b)))
    meta = f"build/{VARIANT}/metadata.json"
    t[meta] = t[meta].replace(b'"license": "Apache-2.0"', b'"license": "MIT"')
    return t


@pytest.fixture(scope="module")
def sigstore(tmp_path_factory):
    inst = si.SigstoreInstance()
    root = tmp_path_factory.mktemp("sigstore") / "trusted_root.json"
    root.write_text(json.dumps(inst.trusted_root()))
    return inst, root


@pytest.fixture(scope="module")
def hub(tmp_path_factory, sigstore):
    inst, _ = sigstore
    store = tmp_path_factory.mktemp("signed-store") / "root"
    default = lambda b: si.bundle_bytes(inst.sign(b))  # noqa: E731
    repos = {
        TRUSTED: kr.make_kernel_repo(store, TRUSTED, {1: tree("signed", sign=default)}),
        OTHER: kr.make_kernel_repo(store, OTHER, {1: tree("other-signer", sign=lambda b: si.bundle_bytes(inst.sign(b, OTHER_WORKFLOW)))}),
        TAMPERED: kr.make_kernel_repo(store, TAMPERED, {1: tampered_tree(inst)}),
        UNSIGNED: kr.make_kernel_repo(store, UNSIGNED, {1: tree("unsigned")}),
        NESTED: kr.make_kernel_repo(store, NESTED, {1: tree("nested", sign=default, layout="nested")}),
    }
    with hubfix.hub_server(store) as srv:
        srv.repos = repos
        yield srv


def build(hub, sigstore, tmp_path: Path, *args, json_out: bool = True) -> H.Run:
    _, root = sigstore
    env = H.clean_env(tmp_path / "home", HF_ENDPOINT=hub.endpoint)
    return H.kwheel("build", *args, "--trusted-root", root, "-o", tmp_path / "dist", env=env, json_out=json_out)


def only_variant(r: H.Run) -> dict:
    (v,) = r.json["variants"]
    return v


def test_a_kernel_signed_by_a_trusted_workflow_builds_and_reports_its_signer(hub, sigstore, tmp_path):
    r = build(hub, sigstore, tmp_path, TRUSTED)
    assert r.returncode == 0, str(r)
    v = only_variant(r)
    assert v["signed"] is True and v["signature"]["status"] == "trusted"
    signer = v["signature"]["signer"]
    assert signer["identity"] == si.Identity().san_uri
    assert signer["issuer"] == si.GITHUB_ISSUER
    assert signer["source_repository_uri"] == "https://github.com/huggingface/kernels-community"
    assert isinstance(signer["log_index"], int) and signer["established_time"].endswith("Z")
    assert "warning" not in r.stderr
    table = build(hub, sigstore, tmp_path / "t", TRUSTED, json_out=False)
    assert f"signed by {si.Identity().san_uri} (issuer {si.GITHUB_ISSUER}), Rekor log index" in table.stdout, table.stdout


def test_the_wheel_carries_metadata_and_its_signature(hub, sigstore, tmp_path):
    for repo, pkg in ((TRUSTED, "signed"), (NESTED, "nested")):
        r = build(hub, sigstore, tmp_path / pkg, repo)
        assert r.returncode == 0, str(r)
        (name,) = H.wheel_shas(r)
        w = H.read_wheel(tmp_path / pkg / "dist" / name)
        cache = tmp_path / pkg / "home" / "hub"
        (meta,) = cache.glob(f"kernels--{ORG}--{pkg}/snapshots/*/build/{VARIANT}/metadata.json")
        assert w.files[f"{pkg}/metadata.json"] == meta.read_bytes()
        assert w.files[f"{pkg}/metadata.json.sigstore"] == meta.with_name("metadata.json.sigstore").read_bytes()
        H.check_record(tmp_path / pkg / "dist" / name)


def test_another_signer_is_unsigned_with_a_warning_naming_it(hub, sigstore, tmp_path):
    r = build(hub, sigstore, tmp_path, OTHER)
    assert r.returncode == 0, str(r)
    v = only_variant(r)
    assert v["signed"] is False and v["signature"]["status"] == "untrusted-signer"
    assert v["signature"]["signer"]["identity"] == OTHER_WORKFLOW.san_uri
    (warning,) = [ln for ln in r.stderr.splitlines() if ln.startswith("kwheel: warning:") and VARIANT in ln]
    assert OTHER_WORKFLOW.san_uri in warning and "not a trusted signer" in warning and "--trusted-signer" in warning


def test_require_signature_refuses_another_signer_and_trusted_signer_admits_it(hub, sigstore, tmp_path):
    r = build(hub, sigstore, tmp_path, OTHER, "--require-signature", json_out=False)
    assert r.returncode == 3, str(r)
    assert OTHER_WORKFLOW.san_uri in r.output and "--require-signature" in r.output
    assert not (tmp_path / "dist").exists()
    r = build(hub, sigstore, tmp_path, OTHER, "--require-signature", "--trusted-signer", OTHER_WORKFLOW.san_uri)
    assert r.returncode == 0, str(r)
    assert only_variant(r)["signed"] is True and "warning" not in r.stderr


def test_metadata_changed_after_signing_is_refused_naming_the_file_and_the_check(hub, sigstore, tmp_path):
    for extra in ([], ["--require-signature"]):
        r = build(hub, sigstore, tmp_path, TAMPERED, *extra, json_out=False)
        assert r.returncode == 3, str(r)
        (line,) = [ln for ln in r.stdout.splitlines() if ln.startswith(VARIANT)]
        assert "metadata.json.sigstore" in line and "artifact digest" in line, line
        assert not (tmp_path / "dist").exists()


def test_an_unsigned_kernel_warns_and_require_signature_refuses_it(hub, sigstore, tmp_path):
    r = build(hub, sigstore, tmp_path, UNSIGNED)
    assert r.returncode == 0, str(r)
    assert only_variant(r)["signed"] is False and only_variant(r)["signature"] == {"signed": False, "status": "unsigned"}
    (notice,) = [ln for ln in r.stderr.splitlines() if ln.startswith("kwheel: warning:")]
    assert notice == (f"kwheel: warning: {UNSIGNED}: 1 variant(s) unsigned (no metadata.json.sigstore): {VARIANT}; "
                      "nothing vouches for who built them (refuse such variants with --require-signature)")
    r = build(hub, sigstore, tmp_path / "req", UNSIGNED, "--require-signature", json_out=False)
    assert r.returncode == 3 and "no metadata.json.sigstore" in r.output, str(r)


def test_lock_and_project_builds_require_signatures_too(hub, sigstore, tmp_path):
    lock = tmp_path / "kernels.lock"
    lock.write_text(json.dumps([{"dependency": {"repo-id": repo, "version": 1}, "lock": {"commit": hub.repos[repo].versions[1]}}
                                for repo in (TRUSTED, UNSIGNED)]))
    assert build(hub, sigstore, tmp_path / "a", "--lock", lock).returncode == 0
    r = build(hub, sigstore, tmp_path / "b", "--lock", lock, "--require-signature", json_out=False)
    assert r.returncode == 3 and "no metadata.json.sigstore" in r.output, str(r)
    assert not (tmp_path / "b" / "dist").exists()  # all or nothing: the signed kernel's wheel is not written either
    proj = tmp_path / "proj"
    proj.mkdir()
    (proj / "pyproject.toml").write_text(f'[project]\nname = "p"\nversion = "0"\n\n[tool.kernels.dependencies]\n"{UNSIGNED}" = 1\n')
    r = build(hub, sigstore, tmp_path / "c", "--project", proj, "--require-signature", json_out=False)
    assert r.returncode == 3 and "no metadata.json.sigstore" in r.output, str(r)


def test_without_the_instances_root_its_bundles_do_not_verify(hub, sigstore, tmp_path):
    """The default root is Sigstore's production root, built in: a bundle from another Sigstore
    (this test instance) fails its certificate chain there."""
    env = H.clean_env(tmp_path / "home", HF_ENDPOINT=hub.endpoint)
    r = H.kwheel("build", TRUSTED, "-o", tmp_path / "dist", env=env, json_out=False)
    assert r.returncode == 3 and "certificate chain" in r.output, str(r)


def test_a_bad_trusted_signer_or_root_is_a_usage_or_input_error(hub, sigstore, tmp_path):
    r = build(hub, sigstore, tmp_path, TRUSTED, "--trusted-signer", "acme/kernels", json_out=False)
    assert r.returncode == 2 and "--trusted-signer 'acme/kernels'" in r.stderr, str(r)
    env = H.clean_env(tmp_path / "home", HF_ENDPOINT=hub.endpoint)
    bad = tmp_path / "root.json"
    bad.write_text("{}")
    r = H.kwheel("build", TRUSTED, "--trusted-root", bad, "-o", tmp_path / "dist", env=env, json_out=False)
    assert r.returncode == 3 and "--trusted-root" in r.stderr, str(r)


NATIVE = "torch29-cxx11-cpu-x86_64-linux"


@pytest.fixture(scope="module")
def native_wheel(hub, sigstore, tmp_path_factory):
    """A signed native variant (a real ELF .so), built: what `kwheel inspect` reads."""
    inst, _ = sigstore
    name = "native"
    files = kr.demo_package(name, "native v1", so=H.elf_base())
    tree = kr.variant_tree(NATIVE, layout="flat", name=name, version=1, files=files, kernel_id="_native_0123abc",
                           sign=lambda b: si.bundle_bytes(inst.sign(b)))
    kr.make_kernel_repo(hub.root, f"{ORG}/{name}", {1: tree})
    d = tmp_path_factory.mktemp("native")
    r = build(hub, sigstore, d, f"{ORG}/{name}")
    assert r.returncode == 0, str(r)
    (filename,) = H.wheel_shas(r)
    return d / "dist" / filename


def test_inspect_verifies_the_signature_the_wheel_carries(native_wheel, sigstore, tmp_path):
    _, root = sigstore
    r = H.kwheel("inspect", native_wheel, "--trusted-root", root)
    assert r.returncode == 0, str(r)
    assert r.json["signature"]["signed"] is True and r.json["signature"]["signer"]["identity"] == si.Identity().san_uri
    text = H.kwheel("inspect", native_wheel, "--trusted-root", root, json_out=False)
    assert f"signature: signed by {si.Identity().san_uri}" in text.stdout, text.stdout
    # Sigstore's production root does not know the test instance: the chain fails, and so does inspect
    r = H.kwheel("inspect", native_wheel)
    assert r.returncode != 0 and "certificate chain" in r.json["signature"]["error"], str(r)


def rewritten_wheel(src_wheel: Path, dst: Path, changes: dict[str, bytes]) -> Path:
    """`src_wheel` with members changed or added, and RECORD rewritten to match, as an attacker
    who can write the wheel would: only the signature chain can tell."""
    shutil.copyfile(src_wheel, dst)
    rewrite_wheel(dst, lambda members, dist_info: members.update(changes))
    return dst


def test_inspect_refuses_metadata_changed_inside_the_wheel(native_wheel, sigstore, tmp_path):
    _, root = sigstore
    import zipfile
    with zipfile.ZipFile(native_wheel) as z:
        meta = z.read("native/metadata.json")
    changed = rewritten_wheel(native_wheel, tmp_path / native_wheel.name,
                              {"native/metadata.json": meta.replace(b'"license": "Apache-2.0"', b'"license": "MIT"')})
    r = H.kwheel("inspect", changed, "--trusted-root", root)
    assert r.returncode != 0, str(r)
    assert "artifact digest" in r.json["signature"]["error"] and r.json["kernel"] is None, str(r)


@pytest.mark.parametrize("planted", ["native/_native_0123abc.abi3.so", "evil.pth", "native/__pycache__/__init__.cpython-311.pyc",
                                     "other/__init__.py"])
def test_a_signed_metadata_does_not_vouch_for_files_swapped_or_planted_beside_it(native_wheel, sigstore, tmp_path, planted):
    """metadata.json and its bundle stay genuine; a file is swapped or planted (RECORD rewritten).
    inspect, verify and the index's page must not call that wheel signed."""
    _, root = sigstore
    bytes_ = H.elf_base() + b"\0planted" if planted.endswith(".so") else b"import os  # planted\n"  # a .so that is still ELF
    changed = rewritten_wheel(native_wheel, tmp_path / native_wheel.name, {planted: bytes_})
    r = H.kwheel("inspect", changed, "--trusted-root", root)
    assert r.returncode != 0 and "digest" in r.json["signature"]["error"], str(r)
    assert planted.split("/")[-1] in r.json["signature"]["error"], str(r)
    v = H.kwheel("verify", changed, "--trusted-root", root)
    assert v.returncode == 8, str(v)
    assert [i["failed"] for i in v.json["items"]] == ["digest"], str(v)
    site = tmp_path / "site"
    assert H.kwheel("index", changed, "-o", site, "--trusted-root", root).returncode == 0
    page = (site / "kernels" / "native.html").read_text()
    assert '<span class="signer sig-invalid">invalid: digest: ' in page and "signed by" not in page


def test_the_matrix_page_shows_who_signed_each_wheel(hub, sigstore, tmp_path):
    _, root = sigstore
    for repo in (TRUSTED, OTHER, UNSIGNED):
        assert build(hub, sigstore, tmp_path / repo.split("/")[1], repo).returncode == 0
    wheels = [str(p) for p in tmp_path.glob("*/dist/*.whl")]
    r = H.kwheel("index", *wheels, "-o", tmp_path / "site", "--trusted-root", root)
    assert r.returncode == 0, str(r)
    page = lambda name: (tmp_path / "site" / "kernels" / f"{name}.html").read_text()  # noqa: E731
    assert f'<span class="signer sig-trusted">signed by {si.Identity().san_uri} (issuer {si.GITHUB_ISSUER})' in page("signed")
    assert f'<span class="signer sig-unsigned">signed by an untrusted signer: {OTHER_WORKFLOW.san_uri}' in page("other-signer")
    assert '<span class="signer sig-unsigned">unsigned</span>' in page("unsigned")
    # trusting the other workflow on a later run changes what its page says
    r = H.kwheel("index", wheels[0], "-o", tmp_path / "site", "--trusted-root", root, "--trusted-signer", OTHER_WORKFLOW.san_uri)
    assert r.returncode == 0, str(r)
    assert f'<span class="signer sig-trusted">signed by {OTHER_WORKFLOW.san_uri}' in page("other-signer")
