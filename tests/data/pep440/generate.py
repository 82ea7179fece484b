#!/usr/bin/env python3
"""Writes packaging.tsv: version strings and what packaging (the PyPA
reference implementation of PEP 440) makes of each: its str(), or
"invalid". tests/unit/packaging/pep440_test.cpp reads kwheel's parser
against it, and the valid ones in packaging's sort order.

Run with the packaging the header names (pip install packaging==26.3):
    python3 tests/data/pep440/generate.py
The strings are random sequences of the pieces PEP 440's grammar is made of
(seeded: the same file each run), plus the edge cases listed below.
"""
import random
import sys
from pathlib import Path

import packaging
from packaging.version import InvalidVersion, Version

PIECES = ["0", "1", "2", "01", "10", "999", ".", "-", "_", "!", "+", " ", "\t", "v", "V", "a", "b", "c", "rc", "alpha", "beta",
          "pre", "preview", "post", "rev", "r", "dev", "DEV", "Post", "x", "l", "ab", "cu130", "torch2.11", "*"]
EDGES = ["1.0", "1.0+01", "1.0+a.01", "1.0a-", "1!2.0", "v1.0rc", "1.0-1", "1.0.post", "1.0-r1", "1.0+A-b_C", " 1.0 ", "1.0\t",
         "1.0\x0b", "1.0\x0c", "1.0alpha1", "1.0preview2", "1.0pre", "1.0rev", "1.0r", "1.0a.post1", "1.0a--1", "1.0.dev-",
         "1.0+", "1.0+.a", "1.0+a.", "1.0+a..b", "!1", "1!", "1.", ".1", "1..0", "1.0-", "1.0--1", "1.0_1", "1.0.1a",
         "0.1.0+torch2.11.cu130", "1.0+torch.cpu", "2.0.0rc1.post2.dev3+abc.7", "1e3", "1.0 a1", "v", "", " ",
         "99999999999999999999", "1.99999999999999999999", "1.0+99999999999999999999", "1.0a99999999999999999999"]


def structured(rng: random.Random) -> str:
    """A version the grammar allows, spelled as the grammar lets it be."""
    sep = lambda: rng.choice(["", "", ".", "-", "_"])  # noqa: E731
    num = lambda: rng.choice(["", "0", "1", "2", "10", "01"])  # noqa: E731
    s = rng.choice(["", "", "", "v", "V", " "]) + rng.choice(["", "", "", "1!", "0!"])
    s += ".".join(rng.choice(["0", "1", "2", "10", "00"]) for _ in range(rng.randint(1, 4)))
    if rng.random() < 0.4:
        s += sep() + rng.choice(["a", "b", "c", "rc", "alpha", "beta", "pre", "preview", "RC", "Alpha"]) + sep() + num()
    if rng.random() < 0.3:
        s += rng.choice(["-" + rng.choice(["0", "1", "3"]), sep() + rng.choice(["post", "rev", "r", "POST"]) + sep() + num()])
    if rng.random() < 0.3:
        s += sep() + rng.choice(["dev", "Dev"]) + sep() + num()
    if rng.random() < 0.4:
        s += "+" + rng.choice(["-", "_", "."]).join(rng.choice(["torch2", "cu130", "0", "07", "abc", "ABC", "1a"]) for _ in range(rng.randint(1, 3)))
    return s + rng.choice(["", "", "", " ", "\n"])


def main() -> None:
    rng = random.Random(440)
    strings = list(EDGES)
    seen = set(strings)
    while len(strings) < 3000:
        s = structured(rng)
        if s not in seen:
            seen.add(s)
            strings.append(s)
    while len(strings) < 6000:
        s = "".join(rng.choice(PIECES) for _ in range(rng.randint(1, 8)))
        if rng.random() < 0.7:  # most start with a release, as versions do
            s = rng.choice(["1", "1.0", "0.1.0", "2!1.0", "v1.2"]) + s
        if s not in seen:
            seen.add(s)
            strings.append(s)
    out = [f"# packaging {packaging.__version__}: input (escaped as Python's unicode_escape) TAB str(Version(input)) or 'invalid'"]
    for s in strings:
        try:
            result = str(Version(s))
        except InvalidVersion:
            result = "invalid"
        out.append(s.encode("unicode_escape").decode("ascii") + "\t" + result)
    Path(__file__).with_name("packaging.tsv").write_text("\n".join(out) + "\n")
    valid = sorted({line.split("\t")[1] for line in out[1:] if not line.endswith("\tinvalid")}, key=Version)
    lines = [f"# packaging {packaging.__version__}: the valid versions above, normalised, in packaging's order, each after"
             " '<' or '==' (how it compares with the one before)"]
    for i, v in enumerate(valid):
        lines.append(("==" if i and Version(valid[i - 1]) == Version(v) else "<") + "\t" + v)
    Path(__file__).with_name("packaging-sorted.txt").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    sys.exit(main())
