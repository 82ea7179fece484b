#!/usr/bin/env python3
"""Benchmark: `kwheel build ORG/NAME` vs `kernels to-wheel` (kernels 0.10.5) over the fixture Hub.

Serves a kernel repo of N variants x SIZE MB `.so` from tests/hub/server.py on loopback and
times, alternately and in the same run:

  kwheel-cold     kwheel build, empty HF cache, empty -o
  kwheel-warm     the same command again (warm cache, -o still holding the wheels)
  kwheel-rewrite  warm cache, empty -o (every wheel written again)
  kernels         kernels to-wheel, empty HF cache (HF_HOME), empty cwd

Every wheel of every run is verified in the same run (RECORD hashes and sizes of every
member, and the .so inside is the very file served). The `.so` files are real ELF shared
objects (a small kernel-like library, libc only) carrying a 100 MB `.nv_fatbin` section
cut from a real system library (libtorch_cpu by default) at a different offset per variant:
real machine code, not zeros, not random, and different in every variant.

    .venv/bin/python bench/hub-vs-kernels.py [--variants 24] [--size-mb 100] [--rounds 2] [--record]

Disk: about variants x size x 2.7 at peak (store + one cache + one set of wheels); the
work directory is removed at the end unless --keep.
"""

from __future__ import annotations

import argparse
import base64
import csv
import datetime as dt
import hashlib
import io
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "integration"))
import hubtest as H  # noqa: E402
from hubtest import hubfix  # noqa: E402

REPO = "bench/kernel-bench"
NAME = "kernel_bench"
VERSION = "1.0.0"
SOURCES = ["/usr/lib/x86_64-linux-gnu/libtorch_cpu.so.1.13", "/usr/lib/x86_64-linux-gnu/libtorch_cpu.so"]


def log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def bench_kernels_cli() -> str:
    """The kernels 0.10.5 CLI of .venv-bench, made (once) by bench/setup-venv: .venv has today's kernels."""
    subprocess.run([str(ROOT / "bench" / "setup-venv")], check=True)
    return str(ROOT / ".venv-bench" / "bin" / "kernels")


# --------------------------------------------------------------------------- content


def variant_names(n: int) -> list[str]:
    torch = ["26", "27", "28", "29", "210", "211"]
    backends = ["cu118", "cu124", "cu126", "cu128", "cu129", "cpu"]
    out = [f"torch{t}-cxx11-{b}-x86_64-linux" for t in torch for b in backends]
    if n > len(out):
        raise SystemExit(f"at most {len(out)} variants")
    return out[:n]


def source_bytes(need: int) -> tuple[bytes, str]:
    """`need` bytes of real machine code: libtorch_cpu, else the biggest system libraries concatenated."""
    for s in SOURCES:
        p = Path(s)
        if p.is_file() and p.stat().st_size >= need:
            with open(p, "rb") as f:
                return f.read(need), str(p.resolve())
    libs = sorted((p for p in Path("/usr/lib/x86_64-linux-gnu").glob("*.so*") if p.is_file() and not p.is_symlink()),
                  key=lambda p: -p.stat().st_size)
    buf, used = bytearray(), []
    for p in libs:
        buf += p.read_bytes()
        used.append(p.name)
        if len(buf) >= need:
            return bytes(buf[:need]), "+".join(used)
    raise SystemExit("not enough shared libraries on this system to build realistic content")


def make_store(work: Path, n: int, size: int) -> tuple[Path, dict[str, str], str]:
    """The repo store; returns (root, {variant: sha256 of its .so}, content source)."""
    spread = 787_000
    data, src = source_bytes(size + spread * n)
    base = H.elf_base()
    if not base.startswith(b"\x7fELF") or shutil.which("objcopy") is None:
        raise SystemExit("needs a C compiler and objcopy to make ELF shared objects")
    layout = work / "layout"
    shas = {}
    with tempfile.TemporaryDirectory(dir=work) as tmp:
        base_so = Path(tmp) / "base.so"
        base_so.write_bytes(base)
        chunk = Path(tmp) / "fatbin"
        for i, v in enumerate(variant_names(n)):
            chunk.write_bytes(data[i * spread: i * spread + size])
            pkg = layout / "build" / v / NAME
            pkg.mkdir(parents=True)
            ops = hashlib.sha256(v.encode()).hexdigest()[:7]
            so = pkg / f"_{NAME}_{ops}.abi3.so"
            subprocess.run(["objcopy", "--add-section", f".nv_fatbin={chunk}", "--set-section-flags",
                            ".nv_fatbin=readonly,data", str(base_so), str(so)], check=True)
            (pkg / "__init__.py").write_text("from ._ops import ops\n")
            (pkg / "_ops.py").write_text(f"import torch\nops = torch.ops._{NAME}_{ops}\n")
            (layout / "build" / v / "metadata.json").write_text(json.dumps({"name": NAME.replace("_", "-"), "version": 1}))
            shas[v] = H.sha256_file(so)
    root = work / "store"
    hubfix.make_repo(root, REPO, [layout], tags={f"v{VERSION}": 0})
    shutil.rmtree(layout)
    return root, shas, src


