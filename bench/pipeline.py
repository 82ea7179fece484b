#!/usr/bin/env python3
"""bench/run's implementation: kwheel build vs kernels to-wheel vs the pigz floor, one table.

Scenarios (sizes x BENCH_SCALE):
  cold      24 variants x 100 MB, empty caches: kwheel build vs kernels to-wheel, alternated
  warm      the same again with the caches (and kwheel's -o) full, nothing changed
  floor     kwheel --no-reuse from the full download cache at -6 and -1 vs `pigz -p 2 -N -c` over
            the same bytes to /dev/null, with wheel sizes
  memory    one variant with a 1 GB .so (kwheel cold; peak RSS must stay < 64 MB)
  scaling   kwheel cold vs number of variants (1, 4, 16, 64 x 10 MB) and vs .so size (10, 100, 400 MB
            x 4 variants); plotted by bench/plot_scaling.py
  lock      `build --lock` of 4 kernels x 6 variants x 60 MB vs the same 24 .so as one repo, cold and from
            cache, alternated, medians of >= 3 rounds (the "floor" column holds the one-repo figure)

The .so files are real ELF (tests/integration/elfgen.py's shared_object()) followed by a slice of
libtorch_cpu.so.1.13.0 rotated to a different offset per variant (real machine code, not random,
not zeros). Every output wheel of every run is verified against its RECORD, and its .so against the
served file (a streaming verifier like bench/hub-vs-kernels.py's), in the same run.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import base64
import csv
import io
import platform
import zipfile
import json
import os
import shutil
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "integration"))
sys.path.insert(0, str(ROOT / "tests" / "hub"))
import fixture as hubfix  # noqa: E402
from elfgen import shared_object  # noqa: E402



class H:
    """The two helpers of tests/integration/hubtest.py that bench/run needs."""

    @staticmethod
    def sha256_file(path) -> str:
        h = hashlib.sha256()
        with open(path, "rb") as f:
            for chunk in iter(lambda: f.read(1 << 20), b""):
                h.update(chunk)
        return h.hexdigest()

    @staticmethod
    def clean_env(home: Path | None = None) -> dict:
        """The environment minus HF_* / proxy settings, HF_HOME in `home`."""
        env = {k: v for k, v in os.environ.items()
               if not k.startswith(("HF_", "HUGGINGFACE_", "KWHEEL_")) and k.lower() not in
               ("http_proxy", "https_proxy", "all_proxy", "no_proxy")}
        env["NO_PROXY"] = env["no_proxy"] = "127.0.0.1,localhost"
        if home is not None:
            env["HF_HOME"] = str(home)
        env.setdefault("SOURCE_DATE_EPOCH", "1735689600")
        return env


class hvk:  # noqa: N801
    """Streaming RECORD verifier and variant names, as in bench/hub-vs-kernels.py (kept here so that
    bench/run does not depend on that script)."""

    H = H

    @staticmethod
    def variant_names(n: int) -> list[str]:
        torch = ["26", "27", "28", "29", "210", "211"]
        backends = ["cu118", "cu124", "cu126", "cu128", "cu129", "cpu"]
        return [f"torch{t}-cxx11-{b}-x86_64-linux" for t in torch for b in backends][:n]

    @staticmethod
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
                    assert rows[n][1:] == ["", ""], f"{path.name}: RECORD lists a hash for itself"
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

    @staticmethod
    def verify_set(out_dir: Path, so_shas: dict[str, str]) -> int:
        """Every wheel sound, one per variant, each carrying its variant's .so byte for byte."""
        wheels = sorted(out_dir.glob("*.whl"))
        assert len(wheels) == len(so_shas), f"{len(wheels)} wheels in {out_dir}, expected {len(so_shas)}"
        seen = set()
        for w in wheels:
            (so,) = [h for n, h in hvk.verify_wheel(w).items() if n.endswith(".so")]
            assert so in set(so_shas.values()), f"{w.name}: its .so is not one the Hub served"
            seen.add(so)
        assert seen == set(so_shas.values())
        return len(wheels)

    @staticmethod
    def machine() -> str:
        cpu = next((ln.split(":", 1)[1].strip() for ln in Path("/proc/cpuinfo").read_text().splitlines()
                    if ln.startswith("model name")), "?")
        mem = int(Path("/proc/meminfo").read_text().split()[1]) // (1024 * 1024)
        return f"{os.cpu_count()} CPU ({cpu}), {mem} GiB RAM, {platform.system()} {platform.release()}"

