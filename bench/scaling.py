#!/usr/bin/env python3
"""Benchmark (not a test): `kwheel build --jobs N` against the libdeflate floor on the same bytes.

Two modes, both on local kernel repos (directory sources: no Hub, no network, only the Python
standard library), so that it runs from a bundle on a machine with nothing installed:

  scaling   for each repo (--repos) and each N in --jobs, N varying fastest within a round: `kwheel build REPO --no-reuse --jobs N`, wall time
            and peak RSS (with --kwheel-json, `--json` too: it reports, so takes, each wheel's sha256); the floor is bench/deflate-floor (libdeflate at the same level over the same
            bytes in the same 1 MiB chunks on N threads, nothing else). Repos: 3 variants x 1 GB and
            7 variants x 60 MB (sizes x --scale).
  ratio     the 2-core figure: kwheel --jobs 2 / floor on 2 threads, over 7 x 60 MB, rounds
            alternated (kwheel first in even rounds), the median of --rounds (at least 3).

  bench/scaling.py scaling --kwheel build/kwheel --floor /tmp/deflate-floor --jobs 1,2,4,8,16
  bench/scaling.py ratio --kwheel build/kwheel --floor /tmp/deflate-floor --rounds 3

The .so files are a real ELF head (--elf FILE, e.g. one tests/integration/elfgen.py made; without it
elfgen is imported, which needs cc) followed by machine code: the bytes of the given --code files
(default: the kwheel binary and the libraries beside it), rotated by a different offset per variant.
Every build's wheels are checked to hold the .so bytes (sha256 of the member equals the input's), and
all --jobs values must give byte-identical wheels (sha256 of each wheel). Results: a Markdown table on stdout and JSON in
--json-out.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

MB = 1_000_000


def machine() -> str:
    cpu = next((ln.split(":", 1)[1].strip() for ln in Path("/proc/cpuinfo").read_text().splitlines()
                if ln.startswith("model name")), "?")
    return f"{os.cpu_count()} CPU ({cpu}), {platform.system()} {platform.release()}"


def elf_head(path: str | None) -> bytes:
    if path:
        return Path(path).read_bytes()
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "integration"))
    from elfgen import shared_object  # noqa: E402
    return shared_object("x86_64")


def make_repo(root: Path, n: int, size: int, head: bytes, code: bytes) -> dict[str, str]:
    """n variants with one .so of `size` bytes each; returns {variant: sha256 of its .so}."""
    shas = {}
    names = [f"torch2{t}-cxx11-{b}-x86_64-linux" for t in (7, 8, 9) for b in ("cu126", "cu128", "cpu")][:n]
    for i, v in enumerate(names):
        pkg = root / "build" / v / "kbench"
        pkg.mkdir(parents=True)
        (pkg / "__init__.py").write_text("from ._ops import ops\n")
        (pkg / "_ops.py").write_text(f"import torch\nops = torch.ops._kbench_{i}\n")
        h = hashlib.sha256()
        off = (i * 7_919_993) % len(code)
        with open(pkg / f"_kbench_{i}.abi3.so", "wb") as f:
            f.write(head)
            h.update(head)
            left = size - len(head)
            while left > 0:
                piece = code[off: off + min(left, 8 << 20)]
                f.write(piece)
                h.update(piece)
                left -= len(piece)
                off = (off + len(piece)) % len(code)
        shas[v] = h.hexdigest()
    return shas


# Linux carries a process's peak RSS over exec, and a child made with vfork (as Python spawns) shares
# its parent's memory until then: timed directly, every command would report at least this script's
# own peak. So a small interpreter forks (a real fork, with its own small memory) and execs the command.
_RSS_HELPER = """
import json, os, sys, time
t0 = time.perf_counter()
pid = os.fork()
if pid == 0:
    fd = os.open("/dev/null", os.O_WRONLY)
    os.dup2(fd, 1)
    os.execv(sys.argv[1], sys.argv[1:])
_, status, ru = os.wait4(pid, 0)
print(json.dumps({"wall_s": round(time.perf_counter() - t0, 3), "rss_mb": round(ru.ru_maxrss / 1024, 1),
                  "cpu_s": round(ru.ru_utime + ru.ru_stime, 2), "rc": os.waitstatus_to_exitcode(status)}))
