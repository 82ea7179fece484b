#!/usr/bin/env bash
# What does `kwheel validate` cost beyond importing torch?
#
#   bench/validate-overhead.sh [--python PY] [--runs N] [--kwheel BIN] [--record] [WHEEL]
#
# Times, N times each (default 7, after one untimed warm-up of each):
#   bare:     PY -c "import torch"
#   validate: kwheel validate WHEEL --python PY --device cpu --json
# and reports the medians, the overhead (validate - bare; target < 2 s) and
# the median of each phase kwheel reports in --json (venv, install, check).
# The check phase itself imports torch once; "check - bare" is what the
# kernel's own check adds.
#
# Without WHEEL it builds img2gray's CPU variant for PY and its wheel under
# bench/out/ (git-ignored). --record appends the result to
# docs/performance.md ("Validation overhead"), with date, commit and machine.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

py=/usr/bin/python3
runs=7
kwheel=$root/build/kwheel
record=
wheel=
while [ $# -gt 0 ]; do
  case "$1" in
    --python) py=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --kwheel) kwheel=$2; shift 2 ;;
    --record) record=1; shift ;;
    -h|--help) sed -n '2,17p' "$0"; exit 0 ;;
    -*) echo "validate-overhead: unknown option $1" >&2; exit 2 ;;
    *) wheel=$1; shift ;;
  esac
done
[ -x "$kwheel" ] || { echo "validate-overhead: no kwheel at $kwheel (cmake --build build, or --kwheel BIN)" >&2; exit 2; }
out=$root/bench/out/validate-overhead
mkdir -p "$out"

if [ -z "$wheel" ]; then
  echo "building img2gray (CPU) for $py and its wheel under $out ..." >&2
  variant=$(scripts/build-kernel --python "$py" --cpu --out "$out/kernel" | tail -n1)
  rm -rf "$out/dist"
  "$kwheel" build "$out/kernel" --version 0.1.0 --name img2gray -o "$out/dist" -q >&2
  wheel=$(ls "$out"/dist/*.whl)
  echo "variant $(basename "$variant")" >&2
fi

# One untimed run of each first: page cache, .pyc of the interpreter's own
# packages; we measure the steady state a developer sees on a second run.
"$py" -c "import torch" >/dev/null
"$kwheel" validate "$wheel" --python "$py" --device cpu --json -q >/dev/null

: >"$out/bare.txt"
: >"$out/validate.txt"
: >"$out/phases.jsonl"
for i in $(seq "$runs"); do
  # Interleaved, so that a change in machine load hits both series alike.
  s=$(date +%s.%N); "$py" -c "import torch"; e=$(date +%s.%N)
  echo "$s $e" | awk '{ printf "%.4f\n", $2 - $1 }' >>"$out/bare.txt"
  s=$(date +%s.%N)
  "$kwheel" validate "$wheel" --python "$py" --device cpu --json -q >"$out/run.json" || {
    echo "validate-overhead: kwheel validate failed:" >&2; cat "$out/run.json" >&2; exit 1; }
  e=$(date +%s.%N)
  echo "$s $e" | awk '{ printf "%.4f\n", $2 - $1 }' >>"$out/validate.txt"
  "$py" -c 'import json, sys; d = json.load(open(sys.argv[1])); w = d["wheels"][0]; assert w["result"] == "PASS", w; print(json.dumps(w["timings"]))' "$out/run.json" >>"$out/phases.jsonl"
done

report=$("$py" - "$out" "$runs" "$wheel" "$py" <<'EOF'
import json, statistics, sys
out, runs, wheel, py = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
bare = [float(x) for x in open(f"{out}/bare.txt")]
val = [float(x) for x in open(f"{out}/validate.txt")]
phases = [json.loads(l) for l in open(f"{out}/phases.jsonl")]
med = statistics.median
def s(xs):
    return f"{med(xs):.2f} s (min {min(xs):.2f}, max {max(xs):.2f})"
b, v = med(bare), med(val)
over = v - b
lines = [
    f"- wheel: `{wheel.rsplit('/', 1)[-1]}`, `--python {py} --device cpu`, {runs} runs each, interleaved, medians",
    f"- bare `python -c \"import torch\"`: {s(bare)}",
    f"- `kwheel validate` (wall): {s(val)}",
    f"- **overhead beyond the torch import: {over:.2f} s** (target < 2 s: {'met' if over < 2 else f'missed by {over - 2:.2f} s'})",
    "- phases (kwheel `--json` timings, medians):",
]
order = ["inspect", "venv", "install", "check"]
keys = order + sorted(k for k in phases[0] if k.startswith("check.")) + ["total"]
for k in keys:
    xs = [p[k] for p in phases if k in p]
    if xs:
        indent = "    " if k.startswith("check.") else "  "
        lines.append(f"{indent}- `{k}`: {s(xs)}")
chk = med([p["check"] for p in phases])
lines.append(f"  - `check` - bare import = {chk - b:.2f} s (img2gray's own check: 1x1, 17x31, 1080x1920, non-contiguous)")
lines.append(f"  - outside the phases (interpreter probe, process start, report): {v - med([p['total'] for p in phases]):.2f} s")
print("\n".join(lines))
EOF
)
echo "$report"

if [ -n "$record" ]; then
  commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
  dirty=$(git status --porcelain --untracked-files=no -- src include 2>/dev/null | grep -q . && echo " (+ uncommitted changes in src/)" || true)
  cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n1)
  torch=$("$py" -c 'import torch; print(torch.__version__)')
  pip=$("$py" -m pip --version | awk '{print $2}')
  load=$(cut -d' ' -f1-3 /proc/loadavg)
  doc=docs/performance.md
  [ -f "$doc" ] || printf '# Performance\n' >"$doc"
  {
    printf '\n## Validation overhead (%s)\n\n' "$(date -u +%Y-%m-%d)"
    printf -- '- commit %s%s, `bench/validate-overhead.sh`\n' "$commit" "$dirty"
    printf -- '- machine: %s, %s CPUs, load average %s; Python %s, torch %s, pip %s\n' \
      "$cpu" "$(nproc)" "$load" "$("$py" -c 'import platform; print(platform.python_version())')" "$torch" "$pip"
    echo "$report"
  } >>"$doc"
  echo "appended to $doc" >&2
fi