SCALE = float(os.environ.get("BENCH_SCALE", "1"))
ROUNDS = int(os.environ.get("BENCH_ROUNDS", "1"))
MAX_LOAD = float(os.environ.get("BENCH_MAX_LOAD", "1.5"))
LOAD_WAIT = float(os.environ.get("BENCH_LOAD_WAIT", "30"))
SKIP = set(filter(None, os.environ.get("BENCH_SKIP", "").split(",")))
KWHEEL = os.environ.get("KWHEEL_BIN") or str(ROOT / "build" / "kwheel")
KERNELS = str(ROOT / ".venv-bench" / "bin" / "kernels")  # kernels 0.10.5, made by bench/setup-venv (bench/run)
WORK = Path(os.environ.get("BENCH_WORK") or ROOT / "bench" / "out" / "run").resolve()
SOURCE = Path("/usr/lib/x86_64-linux-gnu/libtorch_cpu.so.1.13.0")
NAME = "kernel_bench"
VERSION = "0.1.0"
MB = 1_000_000


def log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def mb(x: float) -> int:
    return max(1, round(x * SCALE)) * MB


# --------------------------------------------------------------------------- content

_SRC = SOURCE.read_bytes()


def write_so(path: Path, index: int, size: int) -> None:
    """A real ELF .so of `size` bytes: the tiny library, then libtorch_cpu rotated by a per-variant offset."""
    head = shared_object()
    n = size - len(head)
    off = (index * 7_919_993 + 4096) % len(_SRC)
    with open(path, "wb") as f:
        f.write(head)
        while n > 0:
            piece = _SRC[off: off + min(n, 8 * MB)]
            f.write(piece)
            n -= len(piece)
            off = (off + len(piece)) % len(_SRC)


def variant_names(n: int) -> list[str]:
    if n <= 36:
        return hvk.variant_names(n)
    return [f"torch2{t}-cxx11-{b}-x86_64-linux" for t in range(10, 30) for b in ("cu126", "cu128", "cu130", "cpu")][:n]


def make_repo(store: Path, repo: str, n: int, size: int) -> dict[str, str]:
    """Writes the repo into the fixture store; returns {variant: sha256 of its .so}."""
    return make_repo_of(store, repo, list(range(n)), size)[0]


def make_repo_of(store: Path, repo: str, indexes: list[int], size: int) -> tuple[dict[str, str], str]:
    """The repo of variants variant_names(...)[i] for i in indexes, each .so the bytes of write_so(i):
    the same index gives the same variant and bytes in any repo. Returns ({variant: .so sha256}, commit)."""
    layout = WORK / "layout"
    shutil.rmtree(layout, ignore_errors=True)
    shas = {}
    names = variant_names(max(indexes) + 1)
    for i, v in ((i, names[i]) for i in indexes):
        pkg = layout / "build" / v / NAME
        pkg.mkdir(parents=True)
        ops = hashlib.sha256(v.encode()).hexdigest()[:7]
        so = pkg / f"_{NAME}_{ops}.abi3.so"
        write_so(so, i, size)
        (pkg / "__init__.py").write_text("from ._ops import ops\n")
        (pkg / "_ops.py").write_text(f"import torch\nops = torch.ops._{NAME}_{ops}\n")
        (layout / "build" / v / "metadata.json").write_text(json.dumps({"name": NAME.replace("_", "-"), "version": 1}))
        shas[v] = hvk.H.sha256_file(so)
    handle = hubfix.make_repo(store, repo, [layout], tags={f"v{VERSION}": 0})
    shutil.rmtree(layout)
    return shas, handle.sha(0)


def repo_files(store: Path, repo: str) -> list[Path]:
    return sorted(p for p in (store / repo / "commits").rglob("*") if p.is_file())


# --------------------------------------------------------------------------- measuring


def load1() -> float:
    return os.getloadavg()[0]


