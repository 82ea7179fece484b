"""`kwheel pin SOURCE` without --name pins the source's kernels, and only them.

A team index serves kernels beside their Python dependencies and other internal
packages. pin used to pin every project as a kernel: einops as "a kernel
(torch-universal)" and an unrelated acme-utils too ("3 kernels"). Now a project
is a kernel when its METADATA carries kwheel's marker (`Keywords: hf-kernel`,
docs/wheel-naming.md "The kernel marker"); einops comes in through uv as the
kernel's dependency; acme-utils is left out; both are counted in one line.

A real pypiserver (no PEP 658 metadata, so pin reads each project's newest
wheel, held to the page's sha256) serves: a real `kwheel build` of a pure-Python
torch-cpu kernel whose metadata.json says `python-depends: ["einops"]`; PyPI's
einops 0.8.2 from the real-binary corpus (tests/realbin, by sha256); and an
acme-utils wheel written here. Real uv resolves, Debian's pip installs the
result with --require-hashes into a venv of /usr/bin/python3 that sees its
python3-torch, and the kernel and einops import there.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import realbin  # noqa: E402
from conftest import torch_version  # noqa: E402
from local_servers import pypiserver  # noqa: E402

ROOT = HERE.parents[1]
KWHEEL = os.environ.get("KWHEEL_BIN") or str(ROOT / "build" / "kwheel")
TOOLS = Path(sys.executable).parent
UV = TOOLS / "uv"
TORCH_PYTHON = "/usr/bin/python3"
KERNEL = "selkern"
EINOPS_SHA256 = "54058201ac7087911181bfec4af6091bb59380360f069276601256a76af08193"  # tests/realbin/requirements.txt

pytestmark = [
    pytest.mark.skipif(torch_version(TORCH_PYTHON) is None, reason=f"needs torch importable by {TORCH_PYTHON} (Debian python3-torch)"),
    pytest.mark.skipif(not os.access(KWHEEL, os.X_OK), reason=f"kwheel not built at {KWHEEL} (set KWHEEL_BIN)"),
    pytest.mark.skipif(not os.access(UV, os.X_OK), reason=f"no uv at {UV} (scripts/setup installs it)"),
]


def run(argv, **kw) -> subprocess.CompletedProcess:
    return subprocess.run([str(a) for a in argv], capture_output=True, text=True, timeout=600, **kw)


def plain_wheel(dist: Path, name: str, version: str) -> Path:
    """An internal package that is no kernel, as the binary distribution format spec lays it out."""
    di = f"{name}-{version}.dist-info"
    files = {f"{name}/__init__.py": b"", f"{di}/WHEEL": b"Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
             f"{di}/METADATA": f"Metadata-Version: 2.1\nName: {name.replace('_', '-')}\nVersion: {version}\nKeywords: utilities,internal\n".encode()}
    record = "".join(f"{k},sha256={base64.urlsafe_b64encode(hashlib.sha256(v).digest()).rstrip(b'=').decode()},{len(v)}\n" for k, v in files.items())
    files[f"{di}/RECORD"] = (record + f"{di}/RECORD,,\n").encode()
    path = dist / f"{name}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as z:
        for k, v in files.items():
            z.writestr(k, v)
    return path


def kwheel_kernel(work: Path) -> Path:
    repo = work / "repo"
    pkg = repo / "build" / "torch-cpu" / KERNEL
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("import einops\n\n\ndef hello():\n    return 'einops ' + einops.__version__\n")
    meta = {"name": KERNEL, "version": 1, "license": "Apache-2.0", "python-depends": ["einops"], "backend": {"type": "cpu"}}
    (repo / "build" / "torch-cpu" / "metadata.json").write_text(json.dumps(meta))
    p = run([KWHEEL, "build", repo, "--version", "0.1.0", "-o", work / "dist", "-q"])
    assert p.returncode == 0, p.stderr
    (wheel,) = (work / "dist").glob("*.whl")
    return wheel


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    work = tmp_path_factory.mktemp("pin-kernels")
    einops = realbin.wheel("einops")
    assert hashlib.sha256(einops.read_bytes()).hexdigest() == EINOPS_SHA256
    (work / "other").mkdir()
    wheels = [kwheel_kernel(work), einops, plain_wheel(work / "other", "acme_utils", "1.0")]
    with pypiserver(work / "server", {"ci": "secret"}) as root:
        for w in wheels:
            shutil.copy(w, work / "server" / "packages")
        yield {"index": f"{root}/simple/", "kernel": wheels[0]}


def test_the_marker_is_a_standard_keyword_packaging_reads(served):
    """pip's own core-metadata parser (packaging.metadata) reads the kernel wheel's marker as a keyword."""
    code = ("import sys, zipfile; from pip._vendor.packaging.metadata import Metadata; z = zipfile.ZipFile(sys.argv[1]); "
            "text = z.read(next(n for n in z.namelist() if n.endswith('.dist-info/METADATA'))); "
            "print(Metadata.from_email(text, validate=True).keywords)")
    p = run([TOOLS / "python", "-c", code, served["kernel"]])
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip() == "['hf-kernel']", p.stdout


def test_only_the_kernel_is_pinned_its_dependency_by_uv_the_rest_counted(served, tmp_path):
    target = tmp_path / "venv"
    assert run([TORCH_PYTHON, "-m", "venv", "--system-site-packages", target]).returncode == 0
    python = target / "bin" / "python"
    req = tmp_path / "requirements.txt"
    p = run([KWHEEL, "pin", served["index"], "--python", python, "-o", req], env=dict(os.environ, KWHEEL_UV=str(UV)))
    assert p.returncode == 0, p.stderr
    text = req.read_text()
    comments = [line for line in text.splitlines() if line.startswith("#")]
    lines = [line for line in text.splitlines() if not line.startswith("#")]
    assert comments[0].startswith(f"# kwheel pin: {KERNEL} for "), text
    assert "# left out: 2 projects of the source that are not kernels (acme-utils, einops): no kernel marker in METADATA (Keywords: hf-kernel)" in comments, text
    assert any(c.startswith("# dependencies resolved by uv ") for c in comments), text
    assert lines == [f"--index-url {served['index']}",
                     f"{KERNEL}==0.1.0+torch.cpu --hash=sha256:{hashlib.sha256(served['kernel'].read_bytes()).hexdigest()}",
                     f"einops==0.8.2 --hash=sha256:{EINOPS_SHA256}"], text
    p = run([python, "-m", "pip", "install", "--require-hashes", "-r", req, "-q"])
    assert p.returncode == 0, p.stderr
    p = run([python, "-c", f"import {KERNEL}; print({KERNEL}.hello())"])
    assert p.stdout.strip() == "einops 0.8.2", p.stdout + p.stderr
    assert run([python, "-c", "import acme_utils"]).returncode != 0  # nobody asked for it


def test_json_names_what_was_left_out(served):
    p = run([KWHEEL, "pin", served["index"], "--python", TORCH_PYTHON, "--no-deps", "--json"])
    assert p.returncode == 0, p.stderr
    report = json.loads(p.stdout)
    assert report["project"] == KERNEL and report["left_out"] == ["acme-utils", "einops"], report
