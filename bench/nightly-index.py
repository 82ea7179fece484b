#!/usr/bin/env python3
"""Benchmark (not a test): what a nightly `kwheel index dist -o site` costs as a site grows.

The corpus is what a team's nightly site holds after a while: 25 kernels x 10 versions x 8 builds
= 2,000 small kernel wheels, every one made by `kwheel build` from a kernel repo on disk (CUDA
builds carry a real .nv_fatbin section from tests/integration/elfgen.py). In one run it measures,
each the median of --rounds:

  full          `kwheel index DIST -o SITE` into a new site, 2,000 wheels (the default placement: a
                hard link of DIST's file on one ext4 filesystem, a reflink on btrfs/XFS)
  simple503     `simple503 -e -c` (pure Python, PEP 503 + PEP 658) over a copy of the same wheels,
                from the pinned venv bench/setup-venv makes (.venv-bench, bench/requirements.txt)
  +8            the site of 1,992 wheels, then DIST with all 2,000 (one new kernel version's 8 builds)
  nothing-new   the full site, then the same DIST again
  rss-20k       peak RSS (getrusage of the child) of a full run over 20,000 wheels: the 2,000
                re-versioned ten times (filename, METADATA and RECORD rewritten; pure Python)

Goals (docs/performance.md): full <= 0.5x simple503; +8 and nothing-new <= 0.1x full; RSS < 64 MB.

Nothing is deleted while measuring: a site a round replaces is renamed into WORK/set-aside and all of
it is removed at the end. On ext4 without a journal (this VM's disk) each new inode is checked
against the inodes deleted in the last minutes (ext4's recently_deleted), so a run right after
removing the 4,500 files of the last round spent half its time there (perf), far more than a
nightly job whose last deletion was a day ago: both kwheel's and simple503's times swung with it.
Each measured run starts after os.sync(), so the writeback of what the last one wrote does not
run beside it. Start it a few minutes after any large deletion on the same disk.

  bench/setup-venv && bench/nightly-index.py --kwheel build/kwheel --work /tmp/nightly-bench
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import json
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import time
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "hub"))
sys.path.insert(0, str(ROOT / "tests" / "integration"))

BUILDS = {  # variant -> CUDA targets its .so carries (None: pure Python, []: a plain .so)
    "torch27-cxx11-cu126-x86_64-linux": ["sm_80", "sm_90"],
    "torch27-cxx11-cu126-aarch64-linux": ["sm_90"],
    "torch28-cxx11-cu128-x86_64-linux": ["sm_90", "sm_100"],
    "torch29-cxx11-cu130-x86_64-linux": ["sm_90", "sm_100", "compute_100"],
    "torch29-cxx11-cu130-aarch64-linux": ["sm_100"],
    "torch29-cxx11-cpu-x86_64-linux": [],
    "torch-universal": None,
    "torch-cuda": None,
}


def build_corpus(kwheel: str, work: Path, kernels: int, versions: int) -> Path:
    import kernel_repos as kr
    from elfgen import cuda_shared_object, shared_object

    dist = work / "dist"
    stamp = work / f"corpus-{kernels}x{versions}.done"
    if stamp.exists():
        return dist
    shutil.rmtree(dist, ignore_errors=True)
    sos = {v: (None if t is None else cuda_shared_object(t, "aarch64" if "aarch64" in v else "x86_64") if t
               else shared_object("x86_64")) for v, t in BUILDS.items()}
    for k in range(kernels):
        name = f"kernel{k:02d}"
        repo = work / "repos" / name
        shutil.rmtree(repo, ignore_errors=True)
        for v, targets in BUILDS.items():
            archs = [f"{t[3:-1]}.{t[-1]}" for t in targets if t.startswith("sm_")] if targets else None
            kr.write_variant(repo, v, layout="flat", name=name, files=kr.demo_package(name, v, so=sos[v]), archs=archs,
                             kernel_id=f"_{name}_0123abc" if sos[v] else None)
        for n in range(versions):
            r = subprocess.run([kwheel, "build", str(repo), "--version", f"0.{n}.0", "-o", str(dist), "-q"],
                               capture_output=True, text=True)
            if r.returncode != 0:
                sys.exit(f"kwheel build {repo} failed: {r.stderr}")
    stamp.write_text("")
    return dist


def record_line(name: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}"


def reversion(wheel: Path, out: Path, n: int) -> None:
    """The wheel as version <public>.<n>+<label>: filename, dist-info, METADATA and RECORD agree."""
    name, version = wheel.name.split("-")[:2]
    public, _, label = version.replace("%2B", "+").partition("+")
    new_version = f"{public}.{n}" + (f"+{label}" if label else "")
    old_di, new_di = f"{name}-{version.replace('%2B', '+')}.dist-info", f"{name}-{new_version}.dist-info"
    members = []
    with zipfile.ZipFile(wheel) as z:
        for info in z.infolist():
            data = z.read(info)
            path = info.filename.replace(old_di, new_di) if info.filename.startswith(old_di) else info.filename
            if path.endswith(".dist-info/METADATA"):
                data = re.sub(rb"(?m)^Version: .*$", f"Version: {new_version}".encode(), data, count=1)
            members.append((path, info, data))
    record = [record_line(p, d) for p, _, d in members if not p.endswith("/RECORD")] + [f"{new_di}/RECORD,,"]
    target = out / wheel.name.replace(f"-{version}-", f"-{new_version.replace('+', '%2B') if '%2B' in version else new_version}-")
    with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as z:
        for path, info, data in members:
            zi = zipfile.ZipInfo(path, info.date_time)
            zi.external_attr, zi.compress_type = info.external_attr, zipfile.ZIP_DEFLATED
            z.writestr(zi, ("\n".join(record) + "\n").encode() if path.endswith("/RECORD") else data)


def run(cmd: list[str], env=None) -> float:
    t = time.perf_counter()
    r = subprocess.run(cmd, capture_output=True, text=True, env=env)
    dt = time.perf_counter() - t
    if r.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed ({r.returncode}): {r.stderr[-2000:]}")
    return dt


def median_of(rounds: int, prepare, measure) -> float:
    out = []
    for _ in range(rounds):
        prepare()
        # The files the last step wrote are flushed first: their writeback
        # would otherwise run beside the measured run, on the same 2 cores.
        os.sync()
        out.append(measure())
    return statistics.median(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--kwheel", default=str(ROOT / "build" / "kwheel"))
    ap.add_argument("--simple503", default=str(ROOT / ".venv-bench" / "bin" / "simple503"))
    ap.add_argument("--work", type=Path, default=Path("/tmp/kwheel-nightly-bench"))
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--kernels", type=int, default=25)
    ap.add_argument("--versions", type=int, default=10)
    ap.add_argument("--no-rss", action="store_true", help="skip the 20,000-wheel RSS run")
    ap.add_argument("--json-out", type=Path)
    a = ap.parse_args()
    a.work.mkdir(parents=True, exist_ok=True)
    kw = os.path.abspath(a.kwheel)
    dist = build_corpus(kw, a.work, a.kernels, a.versions)
    wheels = sorted(dist.glob("*.whl"))
    site, s503 = a.work / "site", a.work / "s503"
    newest = sorted(w for w in wheels if "-0.9.0" in w.name and w.name.startswith("kernel24-"))[:8]
    partial = a.work / "dist-partial"
    shutil.rmtree(partial, ignore_errors=True)
    partial.mkdir()
    for w in wheels:
        if w not in newest:
            os.link(w, partial / w.name)

    aside = a.work / "set-aside"
    shutil.rmtree(aside, ignore_errors=True)  # a run stopped part-way left it
    aside.mkdir()

    def set_aside(path: Path) -> None:
        if path.exists():
            path.rename(aside / f"{path.name}-{len(list(aside.iterdir()))}")

    def fresh():
        set_aside(site)
        (a.work / ".site.kwheel-identities").unlink(missing_ok=True)

    def copy503():
        set_aside(s503)
        shutil.copytree(dist, s503, copy_function=os.link)

    res: dict[str, float] = {}
    res["full_s"] = median_of(a.rounds, fresh, lambda: run([kw, "index", str(dist), "-o", str(site), "-q"]))
    if Path(a.simple503).exists():
        res["simple503_s"] = median_of(a.rounds, copy503, lambda: run([a.simple503, "-e", "-c", str(s503)]))
    res["plus8_s"] = median_of(a.rounds, lambda: (fresh(), run([kw, "index", str(partial), "-o", str(site), "-q"])),
                               lambda: run([kw, "index", str(dist), "-o", str(site), "-q"]))
    res["nothing_new_s"] = median_of(a.rounds, lambda: None, lambda: run([kw, "index", str(dist), "-o", str(site), "-q"]))
    if not a.no_rss:
        big = a.work / "dist-20k"
        if not (a.work / "dist-20k.done").exists():
            shutil.rmtree(big, ignore_errors=True)
            big.mkdir()
            for w in wheels:
                os.link(w, big / w.name)
            for n in range(1, 10):
                for w in wheels:
                    reversion(w, big, n)
            (a.work / "dist-20k.done").write_text("")
        site20 = a.work / "site-20k"
        set_aside(site20)
        pid = os.fork()
        if pid == 0:
            os.execv(kw, [kw, "index", str(big), "-o", str(site20), "-q"])
        _, status, usage = os.wait4(pid, 0)
        if status != 0:
            sys.exit(f"the 20,000-wheel run failed ({status})")
        res["rss_20k_mib"] = usage.ru_maxrss / 1024
        res["wheels_20k"] = len(list(big.glob("*.whl")))
        t = time.perf_counter()
        run([kw, "index", str(big), "-o", str(site20), "-q"])
        res["nothing_new_20k_s"] = time.perf_counter() - t
    shutil.rmtree(aside)
    res["wheels"] = len(wheels)
    if "simple503_s" in res:
        res["full_over_simple503"] = res["full_s"] / res["simple503_s"]
    res["plus8_over_full"] = res["plus8_s"] / res["full_s"]
    res["nothing_new_over_full"] = res["nothing_new_s"] / res["full_s"]
    res["load_avg_1m"] = os.getloadavg()[0]
    print(json.dumps(res, indent=1))
    if a.json_out:
        a.json_out.write_text(json.dumps(res, indent=1) + "\n")


if __name__ == "__main__":
    main()