"""


def run_rss(cmd: list[str]) -> dict:
    """Runs cmd (stdout discarded); its wall time, CPU time and peak RSS."""
    r = subprocess.run([sys.executable, "-S", "-c", _RSS_HELPER, *cmd], capture_output=True, text=True)
    res = json.loads(r.stdout)
    if res.pop("rc") != 0:
        raise SystemExit(f"{' '.join(cmd)} failed: {r.stderr[-2000:]}")
    return res


def check_wheels(out: Path, shas: dict[str, str]) -> dict[str, str]:
    wheels = sorted(out.glob("*.whl"))
    assert len(wheels) == len(shas), f"{len(wheels)} wheels in {out}, expected {len(shas)}"
    seen = set()
    for w in wheels:
        with zipfile.ZipFile(w) as z:
            for info in z.infolist():
                if info.filename.endswith(".so"):
                    h = hashlib.sha256()
                    with z.open(info) as f:
                        for chunk in iter(lambda: f.read(1 << 20), b""):
                            h.update(chunk)
                    seen.add(h.hexdigest())
    assert seen == set(shas.values()), f"{out}: the wheels do not hold the input .so files"
    return {w.name: sha256_file(w) for w in wheels}


def sha256_file(p: Path) -> str:
    h = hashlib.sha256()
    with open(p, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def kwheel_build(a, repo: Path, out: Path, jobs: int) -> dict:
    shutil.rmtree(out, ignore_errors=True)
    return run_rss([a.kwheel, "build", str(repo), "--version", "1.0", "-o", str(out), "--no-reuse", "-q",
                    "--jobs", str(jobs), "--compression-level", str(a.level), *(["--json"] if a.kwheel_json else [])])


def floor(a, repo: Path, jobs: int) -> dict:
    files = sorted(str(p) for p in repo.rglob("*.so"))
    return run_rss([a.floor, str(jobs), str(a.level), *files])


def scaling(a, work: Path, head: bytes, code: bytes) -> list[dict]:
    rows = []
    for n, size_mb in a.repos:
        size = max(1, round(size_mb * a.scale)) * MB
        repo = work / f"repo-{n}x{size // MB}"
        t0 = time.perf_counter()
        shas = make_repo(repo, n, size, head, code)
        print(f"[{time.strftime('%H:%M:%S')}] made {n} x {size // MB} MB in {time.perf_counter() - t0:.0f}s", file=sys.stderr, flush=True)
        wheels = None
        # Round-major: every --jobs value once per round, so that a slow spell of a shared machine
        # falls on all of them alike instead of on the rounds of one.
        for rnd in range(a.rounds):
            for jobs in a.jobs:
                kw = kwheel_build(a, repo, work / "out", jobs)
                if wheels is None:  # the members are checked once; later builds must give the same wheels
                    wheels = check_wheels(work / "out", shas)
                else:
                    got = {w.name: sha256_file(w) for w in sorted((work / "out").glob("*.whl"))}
                    assert got == wheels, f"--jobs {jobs} gave other bytes than --jobs {a.jobs[0]}"
                fl = floor(a, repo, jobs) if a.floor else None
                row = {"repo": f"{n} x {size // MB} MB", "jobs": jobs, "round": rnd, "kwheel": kw, "floor": fl}
                print(f"[{time.strftime('%H:%M:%S')}] {json.dumps(row)}", file=sys.stderr, flush=True)
                rows.append(row)
        shutil.rmtree(repo)
        shutil.rmtree(work / "out", ignore_errors=True)
    return rows


def scaling_table(rows: list[dict]) -> str:
    out = ["| repo | --jobs | kwheel s (median) | speedup vs --jobs 1 | floor s | kwheel/floor | kwheel peak RSS MB (max) |",
           "|---|---|---|---|---|---|---|"]
    base = {}
    for repo in dict.fromkeys(r["repo"] for r in rows):
        for jobs in dict.fromkeys(r["jobs"] for r in rows if r["repo"] == repo):
            rs = [r for r in rows if r["repo"] == repo and r["jobs"] == jobs]
            kw = statistics.median(r["kwheel"]["wall_s"] for r in rs)
            base.setdefault(repo, kw)
            fl = statistics.median(r["floor"]["wall_s"] for r in rs) if rs[0]["floor"] else None
            rss = max(r["kwheel"]["rss_mb"] for r in rs)
            out.append(f"| {repo} | {jobs} | {kw:.2f} | {base[repo] / kw:.1f}x | {f'{fl:.2f}' if fl else '-'} | "
                       f"{f'{kw / fl:.2f}' if fl else '-'} | {rss:.0f} |")
    return "\n".join(out)


def ratio(a, work: Path, head: bytes, code: bytes) -> list[dict]:
    size = max(1, round(60 * a.scale)) * MB
    repo = work / "repo-ratio"
    shas = make_repo(repo, 7, size, head, code)
    rows = []
    for rnd in range(max(3, a.rounds)):
        order = ("kw", "floor") if rnd % 2 == 0 else ("floor", "kw")
        row = {"round": rnd}
        for who in order:
            if who == "kw":
                row["kwheel"] = kwheel_build(a, repo, work / "out", 2)
                check_wheels(work / "out", shas)
            else:
                row["floor"] = floor(a, repo, 2)
        print(f"[{time.strftime('%H:%M:%S')}] {json.dumps(row)}", file=sys.stderr, flush=True)
        rows.append(row)
    shutil.rmtree(repo)
    return rows


def ratio_table(rows: list[dict]) -> str:
    kw = [r["kwheel"]["wall_s"] for r in rows]
    fl = [r["floor"]["wall_s"] for r in rows]
    per = [k / f for k, f in zip(kw, fl)]
    return ("| rounds | kwheel --jobs 2 s (median) | libdeflate floor, 2 threads s (median) | kwheel/floor (median of per-round) | per round |\n"
            "|---|---|---|---|---|\n"
            f"| {len(rows)} | {statistics.median(kw):.2f} | {statistics.median(fl):.2f} | {statistics.median(per):.2f} | "
            + ", ".join(f"{p:.2f}" for p in per) + " |")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("mode", choices=["scaling", "ratio"])
    ap.add_argument("--kwheel", required=True)
    ap.add_argument("--floor", help="bench/deflate-floor, compiled against kwheel's built-in libdeflate (bench/bundle-scaling does it)")
    ap.add_argument("--jobs", default="1,2,4,8,16")
    ap.add_argument("--repos", default="3x1000,7x60", help="scaling: repos as VARIANTSxMB, comma-separated")
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--scale", type=float, default=1.0)
    ap.add_argument("--level", type=int, default=6)
    ap.add_argument("--kwheel-json", action="store_true",
                    help="build with --json, which reports (so takes) each wheel's sha256: over one 390 MB wheel that is 0.35 s after the last chunk")
    ap.add_argument("--elf", help="a small ELF shared object to start each .so with")
    ap.add_argument("--code", nargs="*", help="files whose bytes fill the .so (default: the kwheel binary and its lib/)")
    ap.add_argument("--work", default=None)
    ap.add_argument("--json-out", default=None)
    a = ap.parse_args()
    a.jobs = [int(j) for j in a.jobs.split(",")]
    try:
        a.repos = [tuple(int(x) for x in r.split("x")) for r in a.repos.split(",")]
        assert all(len(r) == 2 and min(r) > 0 and r[0] <= 9 for r in a.repos)
    except (ValueError, AssertionError):
        ap.error(f"--repos {a.repos!r}: expected VARIANTSxMB[,...] with 1-9 variants, such as 3x1000,7x60")
    a.kwheel = str(Path(a.kwheel).resolve())
    a.floor = str(Path(a.floor).resolve()) if a.floor else None
    code_files = a.code or [a.kwheel, *sorted(str(p) for p in (Path(a.kwheel).parent / "lib").glob("*.so*"))]
    code = b"".join(Path(f).read_bytes() for f in code_files)
    head = elf_head(a.elf)
    work = Path(a.work or tempfile.mkdtemp(prefix="kwheel-scaling-"))
    work.mkdir(parents=True, exist_ok=True)
    t0 = time.time()
    try:
        rows = scaling(a, work, head, code) if a.mode == "scaling" else ratio(a, work, head, code)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    meta = {"date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "machine": machine(), "mode": a.mode,
            "kwheel_json": a.kwheel_json,
            "level": a.level, "scale": a.scale, "code_bytes": len(code), "total_s": round(time.time() - t0)}
    print(f"{meta['date']}, {meta['machine']}, mode {a.mode}, level {a.level}, scale {a.scale}, "
          f"kwheel build{' --json' if a.kwheel_json else ''}, {meta['total_s']} s\n")
    print(scaling_table(rows) if a.mode == "scaling" else ratio_table(rows))
    if a.json_out:
        Path(a.json_out).write_text(json.dumps({"meta": meta, "rows": rows}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
