"""`kwheel index`'s matrix pages (SITE/index.html, SITE/kernels/<project>.html)
as a browser shows them: headless Chromium (Debian's `chromium`) renders each
page, its DOM is read back (`--dump-dom`) and its screenshot checked.

The wheels are real kwheel builds of kernel repos on disk (tests/hub's
kernel_repos, CUDA objects with real .nv_fatbin sections from elfgen):
two torch versions, CUDA 12.6 and 13.0, CPU, torch-universal and torch-cuda
noarch builds, an x86_64 and an aarch64 build sharing a cell, and two
versions sharing one, across two kernels. Rows and columns are derived here
from the site's files/ (filenames and the wheels' METADATA), not from
kwheel's output. The simple/ pages (PEP 503/691/658) are held byte-identical
with and without --title; test_publish_index_pin.py holds pip and uv to them.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import struct
import subprocess
import sys
import zipfile
import zlib
from html.parser import HTMLParser
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "hub"))
import kernel_repos as kr  # noqa: E402
from conftest import clean_env  # noqa: E402
from elfgen import cuda_shared_object, shared_object  # noqa: E402
from kwheel_fixtures import rewrite_wheel  # noqa: E402

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
TITLE = "Acme GPU kernels"
USAGE = 2

needs_chromium = pytest.mark.skipif(CHROMIUM is None, reason="needs Debian's chromium (scripts/setup installs it)")

# kernel -> version -> variant -> CUDA targets its .so carries (None: pure Python, []: a plain .so)
KERNELS = {
    "img2gray": {
        "0.1.0": {
            "torch27-cxx11-cu126-x86_64-linux": ["sm_80", "sm_90"],
            "torch27-cxx11-cu126-aarch64-linux": ["sm_90"],
            "torch29-cxx11-cu130-x86_64-linux": ["sm_90", "sm_100", "compute_100"],
            "torch29-cxx11-cpu-x86_64-linux": [],
            "torch-universal": None,
            "torch-cuda": None,
        },
        "0.2.0": {"torch27-cxx11-cu126-x86_64-linux": ["sm_90"]},
    },
    "relu": {"1.0.0": {"torch29-cxx11-cu130-x86_64-linux": ["sm_120"], "torch-universal": None}},
}


def kwheel(kwheel_bin, *args) -> subprocess.CompletedProcess:
    return subprocess.run([str(kwheel_bin), *map(str, args)], capture_output=True, text=True, env=clean_env(), timeout=300)


def declared(targets: list[str]) -> list[str]:
    """metadata.json's backend.archs for SASS targets: sm_90 -> 9.0."""
    return [f"{t[3:-1]}.{t[-1]}" for t in targets if t.startswith("sm_")]


def write_repo(root: Path, name: str, variants: dict) -> Path:
    for variant, targets in variants.items():
        arch = "aarch64" if "-aarch64-" in variant else "x86_64"
        so = None if targets is None else cuda_shared_object(targets, arch) if targets else shared_object(arch)
        kr.write_variant(root, variant, layout="flat", name=name, files=kr.demo_package(name, variant, so=so),
                         archs=declared(targets) if targets else None, kernel_id=f"_{name}_0123abc" if so else None)
    return root


@pytest.fixture(scope="module")
def dist(kwheel_bin, tmp_path_factory) -> Path:
    work = tmp_path_factory.mktemp("matrix")
    out = work / "dist"
    for name, versions in KERNELS.items():
        for version, variants in versions.items():
            repo = write_repo(work / f"{name}-{version}", name, variants)
            r = kwheel(kwheel_bin, "build", repo, "--version", version, "-o", out, "-q")
            assert r.returncode == 0, r.stdout + r.stderr
    assert len(list(out.glob("*.whl"))) == sum(len(v) for k in KERNELS.values() for v in k.values())
    return out


# --------------------------------------------------------------------------- what the site holds, derived here


def wheel_facts(wheel: Path) -> dict:
    """Project, row and column of a wheel, from its filename and METADATA."""
    with zipfile.ZipFile(wheel) as z:
        [meta] = [n for n in z.namelist() if n.endswith(".dist-info/METADATA")]
        fields = dict(line.split(": ", 1) for line in z.read(meta).decode().split("\n\n")[0].splitlines() if ": " in line)
    name, version = wheel.name.split("-")[:2]
    assert fields["Version"] == version.replace("%2B", "+")
    public, _, label = fields["Version"].partition("+")
    segs = label.split(".") if label else []
    torch = re.fullmatch(r"torch(\d+)", segs[0]) if segs else None
    row = f"torch {torch.group(1)}.{segs[1]}" if torch else "any torch"
    column = segs[2] if torch else ("noarch-" + segs[1] if segs else "noarch")
    return {"project": fields["Name"], "version": public, "row": row, "column": column,
            "platform": wheel.name[:-4].split("-")[-1], "size": wheel.stat().st_size}


class MatrixDom(HTMLParser):
    """The rendered DOM's title, and per <h2> kernel its table: the column
    headers, and per body row its header and cells, each cell's entries with
    their link (href, title, text) and spans by class."""

    def __init__(self):
        super().__init__()
        self.title, self.h1, self.kernels = "", "", {}
        self._in, self._text, self._kernel, self._head = None, "", None, False
        self._row, self._cell, self._entry, self._span = None, None, None, None
        self._code, self._code_text = None, ""

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag in ("title", "h1", "h2", "th"):
            self._in, self._text = tag, ""
        elif tag == "table":
            self.kernels[self._kernel] = {"columns": [], "rows": []}
        elif tag == "thead":
            self._head = True
        elif tag == "tr":
            self._row = {"ths": [], "cells": []}
        elif tag == "td":
            self._cell = {"class": a.get("class"), "entries": [], "links": 0, "install": None}
        elif tag == "div" and a.get("class") == "install" and self._cell is not None:
            self._cell["install"], self._entry = {}, None
        elif tag == "code" and self._cell is not None and self._cell["install"] is not None:
            self._code, self._code_text = a.get("class"), ""
        elif tag == "li" and self._cell is not None:
            self._entry = {"spans": {}}
            self._cell["entries"].append(self._entry)
        elif tag == "a" and self._cell is not None:
            self._cell["links"] += 1
            self._entry.update(href=a.get("href"), title=a.get("title"))
            self._in, self._text = "a", ""
        elif tag == "span" and self._entry is not None:
            self._span, self._in, self._text = a.get("class"), "span", ""

    def handle_data(self, data):
        if self._in:
            self._text += data
        if self._code:
            self._code_text += data

    def handle_endtag(self, tag):
        text = self._text.strip()
        if tag == "code" and self._code:
            self._cell["install"][self._code] = self._code_text.strip()
            self._code = None
        if tag == "title":
            self.title = text
        elif tag == "h1":
            self.h1 = text
        elif tag == "h2":
            self._kernel = text
        elif tag == "th":
            self._row["ths"].append(text)
        elif tag == "a" and self._entry is not None:
            self._entry["text"] = text
        elif tag == "span" and self._entry is not None:
            self._entry["spans"][self._span] = text
        elif tag == "td":
            self._row["cells"].append(self._cell)
            self._cell, self._entry = None, None
        elif tag == "thead":
            self._head = False
        elif tag == "tr":
            table = self.kernels[self._kernel]
            if self._head:
                table["columns"] = self._row["ths"][1:]
            else:
                table["rows"].append({"header": self._row["ths"][0], "cells": self._row["cells"]})
        if tag == self._in:
            self._in = None


