"""`kwheel index DIST -o SITE` on a site that already holds most of DIST, as a nightly job runs it:
the wheels the site holds are not read again (counted through the KWHEEL_TEST_OPEN_LOG seam,
which appends every wheel kwheel opens or hashes to a file), the pages whose bytes did not change
keep their file and mtime, the site's files are never rewritten and, by default, links of DIST's
(each link serves the bytes its page's sha256 names; with --copy DIST and the site share no file),
a changed wheel under a published name is refused, and
a second run on the same site waits for the first (or, with --no-wait, fails in one line).

The wheels are real `kwheel build` outputs of kernel repos on disk (tests/hub/kernel_repos, a CUDA
.so with a real .nv_fatbin section from elfgen). What each page should hold is read here from the
pages and files themselves, never from kwheel's report.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import re
import resource
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "hub"))
import kernel_repos as kr  # noqa: E402
import zipbomb  # noqa: E402
from conftest import clean_env  # noqa: E402
from elfgen import cuda_shared_object, shared_object  # noqa: E402

IO = 7
INPUT = 3
BUILDS = {"torch29-cxx11-cu130-x86_64-linux": ["sm_90"], "torch29-cxx11-cpu-x86_64-linux": [], "torch-universal": None}


def kwheel(kwheel_bin, *args, log: Path | None = None) -> subprocess.CompletedProcess:
    env = clean_env(**({"KWHEEL_TEST_OPEN_LOG": str(log)} if log else {}))
    return subprocess.run([str(kwheel_bin), *map(str, args)], capture_output=True, text=True, env=env, timeout=300)


def build(kwheel_bin, work: Path, name: str, version: str, out: Path, salt: str = "") -> list[Path]:
    repo = work / f"{name}-{version}{salt}"
    for variant, targets in BUILDS.items():
        so = None if targets is None else cuda_shared_object(targets) if targets else shared_object("x86_64")
        kr.write_variant(repo, variant, layout="flat", name=name, files=kr.demo_package(name, variant + salt, so=so),
                         archs=[f"{t[3:-1]}.{t[-1]}" for t in targets] if targets else None, kernel_id=f"_{name}_0123abc" if so else None)
    before = set(out.glob("*.whl")) if out.exists() else set()
    r = kwheel(kwheel_bin, "build", repo, "--version", version, "-o", out, "-q")
    assert r.returncode == 0, r.stdout + r.stderr
    return sorted(set(out.glob("*.whl")) - before)


@pytest.fixture(scope="module")
def corpus(kwheel_bin, tmp_path_factory) -> dict[str, list[Path]]:
    work = tmp_path_factory.mktemp("update")
    made = {}
    for name, version, salt in [("relu", "0.1.0", ""), ("relu", "0.2.0", ""), ("gelu", "1.0.0", ""), ("relu", "0.1.0", "-rebuilt")]:
        made[f"{name}-{version}{salt}"] = build(kwheel_bin, work, name, version, work / "built" / f"{name}-{version}{salt}", salt)
    assert all(len(w) == len(BUILDS) for w in made.values()), made
    return made


def dist_of(tmp_path: Path, *groups: list[Path], name: str = "dist") -> Path:
    """DIST as a nightly job has it: every build so far, in one directory (hard links of the builds)."""
    d = tmp_path / name
    d.mkdir(exist_ok=True)
    for group in groups:
        for w in group:
            if not (d / w.name).exists():
                os.link(w, d / w.name)
    return d


def opened(log: Path) -> list[str]:
    lines = log.read_text().splitlines() if log.exists() else []
    log.unlink(missing_ok=True)
    return sorted(Path(p).name for p in lines)


def pages(site: Path) -> dict[str, os.stat_result]:
    return {str(p.relative_to(site)): p.stat() for p in site.rglob("*")
            if p.is_file() and not p.relative_to(site).parts[0] == "files" and p.name != "kwheel-index.json"}


def test_a_second_run_reads_no_wheel_the_site_holds(kwheel_bin, corpus, tmp_path):
    site, log = tmp_path / "site", tmp_path / "opened.log"
    first = corpus["relu-0.1.0"]
    r = kwheel(kwheel_bin, "index", dist_of(tmp_path, first), "-o", site, "-q", log=log)
    assert r.returncode == 0, r.stderr
    # The seam sees every wheel read: each new one at least once.
    assert set(opened(log)) == {w.name for w in first}
    # Tonight's builds join: only they are read.
    new = corpus["relu-0.2.0"]
    r = kwheel(kwheel_bin, "index", dist_of(tmp_path, first, new), "-o", site, "--json", log=log)
    assert r.returncode == 0, r.stderr
    assert set(opened(log)) == {w.name for w in new}
    assert sorted(json.loads(r.stdout)["added"]) == sorted(w.name for w in new)
    # Nothing new: nothing read, nothing written.
    before = {k: (v.st_ino, v.st_mtime_ns) for k, v in pages(site).items()}
    manifest = (site / "kwheel-index.json").stat()
    r = kwheel(kwheel_bin, "index", tmp_path / "dist", "-o", site, "--json", log=log)
    assert r.returncode == 0, r.stderr
    assert opened(log) == []
    assert sorted(json.loads(r.stdout)["unchanged"]) == sorted(w.name for w in first + new)
    assert {k: (v.st_ino, v.st_mtime_ns) for k, v in pages(site).items()} == before
    assert (site / "kwheel-index.json").stat().st_mtime_ns == manifest.st_mtime_ns


def test_a_copy_of_dist_is_recognised_without_reading_it_again(kwheel_bin, corpus, tmp_path):
    """With --copy the site's files are other inodes; the wheels given again are still not read."""
    site, log = tmp_path / "site", tmp_path / "opened.log"
    dist = dist_of(tmp_path, corpus["relu-0.1.0"])
    assert kwheel(kwheel_bin, "index", dist, "-o", site, "--copy", "-q").returncode == 0
    for w in dist.iterdir():
        assert not os.path.samefile(w, site / "files" / w.name)
    assert kwheel(kwheel_bin, "index", dist, "-o", site, "-q", log=log).returncode == 0
    assert opened(log) == []


