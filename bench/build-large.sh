#!/usr/bin/env bash
# Benchmark (not a test): `kwheel build` on a repo of 8 variants holding a
# 200 MB .so each, timed with /usr/bin/time -v. Prints wall time, input MB/s
# and peak RSS; docs/performance.md records the figures.
#
#   bench/build-large.sh [KWHEEL] [-- extra kwheel build options]
#
# Environment: VARIANTS (8), SIZE_MB (200), KEEP=1 keeps the temp dir,
# BENCH_TMP (default $TMPDIR or /tmp) is where the ~3 GB of data go.
# The .so files are real ELF (a tiny libc-free library compiled here, as
# kwheel reads every .so for its platform tag) padded to SIZE_MB with
# random-but-compressible bytes made at run time: per 64 KiB, 16 KiB of
# random bytes twice (a repeat deflate can see, inside its 32 KiB window)
# and 32 KiB over a 16-symbol alphabet. Nothing is committed or downloaded.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
kwheel=${1:-$root/build/kwheel}
shift || true
[ "${1:-}" = "--" ] && shift
variants=${VARIANTS:-8}
size_mb=${SIZE_MB:-200}
py=$root/.venv/bin/python
[ -x "$py" ] || py=python3
[ -x "$kwheel" ] || { echo "bench: no kwheel binary at $kwheel (build it first)" >&2; exit 2; }

work=$(mktemp -d "${BENCH_TMP:-${TMPDIR:-/tmp}}/kwheel-bench-XXXXXX")
[ -n "${KEEP:-}" ] || trap 'rm -rf "$work"' EXIT

"$py" - "$work/img2gray" "$variants" "$size_mb" "$root/tests/integration" <<'PY'
import os, sys, hashlib
from pathlib import Path
repo, n, size_mb, fixtures = Path(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
sys.path.insert(0, fixtures)
if os.environ.get("BENCH_ELF"):  # a prebuilt ELF base, for machines without a C compiler
    shared_object = lambda arch: Path(os.environ["BENCH_ELF"]).read_bytes()
else:
    from elfgen import shared_object

names = [f"torch{t}-cxx11-cu{c}-x86_64-linux" for t, c in
         [("27", "126"), ("27", "128"), ("28", "126"), ("28", "128"), ("28", "129"), ("29", "126"), ("29", "128"), ("29", "130"),
          ("210", "126"), ("210", "128"), ("210", "130"), ("26", "124")]][:n]
alphabet = bytes.maketrans(bytes(range(256)), bytes(b"0123456789abcdef"[i % 16] for i in range(256)))
base = bytearray()
for _ in range(128):  # 8 MiB
    r = os.urandom(16384)
    base += r + r + os.urandom(32768).translate(alphabet)
base = bytes(base)
size = size_mb * 1000 * 1000
for name in names:
    pkg = repo / "build" / name / "img2gray"
    pkg.mkdir(parents=True)
    h = hashlib.sha256(name.encode()).hexdigest()[:7]
    (pkg / "__init__.py").write_text("from ._ops import ops\n")
    (pkg / "_ops.py").write_text(f"import torch\nops = torch.ops._img2gray_{h}\n")
    elf = shared_object("x86_64")
    with open(pkg / f"_img2gray_{h}.abi3.so", "wb") as f:
        f.write(elf)
        left, i = size - len(elf), 0
        while left > 0:
            block = (i.to_bytes(8, "little") + name.encode() + base)[: min(left, len(base))]
            f.write(block)
            left -= len(block)
            i += 1
PY

input_bytes=$(du -sb "$work/img2gray/build" | cut -f1)
echo "bench: $variants variants, $(( input_bytes / 1000000 )) MB of input in $work" >&2
sync  # the generator's dirty pages are not kwheel's to write back
load=$(cut -d' ' -f1-3 /proc/loadavg)
cmd=("$kwheel" build "$work/img2gray" --version 0.1.0 -o "$work/dist" -q "$@")
if [ -x /usr/bin/time ]; then
  /usr/bin/time -v -o "$work/time.txt" "${cmd[@]}" >"$work/kwheel.out" 2>&1 || { cat "$work/kwheel.out" >&2; exit 1; }
else  # same three figures from wait4(2), where GNU time is not installed
  "$py" - "$work/time.txt" "${cmd[@]}" >"$work/kwheel.out" 2>&1 <<'PY' || { cat "$work/kwheel.out" >&2; exit 1; }
import os, sys, time
out, cmd = sys.argv[1], sys.argv[2:]
t0 = time.perf_counter()
pid = os.fork()
if pid == 0:
    os.execvp(cmd[0], cmd)
_, status, ru = os.wait4(pid, 0)
wall = time.perf_counter() - t0
with open(out, "w") as f:
    f.write(f"\tUser time (seconds): {ru.ru_utime:.2f}\n\tSystem time (seconds): {ru.ru_stime:.2f}\n")
    f.write(f"\tElapsed (wall clock) time (h:mm:ss or m:ss): {int(wall // 60)}:{wall % 60:05.2f}\n")
    f.write(f"\tMaximum resident set size (kbytes): {ru.ru_maxrss}\n")
sys.exit(os.waitstatus_to_exitcode(status))
PY
fi
output_bytes=$(du -cb "$work"/dist/*.whl | tail -1 | cut -f1)
wall=$(sed -n 's/.*Elapsed (wall clock) time (h:mm:ss or m:ss): //p' "$work/time.txt")
rss_kb=$(sed -n 's/.*Maximum resident set size (kbytes): //p' "$work/time.txt")
user=$(sed -n 's/.*User time (seconds): //p' "$work/time.txt")
sys=$(sed -n 's/.*System time (seconds): //p' "$work/time.txt")
"$py" - "$wall" "$rss_kb" "$input_bytes" "$output_bytes" "$user" "$sys" "$variants" "$load" "$(nproc)" <<'PY'
import sys
wall, rss_kb, inp, outp, user, sys_s, n, load, cpus = sys.argv[1:]
parts = [float(p) for p in wall.split(":")]
secs = sum(p * 60 ** i for i, p in enumerate(reversed(parts)))
print(f"variants:        {n}")
print(f"input:           {int(inp) / 1e6:.0f} MB")
print(f"output (wheels): {int(outp) / 1e6:.0f} MB ({100 * int(outp) / int(inp):.0f}% of input)")
print(f"wall time:       {secs:.2f} s (user {user} s, sys {sys_s} s)")
print(f"throughput:      {int(inp) / 1e6 / secs:.0f} MB/s of input")
print(f"peak RSS:        {int(rss_kb) / 1024:.1f} MiB ({rss_kb} kB)")
print(f"RSS under 64 MiB: {'yes' if int(rss_kb) < 64 * 1024 else 'NO'}")
print(f"machine:         {cpus} CPUs, load average before the run {load}")
PY
