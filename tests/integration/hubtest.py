"""Helpers for tests (and bench/) that drive the kwheel binary against the fixture Hub.

    from hubtest import KWHEEL, kwheel, kernel_files, read_wheel, check_record, check_cache

Standard library only, so bench/ can use it outside pytest.
"""

from __future__ import annotations

import base64
import csv
import email.parser
import hashlib
import io
import json
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "hub"))
import fixture as hubfix  # noqa: E402  (tests/hub/fixture.py)

KWHEEL = os.environ.get("KWHEEL_BIN") or str(ROOT / "build" / "kwheel")


# --------------------------------------------------------------------------- content


def blob(seed: str, n: int) -> bytes:
    """Deterministic, incompressible-ish bytes (sha256 stream)."""
    out, i = bytearray(), 0
    while len(out) < n:
        out += hashlib.sha256(f"{seed}:{i}".encode()).digest()
        i += 1
    return bytes(out[:n])


_ELF_BASE: bytes | None = None


def elf_base() -> bytes:
    """A real (tiny) ELF shared object, compiled once; synthetic bytes if no C compiler."""
    global _ELF_BASE
    if _ELF_BASE is None:
        cc = shutil.which("cc") or shutil.which("gcc")
        data = None
        if cc:
            with tempfile.TemporaryDirectory() as d:
                src = Path(d) / "k.c"
                src.write_text("int img2gray_kernel(int x) { return x * 3 / 4; }\n")
                out = Path(d) / "k.so"
                r = subprocess.run([cc, "-shared", "-fPIC", "-O1", "-s", "-o", str(out), str(src)],
                                   capture_output=True)
                if r.returncode == 0:
                    data = out.read_bytes()
        _ELF_BASE = data or (b"\x7fELF\x02\x01\x01" + b"\0" * 9 + blob("elf", 4000))
    return _ELF_BASE


def kernel_files(variant: str, rev: str, *, so_size: int = 48_000, name: str = "img2gray") -> dict[str, bytes]:
    """The files of one Hub-layout variant: build/<variant>/<name>/... plus a metadata.json beside it.

    `rev` changes the variant's content; the same (variant, rev) always gives the same bytes.
    """
    ops = hashlib.sha256(f"{variant}{rev}".encode()).hexdigest()[:7]
    so = elf_base() + blob(f"{variant}:{rev}", so_size)
    meta = {"name": name, "version": 1, "license": "Apache-2.0", "python-depends": []}
    p = f"build/{variant}/{name}"
    files = {
        f"{p}/__init__.py": f"from ._ops import ops\n\n__all__ = ['ops']\n".encode(),
        f"{p}/_ops.py": (f"import torch\nfrom . import _{name}_{ops}\nops = torch.ops._{name}_{ops}\n\n"
                         f"def add_op_namespace_prefix(op_name: str):\n    return f\"_{name}_{ops}::{{op_name}}\"\n").encode(),
        f"{p}/layers/__init__.py": f"# layers of {name} ({rev})\nclass Img2Gray:\n    pass\n".encode(),
        f"build/{variant}/metadata.json": json.dumps(meta, sort_keys=True).encode(),
    }
    if variant != "torch-universal":  # pure Python: no binary
        files[f"{p}/_{name}_{ops}.abi3.so"] = so
    return files


def write_tree(dst: Path, files: dict[str, bytes]) -> Path:
    for rel, data in files.items():
        p = Path(dst) / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(data)
    return Path(dst)


# --------------------------------------------------------------------------- running kwheel


@dataclass
class Run:
    args: list
    returncode: int
    stdout: str
    stderr: str
    json: dict | None = None

    @property
    def output(self) -> str:
        return self.stdout + self.stderr

    def __str__(self) -> str:
        return f"kwheel {' '.join(map(str, self.args))} -> {self.returncode}\nstdout:\n{self.stdout}\nstderr:\n{self.stderr}"


