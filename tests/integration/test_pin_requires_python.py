"""`kwheel pin --python` holds every candidate to its Requires-Python, as pip does.

The case of the issue: an index where img2gray 2's `data-requires-python` is
`>=3.99` and img2gray 1 fits Debian's Python 3.11. pin used to pin 2, which
pip then refuses. Now 1 is pinned, the header says why 2 was passed over, and
real pip installs the pin with `--require-hashes` (while it refuses 2 by its
own rule: shown here too, so the test holds kwheel to pip, not to itself).
Three places carry the value: a PEP 503 page's attribute, a PEP 691 page's
`requires-python` key, and the wheel's METADATA (a directory of wheels, and
the site `kwheel index` writes from it, whose pages copy METADATA's value).

The kernels are real `kwheel build`s of a pure-Python torch-cpu build; the
target is a venv of Debian's /usr/bin/python3 that sees its python3-torch.
"""

from __future__ import annotations

import base64
import hashlib
import html
import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from conftest import torch_version  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
KWHEEL = os.environ.get("KWHEEL_BIN") or str(ROOT / "build" / "kwheel")
TORCH_PYTHON = "/usr/bin/python3"
TORCH = torch_version(TORCH_PYTHON)

pytestmark = [
    pytest.mark.skipif(TORCH is None, reason=f"needs torch importable by {TORCH_PYTHON} (Debian python3-torch)"),
    pytest.mark.skipif(not os.access(KWHEEL, os.X_OK), reason=f"kwheel not built at {KWHEEL} (set KWHEEL_BIN)"),
]


def run(argv, **kw) -> subprocess.CompletedProcess:
    return subprocess.run([str(a) for a in argv], capture_output=True, text=True, timeout=600, **kw)


def target_python_version() -> str:
    """What pip compares Requires-Python with: the interpreter's sys.version_info[:3]."""
    return run([TORCH_PYTHON, "-c", "import sys; print('%d.%d.%d' % sys.version_info[:3])"]).stdout.strip()


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def build(work: Path, version: str) -> Path:
    """`kwheel build` of img2gray's torch-cpu (pure Python) variant at `version`."""
    repo = work / f"repo-{version}"
    pkg = repo / "build" / "torch-cpu" / "img2gray"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text(f"def hello():\n    return 'img2gray {version}'\n")
    meta = {"name": "img2gray", "version": 1, "license": "Apache-2.0", "python-depends": [], "backend": {"type": "cpu"}}
    (repo / "build" / "torch-cpu" / "metadata.json").write_text(json.dumps(meta))
    p = run([KWHEEL, "build", repo, "--version", version, "-o", work / f"dist-{version}", "-q"])
    assert p.returncode == 0, p.stderr
    (wheel,) = (work / f"dist-{version}").glob("*.whl")
    return wheel


def with_requires_python(wheel: Path, out: Path, value: str) -> Path:
    """A copy of `wheel` whose METADATA says `Requires-Python: value` (RECORD rewritten to match)."""
    out.mkdir(parents=True, exist_ok=True)
    dest = out / wheel.name
    with zipfile.ZipFile(wheel) as src:
        members = {i.filename: src.read(i) for i in src.infolist()}
    (md,) = [k for k in members if k.endswith(".dist-info/METADATA")]
    lines = members[md].decode().split("\n")
    assert any(line.startswith("Requires-Python: ") for line in lines), members[md]
    members[md] = "\n".join(f"Requires-Python: {value}" if line.startswith("Requires-Python: ") else line for line in lines).encode()
    (record,) = [k for k in members if k.endswith(".dist-info/RECORD")]
    rows = "".join(f"{k},sha256={base64.urlsafe_b64encode(hashlib.sha256(v).digest()).rstrip(b'=').decode()},{len(v)}\n"
                   for k, v in members.items() if k != record)
    members[record] = (rows + f"{record},,\n").encode()
    with zipfile.ZipFile(dest, "w", zipfile.ZIP_DEFLATED) as z:
        for k, v in members.items():
            z.writestr(k, v)
    return dest


def write_site(site: Path, wheels: dict[Path, str], *, json_page: bool) -> str:
    """A file:// index: SITE/files/ holds the wheels; SITE/simple/img2gray/ lists them with
    their Requires-Python as PEP 503 `data-requires-python` (HTML) or, with `json_page`, as
    PEP 691 `requires-python` in index.json (the HTML, which pip reads, then carries none)."""
    (site / "files").mkdir(parents=True)
    page = site / "simple" / "img2gray"
    page.mkdir(parents=True)
    (site / "simple" / "index.html").write_text('<!DOCTYPE html>\n<html><body>\n<a href="img2gray/">img2gray</a>\n</body></html>\n')
    anchors, files = [], []
    for wheel, rp in wheels.items():
        shutil.copy(wheel, site / "files" / wheel.name)
        href = "../../files/" + wheel.name.replace("+", "%2B")
        attr = "" if json_page else f' data-requires-python="{html.escape(rp)}"'
        anchors.append(f'<a href="{href}#sha256={sha256(wheel)}"{attr}>{wheel.name}</a>')
        files.append({"filename": wheel.name, "url": href, "hashes": {"sha256": sha256(wheel)}, "requires-python": rp})
    (page / "index.html").write_text("<!DOCTYPE html>\n<html><body>\n" + "\n".join(anchors) + "\n</body></html>\n")
    if json_page:
        (page / "index.json").write_text(json.dumps({"meta": {"api-version": "1.1"}, "name": "img2gray", "files": files}))
    return (site / "simple").as_uri() + "/"


