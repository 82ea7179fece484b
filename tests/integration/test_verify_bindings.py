"""`kwheel verify` holds what `import NAME` loads to what was signed (issue 38, defects 1 and 2).

Real signed kernels (the test Sigstore instance's bundles, signer kernels-community's build.yaml,
which kernels' default policy trusts) are built from the fixture Hub, pip-installs them into a venv,
and then does to site-packages and to the wheels what someone who can write them would do:

* edit img2gray's code and rewrite its RECORD to list another signed package (relu/);
* drop a .py, .so or .pth into the package, or a module of the same name beside it;
* delete the tampered package's rows from RECORD (verify must not call it "unsigned");
* sell relu's signed build under another kernel's name, or an older signed build under a newer version.

Each verdict and exit code is what docs/security.md ("What verify holds to what") says, and the
venv's own Python shows which file `import` runs. Every site-packages change is undone after its test.
"""

from __future__ import annotations

import base64
import csv
import hashlib
import io
import json
import re
import shutil
import subprocess
import sys
import zipfile
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

VARIANT = "torch-cpu"  # pure Python: pip installs it without torch
# src/main.cpp's table: 8 a broken chain, 9 no trusted signer vouches for it, 3 not readable as what it claims.
BROKEN, REFUSED, INPUT = 8, 9, 3
PIP_ENV = dict(PIP_CONFIG_FILE="/dev/null", PIP_DISABLE_PIP_VERSION_CHECK="1")


@pytest.fixture(scope="module")
def inst():
    return sig.SigstoreInstance()


@pytest.fixture(scope="module")
def root_file(inst, tmp_path_factory):
    p = tmp_path_factory.mktemp("root") / "trusted_root.json"
    p.write_text(json.dumps(inst.trusted_root()))
    return p


def signed_tree(inst, name: str, version: int) -> dict[str, bytes]:
    return kr.variant_tree(VARIANT, layout="flat", name=name, version=version, files=kr.demo_package(name, f"{name} v{version}"),
                           sign=lambda b: sig.bundle_bytes(inst.sign(b)))


@pytest.fixture(scope="module")
def hub(inst, tmp_path_factory):
    root = tmp_path_factory.mktemp("bindings-store") / "root"
    kr.make_kernel_repo(root, "acme/relu", {1: signed_tree(inst, "relu", 1), 2: signed_tree(inst, "relu", 2)})
    kr.make_kernel_repo(root, "acme/img2gray", {1: signed_tree(inst, "img2gray", 1)})
    with hubfix.hub_server(root) as srv:
        yield srv


@pytest.fixture(scope="module")
def wheels(hub, root_file, tmp_path_factory):
    """relu v1 and v2, img2gray v1 and relu v1 built with --name-prefix acme-: one wheel each."""
    base = tmp_path_factory.mktemp("bindings-built")
    env = H.clean_env(base / "home", HF_ENDPOINT=hub.endpoint)
    out = {}
    for key, args in {"relu1": ["acme/relu", "--version", "1"], "relu2": ["acme/relu", "--version", "2"],
                      "img2gray": ["acme/img2gray"], "acme-relu": ["acme/relu", "--version", "1", "--name-prefix", "acme-"]}.items():
        r = H.kwheel("build", *args, "-o", base / key, "--trusted-root", root_file, env=env)
        assert r.returncode == 0, str(r)
        (out[key],) = (base / key).glob("*.whl")
    out["base"] = base
    return out