def test_unchanged_pages_keep_their_bytes_and_mtimes(kwheel_bin, corpus, tmp_path):
    site = tmp_path / "site"
    assert kwheel(kwheel_bin, "index", dist_of(tmp_path, corpus["relu-0.1.0"]), "-o", site, "-q").returncode == 0
    before = {k: ((site / k).read_bytes(), v.st_mtime_ns, v.st_ino) for k, v in pages(site).items()}
    # Another kernel joins: relu's pages cannot change, the lists of projects must.
    assert kwheel(kwheel_bin, "index", dist_of(tmp_path, corpus["relu-0.1.0"], corpus["gelu-1.0.0"]), "-o", site, "-q").returncode == 0
    after = {k: ((site / k).read_bytes(), v.st_mtime_ns, v.st_ino) for k, v in pages(site).items()}
    relu_pages = [k for k in before if "/relu/" in f"/{k}" or k == "kernels/relu.html"]
    assert len(relu_pages) >= 4, sorted(before)
    for k in relu_pages:
        assert after[k][0] == before[k][0], k
    kept = [k for k in before if after[k][0] == before[k][0]]
    changed = [k for k in before if after[k][0] != before[k][0]]
    assert "simple/index.html" in changed and "index.html" in changed, changed
    for k in kept:  # same bytes: the same file, untouched
        assert after[k][1:] == before[k][1:], k
    assert any("gelu" in k for k in after) and not any("gelu" in k for k in before)


def served_links(site: Path) -> list[tuple[str, str]]:
    """(filename, sha256) of every link of every project page of the site."""
    out = []
    for page in site.rglob("index.html"):
        for href in re.findall(r'href="([^"]+#sha256=[0-9a-f]{64})"', page.read_text()):
            url, sha = href.split("#sha256=")
            out.append((url.rsplit("/", 1)[-1].replace("%2B", "+"), sha))
    return out


