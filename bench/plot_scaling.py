#!/usr/bin/env python3
"""Plots bench/run's scaling figures: kwheel cold build time vs number of variants and vs .so size.

    PYTHONPATH=/tmp/bench-mpl .venv/bin/python bench/plot_scaling.py [bench/out/run-results.json] [docs/performance-scaling.png]

matplotlib is not a test requirement: `pip install --target /tmp/bench-mpl matplotlib` (outside git).
Each panel shows wall and CPU seconds against input MB, with the line through the origin and the
smallest point's throughput (what linear cost would be) for comparison.
"""
import json
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
src = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "bench" / "out" / "run-results.json"
dst = Path(sys.argv[2]) if len(sys.argv) > 2 else ROOT / "docs" / "performance-scaling.png"
res = json.loads(src.read_text())
pts, meta = res["scaling"], res["meta"]
fig, axes = plt.subplots(1, 2, figsize=(11, 4.2))
for ax, axis, title in ((axes[0], "variants", "vs number of variants"), (axes[1], "size", "vs .so size (4 variants)")):
    p = sorted((x for x in pts if x["axis"] == axis), key=lambda x: x["input_bytes"])
    if not p:
        continue
    xs = [x["input_bytes"] / 1e6 for x in p]
    labels = [f"{x['variants']}x{x['size_mb']}MB" for x in p]
    ax.plot(xs, [x["wall_s"] for x in p], "o-", label="wall s")
    ax.plot(xs, [x["cpu_s"] for x in p], "s--", label="CPU s (user+sys)")
    # linear reference: the largest point's throughput extended through the origin
    k = p[-1]["wall_s"] / xs[-1]
    ax.plot([0, xs[-1]], [0, k * xs[-1]], ":", color="grey", label="linear (through largest point)")
    for x, y, t in zip(xs, [x["wall_s"] for x in p], labels):
        ax.annotate(t, (x, y), textcoords="offset points", xytext=(4, -12), fontsize=8)
    ax.set_xlabel("input MB")
    ax.set_ylabel("seconds")
    ax.set_title(f"kwheel build, cold, {title}")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
fig.suptitle(f"{meta['date']}, commit {meta['commit']}, {meta['command']}, 1-min load {meta['load_start']}-{meta['load_end']}",
             fontsize=8)
fig.tight_layout()
fig.savefig(dst, dpi=110)
print(dst)
