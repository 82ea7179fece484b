"""`kwheel verify` (issue 31, item 5): the wheel carries the evidence, and anyone re-verifies it.

A kernel signed by a test Sigstore instance (tests/sigstore/instance.py; the signer is
kernels-community's build.yaml workflow, which kernels' default policy trusts) is built from the
fixture Hub with `--trusted-root`, installed by pip into a venv, and verified in every form:
`--python PY NAME`, SITE_PACKAGES NAME, the wheel, the wheel directory and the variant directory.
One byte changed anywhere fails the chain and names the file; an unsigned kernel is refused
unless --allow-unsigned.
"""

from __future__ import annotations

import json
import shutil
import subprocess
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
import instance as sig  # noqa: E402
import kernel_repos as kr  # noqa: E402

VARIANT = "torch-cpu"  # pure Python: pip installs it beside Debian's torch
SIGNED = "acme/relu"
UNSIGNED = "acme/gelu"
# src/main.cpp's table: 8 a broken chain, 9 no trusted signer vouches for it.
BROKEN, REFUSED = 8, 9


@pytest.fixture(scope="module")
def inst():
    return sig.SigstoreInstance()


@pytest.fixture(scope="module")
def root_file(inst, tmp_path_factory):
    p = tmp_path_factory.mktemp("root") / "trusted_root.json"
    p.write_text(json.dumps(inst.trusted_root()))
    return p


def tree(name: str, sign=None) -> dict[str, bytes]:
    return kr.variant_tree(VARIANT, layout="flat", name=name, version=1, files=kr.demo_package(name, f"{name} v1"), sign=sign)


@pytest.fixture(scope="module")
def store(inst, tmp_path_factory):
    root = tmp_path_factory.mktemp("verify-store") / "root"
    signed = tree("relu", sign=lambda b: sig.bundle_bytes(inst.sign(b)))
    kr.make_kernel_repo(root, SIGNED, {1: signed})
    kr.make_kernel_repo(root, UNSIGNED, {1: tree("gelu")})
    return {"root": root, "signed_tree": signed}


@pytest.fixture(scope="module")
def hub(store):
    with hubfix.hub_server(store["root"]) as srv:
        yield srv


@pytest.fixture(scope="module")
def built(hub, root_file, tmp_path_factory):
    """The wheels of both kernels, in dist/ (relu) and dist-unsigned/ (gelu)."""
    base = tmp_path_factory.mktemp("built")
    env = H.clean_env(base / "home", HF_ENDPOINT=hub.endpoint)
    for repo, out in ((SIGNED, "dist"), (UNSIGNED, "dist-unsigned")):
        r = H.kwheel("build", repo, "-o", base / out, "--trusted-root", root_file, env=env)
        assert r.returncode == 0, str(r)
    (relu,) = (base / "dist").glob("*.whl")
    (gelu,) = (base / "dist-unsigned").glob("*.whl")
    return {"base": base, "relu": relu, "gelu": gelu}