def chromium(args: list[str], profile: Path, size: str = "1280,900") -> subprocess.CompletedProcess:
    # A fresh profile per run: no first-run UI, no lock shared with another Chromium.
    return subprocess.run([CHROMIUM, "--headless=new", "--no-sandbox", "--disable-gpu", f"--window-size={size}", "--hide-scrollbars",
                           "--no-first-run", f"--user-data-dir={profile}", *args], capture_output=True, text=True, timeout=90)


def render(page: Path | str, work: Path, size: str = "1280,900") -> tuple[MatrixDom, Path]:
    """A page (a file, or a URL) as Chromium shows it: its DOM after scripts ran, and a screenshot."""
    url = page if isinstance(page, str) else page.as_uri()
    shot = work / (url.rstrip("/").rsplit("/", 1)[-1].removesuffix(".html") + ".png")
    r = chromium(["--dump-dom", url], work / "profile-dom", size)
    assert r.returncode == 0 and "<table" in r.stdout, r.stderr[-2000:]
    dom = MatrixDom()
    dom.feed(r.stdout)
    dom.html = r.stdout
    r = chromium([f"--screenshot={shot}", url], work / "profile-shot", size)
    assert r.returncode == 0 and shot.is_file(), r.stderr[-2000:]
    return dom, shot