def clean_env(home: Path | None = None, **extra) -> dict:
    """The environment minus everything HF_* / proxy related, HF_HOME in `home`."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("HF_", "HUGGINGFACE_", "KWHEEL_")) and k.lower() not in
           ("http_proxy", "https_proxy", "all_proxy", "no_proxy")}
    env["NO_PROXY"] = env["no_proxy"] = "127.0.0.1,localhost"
    if home is not None:
        env["HF_HOME"] = str(home)
    env.setdefault("SOURCE_DATE_EPOCH", "1735689600")
    env.update({k: str(v) for k, v in extra.items()})
    return env


def kwheel(*args, env: dict | None = None, cwd=None, timeout: float = 120, json_out: bool = True) -> Run:
    """Runs the kwheel binary; with json_out, adds --json and parses stdout."""
    argv = [str(a) for a in args]
    if json_out and "--json" not in argv:
        argv.append("--json")
    r = subprocess.run([KWHEEL, *argv], env=env if env is not None else clean_env(), cwd=cwd,
                       capture_output=True, text=True, timeout=timeout)
    run = Run(argv, r.returncode, r.stdout, r.stderr)
    if json_out and r.stdout.strip():
        try:
            run.json = json.loads(r.stdout)
        except ValueError:
            run.json = None
    return run


def warnings(stderr: str) -> list[str]:
    """kwheel's warning lines, less the notice naming unsigned variants that every build of an
    unsigned fixture kernel prints (test_signatures.py asserts that notice itself)."""
    return [ln for ln in stderr.splitlines() if ln.startswith("kwheel: warning:") and " unsigned (no metadata.json.sigstore)" not in ln]


def wheel_shas(run: Run) -> dict[str, str]:
    """{filename: sha256} of the wheels a --json build report lists as built."""
    assert run.json is not None, str(run)
    return {v["filename"]: v["sha256"] for v in run.json["variants"] if v["status"] == "built"}


def sha256_file(path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def dir_shas(d: Path) -> dict[str, str]:
    """{name: sha256} of every entry of an output directory; anything but plain files fails,
    except kwheel's own `.kwheel/` bookkeeping directory (which must hold no wheel)."""
    d = Path(d)
    if not d.exists():
        return {}
    out = {}
    for p in sorted(d.iterdir()):
        if p.name == ".kwheel" and p.is_dir() and not p.is_symlink():
            assert not list(p.rglob("*.whl")), f"a wheel inside {p}"
            continue
        assert p.is_file() and not p.is_symlink(), f"unexpected entry in {d}: {p.name}"
        out[p.name] = sha256_file(p)
    return out


# --------------------------------------------------------------------------- wheels


@dataclass
class Wheel:
    path: Path
    files: dict[str, bytes] = field(default_factory=dict)   # every archive member
    dist_info: str = ""
    metadata: list[tuple[str, str]] = field(default_factory=list)  # (field, value) in order
    wheel: list[tuple[str, str]] = field(default_factory=list)

    def meta(self, key: str) -> list[str]:
        return [v for k, v in self.metadata if k.lower() == key.lower()]

    def package_files(self) -> dict[str, bytes]:
        return {n: b for n, b in self.files.items() if not n.startswith(self.dist_info + "/")}


def _headers(data: bytes) -> list[tuple[str, str]]:
    msg = email.parser.BytesParser().parsebytes(data)
    return [(k, str(v)) for k, v in msg.items()]


def read_wheel(path) -> Wheel:
    path = Path(path)
    w = Wheel(path)
    with zipfile.ZipFile(path) as z:
        for info in z.infolist():
            if info.is_dir():
                continue
            w.files[info.filename] = z.read(info)
    infos = {n.split("/")[0] for n in w.files if n.split("/")[0].endswith(".dist-info") and "/" in n}
    assert len(infos) == 1, f"{path.name}: dist-info directories {sorted(infos)}"
    w.dist_info = infos.pop()
    w.metadata = _headers(w.files[f"{w.dist_info}/METADATA"])
    w.wheel = _headers(w.files[f"{w.dist_info}/WHEEL"])
    return w


def check_record(path) -> int:
    """Verifies a wheel's RECORD: every member listed once with the right sha256 and size,
    RECORD itself listed without a hash. Returns the number of members checked."""
    w = read_wheel(path)
    rec_name = f"{w.dist_info}/RECORD"
    assert rec_name in w.files, f"{Path(path).name}: no RECORD"
    rows = list(csv.reader(io.StringIO(w.files[rec_name].decode())))
    listed = {}
    for row in rows:
        assert len(row) == 3, f"{Path(path).name}: bad RECORD row {row}"
        assert row[0] not in listed, f"{Path(path).name}: {row[0]} listed twice in RECORD"
        listed[row[0]] = row
    assert set(listed) == set(w.files), (
        f"{Path(path).name}: RECORD lists {sorted(set(listed) ^ set(w.files))} wrongly")
    for name, data in w.files.items():
        _, digest, size = listed[name]
        if name == rec_name:
            assert digest == "" and size == "", f"{Path(path).name}: RECORD lists a hash for itself"
            continue
        want = "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        assert digest == want, f"{Path(path).name}: {name} hash {digest} != {want}"
        assert size == str(len(data)), f"{Path(path).name}: {name} size {size} != {len(data)}"
    return len(w.files)


def hub_revision_url(repo: str, commit: str, repo_type: str = "kernel") -> str:
    """The "Hub revision" Project-URL kwheel records in a Hub build's METADATA: the commit's tree
    page on huggingface.co, whatever endpoint (a mirror, this fixture) the build used, so that the
    bytes are a function of the commit alone."""
    return f"https://huggingface.co/{'kernels/' if repo_type == 'kernel' else ''}{repo}/tree/{commit}"