@pytest.fixture(scope="module")
def builds(tmp_path_factory):
    work = tmp_path_factory.mktemp("requires-python")
    return {"1": build(work, "1"), "2": build(work, "2")}


@pytest.fixture(scope="module")
def target(tmp_path_factory) -> Path:
    """A venv of Debian's Python that sees its python3-torch, with Debian's pip."""
    where = tmp_path_factory.mktemp("target") / "venv"
    p = run([TORCH_PYTHON, "-m", "venv", "--system-site-packages", where])
    assert p.returncode == 0, p.stderr
    return where / "bin" / "python"


def pin(source, target: Path, out: Path) -> str:
    p = run([KWHEEL, "pin", source, "--python", target, "-o", out])
    assert p.returncode == 0, p.stderr
    return out.read_text()


def assert_pinned_one_and_passed_over_two(text: str, builds, where: str) -> None:
    lines = text.splitlines()
    assert lines[-1] == f"img2gray==1+torch.cpu --hash=sha256:{sha256(builds['1'])}", text
    assert lines[1] == f"# passed over: img2gray 2 (requires Python >=3.99 by {where}, the target has {target_python_version()})", text


def pip_installs(target: Path, req: Path, *extra) -> None:
    p = run([target, "-m", "pip", "install", "--require-hashes", "--no-deps", "--force-reinstall", "-r", req, "-q", *extra])
    assert p.returncode == 0, p.stderr
    p = run([target, "-c", "import img2gray; print(img2gray.hello())"])
    assert p.stdout.strip() == "img2gray 1", p.stdout + p.stderr


@pytest.mark.parametrize("json_page", [False, True], ids=["pep503-data-requires-python", "pep691-requires-python"])
def test_the_index_entrys_requires_python(builds, target, tmp_path, json_page):
    index = write_site(tmp_path / "site", {builds["1"]: ">=3.9", builds["2"]: ">=3.99"}, json_page=json_page)
    req = tmp_path / "requirements.txt"
    assert_pinned_one_and_passed_over_two(pin(index, target, req), builds, "its index entry")
    pip_installs(target, req)
    if not json_page:  # pip's own verdict on 2, from the same page
        p = run([target, "-m", "pip", "install", "--dry-run", "--no-deps", "--index-url", index, "img2gray==2+torch.cpu"])
        assert p.returncode != 0 and "Requires-Python >=3.99" in p.stdout + p.stderr, p.stdout + p.stderr


def test_the_wheels_metadata_requires_python(builds, target, tmp_path):
    dist = tmp_path / "dist"
    dist.mkdir()
    shutil.copy(builds["1"], dist)
    with_requires_python(builds["2"], dist, ">=3.99")
    req = tmp_path / "requirements.txt"
    assert_pinned_one_and_passed_over_two(pin(dist, target, req), builds, "its METADATA")
    pip_installs(target, req, "--no-index", "--find-links", dist)
    p = run([target, "-m", "pip", "install", "--dry-run", "--no-deps", "--no-index", "--find-links", dist, "img2gray==2+torch.cpu"])
    assert p.returncode != 0 and "requires a different Python" in p.stdout + p.stderr, p.stdout + p.stderr
    # The site `kwheel index` writes from those wheels carries METADATA's value on its pages (and PEP 658).
    p = run([KWHEEL, "index", dist, "-o", tmp_path / "site", "-q"])
    assert p.returncode == 0, p.stderr
    assert_pinned_one_and_passed_over_two(pin((tmp_path / "site" / "simple").as_uri() + "/", target, req), builds, "its index entry")
    pip_installs(target, req)


def test_a_described_target_says_requires_python_was_not_checked(builds, tmp_path):
    index = write_site(tmp_path / "site", {builds["1"]: ">=3.9", builds["2"]: ">=3.99"}, json_page=False)
    p = run([KWHEEL, "pin", index, "--torch", "1.13", "--cpu"])
    assert p.returncode == 0, p.stderr
    lines = p.stdout.splitlines()
    assert lines[1].startswith("# Requires-Python not checked: the target is described"), p.stdout
    assert lines[-1].startswith("img2gray==2+torch.cpu --hash=sha256:"), p.stdout