def png_pixels(path: Path) -> tuple[int, int, list[bytes]]:
    """Width, height and unfiltered scanlines of an 8-bit RGB(A) PNG (PNG spec, section 9)."""
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat, ihdr = 8, b"", None
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            ihdr = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    width, height, depth, colour, _, _, interlace = ihdr
    assert depth == 8 and colour in (2, 6) and interlace == 0, ihdr
    bpp = 3 if colour == 2 else 4
    raw, stride, rows, prev = zlib.decompress(idat), width * bpp, [], bytes(width * bpp)
    for y in range(height):
        f, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a, b = line[i - bpp] if i >= bpp else 0, prev[i]
            c = prev[i - bpp] if i >= bpp else 0
            if f == 1:
                line[i] = (line[i] + a) & 0xFF
            elif f == 2:
                line[i] = (line[i] + b) & 0xFF
            elif f == 3:
                line[i] = (line[i] + (a + b) // 2) & 0xFF
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 0xFF
        rows.append(bytes(line))
        prev = line
    return width, height, rows


def size_bytes(text: str) -> float:
    n, unit = text.split()
    return float(n) * {"B": 1, "KiB": 1024, "MiB": 1024 ** 2, "GiB": 1024 ** 3}[unit]


# --------------------------------------------------------------------------- the tests


def check_matrix(table: dict, wheels: list[dict], files_prefix: str) -> None:
    """Rows and columns are exactly those of `wheels`; each wheel is one linked
    entry in its cell; no cell holding a wheel is shown empty."""
    assert set(table["columns"]) == {w["column"] for w in wheels}
    assert {r["header"] for r in table["rows"]} == {w["row"] for w in wheels}
    links = {}
    for row in table["rows"]:
        assert len(row["cells"]) == len(table["columns"])
        for column, cell in zip(table["columns"], row["cells"]):
            here = [w for w in wheels if (w["row"], w["column"]) == (row["header"], column)]
            assert len(cell["entries"]) == len(here) == cell["links"], (row["header"], column, cell)
            assert (cell["class"] == "empty") == (not here)
            for e in cell["entries"]:
                assert e["href"].startswith(files_prefix)
                links.setdefault(e["href"][len(files_prefix):], []).append((row["header"], column, e))
    assert sorted(links) == sorted(w["href"] for w in wheels)
    for w in wheels:
        [(row, column, e)] = links[w["href"]]
        assert (row, column) == (w["row"], w["column"])
        assert e["title"] == w["filename"] and e["text"] == f"{w['project']} {w['version']}"
        assert e["spans"]["tag"] == w["platform"]
        assert abs(size_bytes(e["spans"]["size"]) - w["size"]) <= max(0.05 * w["size"], 1)


def site_wheels(site: Path) -> list[dict]:
    out = []
    for f in sorted((site / "files").glob("*.whl")):
        facts = wheel_facts(f)
        facts.update(filename=f.name, href=f.name.replace("+", "%2B"))
        out.append(facts)
    return out


@needs_chromium
def test_matrix_pages_render_every_wheel_once_in_its_cell(kwheel_bin, dist, tmp_path):
    site, plain = tmp_path / "site", tmp_path / "plain"
    r = kwheel(kwheel_bin, "index", dist, "--out", site, "--title", TITLE, "--json")
    assert r.returncode == 0, r.stderr
    report = json.loads(r.stdout)
    assert report["title"] == TITLE
    assert report["pages"] == [str(site / "index.html"), str(site / "kernels" / "img2gray.html"), str(site / "kernels" / "relu.html")]
    assert kwheel(kwheel_bin, "index", dist, "--out", plain, "-q").returncode == 0

    # pip's and uv's pages do not change with the title: every file outside the matrix pages is byte-identical.
    matrix_pages = {"index.html", "kernels", "kwheel-index.json"}  # the pages, and the manifest that keeps the title
    tree = lambda root: {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*"))  # noqa: E731
                         if p.is_file() and p.relative_to(root).parts[0] not in matrix_pages}
    assert tree(site) == tree(plain)
    assert sum(k.endswith("simple/img2gray/index.html") for k in tree(site)) == 5  # simple/ and 4 sub-indexes

    wheels = site_wheels(site)
    assert len(wheels) == 9
    by_kernel = {k: [w for w in wheels if w["project"] == k] for k in KERNELS}
    dom, shot = render(site / "index.html", tmp_path)
    assert dom.title == TITLE and dom.h1 == TITLE
    assert set(dom.kernels) == set(KERNELS)
    for kernel, table in dom.kernels.items():
        check_matrix(table, by_kernel[kernel], "files/")
    # Written by hand for the fixture: newest torch first, CUDA before CPU, noarch last.
    assert [r["header"] for r in dom.kernels["img2gray"]["rows"]] == ["torch 2.9", "torch 2.7", "any torch"]
    assert dom.kernels["img2gray"]["columns"] == ["cu126", "cu130", "cpu", "noarch-cuda", "noarch"]
    cu126 = dom.kernels["img2gray"]["rows"][1]["cells"][0]["entries"]
    assert [(e["text"], e["spans"]["tag"], e["spans"]["gpu"]) for e in cu126] == [
        ("img2gray 0.2.0", "manylinux1_x86_64.manylinux_2_5_x86_64", "sm_90"),
        ("img2gray 0.1.0", "manylinux1_x86_64.manylinux_2_5_x86_64", "sm_80 sm_90"),
        ("img2gray 0.1.0", "manylinux2014_aarch64.manylinux_2_17_aarch64", "sm_90"),
    ]
    assert dom.kernels["img2gray"]["rows"][0]["cells"][1]["entries"][0]["spans"]["gpu"] == "sm_90 sm_100 compute_100"
    assert dom.kernels["relu"]["rows"][0]["cells"][0]["entries"][0]["spans"]["gpu"] == "sm_120"

    for kernel in KERNELS:
        kdom, _ = render(site / "kernels" / f"{kernel}.html", tmp_path)
        assert kdom.title == TITLE and list(kdom.kernels) == [kernel]
        check_matrix(kdom.kernels[kernel], by_kernel[kernel], "../files/")

    width, height, rows = png_pixels(shot)
    assert (width, height) == (1280, 900)
    colours = {row[i:i + 3] for row in rows[::4] for i in range(0, len(row), 3 * 7)}
    assert len(colours) > 20, "the screenshot is (nearly) one colour"
    if os.environ.get("KWHEEL_MATRIX_SCREENSHOT"):  # docs/images/index-matrix.png is made this way
        shutil.copyfile(shot, os.environ["KWHEEL_MATRIX_SCREENSHOT"])


def test_title_is_kept_checked_and_old_sites_get_their_gpu_code(kwheel_bin, dist, tmp_path):
    site = tmp_path / "site"
    wheels = sorted(dist.glob("*.whl"))
    assert kwheel(kwheel_bin, "index", wheels[0], "--out", site, "--title", TITLE).returncode == 0
    # A later run without --title keeps the site's title.
    assert kwheel(kwheel_bin, "index", wheels[1], "--out", site, "-q").returncode == 0
    assert f"<title>{TITLE}</title>" in (site / "index.html").read_text()
    # Bad titles: one-line usage errors, the site untouched.
    before = (site / "index.html").read_bytes()
    for bad in ["", "two\nlines", "x" * 201]:
        r = kwheel(kwheel_bin, "index", wheels[2], "--out", site, "--title", bad)
        assert r.returncode == USAGE and "--title" in r.stderr and r.stderr.strip().count("\n") == 0, r.stderr
    assert (site / "index.html").read_bytes() == before and not (site / "files" / wheels[2].name).exists()
    # A site indexed before kwheel recorded GPU code: read from the served wheels on the next run.
    manifest = site / "kwheel-index.json"
    m = json.loads(manifest.read_text())
    recorded = {f["filename"]: f.pop("gpu_code") for f in m["files"]}
    manifest.write_text(json.dumps(m))
    assert kwheel(kwheel_bin, "index", wheels[2], "--out", site, "--title", "Renamed").returncode == 0
    m = json.loads(manifest.read_text())
    assert {f["filename"]: f["gpu_code"] for f in m["files"] if f["filename"] in recorded} == recorded
    assert any(recorded.values())
    assert m["title"] == "Renamed" and "<title>Renamed</title>" in (site / "kernels" / "img2gray.html").read_text()


def test_pip_and_uv_install_from_a_titled_site(kwheel_bin, dist, tmp_path, venv_python):
    """The matrix pages sit beside the simple API: pip and uv still read simple/ and the sub-indexes."""
    site = tmp_path / "site"
    assert kwheel(kwheel_bin, "index", dist, "--out", site, "--title", TITLE).returncode == 0
    env = clean_env(PIP_CONFIG_FILE=os.devnull, PIP_DISABLE_PIP_VERSION_CHECK="1", UV_NO_CONFIG="1")
    r = subprocess.run([venv_python, "-m", "pip", "install", "--dry-run", "--ignore-installed", "--no-deps", "--no-cache-dir", "-q",
                        "--report", "-", "--index-url", f"{site.as_uri()}/torch2.7-cu126/simple", "img2gray"],
                       capture_output=True, text=True, env=env, timeout=120)
    assert r.returncode == 0, r.stderr
    [item] = json.loads(r.stdout)["install"]
    assert item["metadata"]["version"] == "0.2.0+torch2.7.cu126"
    uv = shutil.which("uv", path=str(Path(venv_python).parent)) or shutil.which("uv")
    r = subprocess.run([uv, "pip", "install", "--no-deps", "--target", tmp_path / "t", "--python", venv_python, "--cache-dir", tmp_path / "uv-cache",
                        "--index-url", f"{site.as_uri()}/torch2.9-cpu/simple", "img2gray"], capture_output=True, text=True, env=env, timeout=120)
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "t" / "img2gray-0.1.0+torch2.9.cpu.dist-info").is_dir()


def test_base_url_makes_matrix_links_absolute(kwheel_bin, dist, tmp_path):
    site = tmp_path / "site"
    assert kwheel(kwheel_bin, "index", dist, "--out", site, "--base-url", "https://kernels.example.org/idx/").returncode == 0
    for page in ["index.html", "kernels/img2gray.html"]:
        hrefs = re.findall(r'<li><a href="([^"]+)" title=', (site / page).read_text())
        assert len(hrefs) == (9 if page == "index.html" else 7)
        assert all(h.startswith("https://kernels.example.org/idx/files/img2gray-") or h.startswith("https://kernels.example.org/idx/files/relu-")
                   for h in hrefs), hrefs