@pytest.fixture(scope="module")
def venv(wheels):
    v = wheels["base"] / "venv"
    subprocess.run(["/usr/bin/python3", "-m", "venv", str(v)], check=True, timeout=120)
    py = v / "bin" / "python"
    pip_install(py, wheels["relu1"], wheels["img2gray"])
    site = Path(subprocess.run([str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                               capture_output=True, text=True, check=True).stdout.strip())
    return {"python": py, "site": site, "pristine": wheels["base"] / "site-pristine"}


@pytest.fixture
def site(venv):
    """The venv's site-packages, put back as pip left it after the test."""
    pristine = venv["pristine"]
    if not pristine.exists():
        shutil.copytree(venv["site"], pristine, symlinks=True)
    yield venv["site"]
    shutil.rmtree(venv["site"])
    shutil.copytree(pristine, venv["site"], symlinks=True)


def pip_install(py: Path, *wheel_files: Path) -> None:
    """pip installs the wheels, replacing what is installed even at the same version (as an upgrade would)."""
    r = subprocess.run([str(py), "-m", "pip", "install", "--no-index", "--no-deps", "--force-reinstall", *map(str, wheel_files)],
                       capture_output=True,
                       text=True, timeout=300, env=H.clean_env(**PIP_ENV))
    assert r.returncode == 0, r.stdout + r.stderr


def verify(root_file, *args) -> H.Run:
    return H.kwheel("verify", "--trusted-root", str(root_file), *map(str, args), json_out=False)


def one_line(r: H.Run) -> str:
    lines = r.stdout.splitlines()
    assert len(lines) == 1, str(r)
    return lines[0]


def imported(venv, module: str) -> tuple[str, str]:
    """What `import module` runs in the venv: hello()'s answer and the file it came from."""
    r = subprocess.run([str(venv["python"]), "-c", f"import {module} as m; print(m.hello()); print(m.__file__)"],
                       capture_output=True, text=True, timeout=60, env=H.clean_env(PYTHONDONTWRITEBYTECODE="1"))
    assert r.returncode == 0, r.stdout + r.stderr
    hello, file = r.stdout.splitlines()
    return hello, file


# --------------------------------------------------------------------------- RECORD, as pip writes it


def record_hash(data: bytes) -> str:
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def dist_info(site: Path, name: str) -> Path:
    (d,) = site.glob(f"{name}-*.dist-info")
    return d


def read_record(site: Path, name: str) -> list[list[str]]:
    return list(csv.reader(io.StringIO((dist_info(site, name) / "RECORD").read_text())))


def write_record(site: Path, name: str, rows: list[list[str]]) -> None:
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\n").writerows(rows)
    (dist_info(site, name) / "RECORD").write_text(buf.getvalue())


def row_for(site: Path, rel: str) -> list[str]:
    data = (site / rel).read_bytes()
    return [rel, record_hash(data), str(len(data))]


# --------------------------------------------------------------------------- defect 1: what import loads


def test_the_pristine_installs_verify_with_name_and_version_bound(venv, root_file):
    for name in ("img2gray", "relu"):
        r = verify(root_file, venv["site"], name)
        assert r.returncode == 0, str(r)
        assert "package, digest, name, version" in one_line(r), str(r)
    assert imported(venv, "img2gray")[0] == "img2gray v1"


def test_record_pointing_at_another_signed_package_does_not_vouch_for_the_edited_one(venv, site, root_file):
    init = site / "img2gray" / "__init__.py"
    init.write_text(init.read_text().replace("return 'img2gray v1'", "return 'edited'"))
    own = [row for row in read_record(site, "img2gray") if not row[0].startswith("img2gray/")]
    theirs = [row for row in read_record(site, "relu") if row[0].startswith("relu/")]
    write_record(site, "img2gray", theirs + own)
    assert imported(venv, "img2gray") == ("edited", str(init)), "the edited file is what import runs"
    r = verify(root_file, site, "img2gray")
    assert r.returncode == BROKEN, str(r)
    line = one_line(r)
    assert line.startswith("FAIL") and "img2gray/__init__.py" in line and f"({site / 'img2gray'})" in line, line


@pytest.mark.parametrize("planted", ["img2gray/evil.py", "img2gray/_evil.abi3.so", "img2gray/evil.pth"])
def test_a_file_dropped_into_the_package_fails(site, root_file, planted):
    (site / planted).write_bytes(b"import os\n")
    r = verify(root_file, site, "img2gray")
    assert r.returncode == BROKEN, str(r)
    assert f"record: '{planted}' is in the package directory but RECORD does not list it" in one_line(r), str(r)


def test_a_file_dropped_into_the_package_and_listed_in_record_fails_the_digest(site, root_file):
    (site / "img2gray" / "evil.py").write_bytes(b"import os\n")
    write_record(site, "img2gray", read_record(site, "img2gray") + [row_for(site, "img2gray/evil.py")])
    r = verify(root_file, site, "img2gray")
    assert r.returncode == BROKEN and "digest: 'img2gray/evil.py' is not listed in metadata.json's digest" in one_line(r), str(r)


@pytest.mark.parametrize("beside", ["img2gray.py", "img2gray.abi3.so"])
def test_a_module_of_the_same_name_beside_the_package_fails(site, root_file, beside):
    (site / beside).write_bytes(b"def hello():\n    return 'beside'\n")
    r = verify(root_file, site, "img2gray")
    assert r.returncode == BROKEN, str(r)
    assert f"package: '{beside}' imports as 'img2gray' beside the package 'img2gray/'" in one_line(r), str(r)


def test_a_pth_the_distribution_lists_outside_its_package_fails(venv, site, root_file):
    pth = site / "img2gray-hook.pth"
    pth.write_text("import sys; sys.stderr.write('pth ran\\n')\n")
    write_record(site, "img2gray", read_record(site, "img2gray") + [row_for(site, pth.name)])
    started = subprocess.run([str(venv["python"]), "-c", "pass"], capture_output=True, text=True, timeout=60)
    assert "pth ran" in started.stderr, "site runs the .pth at every start"
    r = verify(root_file, site, "img2gray")
    assert r.returncode == BROKEN, str(r)
    assert "'img2gray-hook.pth' is outside the package 'img2gray/'" in one_line(r), str(r)


def test_python_mode_holds_the_package_import_loads_not_one_shadowing_it(venv, site, root_file, tmp_path):
    """A .pth no RECORD lists puts another img2gray/ first on sys.path: --python asks the interpreter."""
    shadow = tmp_path / "shadow"
    shutil.copytree(site / "img2gray", shadow / "img2gray")
    init = shadow / "img2gray" / "__init__.py"
    init.write_text(init.read_text().replace("return 'img2gray v1'", "return 'shadowed'"))
    (site / "zz-shadow.pth").write_text(f"import sys; sys.path.insert(0, {str(shadow)!r})\n")
    assert imported(venv, "img2gray") == ("shadowed", str(init)), "import loads the shadow"
    r = verify(root_file, "--python", venv["python"], "img2gray")
    assert r.returncode == BROKEN, str(r)
    assert f"package: `import img2gray` in '{venv['python']}' loads '{init}', not the package verified" in one_line(r), str(r)


# --------------------------------------------------------------------------- defect 2: a signature is never "unsigned"


def test_tampered_package_with_its_record_rows_deleted_is_broken_not_unsigned(venv, site, root_file):
    ops = site / "img2gray" / "_ops.py"
    ops.write_text(ops.read_text() + "\nimport os  # injected\n")
    write_record(site, "img2gray", [row for row in read_record(site, "img2gray") if not row[0].startswith("img2gray/")])
    for allow in ([], ["--allow-unsigned"]):
        r = verify(root_file, *allow, site, "img2gray")
        assert r.returncode == BROKEN, str(r)
        line = one_line(r)
        assert line.startswith("FAIL") and "unsigned" not in line and "img2gray/" in line, line
    r = verify(root_file, "--python", venv["python"], "img2gray")
    assert r.returncode == BROKEN, str(r)


def test_signature_left_without_its_metadata_is_broken_not_unsigned(site, root_file):
    (site / "img2gray" / "metadata.json").unlink()
    write_record(site, "img2gray", [row for row in read_record(site, "img2gray") if row[0] != "img2gray/metadata.json"])
    r = verify(root_file, "--allow-unsigned", site, "img2gray")
    assert r.returncode == BROKEN, str(r)
    assert "signature: it has metadata.json.sigstore but no metadata.json" in one_line(r), str(r)


# --------------------------------------------------------------------------- the signed name and version are the distribution's


def repacked(src: Path, dst_dir: Path, *, name: str, version: str, package: str | None = None) -> Path:
    """`src` rewritten whole as distribution `name` `version` (and its package directory renamed to
    `package`), with a RECORD that agrees: what someone selling it under that name would upload."""
    with zipfile.ZipFile(src) as z:
        members = {i.filename: z.read(i) for i in z.infolist()}
    old_info = next(m.split("/")[0] for m in members if m.split("/")[0].endswith(".dist-info"))
    old_pkg = next(m.split("/")[0] for m in members if m.endswith("/metadata.json") and ".dist-info" not in m)
    tags = src.name[:-4].split("-")[-3:]
    info = f"{name.replace('-', '_')}-{version}.dist-info"
    out: dict[str, bytes] = {}
    for m, data in members.items():
        top, _, rest = m.partition("/")
        if top == old_info:
            if rest == "RECORD":
                continue
            if rest == "METADATA":
                text = re.sub(r"(?m)^Name: .*$", f"Name: {name}", data.decode())
                data = re.sub(r"(?m)^Version: .*$", f"Version: {version}", text).encode()
            out[f"{info}/{rest}"] = data
        elif top == old_pkg and package:
            out[f"{package}/{rest}"] = data
        else:
            out[m] = data
    rows = [[m, record_hash(d), str(len(d))] for m, d in out.items()] + [[f"{info}/RECORD", "", ""]]
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\n").writerows(rows)
    out[f"{info}/RECORD"] = buf.getvalue().encode()
    dst_dir.mkdir(parents=True, exist_ok=True)
    dst = dst_dir / f"{name.replace('-', '_')}-{version}-{'-'.join(tags)}.whl"
    with zipfile.ZipFile(dst, "w", zipfile.ZIP_DEFLATED) as z:
        for m, data in out.items():
            z.writestr(m, data)
    return dst


def wheel_version(wheel: Path) -> str:
    return wheel.name.split("-")[1]


def test_prefixed_wheel_verifies_its_kernel_package(wheels, root_file):
    r = verify(root_file, wheels["acme-relu"])
    assert r.returncode == 0 and "name, version" in one_line(r) and one_line(r).startswith("OK    acme-relu"), str(r)


@pytest.mark.parametrize("args,refusal", [
    (["--name", "gelu"], "the wheel would be named 'gelu', but metadata.json is signed for the kernel 'relu'"),
    (["--wheel-version", "2.5"], "the wheel would be version 2.5, but metadata.json is signed for kernel version 1"),
], ids=["name", "version"])
def test_build_refuses_a_signed_kernel_under_a_name_or_version_verify_would_refuse(hub, root_file, tmp_path, args, refusal):
    env = H.clean_env(tmp_path / "home", HF_ENDPOINT=hub.endpoint)
    r = H.kwheel("build", "acme/relu", "--version", "1", *args, "-o", tmp_path / "dist", "--trusted-root", root_file, env=env, json_out=False)
    assert r.returncode == INPUT and refusal in r.stdout + r.stderr, str(r)
    assert not list(tmp_path.glob("dist/*.whl")), "nothing is written"


def test_an_older_signed_build_under_a_newer_version_fails_as_a_wheel_and_installed(venv, site, wheels, root_file, tmp_path):
    newer = wheel_version(wheels["relu2"])
    assert newer.startswith("2."), newer
    sold = repacked(wheels["relu1"], tmp_path, name="relu", version=newer)
    r = verify(root_file, sold)
    assert r.returncode == BROKEN, str(r)
    assert "version: metadata.json is signed for kernel version 1, but the distribution is version" in one_line(r), str(r)
    pip_install(venv["python"], sold)
    r = verify(root_file, site, "relu")
    assert r.returncode == BROKEN and "version: metadata.json is signed for kernel version 1" in one_line(r), str(r)
    assert imported(venv, "relu")[0] == "relu v1", "what runs is the older build"


def test_a_signed_kernel_sold_under_another_name_fails_as_a_wheel_and_installed(venv, site, wheels, root_file, tmp_path):
    version = wheel_version(wheels["img2gray"])
    sold = repacked(wheels["relu1"], tmp_path, name="img2gray", version=version, package="img2gray")
    r = verify(root_file, sold)
    assert r.returncode == BROKEN, str(r)
    assert "name: metadata.json is signed for the kernel 'relu' (package 'relu/'), but it is in 'img2gray/'" in one_line(r), str(r)
    pip_install(venv["python"], sold)
    r = verify(root_file, site, "img2gray")
    assert r.returncode == BROKEN and "name: metadata.json is signed for the kernel 'relu'" in one_line(r), str(r)
    assert imported(venv, "img2gray")[0] == "relu v1", "what runs is relu's code under img2gray's name"


def test_a_signed_wheel_renamed_whole_is_not_verified_under_the_new_name(wheels, root_file, tmp_path):
    """relu's wheel, package relu/ untouched, renamed img2gray: its one package is relu/, whose signed name is not the wheel's."""
    sold = repacked(wheels["relu1"], tmp_path, name="img2gray", version=wheel_version(wheels["img2gray"]))
    r = verify(root_file, sold)
    assert r.returncode == BROKEN, str(r)
    assert "name: metadata.json is signed for the kernel 'relu', but the distribution is named 'img2gray'" in one_line(r), str(r)