def assert_hub_wheel_matches_directory_wheel(hub_whl, dir_whl, url: str) -> None:
    """One writer: a wheel built from the Hub holds the very bytes of the wheel built from the
    commit's directory, except for one METADATA line, `Project-URL: Hub revision, <url>`, the repo
    id and commit in hub_kernel.json (null for a directory build without --repo-id), and RECORD's
    rows for those two files (whose hashes and sizes they change)."""
    hw, dw = read_wheel(hub_whl), read_wheel(dir_whl)
    check_record(hub_whl)
    assert Path(hub_whl).name == Path(dir_whl).name
    assert hw.dist_info == dw.dist_info and set(hw.files) == set(dw.files), (sorted(hw.files), sorted(dw.files))
    meta, rec, origin = f"{hw.dist_info}/METADATA", f"{hw.dist_info}/RECORD", f"{hw.dist_info}/hub_kernel.json"
    for name in hw.files:
        if name not in (meta, rec, origin):
            assert hw.files[name] == dw.files[name], f"{Path(hub_whl).name}: {name} differs from the directory build"
    head, _, commit = url.partition("/tree/")
    repo = "/".join(head.split("/")[-2:])
    ho, do = json.loads(hw.files[origin]), json.loads(dw.files[origin])
    assert (ho.pop("repo_id"), ho.pop("revision"), do.pop("repo_id"), do.pop("revision")) == (repo, commit, None, None)
    assert ho == do
    line = f"Project-URL: Hub revision, {url}\n".encode()
    assert hw.files[meta].count(line) == 1, (line, hw.files[meta].decode())
    assert hw.files[meta].replace(line, b"") == dw.files[meta], (hw.files[meta].decode(), dw.files[meta].decode())
    hrows = [r for r in hw.files[rec].decode().splitlines() if not r.startswith((meta + ",", origin + ","))]
    drows = [r for r in dw.files[rec].decode().splitlines() if not r.startswith((meta + ",", origin + ","))]
    assert hrows == drows


def assert_like_directory_build(run: Run, out, dir_out, repo: str) -> None:
    """Every wheel of a Hub build (`run`, its -o `out`) is the wheel of the same name that a build
    of the commit's directory wrote to `dir_out`, plus the "Hub revision" Project-URL of the commit
    and repo type the build reports; both -o hold the same wheel names and nothing else."""
    assert run.json is not None, str(run)
    src = run.json["source"]
    url = hub_revision_url(repo, src["commit"], src["repo_type"])
    out, dir_out = Path(out), Path(dir_out)
    assert set(dir_shas(out)) == set(dir_shas(dir_out)) == set(wheel_shas(run)), str(run)
    for name in dir_shas(out):
        assert_hub_wheel_matches_directory_wheel(out / name, dir_out / name, url)


# --------------------------------------------------------------------------- the HF cache


def git_blob_oid_file(path) -> str:
    size = os.path.getsize(path)
    h = hashlib.sha1(b"blob %d\0" % size)
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def check_cache(cache_dir) -> dict[str, int]:
    """Every blob of every repo in an HF cache holds what its name (etag) says: sha256 for
    64-hex names (LFS), git blob id for 40-hex names. Every snapshot link points at a blob.
    Returns {"blobs": n, "incomplete": n, "links": n}."""
    counts = {"blobs": 0, "incomplete": 0, "links": 0}
    cache_dir = Path(cache_dir)
    if not cache_dir.exists():
        return counts
    for repo in cache_dir.iterdir():
        if not repo.is_dir() or repo.name.startswith("."):
            continue
        blobs = repo / "blobs"
        for b in (sorted(blobs.iterdir()) if blobs.is_dir() else []):
            if b.name.endswith(".incomplete"):
                counts["incomplete"] += 1
                continue
            assert b.is_file() and not b.is_symlink(), f"{b}: not a plain file"
            if len(b.name) == 64:
                got = sha256_file(b)
            elif len(b.name) == 40:
                got = git_blob_oid_file(b)
            else:
                raise AssertionError(f"{b}: blob name is neither a sha256 nor a git blob id")
            assert got == b.name, f"corrupt blob in the cache: {b} holds {got}"
            counts["blobs"] += 1
        snaps = repo / "snapshots"
        for link in (snaps.rglob("*") if snaps.is_dir() else []):
            if link.is_symlink():
                target = (link.parent / os.readlink(link)).resolve()
                assert target.parent == (repo / "blobs").resolve() and target.is_file(), f"{link} -> {target}"
                counts["links"] += 1
    return counts


def cached_blob_names(cache_dir) -> set[str]:
    return {b.name for b in Path(cache_dir).glob("*/blobs/*") if not b.name.endswith(".incomplete")}