def test_site_files_are_links_and_each_serves_the_bytes_its_page_names(kwheel_bin, corpus, tmp_path):
    site = tmp_path / "site"
    dist = dist_of(tmp_path, corpus["relu-0.1.0"], corpus["relu-0.2.0"])
    r = kwheel(kwheel_bin, "index", dist, "-o", site, "--json")
    assert r.returncode == 0, r.stderr
    placed = json.loads(r.stdout)["placed"]
    for w in dist.iterdir():
        served = site / "files" / w.name
        if placed == "hard link":
            assert os.path.samefile(w, served), w.name
        else:  # a reflink: its own inode, the same bytes
            assert placed == "reflink" and served.read_bytes() == w.read_bytes()
    links = served_links(site)
    assert {f for f, _ in links} == {w.name for w in dist.iterdir()}
    for filename, sha in links:
        assert hashlib.sha256((site / "files" / filename).read_bytes()).hexdigest() == sha, filename
    # The next run's site: the same files (inodes) as the last one's, not copies.
    inodes = {p.name: p.stat().st_ino for p in (site / "files").iterdir()}
    more = dist_of(tmp_path, corpus["gelu-1.0.0"], name="more")
    assert kwheel(kwheel_bin, "index", more, "-o", site, "-q").returncode == 0
    assert {n: i for n, i in ((p.name, p.stat().st_ino) for p in (site / "files").iterdir()) if n in inodes} == inodes