def settle() -> float:
    """Waits (bounded) for the 1-minute load to drop below BENCH_MAX_LOAD; returns the load."""
    t0 = time.time()
    while load1() >= MAX_LOAD and time.time() - t0 < LOAD_WAIT:
        time.sleep(3)
    return round(load1(), 2)


def timed(cmd: list[str], *, env=None, cwd=None, label: str, stdout=subprocess.PIPE) -> dict:
    load = settle()
    tv = WORK / f"{label}.time"
    t0 = time.perf_counter()
    r = subprocess.run(["/usr/bin/time", "-v", "-o", str(tv), *cmd], env=env, cwd=cwd, stdout=stdout,
                       stderr=subprocess.PIPE, text=True)
    wall = time.perf_counter() - t0
    if r.returncode != 0:
        raise SystemExit(f"{label} failed ({r.returncode}):\n{(r.stdout or '')[-3000:]}\n{r.stderr[-3000:]}")
    f = {}
    for line in tv.read_text().splitlines():
        k, _, v = line.strip().rpartition(": ")
        f[k] = v
    res = {"label": label, "wall_s": round(wall, 2), "user_s": float(f["User time (seconds)"]),
           "sys_s": float(f["System time (seconds)"]), "rss_mb": round(int(f["Maximum resident set size (kbytes)"]) / 1024, 1),
           "load": load, "stdout": r.stdout}
    log(f"{label}: {res['wall_s']} s wall, {res['user_s'] + res['sys_s']:.1f} s CPU, {res['rss_mb']} MB RSS, load {load}")
    return res


def wheels_size(d: Path) -> int:
    return sum(p.stat().st_size for p in d.glob("*.whl"))


def dir_shas(d: Path) -> dict[str, str]:
    return {p.name: hvk.H.sha256_file(p) for p in sorted(d.glob("*.whl"))}


class Bench:
    def __init__(self, hub, store: Path):
        self.hub, self.store = hub, store
        self.rows: list[dict] = []
        self.scaling: list[dict] = []
        self.env = hvk.H.clean_env(WORK / "kw-home")
        (WORK / "kw-home").mkdir(exist_ok=True)

    def prime(self, repo: str) -> None:
        # the fixture hashes a repo once, on its first listing: not part of any timing
        with urllib.request.build_opener(urllib.request.ProxyHandler({})).open(
                f"{self.hub.endpoint}/api/models/{repo}/tree/v{VERSION}/build?recursive=true", timeout=900) as r:
            r.read()

    def kwheel(self, repo, cache: Path, out: Path, label: str, *extra) -> dict:
        # `repo` is a repo id, or ["--lock", FILE]
        source = repo if isinstance(repo, list) else [repo, "--version", VERSION]
        cmd = [KWHEEL, "build", *source, "--endpoint", self.hub.endpoint, "--cache-dir", str(cache), "-o", str(out),
               "--json", "-q", *extra]
        r = timed(cmd, env=self.env, cwd=WORK, label=label)
        rep = json.loads(r.pop("stdout"))
        assert rep.get("ok"), rep
        r["report"] = rep
        r["wheel_bytes"] = wheels_size(out)
        return r

    def kernels(self, repo, home: Path, out: Path, label: str) -> dict:
        out.mkdir(parents=True, exist_ok=True)
        r = timed([KERNELS, "to-wheel", repo, VERSION], env=hubfix.client_env(self.hub, home), cwd=out, label=label)
        r.pop("stdout")
        r["wheel_bytes"] = wheels_size(out)
        return r

    def pigz(self, files: list[Path], level: int, label: str) -> dict:
        r = timed(["pigz", "-p", "2", f"-{level}", "-c", *map(str, files)], label=label, stdout=subprocess.DEVNULL)
        r.pop("stdout")
        return r

    def row(self, scenario, kw=None, kern=None, floor=None, note="", input_bytes=0):
        row = {"scenario": scenario, "kwheel": kw, "kernels": kern, "floor": floor, "note": note, "input_bytes": input_bytes}
        self.rows.append(row)
        return row


def verify(out: Path, shas: dict[str, str], label: str) -> None:
    t0 = time.perf_counter()
    n = hvk.verify_set(out, shas)
    log(f"{label}: {n} wheels verified (RECORD, .so = served) in {time.perf_counter() - t0:.0f}s")