# --------------------------------------------------------------------------- verification


def verify_wheel(path: Path) -> dict[str, str]:
    """Streams every member through sha256, checks it against RECORD; returns {member: sha256 hex}."""
    out = {}
    with zipfile.ZipFile(path) as z:
        names = [i.filename for i in z.infolist() if not i.is_dir()]
        (record,) = [n for n in names if n.endswith(".dist-info/RECORD")]
        rows = {r[0]: r for r in csv.reader(io.StringIO(z.read(record).decode()))}
        assert set(rows) == set(names), f"{path.name}: RECORD and archive disagree"
        for n in names:
            if n == record:
                continue
            h, size = hashlib.sha256(), 0
            with z.open(n) as f:
                for chunk in iter(lambda: f.read(1 << 20), b""):
                    h.update(chunk)
                    size += len(chunk)
            want = "sha256=" + base64.urlsafe_b64encode(h.digest()).rstrip(b"=").decode()
            assert rows[n][1] == want and rows[n][2] == str(size), f"{path.name}: {n} does not match RECORD"
            out[n] = h.hexdigest()
    return out


def verify_set(out_dir: Path, so_shas: dict[str, str]) -> int:
    """Every wheel sound, one per variant, each carrying its variant's .so byte for byte."""
    wheels = sorted(out_dir.glob("*.whl"))
    assert len(wheels) == len(so_shas), f"{len(wheels)} wheels in {out_dir}, expected {len(so_shas)}"
    expected = set(so_shas.values())
    seen = set()
    for w in wheels:
        members = verify_wheel(w)
        (so,) = [h for n, h in members.items() if n.endswith(".so")]
        assert so in expected, f"{w.name}: its .so is not one the Hub served"
        seen.add(so)
    assert seen == expected
    return len(wheels)