def test_with_copy_dist_and_the_site_share_no_file(kwheel_bin, corpus, tmp_path):
    """--copy: a write into DIST's file in place cannot reach the site."""
    site = tmp_path / "site"
    dist = dist_of(tmp_path, corpus["relu-0.1.0"])
    r = kwheel(kwheel_bin, "index", dist, "-o", site, "--copy", "--json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["placed"] == "copy"
    for w in dist.iterdir():
        assert not os.path.samefile(w, site / "files" / w.name)
        assert (site / "files" / w.name).read_bytes() == w.read_bytes()


def test_by_default_the_site_links_dist_and_never_rewrites_a_file_it_holds(kwheel_bin, corpus, tmp_path):
    """No flag: each new site file is a link of DIST's (hard, on ext4; a reflink where the
    filesystem has them), and an update adds files beside the site's own, whose inodes and
    mtimes stay as they were (the site is updated in place, not rebuilt)."""
    site = tmp_path / "site"
    dist = dist_of(tmp_path, corpus["relu-0.1.0"])
    r = kwheel(kwheel_bin, "index", dist, "-o", site, "--json")
    assert r.returncode == 0, r.stderr
    placed = json.loads(r.stdout)["placed"]
    assert placed in ("hard link", "reflink"), placed
    for w in dist.iterdir():
        assert os.path.samefile(w, site / "files" / w.name) == (placed == "hard link"), w.name
    before = {p.name: (p.stat().st_ino, p.stat().st_mtime_ns) for p in (site / "files").iterdir()}
    site_inode = site.stat().st_ino
    r = kwheel(kwheel_bin, "index", dist_of(tmp_path, corpus["gelu-1.0.0"], name="more"), "-o", site, "-q")
    assert r.returncode == 0, r.stderr
    after = {p.name: (p.stat().st_ino, p.stat().st_mtime_ns) for p in (site / "files").iterdir()}
    assert {n: v for n, v in after.items() if n in before} == before
    assert set(after) - set(before) == {n for w in corpus["gelu-1.0.0"] for n in (w.name, w.name + ".metadata")}
    assert site.stat().st_ino == site_inode


def tree(site: Path) -> dict[str, bytes]:
    return {str(p.relative_to(site)): p.read_bytes() for p in sorted(site.rglob("*")) if p.is_file()}


def test_each_night_the_updated_site_is_the_site_a_run_from_scratch_writes(kwheel_bin, corpus, tmp_path):
    """Night by night, every file of the site updated in place (pages kept, pages written, the home
    page's sections of the kernels that did not change taken from last night's page) is the bytes a
    run from scratch over the same DIST writes."""
    site = tmp_path / "site"
    nights = [[corpus["relu-0.1.0"]], [corpus["relu-0.1.0"], corpus["gelu-1.0.0"]],
              [corpus["relu-0.1.0"], corpus["gelu-1.0.0"], corpus["relu-0.2.0"]]]
    for night, groups in enumerate(nights):
        dist = dist_of(tmp_path, *groups)
        r = kwheel(kwheel_bin, "index", dist, "-o", site, "-q")
        assert r.returncode == 0, r.stderr
        fresh = tmp_path / f"fresh-{night}"
        assert kwheel(kwheel_bin, "index", dist, "-o", fresh, "-q").returncode == 0
        assert tree(site) == tree(fresh), night
    home = (site / "index.html").read_text()
    assert home.index('<h2 id="gelu">') < home.index('<h2 id="relu">') and "relu 0.2.0" in home and "gelu 1.0.0" in home


def test_a_run_lists_a_few_files_and_pages_and_counts_the_rest(kwheel_bin, tmp_path):
    """A nightly run names every wheel and page of the site: people get the first ten of each kind
    and a count (--json lists them all)."""
    dist = tmp_path / "dist"
    for n in range(12):
        zipbomb.plain_wheel(dist, name=f"k{n:02d}", version="1.0")
    site = tmp_path / "site"

    def listed(r, label):
        lines = [ln for ln in r.stdout.splitlines() if ln.startswith(label + " ")]
        return [ln for ln in lines if "more (--json lists them all)" not in ln], [ln for ln in lines if "more (--json" in ln]

    r = kwheel(kwheel_bin, "index", dist, "-o", site)
    assert r.returncode == 0, r.stderr
    for label, more in (("added", 2), ("page", 3)):  # 12 wheels; a kernel page each and the home page
        shown, rest = listed(r, label)
        assert len(shown) == 10 and len(rest) == 1 and rest[0].split()[3] == str(more), r.stdout
    r = kwheel(kwheel_bin, "index", dist, "-o", site)
    shown, rest = listed(r, "unchanged")
    assert len(shown) == 10 and rest and rest[0].split()[3] == "2", r.stdout
    j = json.loads(kwheel(kwheel_bin, "index", dist, "-o", site, "--json").stdout)
    assert len(j["unchanged"]) == 12 and len(j["pages"]) == 13


def test_a_changed_wheel_under_a_published_name_is_refused(kwheel_bin, corpus, tmp_path):
    site = tmp_path / "site"
    first = corpus["relu-0.1.0"]
    assert kwheel(kwheel_bin, "index", dist_of(tmp_path, first), "-o", site, "--copy", "-q").returncode == 0
    before = tree(site)
    # The same version built again from other sources: other bytes under a published name.
    rebuilt = corpus["relu-0.1.0-rebuilt"][0]
    assert rebuilt.name == first[0].name and rebuilt.read_bytes() != first[0].read_bytes()
    r = kwheel(kwheel_bin, "index", rebuilt, "-o", site)
    assert r.returncode == INPUT, r.stdout + r.stderr
    (line,) = r.stderr.splitlines()
    assert first[0].name in line and "other bytes" in line and "publish a new version" in line, line
    assert tree(site) == before


def test_a_served_file_changed_in_place_is_found(kwheel_bin, corpus, tmp_path):
    """What the default link means: bytes written into DIST's file in place (not kwheel's temp name and
    rename) are the site's file too; the next run finds it changed and says so."""
    site = tmp_path / "site"
    dist = tmp_path / "dist"
    dist.mkdir()
    for w in corpus["relu-0.1.0"]:
        shutil.copy(w, dist / w.name)  # DIST's own files, which this test may overwrite
    r = kwheel(kwheel_bin, "index", dist, "-o", site, "--json")
    assert r.returncode == 0, r.stderr
    if json.loads(r.stdout)["placed"] != "hard link":
        pytest.skip("the site's files are not hard links here")
    victim = dist / corpus["relu-0.1.0"][0].name
    with open(victim, "r+b") as f:  # in place: the same inode
        f.seek(0, 2)
        f.write(b"\0")
    r = kwheel(kwheel_bin, "index", dist, "-o", site)
    assert r.returncode == INPUT, r.stdout + r.stderr
    (line,) = r.stderr.splitlines()
    assert "no longer matches the sha256" in line and victim.name in line, line


def test_a_second_run_waits_for_the_first_or_fails_in_one_line(kwheel_bin, corpus, tmp_path):
    site = tmp_path / "site"
    dist = dist_of(tmp_path, corpus["relu-0.1.0"])
    assert kwheel(kwheel_bin, "index", dist, "-o", site, "-q").returncode == 0
    before = tree(site)
    more = dist_of(tmp_path, corpus["relu-0.1.0"], corpus["relu-0.2.0"], name="more")
    # The lock another run holds (beside SITE, as kwheel takes it).
    with open(tmp_path / ".site.kwheel-lock", "a+") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        r = kwheel(kwheel_bin, "index", more, "-o", site, "--no-wait")
        assert r.returncode == IO, r.stdout + r.stderr
        (line,) = r.stderr.splitlines()
        assert "another kwheel index" in line and "--no-wait" in line, line
        p = subprocess.Popen([str(kwheel_bin), "index", str(more), "-o", str(site)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True, env=clean_env())
        try:
            waiting = p.stderr.readline()  # it says so, then blocks
            assert "waiting for another kwheel index" in waiting, waiting
            assert p.poll() is None and tree(site) == before
        finally:
            fcntl.flock(held, fcntl.LOCK_UN)
        out, err = p.communicate(timeout=120)
    assert p.returncode == 0, out + err
    assert all((site / "files" / w.name).exists() for w in corpus["relu-0.2.0"])


def test_pip_installs_tonights_build_from_the_updated_site(kwheel_bin, corpus, tmp_path, venv_python):
    site = tmp_path / "site"
    assert kwheel(kwheel_bin, "index", dist_of(tmp_path, corpus["relu-0.1.0"]), "-o", site, "-q").returncode == 0
    assert kwheel(kwheel_bin, "index", dist_of(tmp_path, corpus["relu-0.1.0"], corpus["relu-0.2.0"]), "-o", site, "-q").returncode == 0
    p = subprocess.run([str(venv_python), "-m", "pip", "install", "--dry-run", "--ignore-installed", "--no-deps", "--no-cache-dir", "-q",
                        "--report", "-", "--index-url", (site / "torch2.9-cpu" / "simple").as_uri(), "relu"],
                       capture_output=True, text=True, env=clean_env())
    assert p.returncode == 0, p.stdout + p.stderr
    (item,) = json.loads(p.stdout)["install"]
    assert item["metadata"]["version"].split("+")[0] == "0.2.0"


def test_variants_derive_only_new_builds(kwheel_bin, corpus, tmp_path):
    """--variants: the variant wheels of builds the site already held are the previous site's files
    (same inode, same mtime), not derived again, and those builds are not opened (the open log);
    tonight's builds get theirs, and the pages equal those of a site built in one run."""
    site = tmp_path / "site"
    r = kwheel(kwheel_bin, "index", dist_of(tmp_path, corpus["relu-0.1.0"]), "-o", site, "--variants", "--json")
    assert r.returncode == 0, r.stderr
    first = {w["filename"] for w in json.loads(r.stdout)["variant_index"]["wheels"]}
    assert first, r.stdout
    files = site / "variants" / "files"
    before = {p.name: (p.stat().st_ino, p.stat().st_mtime_ns) for p in files.iterdir() if p.name in first or p.name[:-9] in first}
    log = tmp_path / "opened.log"
    r = kwheel(kwheel_bin, "index", dist_of(tmp_path, corpus["relu-0.1.0"], corpus["relu-0.2.0"]), "-o", site, "--json", log=log)
    assert r.returncode == 0, r.stderr
    # Last night's builds are listed from the manifest: neither they nor their variant wheels are opened.
    assert set(opened(log)) == {w.name for w in corpus["relu-0.2.0"]}
    now = {w["filename"] for w in json.loads(r.stdout)["variant_index"]["wheels"]}
    assert first < now
    after = {p.name: (p.stat().st_ino, p.stat().st_mtime_ns) for p in files.iterdir()}
    assert {k: after[k] for k in before} == before
    for name in now:  # every variant wheel the page links is the bytes its sha256 names
        page = next(site.glob("variants/torch*/simple/relu/index.html")).read_text()
        assert name.replace("+", "%2B") in page or name in page
    for page in site.glob("variants/torch*/simple/*/index.json"):  # each listed file is the bytes its sha256 names
        for f in json.loads(page.read_text())["files"]:
            served = site / "variants" / "files" / f["filename"]
            assert hashlib.sha256(served.read_bytes()).hexdigest() == f["hashes"]["sha256"] and served.stat().st_size == f["size"], f
    fresh = tmp_path / "fresh"
    assert kwheel(kwheel_bin, "index", dist_of(tmp_path, corpus["relu-0.1.0"], corpus["relu-0.2.0"]), "-o", fresh, "--variants", "-q").returncode == 0
    assert tree(site) == tree(fresh)


def state(site: Path) -> dict[str, tuple[bytes, int, int]]:
    """Every file of SITE as a reader and a cache see it: bytes, inode, mtime."""
    return {str(p.relative_to(site)): (p.read_bytes(), p.stat().st_ino, p.stat().st_mtime_ns) for p in sorted(site.rglob("*")) if p.is_file()}


def leftovers(site: Path) -> list[str]:
    return sorted(p.name for p in site.parent.iterdir() if p.name.startswith(f".{site.name}.kwheel-new"))


def test_ctrl_c_before_the_commit_leaves_the_previous_site_as_it_was(kwheel_bin, corpus, tmp_path):
    """SIGINT once tonight's files and pages are written beside the site (the seam sends it at
    that step): the run dies of it, the site is the previous one, file for file, inode for inode,
    and nothing is left beside it; the next run adds the wheels."""
    site = tmp_path / "site"
    assert kwheel(kwheel_bin, "index", dist_of(tmp_path, corpus["relu-0.1.0"]), "-o", site, "-q").returncode == 0
    before = state(site)
    dist = dist_of(tmp_path, corpus["relu-0.1.0"], corpus["relu-0.2.0"], corpus["gelu-1.0.0"], name="tonight")
    r = subprocess.run([str(kwheel_bin), "index", str(dist), "-o", str(site)], capture_output=True, text=True, timeout=300,
                       env=clean_env(KWHEEL_TEST_INTERRUPT_AT="index-before-commit"))
    assert r.returncode == -signal.SIGINT, r.stdout + r.stderr
    assert r.stderr.strip().endswith("interrupted"), r.stderr
    assert state(site) == before
    assert leftovers(site) == []
    assert kwheel(kwheel_bin, "index", dist, "-o", site, "-q").returncode == 0
    fresh = tmp_path / "fresh"
    assert kwheel(kwheel_bin, "index", dist, "-o", fresh, "-q").returncode == 0
    assert tree(site) == tree(fresh)


def test_ctrl_c_during_the_commit_waits_for_it_to_finish(kwheel_bin, corpus, tmp_path):
    """SIGINT while the changed pages are being renamed into place: the renames finish first, so
    the site is tonight's whole (as a run from scratch writes it), never half of each."""
    site = tmp_path / "site"
    assert kwheel(kwheel_bin, "index", dist_of(tmp_path, corpus["relu-0.1.0"]), "-o", site, "-q").returncode == 0
    dist = dist_of(tmp_path, corpus["relu-0.1.0"], corpus["relu-0.2.0"], corpus["gelu-1.0.0"], name="tonight")
    r = subprocess.run([str(kwheel_bin), "index", str(dist), "-o", str(site)], capture_output=True, text=True, timeout=300,
                       env=clean_env(KWHEEL_TEST_INTERRUPT_AT="index-commit"))
    assert r.returncode == -signal.SIGINT, r.stdout + r.stderr
    fresh = tmp_path / "fresh"
    assert kwheel(kwheel_bin, "index", dist, "-o", fresh, "-q").returncode == 0
    assert tree(site) == tree(fresh)
    assert leftovers(site) == []
    log = tmp_path / "opened.log"
    r = kwheel(kwheel_bin, "index", dist, "-o", site, "--json", log=log)
    assert r.returncode == 0 and json.loads(r.stdout)["added"] == [], r.stdout + r.stderr


def test_a_write_that_fails_mid_run_leaves_the_previous_site_as_it_was(kwheel_bin, corpus, tmp_path):
    """A full disk, as the kernel reports it to a writer: RLIMIT_FSIZE makes every write past 2 KiB
    fail (EFBIG) while tonight's wheels are copied. One line names the file, and the site is
    the previous one."""
    site = tmp_path / "site"
    assert kwheel(kwheel_bin, "index", dist_of(tmp_path, corpus["relu-0.1.0"]), "-o", site, "-q").returncode == 0
    before = state(site)
    dist = dist_of(tmp_path, corpus["relu-0.1.0"], corpus["relu-0.2.0"], name="tonight")
    assert min(w.stat().st_size for w in corpus["relu-0.2.0"]) > 2048

    def small_disk():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # the write fails instead of killing the writer
        resource.setrlimit(resource.RLIMIT_FSIZE, (2048, 2048))

    r = subprocess.run([str(kwheel_bin), "index", str(dist), "-o", str(site), "--copy"], capture_output=True, text=True, timeout=300,
                       env=clean_env(), preexec_fn=small_disk)
    assert r.returncode == IO, r.stdout + r.stderr
    (line,) = r.stderr.splitlines()
    # libstdc++'s copy_file reports the failed sendfile as EIO, not EFBIG.
    assert line.startswith("kwheel: error: cannot copy") and "relu-0.2.0" in line, line
    assert state(site) == before
    assert leftovers(site) == []