def rm(*paths: Path) -> None:
    for p in paths:
        shutil.rmtree(p, ignore_errors=True)


# --------------------------------------------------------------------------- scenarios


def main_repo(b: Bench) -> None:
    repo, n, size = "bench-main/kernel-bench", 24, mb(100)
    t0 = time.perf_counter()
    shas = make_repo(b.store, repo, n, size)
    b.prime(repo)
    files = repo_files(b.store, repo)
    total = sum(p.stat().st_size for p in files)
    log(f"main repo: {n} x {size // MB} MB in {time.perf_counter() - t0:.0f}s")
    label = f"{n} x {size // MB} MB"
    kc, ko = WORK / "kw-cache", WORK / "kw-out"
    kh, kout = WORK / "k-home", WORK / "k-out"
    cold_shas = None
    if not SKIP & {"cold", "warm"}:
        kws, kerns = [], []
        for rnd in range(ROUNDS):
            order = ("kw", "k") if rnd % 2 == 0 else ("k", "kw")
            for who in order:
                if who == "kw":
                    rm(kc, ko)
                    r = b.kwheel(repo, kc, ko, f"kwheel-cold-{rnd}")
                    verify(ko, shas, r["label"])
                    cold_shas = dir_shas(ko)
                    kws.append(r)
                else:
                    rm(kh, kout)
                    kh.mkdir()
                    r = b.kernels(repo, kh, kout, f"kernels-cold-{rnd}")
                    verify(kout, shas, r["label"])
                    kerns.append(r)
        best = lambda rs: min(rs, key=lambda r: r["wall_s"])  # noqa: E731
        b.row(f"cold, {label}", best(kws), best(kerns), input_bytes=total,
              note=f"{ROUNDS} round(s) alternated, table shows the best of each; kwheel " + ", ".join(str(r["wall_s"]) for r in kws)
              + "; kernels " + ", ".join(str(r["wall_s"]) for r in kerns))
        # warm: caches full, nothing changed (kernels' cache is the one its cold run filled)
        r = b.kwheel(repo, kc, ko, "kwheel-warm")
        reused = [w.get("reused") for w in r["report"].get("wheels", r["report"].get("variants", []))]
        assert r["report"]["transfers"]["bytes_downloaded"] == 0, "warm build downloaded"
        assert dir_shas(ko) == cold_shas, "warm build changed the wheels"
        verify(ko, shas, "kwheel-warm")
        rm(kout)
        k = b.kernels(repo, kh, kout, "kernels-warm")
        verify(kout, shas, "kernels-warm")
        rm(kh, kout)
        b.row(f"warm, {label}", r, k, input_bytes=total,
              note=f"kwheel reused {sum(1 for x in reused if x)}/{len(reused)} wheels, 0 bytes downloaded")
    if "floor" not in SKIP:
        if not kc.exists():
            rm(ko)
            b.kwheel(repo, kc, ko, "kwheel-fill-cache")
            cold_shas = dir_shas(ko)
        for level in (6, 1):
            rm(ko)
            extra = ["--no-reuse"] + ([] if level == 6 else ["--compression-level", str(level)])
            r = b.kwheel(repo, kc, ko, f"kwheel-noreuse-l{level}", *extra)
            assert r["report"]["transfers"]["bytes_downloaded"] == 0
            verify(ko, shas, r["label"])
            same = ""
            if level == 6 and cold_shas is not None:
                assert dir_shas(ko) == cold_shas, "a fresh --no-reuse build differs from the cold build"
                same = "; wheels byte-identical to the cold (and reused) ones"
            p = b.pigz(files, level, f"pigz-l{level}")
            b.row(f"from cache, --no-reuse, level {level}", r, None, p, input_bytes=total,
                  note=f"kwheel CPU {r['user_s'] + r['sys_s']:.1f} s, pigz CPU {p['user_s'] + p['sys_s']:.1f} s{same}")
    rm(kc, ko, kh, kout, b.store / repo.split('/')[0])