# --------------------------------------------------------------------------- the first hour (#33): install lines that keep torch
#
# Kernels built from the fixture Hub (so their wheels record a Hub repo and
# commit), a stand-in for PyPI on loopback holding other torch builds and
# the kernels' Python dependencies, the site served by http.server, and a
# real pip in fresh venvs running the exact line the kernel page shows.

import fixture as hubfix  # noqa: E402  (tests/hub/fixture.py)

sys.path.insert(0, str(ROOT / "tests" / "integration"))
import hubtest as H  # noqa: E402

ORG = "acme-kernels"
CU126, CU130 = "torch27-cxx11-cu126-x86_64-linux", "torch29-cxx11-cu130-x86_64-linux"
# kernel -> version branch N -> its variants
HUB_KERNELS = {"relu": {1: [CU126], 2: [CU126, CU130]}, "img2gray": {1: [CU130, "torch-universal"]}}
INSTALLED_TORCH = "2.7.1+cu126"           # what the user's venv holds
DEPS_TORCH = ["2.7.1", "2.7.1+cu128", "2.9.0"]  # what the PyPI stand-in offers


def hub_tree(name: str, n: int, variants: list[str]) -> dict[str, bytes]:
    tree = {}
    for v in variants:
        so = None if v == "torch-universal" else cuda_shared_object(["sm_90"])
        tree.update(kr.variant_tree(v, layout="flat", name=name, version=n, files=kr.demo_package(name, f"{name} v{n}", so=so),
                                    python_depends=["einops"] if name == "relu" else [], archs=["9.0"] if so else None,
                                    kernel_id=f"_{name}_0123abc" if so else None))
    return tree


@pytest.fixture(scope="module")
def acme(tmp_path_factory):
    root = tmp_path_factory.mktemp("acme") / "root"
    hubfix.set_org(root, ORG, trustedKernelPublisher=True)
    repos = {name: kr.make_kernel_repo(root, f"{ORG}/{name}", {n: hub_tree(name, n, vs) for n, vs in versions.items()})
             for name, versions in HUB_KERNELS.items()}
    with hubfix.hub_server(root) as srv:
        yield srv, repos


@pytest.fixture(scope="module")
def acme_dist(kwheel_bin, acme, tmp_path_factory) -> Path:
    srv, _ = acme
    work = tmp_path_factory.mktemp("acme-dist")
    env = H.clean_env(work / "home", HF_ENDPOINT=srv.endpoint)
    for name, versions in HUB_KERNELS.items():
        for n in versions:
            r = subprocess.run([str(kwheel_bin), "build", f"{ORG}/{name}", "--version", str(n), "-o", str(work / "dist"), "-q"],
                               env=env, capture_output=True, text=True, timeout=300)
            assert r.returncode == 0, r.stdout + r.stderr
    return work / "dist"


def stand_in_wheel(out: Path, name: str, version: str, files: dict[str, str], requires: tuple[str, ...] = ()) -> Path:
    """A minimal pure-Python wheel (PEP 427), for the PyPI stand-in and the user's torch."""
    import base64
    import hashlib
    dist = f"{name}-{version}"
    entries = {**files,
               f"{dist}.dist-info/METADATA": f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n"
                                             + "".join(f"Requires-Dist: {r}\n" for r in requires),
               f"{dist}.dist-info/WHEEL": "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n"}
    record = ""
    for path, text in entries.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest()).rstrip(b"=").decode()
        record += f"{path},sha256={digest},{len(text.encode())}\n"
    entries[f"{dist}.dist-info/RECORD"] = record + f"{dist}.dist-info/RECORD,,\n"
    out.mkdir(parents=True, exist_ok=True)
    whl = out / f"{dist}-py3-none-any.whl"
    with zipfile.ZipFile(whl, "w") as z:
        for path, text in entries.items():
            z.writestr(path, text)
    return whl


def torch_wheel(out: Path, version: str) -> Path:
    cuda = re.search(r"\+cu(\d+)(\d)$", version)
    files = {"torch/__init__.py": "from .version import __version__\n",
             "torch/version.py": f"__version__ = {version!r}\ncuda = {(cuda.group(1) + '.' + cuda.group(2)) if cuda else None!r}\nhip = None\n"}
    return stand_in_wheel(out, "torch", version, files)


def deps_index(root: Path) -> None:
    """PyPI's stand-in: PEP 503 pages for other torch builds and einops (the relu kernel's python-depends)."""
    wheels = [torch_wheel(root / "files", v) for v in DEPS_TORCH]
    wheels.append(stand_in_wheel(root / "files", "einops", "0.8.1", {"einops/__init__.py": "__version__ = '0.8.1'\n"}))
    for project in ("torch", "einops"):
        links = "".join(f'<a href="../../files/{w.name.replace("+", "%2B")}">{w.name}</a>\n' for w in wheels if w.name.startswith(project + "-"))
        (root / "simple" / project).mkdir(parents=True, exist_ok=True)
        (root / "simple" / project / "index.html").write_text(f"<!DOCTYPE html><html><body>\n{links}</body></html>\n")