@pytest.fixture(scope="module")
def venv(built):
    v = built["base"] / "venv"
    subprocess.run(["/usr/bin/python3", "-m", "venv", "--system-site-packages", str(v)], check=True, timeout=120)
    py = v / "bin" / "python"
    for wheel in (built["relu"], built["gelu"]):
        pip = subprocess.run([str(py), "-m", "pip", "install", "--no-index", "--no-deps", str(wheel)], capture_output=True, text=True,
                             timeout=300, env=H.clean_env(PIP_CONFIG_FILE="/dev/null", PIP_DISABLE_PIP_VERSION_CHECK="1"))
        assert pip.returncode == 0, pip.stdout + pip.stderr
    site = Path(subprocess.run([str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                               capture_output=True, text=True, check=True).stdout.strip())
    assert (site / "relu" / "metadata.json.sigstore").is_file(), "the wheel carries the signature into site-packages"
    return {"python": py, "site": site}


def verify(*args, json_out: bool = False) -> H.Run:
    return H.kwheel("verify", *map(str, args), json_out=json_out)


def tampered(path: Path):
    """Changes one byte of `path` for the `with` block, then restores it."""
    class Scope:
        def __enter__(self):
            self.data = path.read_bytes()
            path.write_bytes(self.data[:-2] + bytes([self.data[-2] ^ 0x01]) + self.data[-1:])
            return path

        def __exit__(self, *exc):
            path.write_bytes(self.data)
    return Scope()


def one_line(r: H.Run) -> str:
    lines = r.stdout.splitlines()
    assert len(lines) == 1, str(r)
    return lines[0]


# --------------------------------------------------------------------------- installed


def test_installed_package_verifies_through_its_interpreter(venv, root_file):
    r = verify("--trusted-root", root_file, "--python", venv["python"], "relu")
    assert r.returncode == 0, str(r)
    line = one_line(r)
    assert line.startswith("OK") and "RECORD, package, digest, name, version" in line and "kernels-community/.github/workflows/build.yaml" in line, line
    assert "Rekor log index" in line, line


def test_installed_package_verifies_from_site_packages(venv, root_file):
    r = verify("--trusted-root", root_file, venv["site"], "relu", json_out=True)
    assert r.returncode == 0, str(r)
    (item,) = r.json["items"]
    assert item["ok"] and item["passed"] == ["record", "package", "signature", "digest", "name", "version"], item
    assert item["signature"]["signed"] is True and item["location"] == str(venv["site"] / "relu"), item
    assert verify("-q", "--trusted-root", root_file, venv["site"], "relu").stdout == ""


@pytest.mark.parametrize("member", ["_ops.py", "__init__.py"])
def test_one_changed_byte_in_site_packages_fails_and_names_the_file(venv, root_file, member):
    with tampered(venv["site"] / "relu" / member):
        r = verify("--trusted-root", root_file, "--python", venv["python"], "relu")
    assert r.returncode == BROKEN, str(r)
    line = one_line(r)
    assert line.startswith("FAIL") and f"'relu/{member}'" in line and "RECORD" in line, line
    assert verify("--trusted-root", root_file, "--python", venv["python"], "relu").returncode == 0


def test_a_changed_file_with_a_rewritten_record_fails_the_digest(venv, root_file):
    """An attacker who also rewrites RECORD is caught by metadata.json's digest."""
    ops = venv["site"] / "relu" / "_ops.py"
    (dist_info,) = venv["site"].glob("relu-*.dist-info")
    record = dist_info / "RECORD"
    saved_ops, saved_record = ops.read_bytes(), record.read_bytes()
    try:
        ops.write_bytes(saved_ops + b"\nimport os  # injected\n")
        import base64
        import hashlib
        rows = []
        for row in saved_record.decode().splitlines():
            path = row.split(",")[0]
            if path == "relu/_ops.py":
                digest = base64.urlsafe_b64encode(hashlib.sha256(ops.read_bytes()).digest()).rstrip(b"=").decode()
                row = f"{path},sha256={digest},{ops.stat().st_size}"
            rows.append(row)
        record.write_text("\n".join(rows) + "\n")
        r = verify("--trusted-root", root_file, venv["site"], "relu")
    finally:
        ops.write_bytes(saved_ops)
        record.write_bytes(saved_record)
    assert r.returncode == BROKEN, str(r)
    assert "digest: 'relu/_ops.py' does not match" in one_line(r), str(r)


def test_a_changed_metadata_json_fails(venv, root_file):
    with tampered(venv["site"] / "relu" / "metadata.json"):
        r = verify("--trusted-root", root_file, venv["site"], "relu")
    assert r.returncode == BROKEN, str(r)
    assert "record: 'relu/metadata.json' does not match its RECORD hash" in one_line(r), str(r)


def test_another_sigstore_does_not_vouch(venv):
    """Without --trusted-root the production root is used: the test instance's bundle does not verify."""
    r = verify(venv["site"], "relu")
    assert r.returncode == BROKEN and "signature:" in one_line(r), str(r)


def test_unsigned_kernel_is_refused_unless_allowed(venv, root_file):
    r = verify("--trusted-root", root_file, "--python", venv["python"], "gelu")
    assert r.returncode == REFUSED, str(r)
    assert "signer: unsigned: no metadata.json.sigstore" in one_line(r) and "--allow-unsigned" in r.stdout, str(r)
    r = verify("--allow-unsigned", "--trusted-root", root_file, "--python", venv["python"], "gelu")
    assert r.returncode == 0 and one_line(r).startswith("OK") and "unsigned" in r.stdout, str(r)


def test_not_installed_is_not_found(venv, root_file):
    r = verify("--trusted-root", root_file, "--python", venv["python"], "silu")
    assert r.returncode == 5 and "'silu' is not installed" in r.stderr, str(r)


# --------------------------------------------------------------------------- wheels and variant directories


def test_wheel_and_wheel_directory_verify(built, root_file):
    r = verify("--trusted-root", root_file, built["relu"])
    assert r.returncode == 0 and one_line(r).startswith("OK  "), str(r)
    r = verify("--trusted-root", root_file, built["base"] / "dist", json_out=True)
    assert r.returncode == 0 and [i["ok"] for i in r.json["items"]] == [True], str(r)


def test_tampered_wheel_fails_on_record(built, root_file, tmp_path):
    import zipfile
    bad = tmp_path / built["relu"].name
    with zipfile.ZipFile(built["relu"]) as src, zipfile.ZipFile(bad, "w") as dst:
        for info in src.infolist():
            data = src.read(info)
            if info.filename == "relu/_ops.py":
                data = data.replace(b"ops = None", b"ops = True")
            dst.writestr(info, data)
    r = verify("--trusted-root", root_file, tmp_path)
    assert r.returncode == BROKEN and "record: 'relu/_ops.py' does not match its RECORD hash" in one_line(r), str(r)


def test_variant_directory_verifies_and_names_a_changed_file(store, root_file, tmp_path):
    kr.write_tree(tmp_path, store["signed_tree"])
    variant = tmp_path / "build" / VARIANT
    r = verify("--trusted-root", root_file, variant)
    assert r.returncode == 0 and one_line(r).startswith("OK"), str(r)
    r = verify("--trusted-root", root_file, tmp_path)  # the checkout: every variant
    assert r.returncode == 0 and one_line(r).startswith("OK"), str(r)
    with tampered(variant / "_ops.py"):
        r = verify("--trusted-root", root_file, variant)
    assert r.returncode == BROKEN and "digest: '_ops.py' does not match its sha256 in metadata.json's digest" in one_line(r), str(r)