# --------------------------------------------------------------------------- runs


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def timed(cmd: list[str], env: dict, cwd: Path, server_pid: int, label: str, tmp: Path) -> dict:
    tv = tmp / f"{label}.time"
    s0 = cpu_seconds(server_pid)
    t0 = time.perf_counter()
    r = subprocess.run(["/usr/bin/time", "-v", "-o", str(tv), *cmd], env=env, cwd=cwd, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    s1 = cpu_seconds(server_pid)
    load = os.getloadavg()[0]  # other work on the machine during the run (1-minute average)
    if r.returncode != 0:
        raise SystemExit(f"{label} failed ({r.returncode}):\n{r.stdout[-3000:]}\n{r.stderr[-3000:]}")
    tv_text = tv.read_text()

    def field(name):
        for line in tv_text.splitlines():
            if line.strip().startswith(name):
                return line.split(":", 1)[1].strip() if "Elapsed" not in name else line.rsplit(" ", 1)[1]
        return None

    return {"wall_s": round(wall, 2), "user_s": float(field("User time")), "sys_s": float(field("System time")),
            "max_rss_mb": round(int(field("Maximum resident set size")) / 1024), "server_cpu_s": round(s1 - s0, 2),
            "load_1m": round(load, 1), "stdout": r.stdout}


def du(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file() and not p.is_symlink()) if path.exists() else 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--variants", type=int, default=24)
    ap.add_argument("--size-mb", type=int, default=100, help="size of each variant's .so, MB (10^6 bytes)")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--work", default=str(ROOT / "bench" / "out" / "hub-vs-kernels"))
    ap.add_argument("--kwheel", default=H.KWHEEL)
    ap.add_argument("--kernels", default=None,
                    help="a kernels 0.10.5 CLI (default: .venv-bench/bin/kernels, made by bench/setup-venv)")
    ap.add_argument("--also-level", type=int, default=1,
                    help="also time a cold kwheel build at this --compression-level (-1: don't)")
    ap.add_argument("--record", action="store_true", help="append the figures to docs/performance.md")
    ap.add_argument("--keep", action="store_true", help="keep the work directory")
    ap.add_argument("--table", metavar="JSON", help="only re-render the Markdown of an earlier results file")
    args = ap.parse_args()
    if args.table:
        print(markdown(json.loads(Path(args.table).read_text())))
        return 0
    if args.kernels is None:
        args.kernels = bench_kernels_cli()

    size = args.size_mb * 1_000_000
    work = Path(args.work).resolve()
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    need = args.variants * size * 2.8
    free = shutil.disk_usage(work).free
    if free < need:
        raise SystemExit(f"needs ~{need / 1e9:.1f} GB free in {work}, has {free / 1e9:.1f} GB")
    peak = 0
    load0 = os.getloadavg()[0]
    try:
        t0 = time.perf_counter()
        root, so_shas, src = make_store(work, args.variants, size)
        log(f"store: {args.variants} variants x {args.size_mb} MB from {src} in {time.perf_counter() - t0:.0f}s")
        results: dict[str, list[dict]] = {"kwheel-cold": [], "kwheel-warm": [], "kwheel-rewrite": [], "kernels": []}
        if args.also_level >= 0:
            results["kwheel-cold-level"] = []
        with hubfix.hub_server(root) as hub:
            # the fixture hashes the store once, on its first listing: not part of any timing
            with urllib.request.build_opener(urllib.request.ProxyHandler({})).open(
                    f"{hub.endpoint}/api/models/{REPO}/tree/v{VERSION}/build?recursive=true", timeout=600) as r:
                r.read()
            kw_cache, kw_out = work / "kw-cache", work / "kw-dist"
            kw_env = H.clean_env(work / "kw-home")
            (work / "kw-home").mkdir()
            kw_cmd = [args.kwheel, "build", REPO, "--endpoint", hub.endpoint, "--cache-dir", str(kw_cache),
                      "-o", str(kw_out), "--version", VERSION, "--json", "-q"]

            def run_kwheel(rnd: int):
                nonlocal peak
                for p in (kw_cache, kw_out):
                    shutil.rmtree(p, ignore_errors=True)
                hub.clear_log()
                cold = timed(kw_cmd, kw_env, work, hub.pid, f"kwheel-cold-{rnd}", work)
                rep = json.loads(cold.pop("stdout"))
                assert rep["ok"] and rep["transfers"]["bytes_downloaded"] >= args.variants * size
                cold["downloads"] = hub.downloads()
                cold["wheels_mb"] = round(sum(p.stat().st_size for p in kw_out.glob("*.whl")) / 1e6)
                cold_shas = H.dir_shas(kw_out)
                verify_set(kw_out, so_shas)
                results["kwheel-cold"].append(cold)
                log(f"round {rnd} kwheel cold: {cold}")
                for label, wipe in (("kwheel-warm", False), ("kwheel-rewrite", True)):
                    if wipe:
                        shutil.rmtree(kw_out)
                    hub.clear_log()
                    w = timed(kw_cmd, kw_env, work, hub.pid, f"{label}-{rnd}", work)
                    rep = json.loads(w.pop("stdout"))
                    assert rep["ok"] and rep["transfers"]["bytes_downloaded"] == 0
                    w["downloads"] = hub.downloads()
                    assert w["downloads"] == 0, "a warm build downloaded files"
                    assert H.dir_shas(kw_out) == cold_shas, "a warm build wrote different wheels"
                    results[label].append(w)
                    log(f"round {rnd} {label}: {w}")
                verify_set(kw_out, so_shas)
                peak = max(peak, du(work))
                if args.also_level >= 0:
                    for p in (kw_cache, kw_out):
                        shutil.rmtree(p, ignore_errors=True)
                    hub.clear_log()
                    lv = timed(kw_cmd + ["--compression-level", str(args.also_level)], kw_env, work, hub.pid,
                               f"kwheel-cold-level-{rnd}", work)
                    rep = json.loads(lv.pop("stdout"))
                    assert rep["ok"] and rep["transfers"]["bytes_downloaded"] >= args.variants * size
                    lv["downloads"] = hub.downloads()
                    lv["wheels_mb"] = round(sum(p.stat().st_size for p in kw_out.glob("*.whl")) / 1e6)
                    verify_set(kw_out, so_shas)
                    results["kwheel-cold-level"].append(lv)
                    log(f"round {rnd} kwheel cold, level {args.also_level}: {lv}")
                for p in (kw_cache, kw_out):
                    shutil.rmtree(p, ignore_errors=True)

            def run_kernels(rnd: int):
                nonlocal peak
                home, out = work / "k-home", work / "k-dist"
                for p in (home, out):
                    shutil.rmtree(p, ignore_errors=True)
                    p.mkdir()
                hub.clear_log()
                k = timed([args.kernels, "to-wheel", REPO, VERSION], hubfix.client_env(hub, home), out, hub.pid,
                          f"kernels-{rnd}", work)
                k.pop("stdout")
                k["downloads"] = hub.downloads()
                k["wheels_mb"] = round(sum(p.stat().st_size for p in out.glob("*.whl")) / 1e6)
                verify_set(out, so_shas)
                results["kernels"].append(k)
                log(f"round {rnd} kernels: {k}")
                peak = max(peak, du(work))
                for p in (home, out):
                    shutil.rmtree(p, ignore_errors=True)

            for rnd in range(1, args.rounds + 1):
                order = (run_kwheel, run_kernels) if rnd % 2 else (run_kernels, run_kwheel)
                for fn in order:
                    fn(rnd)
        summary = {k: {"median_wall_s": round(statistics.median(r["wall_s"] for r in v), 2), "runs": v}
                   for k, v in results.items()}
        kern = summary["kernels"]["median_wall_s"]
        ratios = {k: round(kern / summary[k]["median_wall_s"], 1) for k in summary if k != "kernels"}
        report = {"date": dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"), "commit": commit(),
                  "command": " ".join([Path(sys.executable).name, "bench/hub-vs-kernels.py", *sys.argv[1:]]),
                  "machine": machine(), "variants": args.variants, "so_mb": args.size_mb, "content": src,
                  "rounds": args.rounds, "also_level": args.also_level, "kwheel_version": kwheel_version(args.kwheel),
                  "load_before": round(load0, 1), "peak_disk_gb": round(peak / 1e9, 1), "summary": summary,
                  "speedup_vs_kernels": ratios}
        (work.parent / "hub-vs-kernels.json").write_text(json.dumps(report, indent=2) + "\n")
        md = markdown(report)
        print(md)
        if args.record:
            perf = ROOT / "docs" / "performance.md"
            with open(perf, "a") as f:
                if not perf.exists() or perf.stat().st_size == 0:
                    f.write("# Performance\n")
                f.write("\n" + md)
            log(f"appended to {perf}")
        return 0
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)