def memory(b: Bench) -> None:
    repo, size = "bench-big/kernel-bench", mb(1000)
    shas = make_repo(b.store, repo, 1, size)
    b.prime(repo)
    files = repo_files(b.store, repo)
    kc, ko = WORK / "big-cache", WORK / "big-out"
    rm(kc, ko)
    r = b.kwheel(repo, kc, ko, "kwheel-1gb-cold")
    verify(ko, shas, r["label"])
    p = b.pigz(files, 6, "pigz-1gb")
    b.row(f"memory, 1 x {size // MB} MB .so, cold", r, None, p, input_bytes=sum(f.stat().st_size for f in files),
          note="peak RSS target < 64 MB")
    rm(kc, ko, b.store / repo.split('/')[0])


def lock(b: Bench) -> None:
    """`build --lock` of 4 kernels x 6 variants against the same 24 .so files as one repo's 24 variants,
    both from a full download cache with --no-reuse (packing only; the kernels share one deflate pool),
    and both cold (downloads too). Rounds alternated; the table shows the median of each."""
    size = mb(60)
    lock_file = WORK / "kernels.lock"
    entries, shas = [], {}
    for k in range(4):
        repo = f"bench-lock-{k}/kernel-bench"
        s, commit = make_repo_of(b.store, repo, list(range(6 * k, 6 * k + 6)), size)
        b.prime(repo)
        shas.update(s)
        entries.append({"repo_id": repo, "sha": commit, "variants": {}})
    lock_file.write_text(json.dumps(entries, indent=2))
    one = "bench-lock-all/kernel-bench"
    assert make_repo_of(b.store, one, list(range(24)), size)[0] == shas
    b.prime(one)
    total = 24 * size
    cache, out = WORK / "lock-cache", WORK / "lock-out"
    runs: dict[str, list[dict]] = {"lock": [], "one": []}
    for rnd in range(max(3, ROUNDS)):
        for who in (("lock", "one") if rnd % 2 == 0 else ("one", "lock")):
            for cold in (True, False):
                if cold:
                    rm(cache)
                rm(out)
                src = ["--lock", str(lock_file)] if who == "lock" else one
                r = b.kwheel(src, cache, out, f"kwheel-{who}-{'cold' if cold else 'cached'}-{rnd}", "--no-reuse")
                verify(out, shas, r["label"])
                r["cold"] = cold
                runs[who].append(r)
    med = lambda rs: sorted(rs, key=lambda r: r["wall_s"])[len(rs) // 2]  # noqa: E731
    for cold in (True, False):
        lk = [r for r in runs["lock"] if r["cold"] == cold]
        on = [r for r in runs["one"] if r["cold"] == cold]
        what = "cold" if cold else "from cache, --no-reuse"
        b.row(f"lock, 4 kernels x 6 x {size // MB} MB, {what}", med(lk), None, med(on), input_bytes=total,
              note=f"'floor' here is the same 24 .so as one repo of 24 variants; medians of {len(lk)} alternated rounds; "
                   f"lock {[r['wall_s'] for r in lk]}, one repo {[r['wall_s'] for r in on]}")
    rm(cache, out, *(b.store / f"bench-lock-{k}" for k in range(4)), b.store / "bench-lock-all")


def scaling(b: Bench) -> None:
    points = [("variants", n, mb(10)) for n in (1, 4, 16, 64)] + [("size", 4, mb(s)) for s in (10, 100, 400)]
    for axis, n, size in points:
        repo = f"bench-scale-{n}x{size // MB}/kernel-bench"
        if not (b.store / repo).exists():
            shas = make_repo(b.store, repo, n, size)
            b.prime(repo)
        else:
            shas = json.loads((WORK / f"{n}x{size}.json").read_text())
        (WORK / f"{n}x{size}.json").write_text(json.dumps(shas))
        kc, ko = WORK / "sc-cache", WORK / "sc-out"
        rm(kc, ko)
        r = b.kwheel(repo, kc, ko, f"kwheel-scale-{axis}-{n}x{size // MB}")
        verify(ko, shas, r["label"])
        total = sum(f.stat().st_size for f in repo_files(b.store, repo))
        b.scaling.append({"axis": axis, "variants": n, "size_mb": size // MB, "input_bytes": total,
                          "wall_s": r["wall_s"], "cpu_s": round(r["user_s"] + r["sys_s"], 2), "rss_mb": r["rss_mb"],
                          "load": r["load"], "wheel_bytes": r["wheel_bytes"]})
        b.row(f"scaling: {n} x {size // MB} MB", r, None, input_bytes=total)
        rm(kc, ko)
    for p in b.store.glob("bench-scale-*"):
        rm(p)


# --------------------------------------------------------------------------- table


def fmt_table(rows: list[dict]) -> str:
    hdr = ["scenario", "kwheel s", "kernels s", "kernels/kwheel", "floor s", "kwheel/floor", "CPU s kwheel/kernels/floor",
           "kwheel RSS MB",
           "kernels RSS MB", "input MB", "kwheel wheels MB", "kernels wheels MB", "load"]
    out = ["| " + " | ".join(hdr) + " |", "|" + "---|" * len(hdr)]
    for r in rows:
        kw, k, f = r["kwheel"], r["kernels"], r["floor"]
        loads = "/".join(str(x["load"]) for x in (kw, k, f) if x)
        cells = [r["scenario"], f"{kw['wall_s']:.2f}" if kw else "-", f"{k['wall_s']:.2f}" if k else "-",
                 f"{k['wall_s'] / kw['wall_s']:.1f}x" if kw and k else "-", f"{f['wall_s']:.2f}" if f else "-",
                 f"{kw['wall_s'] / f['wall_s']:.2f}" if kw and f else "-",
                 "/".join(f"{x['user_s'] + x['sys_s']:.1f}" if x else "-" for x in (kw, k, f)),
                 f"{kw['rss_mb']:.0f}" if kw else "-",
                 f"{k['rss_mb']:.0f}" if k else "-", f"{r['input_bytes'] / MB:.0f}",
                 f"{kw['wheel_bytes'] / MB:.0f}" if kw else "-", f"{k['wheel_bytes'] / MB:.0f}" if k else "-", loads]
        out.append("| " + " | ".join(cells) + " |")
    return "\n".join(out)


def render(path: str) -> int:
    """Prints the table of a results file again (bench/out/run-results.json)."""
    res = json.loads(Path(path).read_text())
    m = res["meta"]
    print(f"{m['date']}, commit {m['commit']}, `{m['command']}`, {m['machine']}, "
          f"1-min load {m['load_start']} at start, {m['load_end']} at end, {m['total_s']} s in all\n")
    print(fmt_table(res["rows"]))
    for r in res["rows"]:
        if r["note"]:
            print(f"- {r['scenario']}: {r['note']}")
    return 0


def main() -> int:
    if sys.argv[1:2] == ["--table"]:
        return render(sys.argv[2])
    t_start = time.perf_counter()
    rm(WORK)
    WORK.mkdir(parents=True)
    store = WORK / "store"
    store.mkdir()
    commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True).stdout.strip()
    meta = {"date": dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"), "commit": commit,
            "scale": SCALE, "rounds": ROUNDS, "load_start": round(load1(), 2),
            "command": f"BENCH_SCALE={SCALE:g} BENCH_ROUNDS={ROUNDS} bench/run", "machine": hvk.machine()}
    log(f"bench/run scale {SCALE}, load {meta['load_start']}, work {WORK}")
    try:
        with hubfix.hub_server(store) as hub:
            b = Bench(hub, store)
            if not SKIP >= {"cold", "warm", "floor"}:
                main_repo(b)
            if "memory" not in SKIP:
                memory(b)
            if "scaling" not in SKIP:
                scaling(b)
            if "lock" not in SKIP:
                lock(b)
        meta["total_s"] = round(time.perf_counter() - t_start)
        meta["load_end"] = round(load1(), 2)
        res = {"meta": meta, "rows": b.rows, "scaling": b.scaling}
        (WORK.parent / "run-results.json").write_text(json.dumps(res, indent=1, default=str) + "\n")
        print(f"{meta['date']}, commit {commit}, `{meta['command']}`, {meta['machine']}, "
              f"1-min load {meta['load_start']} at start, {meta['load_end']} at end, {meta['total_s']} s in all\n")
        print(fmt_table(b.rows))
        for r in b.rows:
            if r["note"]:
                print(f"- {r['scenario']}: {r['note']}")
        return 0
    finally:
        if not os.environ.get("BENCH_KEEP"):
            rm(WORK)


if __name__ == "__main__":
    sys.exit(main())