@pytest.fixture
def serve():
    """`python -m http.server` on a free loopback port for a directory; returns its URL."""
    procs = []

    def start(directory: Path) -> str:
        proc = subprocess.Popen([sys.executable, "-u", "-m", "http.server", "0", "--bind", "127.0.0.1", "--directory", str(directory)],
                                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        procs.append(proc)
        m = re.search(r"port (\d+)", proc.stdout.readline())  # printed once the socket listens
        assert m
        return f"http://127.0.0.1:{m.group(1)}"

    yield start
    for p in procs:
        p.terminate()
        p.wait(timeout=30)


def pip_env(venv_py: Path) -> dict:
    """Only the indexes the line names: no pip settings from this machine (PIP_FIND_LINKS and the like)."""
    env = {k: v for k, v in clean_env().items() if not k.startswith(("PIP_", "UV_"))}
    env.update(PIP_CONFIG_FILE=os.devnull, PIP_DISABLE_PIP_VERSION_CHECK="1", PIP_NO_CACHE_DIR="1", PIP_NO_INPUT="1")
    env["PATH"] = f"{venv_py.parent}{os.pathsep}{env.get('PATH', '')}"
    env.pop("PYTHONPATH", None)
    env["VIRTUAL_ENV"] = str(venv_py.parent.parent)
    return env


def user_venv(where: Path, torch: Path) -> Path:
    """A fresh venv holding the user's torch (the stand-in)."""
    r = subprocess.run([sys.executable, "-m", "venv", str(where)], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    py = where / "bin" / "python"
    r = subprocess.run([py, "-m", "pip", "install", "-q", "--no-index", str(torch)], capture_output=True, text=True, env=pip_env(py), timeout=300)
    assert r.returncode == 0, r.stderr
    return py


def installed(py: Path) -> dict[str, str]:
    r = subprocess.run([py, "-m", "pip", "list", "--format=json"], capture_output=True, text=True, env=pip_env(py), timeout=120)
    assert r.returncode == 0, r.stderr
    return {p["name"].lower(): p["version"] for p in json.loads(r.stdout)}


def run_line(line: str, py: Path, cwd: Path) -> subprocess.CompletedProcess:
    """The page's line, pasted into a shell whose `python` is the venv's."""
    return subprocess.run(["bash", "-c", line], cwd=cwd, env=pip_env(py), capture_output=True, text=True, timeout=300)


@needs_chromium
def test_kernel_page_install_line_keeps_the_installed_torch(kwheel_bin, acme, acme_dist, tmp_path, serve):
    _, repos = acme
    deps_index(tmp_path / "deps")
    deps_url = serve(tmp_path / "deps")
    site = tmp_path / "site"
    r = kwheel(kwheel_bin, "index", acme_dist, "--out", site, "--title", TITLE, "--deps-index-url", f"{deps_url}/simple/")
    assert r.returncode == 0, r.stderr
    site_url = serve(site)

    # Every cell of the kernel page: its index (only its builds), the line for its newest build, the Hub commit of each build.
    pages = {}
    for kernel in HUB_KERNELS:
        dom, shot = render(f"{site_url}/kernels/{kernel}.html", tmp_path, "1400,1000")
        table = dom.kernels[kernel]
        cells = {(row["header"], col): cell for row in table["rows"] for col, cell in zip(table["columns"], row["cells"]) if cell["class"] == "cell"}
        wheels = [w for w in site_wheels(site) if w["project"] == kernel]
        assert set(cells) == {(w["row"], w["column"]) for w in wheels}
        for (row, column), cell in cells.items():
            here = [w for w in wheels if (w["row"], w["column"]) == (row, column)]
            newest = max((w["filename"].split("-")[1] for w in here), key=lambda v: [int(x) for x in v.split("+")[0].split(".")])
            version = newest.replace("%2B", "+")
            line = cell["install"]["install-line"]
            assert "pip list --format=freeze | grep -i '^torch==' > torch-pin.txt;" in line and "-c torch-pin.txt" in line, line
            if row == "any torch":  # torch-universal: no index of its own, the file itself
                assert "index-url" not in cell["install"]
                assert f"'{kernel} @ {site_url}/files/{here[0]['href']}'" in line and f"--index-url '{deps_url}/simple/'" in line, line
            else:
                sub = f"torch{row.split()[1]}-{column}"
                index = f"{site_url}/{sub}/simple/"
                assert cell["install"]["index-url"] == index  # made absolute where the page is served
                assert f"--index-url '{index}' --extra-index-url '{deps_url}/simple/' '{kernel}=={version}'" in line, line
                served = json.loads((site / sub / "simple" / kernel / "index.json").read_text())
                # the cell's builds, and the torch-universal ones (any torch: they cannot swap it), nothing else
                assert {f["filename"] for f in served["files"]} == {w["filename"] for w in wheels if w in here or w["row"] == "any torch"}
            for entry in cell["entries"]:
                n = int(entry["text"].split()[1].split(".")[0])  # kernel version N: branch vN
                assert entry["spans"]["hub"] == f"Hub: {ORG}/{kernel} @ {repos[kernel].versions[n][:12]}"
        pages[kernel] = (cells, shot)

    # The line of the user's cell installs the kernel and its dependency, and keeps the user's torch.
    torch = torch_wheel(tmp_path / "user", INSTALLED_TORCH)
    py = user_venv(tmp_path / "venv", torch)
    relu = pages["relu"][0]
    r = run_line(relu[("torch 2.7", "cu126")]["install"]["install-line"], py, tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    after = installed(py)
    assert after["torch"] == INSTALLED_TORCH and after["einops"] == "0.8.1"
    assert after["relu"].startswith("2.") and after["relu"].endswith("+torch2.7.cu126")
    # Another cell's line cannot swap torch: pip refuses, nothing changes.
    r = run_line(relu[("torch 2.9", "cu130")]["install"]["install-line"], py, tmp_path)
    said = r.stdout + r.stderr
    assert r.returncode != 0 and "ResolutionImpossible" in said and f"The user requested (constraint) torch=={INSTALLED_TORCH}" in said, said
    assert installed(py) == after
    # A torch-universal build's line: any torch, the user's kept.
    r = run_line(pages["img2gray"][0][("any torch", "noarch")]["install"]["install-line"], py, tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    assert installed(py)["torch"] == INSTALLED_TORCH and "+" not in installed(py)["img2gray"]

    # What the cell indexes avoid: the flat simple/ offers every build, pip takes the highest label and replaces torch.
    flat = user_venv(tmp_path / "venv-flat", torch)
    r = run_line(f"python -m pip install --index-url '{site_url}/simple/' --extra-index-url '{deps_url}/simple/' relu", flat, tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    assert installed(flat)["torch"] == "2.9.0" and installed(flat)["relu"].endswith("+torch2.9.cu130")

    # The home page says which index to point pip at, and what simple/ is for.
    home, home_shot = render(f"{site_url}/index.html", tmp_path, "1400,1000")
    assert 'class="howto"' in home.html and "torchX.Y-cuNNN/simple/" in home.html
    for sub in ("torch2.7-cu126", "torch2.9-cu130"):
        assert f'href="{sub}/simple/"' in home.html
    assert "kwheel pin" in home.html and "can replace your torch" in home.html
    if os.environ.get("KWHEEL_FIRST_HOUR_SCREENSHOTS"):  # docs/images/kernel-page-install.png and index-install.png are made this way
        shutil.copyfile(pages["relu"][1], Path(os.environ["KWHEEL_FIRST_HOUR_SCREENSHOTS"]) / "kernel-page-install.png")
        shutil.copyfile(home_shot, Path(os.environ["KWHEEL_FIRST_HOUR_SCREENSHOTS"]) / "index-install.png")


# --------------------------------------------------------------------------- install lines: --deps-index-url or PyPI (#37, 7)

PYPI = "https://pypi.org/simple/"
MIRROR = "https://mirror.example.com/pypi/simple/"  # only written into the lines, never fetched


def install_lines(page: Path, work: Path) -> dict[tuple[str, str], str]:
    """(row, column) -> the install line of that cell, as Chromium renders the kernel page. The
    torch-universal column ("noarch") has no index of its own: its line takes everything else from
    the dependencies' index alone."""
    dom, _ = render(page, work)
    [table] = dom.kernels.values()
    return {(row["header"], column): cell["install"]["install-line"]
            for row in table["rows"] for column, cell in zip(table["columns"], row["cells"]) if cell["class"] == "cell"}


def howto(site: Path, work: Path) -> str:
    """The home page's "Installing" note, as rendered."""
    dom, _ = render(site / "index.html", work)
    m = re.search(r'<div class="howto">(.*?)</div>', dom.html, re.S)
    assert m, dom.html[:2000]
    return m.group(1)


@needs_chromium
def test_install_lines_name_the_deps_index_given_and_pypi_only_without_one(kwheel_bin, dist, tmp_path):
    wheels = sorted(dist.glob("img2gray-*.whl"))
    plain, mirrored = tmp_path / "plain", tmp_path / "mirrored"
    assert kwheel(kwheel_bin, "index", *wheels, "--out", plain).returncode == 0
    r = kwheel(kwheel_bin, "index", *wheels[:-1], "--out", mirrored, "--deps-index-url", MIRROR, "--json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["deps_index"] == MIRROR

    lines = install_lines(plain / "kernels" / "img2gray.html", tmp_path / "plain-render")
    assert len(lines) == 5  # every cell of img2gray in KERNELS
    for (row, column), line in lines.items():
        where = f"--index-url '{PYPI}'" if column == "noarch" else f"--extra-index-url '{PYPI}'"
        assert where in line, (row, column, line)
    note = howto(plain, tmp_path / "plain-render")
    assert "PyPI" in note and "mirror.example.com" not in note

    # A later run without --deps-index-url keeps the mirror, as a later run without --title keeps the title.
    r = kwheel(kwheel_bin, "index", wheels[-1], "--out", mirrored)
    assert r.returncode == 0, r.stderr
    lines = install_lines(mirrored / "kernels" / "img2gray.html", tmp_path / "mirrored-render")
    assert len(lines) == 5
    for (row, column), line in lines.items():
        where = f"--index-url '{MIRROR}'" if column == "noarch" else f"--extra-index-url '{MIRROR}'"
        assert where in line and "pypi.org" not in line, (row, column, line)
    note = howto(mirrored, tmp_path / "mirrored-render")
    assert MIRROR in note and "PyPI" not in note and "pypi.org" not in note, note


# --------------------------------------------------------------------------- a quote cannot break out of an install line (#38, 5)
#
# The lines are pasted into a shell. A `'` in --base-url, or in the path the
# site is served from (which the page's script fills in), used to close the
# shell quote, and the `$(...)` after it ran. Here the lines are rendered by
# Chromium and pasted into `bash -c`, whose `python` is a stand-in recording
# its argv, and `pwned` a command that records that it ran.

HOSTILE_DIR = "a'$(pwned)'b"  # Chromium keeps both ' and $( ) raw in a URL's path

FAKE_PYTHON = """#!{python}
import json, os, sys
with open(os.environ["ARGV_LOG"], "a") as f:
    f.write(json.dumps(sys.argv[1:]) + "\\n")
"""


def paste(line: str, work: Path) -> tuple[list[list[str]], bool]:
    """`line` run by bash as pasted: the argv each `python` got, and whether `pwned` ran."""
    fake = work / "fakebin"
    fake.mkdir(exist_ok=True)
    (fake / "python").write_text(FAKE_PYTHON.format(python=sys.executable))
    (fake / "pwned").write_text('#!/bin/sh\necho ran >> "$PWNED_LOG"\n')
    for f in fake.iterdir():
        f.chmod(0o755)
    argv_log, pwned_log = work / "argv.log", work / "pwned.log"
    for f in (argv_log, pwned_log):
        f.unlink(missing_ok=True)
    env = {"PATH": f"{fake}{os.pathsep}/usr/bin{os.pathsep}/bin", "ARGV_LOG": str(argv_log), "PWNED_LOG": str(pwned_log)}
    subprocess.run(["bash", "-c", line], cwd=work, env=env, capture_output=True, text=True, timeout=60)
    calls = [json.loads(x) for x in argv_log.read_text().splitlines()] if argv_log.exists() else []
    return calls, pwned_log.exists()


def rendered_lines(url: str, work: Path) -> dict[str, str]:
    """column -> the install line of relu's cell, as Chromium renders the page (scripts run)."""
    r = chromium(["--dump-dom", url], work / "profile-quote")
    assert r.returncode == 0 and "<table" in r.stdout, r.stderr[-2000:]
    dom = MatrixDom()
    dom.feed(r.stdout)
    [table] = dom.kernels.values()
    return {column: cell["install"]["install-line"]
            for row in table["rows"] for column, cell in zip(table["columns"], row["cells"]) if cell["class"] == "cell"}


def assert_one_argument_each(lines: dict[str, str], base: str, work: Path) -> None:
    assert set(lines) == {"cu130", "noarch"}, lines
    for column, line in lines.items():
        calls, pwned = paste(line, work)
        assert not pwned, f"pasting the {column} line ran an injected command: {line}"
        assert calls[0] == ["-m", "pip", "list", "--format=freeze"], calls
        install = calls[1]
        assert install[:5] == ["-m", "pip", "install", "-c", "torch-pin.txt"], install
        if column == "cu130":
            assert install[5:] == ["--index-url", f"{base}/torch2.9-cu130/simple/", "--extra-index-url", PYPI, "relu==1.0.0+torch2.9.cu130"], install
        else:
            [wheel] = [w.name for w in Path(work / "wheels").glob("relu-*-py3-none-any.whl")]
            assert install[5:] == ["--index-url", PYPI, f"relu @ {base}/files/{wheel.replace('+', '%2B')}"], install


@needs_chromium
def test_a_quote_in_the_served_path_stays_inside_the_pasted_line(kwheel_bin, dist, tmp_path, serve):
    (tmp_path / "wheels").mkdir()
    for w in dist.glob("relu-*.whl"):
        shutil.copy(w, tmp_path / "wheels")
    root = tmp_path / "served"
    site = root / HOSTILE_DIR / "site"
    site.parent.mkdir(parents=True)
    r = kwheel(kwheel_bin, "index", tmp_path / "wheels", "--out", site)
    assert r.returncode == 0, r.stderr
    base = f"{serve(root)}/{HOSTILE_DIR}/site"
    assert_one_argument_each(rendered_lines(f"{base}/kernels/relu.html", tmp_path), base, tmp_path)


@needs_chromium
def test_a_quote_in_the_base_url_stays_inside_the_pasted_line(kwheel_bin, dist, tmp_path):
    (tmp_path / "wheels").mkdir()
    for w in dist.glob("relu-*.whl"):
        shutil.copy(w, tmp_path / "wheels")
    base = f"https://kernels.example.org/{HOSTILE_DIR}/site"
    site = tmp_path / "site"
    r = kwheel(kwheel_bin, "index", tmp_path / "wheels", "--out", site, "--base-url", base + "/")
    assert r.returncode == 0, r.stderr
    assert_one_argument_each(rendered_lines((site / "kernels" / "relu.html").as_uri(), tmp_path), base, tmp_path)


@pytest.mark.parametrize("option", ["--base-url", "--deps-index-url"])
@pytest.mark.parametrize("bad", ["https://h/a\nb/", "https://h/a\rb/", "https://h/\x1b[201~/", "https://h/\u0085/", "https://h/a b/"],
                         ids=["newline", "cr", "esc", "c1", "space"])
def test_a_url_no_pasted_line_can_hold_is_refused_naming_it(kwheel_bin, dist, tmp_path, option, bad):
    site = tmp_path / "site"
    r = kwheel(kwheel_bin, "index", next(dist.glob("relu-*.whl")), "--out", site, option, bad)
    assert r.returncode == 2, r.stdout + r.stderr
    (line,) = r.stderr.splitlines()
    assert line.startswith(f"kwheel: error: {option} holds ") and "percent-encode" in line, line
    assert not site.exists()


# --------------------------------------------------------------------------- signatures on the pages and the console (#37, 7)

sys.path.insert(0, str(ROOT / "tests" / "sigstore"))
import instance as si  # noqa: E402  (tests/sigstore/instance.py: the test Sigstore instance)


def planted(wheel: Path, member: str, data: bytes) -> None:
    """`wheel` with one file added and RECORD rewritten to match, as someone who can write the wheel
    would: only the signature chain (metadata.json's digest) can tell."""
    rewrite_wheel(wheel, lambda members, dist_info: members.__setitem__(member, data))


@pytest.fixture(scope="module")
def signed_dist(kwheel_bin, tmp_path_factory) -> tuple[Path, Path]:
    """Three pure-Python kernels: `trusted` (signed by the signer kernels trusts by default), `unsigned`, and
    `broken` (signed, then a file planted in its wheel). Returns the wheels' directory and the
    test instance's trusted root."""
    work = tmp_path_factory.mktemp("signed-site")
    inst = si.SigstoreInstance()
    root = work / "trusted_root.json"
    root.write_text(json.dumps(inst.trusted_root()))
    sign = lambda b: si.bundle_bytes(inst.sign(b))  # noqa: E731
    for name, signer in (("trusted", sign), ("unsigned", None), ("broken", sign)):
        repo = work / name
        kr.write_variant(repo, "torch-cpu", layout="flat", name=name, files=kr.demo_package(name, name), sign=signer)
        r = kwheel(kwheel_bin, "build", repo, "--version", "1", "-o", work / "dist", "--trusted-root", root, "-q")
        assert r.returncode == 0, r.stdout + r.stderr
    [broken] = (work / "dist").glob("broken-*.whl")
    planted(broken, "broken/planted.py", b"import os  # planted\n")
    return work / "dist", root


PROBE = """<!DOCTYPE html><html><body><pre id="out"></pre>
<script>
const frames = %s;
const found = {};
for (const page of frames) {
  const f = document.createElement('iframe');
  f.src = page;
  f.addEventListener('load', () => {
    const d = f.contentDocument;
    found[page] = [...d.querySelectorAll('.signer')].map(e => ({text: e.textContent, classes: [...e.classList], color: getComputedStyle(e).color}));
    document.getElementById('out').textContent = JSON.stringify(found);
  });
  document.body.appendChild(f);
}
</script></body></html>
"""


def computed_signers(site_url: str, pages: list[str], serve_root: Path, work: Path) -> dict[str, list[dict]]:
    """Per page, each signature span's text, classes and computed colour, read by Chromium itself: a
    probe page of the same origin frames the site's pages (an iframe's load precedes its parent's,
    after which --dump-dom dumps)."""
    (serve_root / "probe.html").write_text(PROBE % json.dumps(pages))
    r = chromium(["--dump-dom", f"{site_url}/probe.html"], work / "profile-probe")
    assert r.returncode == 0, r.stderr[-2000:]
    m = re.search(r'<pre id="out">(.*?)</pre>', r.stdout, re.S)
    assert m and m.group(1), r.stdout[-2000:]
    import html
    return json.loads(html.unescape(m.group(1)))


def rgb(colour: str) -> tuple[int, int, int]:
    m = re.fullmatch(r"rgba?\((\d+), (\d+), (\d+)(?:, [\d.]+)?\)", colour)
    assert m, colour
    return int(m.group(1)), int(m.group(2)), int(m.group(3))


@needs_chromium
def test_invalid_signatures_are_red_unsigned_grey_and_both_warned(kwheel_bin, signed_dist, tmp_path, serve):
    dist, root = signed_dist
    wheel = {p.name.split("-")[0]: p.name for p in dist.glob("*.whl")}
    site = tmp_path / "www" / "site"
    r = kwheel(kwheel_bin, "index", dist, "--out", site, "--trusted-root", root, "--json")
    assert r.returncode == 0, r.stderr
    report = json.loads(r.stdout)
    by_file = {w["filename"]: w for w in report["signature_warnings"]}
    assert set(by_file) == {wheel["unsigned"], wheel["broken"]}, report["signature_warnings"]
    assert by_file[wheel["unsigned"]]["signature"] == "unsigned" and "metadata.json.sigstore" in by_file[wheel["unsigned"]]["reason"]
    assert by_file[wheel["broken"]]["signature"] == "invalid" and "planted.py" in by_file[wheel["broken"]]["reason"]
    # The console (test_an_invalid_signature_warns_on_its_own_and_unsigned_is_counted): the invalid one warns.
    q = kwheel(kwheel_bin, "index", dist, "--out", tmp_path / "site-q", "--trusted-root", root, "-q")
    assert q.returncode == 0 and q.stdout == "", q.stderr
    [broken_line] = q.stderr.splitlines()
    assert broken_line.startswith(f"kwheel: warning: {wheel['broken']}: invalid signature: ") and "planted.py" in broken_line, q.stderr

    site_url = serve(tmp_path / "www")
    pages = [f"site/kernels/{name}.html" for name in ("trusted", "unsigned", "broken")]
    found = computed_signers(site_url, pages, tmp_path / "www", tmp_path)
    [signed], [unsigned], [broken] = (found[p] for p in pages)
    assert signed["text"].startswith(f"signed by {si.Identity().san_uri}") and "sig-trusted" in signed["classes"]
    assert unsigned["text"] == "unsigned" and "sig-unsigned" in unsigned["classes"]
    assert broken["text"].startswith("invalid: digest: ") and "planted.py" in broken["text"] and "sig-invalid" in broken["classes"]
    r_, g, b = rgb(signed["color"])
    assert g > r_ + 40 and g > b + 40, signed  # green
    r_, g, b = rgb(broken["color"])
    assert r_ > g + 100 and r_ > b + 100, broken  # red
    r_, g, b = rgb(unsigned["color"])
    assert max(r_, g, b) - min(r_, g, b) <= 24, unsigned  # grey: neither green nor red


def test_an_invalid_signature_warns_on_its_own_and_unsigned_is_counted(kwheel_bin, signed_dist, tmp_path):
    """Of trusted, unsigned and broken: the broken wheel's signature is a warning of its own, with -q too;
    the unsigned one is neutral, one line counting it (none with -q), listed with --verbose."""
    dist, root = signed_dist
    wheel = {p.name.split("-")[0]: p.name for p in dist.glob("*.whl")}
    for args in ([], ["-q"], ["--verbose"]):
        r = kwheel(kwheel_bin, "index", dist, "--out", tmp_path / f"site{len(args)}{''.join(args)}", "--trusted-root", root, *args)
        assert r.returncode == 0, r.stderr
        lines = r.stderr.splitlines()
        warnings = [ln for ln in lines if ln.startswith("kwheel: warning: ")]
        assert len(warnings) == 1 and wheel["broken"] in warnings[0], r.stderr
        assert "invalid signature" in warnings[0] and "planted.py" in warnings[0], warnings
        assert not any(wheel["trusted"] in ln for ln in lines), r.stderr
        counted = [ln for ln in lines if ln.startswith("unsigned: 1 of the site's 3 wheels has no ")]
        listed = [ln for ln in lines if ln.startswith(f"unsigned: {wheel['unsigned']}: ")]
        if args == ["-q"]:
            assert lines == warnings and r.stdout == "", r.stderr
        else:
            assert len(counted) == 1 and ("--verbose" in counted[0]) == (args == []), r.stderr
            assert len(listed) == (1 if args else 0) and "metadata.json.sigstore" in "".join(listed or ["metadata.json.sigstore"]), r.stderr


@pytest.fixture(scope="module")
def unsigned_dist(kwheel_bin, tmp_path_factory) -> Path:
    """52 unsigned kernel wheels (a metadata.json, no metadata.json.sigstore): 13 variants of one kernel,
    three pure-Python and ten CPU builds for five torch versions on two arches, built as 4 versions."""
    work = tmp_path_factory.mktemp("unsigned-site")
    variants = {"torch-universal": None, "torch-cpu": None, "torch-cuda": None,
                **{f"torch{t}-cxx11-cpu-{arch}-linux": [] for t in (27, 28, 29, 210, 211) for arch in ("x86_64", "aarch64")}}
    repo = write_repo(work / "img2gray", "img2gray", variants)
    for version in ("1.0", "1.1", "1.2", "1.3"):
        r = kwheel(kwheel_bin, "build", repo, "-o", work / "dist", "--version", version, "-q")
        assert r.returncode == 0, r.stdout + r.stderr
    assert len(list((work / "dist").glob("*.whl"))) == 4 * len(variants)
    return work / "dist"


def test_a_site_of_unsigned_wheels_prints_one_line_for_them(kwheel_bin, unsigned_dist, tmp_path):
    """Unsigned is neutral: one line counts the site's unsigned wheels, on the first run and on every run
    after (the wheels already in the site too); --verbose lists each, --json has each, -q prints nothing."""
    wheels = sorted(p.name for p in unsigned_dist.glob("*.whl"))
    site = tmp_path / "site"
    for run in ("first", "again"):
        r = kwheel(kwheel_bin, "index", unsigned_dist, "-o", site)
        assert r.returncode == 0, r.stderr
        lines = r.stderr.splitlines()
        assert not any(ln.startswith("kwheel: warning: ") for ln in lines), r.stderr[:2000]
        assert not any(w in r.stderr for w in wheels), (run, r.stderr[:2000])
        counted = [ln for ln in lines if ln.startswith("unsigned")]
        assert counted == [f"unsigned: {len(wheels)} of the site's {len(wheels)} wheels have no Sigstore signature by a trusted signer; "
                           "--verbose lists them"], (run, r.stderr[:2000])
        assert len(lines) <= 3, (run, r.stderr[:2000])  # the count, the site's summary line, nothing per wheel
    v = kwheel(kwheel_bin, "index", unsigned_dist, "-o", site, "--verbose")
    assert v.returncode == 0, v.stderr
    listed = [ln for ln in v.stderr.splitlines() if ln.startswith("unsigned: ") and ln.endswith(": it has no metadata.json.sigstore")]
    assert sorted(ln.split(": ")[1] for ln in listed) == wheels, v.stderr[:2000]
    assert not any(ln.startswith("kwheel: warning: ") for ln in v.stderr.splitlines()), v.stderr[:2000]
    j = kwheel(kwheel_bin, "index", unsigned_dist, "-o", site, "--json")
    assert j.returncode == 0 and j.stderr == "", j.stderr[:2000]
    report = json.loads(j.stdout)
    assert sorted(w["filename"] for w in report["signature_warnings"]) == wheels
    assert {w["signature"] for w in report["signature_warnings"]} == {"unsigned"}
    assert sorted(report["unchanged"]) == wheels and report["added"] == []
    q = kwheel(kwheel_bin, "index", unsigned_dist, "-o", site, "-q")
    assert q.returncode == 0 and q.stdout == "" and q.stderr == "", q.stderr[:2000]
