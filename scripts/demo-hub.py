#!/usr/bin/env python3
"""Makes the fixture Hub store that scripts/demo serves: one repo whose single
commit is what a kernel author would push (README.md, build.toml and the
built build/<variant>/... tree), on branch main and tagged for a release.

    scripts/demo-hub.py STORE ORG/NAME BUILT_DIR [--tag v0.1.0]

BUILT_DIR is scripts/build-kernel's --out (it holds build/<variant>/...).
Prints the commit sha. Re-running replaces the repo; the same content gives
the same sha (tests/hub/fixture.py makes real, deterministic git ids).
Standard library only.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "hub"))
import fixture  # noqa: E402

KERNEL = ROOT / "kernels" / "img2gray"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("store", type=Path, help="fixture Hub store root (served by tests/hub/server.py --root)")
    ap.add_argument("repo_id", help="ORG/NAME")
    ap.add_argument("built", type=Path, help="directory holding build/<variant>/<package>/...")
    ap.add_argument("--tag", default="v0.1.0", help="release tag pointing at the commit (default v0.1.0)")
    args = ap.parse_args()

    build = args.built / "build"
    files = {p.relative_to(args.built).as_posix(): p for p in sorted(build.rglob("*"))
             if p.is_file() and "__pycache__" not in p.parts and p.suffix != ".pyc"}
    if not files:
        print(f"demo-hub: no files under {build}", file=sys.stderr)
        return 2
    files["README.md"] = KERNEL / "README.md"
    files["build.toml"] = KERNEL / "build.toml"
    repo = fixture.make_repo(args.store, args.repo_id, commits=[files], branches={"main": 0}, tags={args.tag: 0},
                             messages=[f"Release {args.tag}: {', '.join(sorted(p.name for p in build.iterdir()))}"])
    print(repo.shas[0])
    return 0


if __name__ == "__main__":
    sys.exit(main())