def kwheel_version(binary: str) -> str:
    r = subprocess.run([binary, "--version"], capture_output=True, text=True)
    return r.stdout.strip() or r.stderr.strip()


def commit() -> str:
    """HEAD, or $KWHEEL_COMMIT when the binary was built from another tree."""
    if os.environ.get("KWHEEL_COMMIT"):
        return os.environ["KWHEEL_COMMIT"]
    try:
        sha = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short=12", "HEAD"], capture_output=True,
                             text=True, check=True).stdout.strip()
        return sha
    except Exception:
        return os.environ.get("KWHEEL_COMMIT", "unknown")


def machine() -> str:
    cpu = "?"
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            cpu = line.split(":", 1)[1].strip()
            break
    mem = int(Path("/proc/meminfo").read_text().split()[1]) // (1024 * 1024)
    return f"{os.cpu_count()} CPU ({cpu}), {mem} GiB RAM, {platform.system()} {platform.release()}"


def markdown(r: dict) -> str:
    s = r["summary"]

    def row(k, what):
        runs = s[k]["runs"]
        walls = ", ".join(f"{x['wall_s']:.1f}" for x in runs)
        cpu = statistics.median(x["user_s"] + x["sys_s"] for x in runs)
        srv = statistics.median(x["server_cpu_s"] for x in runs)
        rss = max(x["max_rss_mb"] for x in runs)
        load = ", ".join(f"{x.get('load_1m', 0):.1f}" for x in runs)
        ratio = "1" if k == "kernels" else f"{r['speedup_vs_kernels'][k]}x"
        return (f"| {what} | {s[k]['median_wall_s']:.1f} ({walls}) | {cpu:.1f} | {srv:.1f} | {rss} | {wheels(k)} | "
                f"{load} | {ratio} |")

    def wheels(k):
        sizes = [x["wheels_mb"] for x in s[k]["runs"] if "wheels_mb" in x]
        return f"{statistics.median(sizes):.0f}" if sizes else "same"

    lines = [
        "## Hub build",
        "",
        f"{r['date']}, commit `{r['commit']}`, {r['machine']}.",
        f"Command: `{r['command']}` ({r['variants']} variants x {r['so_mb']} MB `.so`, real ELF files carrying",
        f"machine code cut from `{r['content']}`; fixture Hub on loopback; {r['rounds']} rounds, alternating;",
        f"every wheel verified against its RECORD and the served `.so`; peak disk {r['peak_disk_gb']} GB).",
        "",
        "| run | wall s, median (each) | client CPU s | fixture server CPU s | max RSS MB | wheels MB | load avg (each) | speed-up (kernels wall / this wall) |",
        "| --- | --- | --- | --- | --- | --- | --- | --- |",
        row("kwheel-cold", "`kwheel build` cold (empty cache)"),
        row("kwheel-warm", "`kwheel build` warm (same command again)"),
        row("kwheel-rewrite", "`kwheel build` warm cache, empty `-o`"),
        row("kernels", "`kernels to-wheel` 0.10.5 (empty cache)"),
    ]
    if "kwheel-cold-level" in s:
        lines.insert(-1, row("kwheel-cold-level", f"`kwheel build --compression-level {r['also_level']}` cold"))
    lines += ["", f"kwheel: `{r['kwheel_version']}`; 1-minute load average before the run: {r['load_before']}.", ""]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.exit(main())
