#!/usr/bin/env python3
"""Makes the fixture Hub store that scripts/demo and scripts/gpu-e2e serve:
one kernel-type repo shaped the way `kernel-builder upload` shapes it today
(README.md on main, the built variants on branch vN forked from it), its
org a trusted kernel publisher, as kernels 0.17 checks.

    scripts/demo-hub.py STORE ORG/NAME BUILT_DIR [--kernel-version 1]

BUILT_DIR is scripts/build-kernel's --out (it holds build/<variant>/...).
Prints the vN commit sha. Re-running replaces the repo; the same content
gives the same sha (tests/hub/fixture.py makes real, deterministic git ids).
Standard library only.
"""

from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "hub"))
import fixture  # noqa: E402
import kernel_repos  # noqa: E402

KERNEL = ROOT / "kernels" / "img2gray"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("store", type=Path, help="fixture Hub store root (served by tests/hub/server.py --root)")
    ap.add_argument("repo_id", help="ORG/NAME")
    ap.add_argument("built", type=Path, help="directory holding build/<variant>/...")
    ap.add_argument("--kernel-version", type=int, default=1, help="the version branch vN the build goes to (default 1)")
    args = ap.parse_args()

    build = args.built / "build"
    files = {p.relative_to(args.built).as_posix(): p for p in sorted(build.rglob("*"))
             if p.is_file() and "__pycache__" not in p.parts and p.suffix != ".pyc"}
    if not files:
        print(f"demo-hub: no files under {build}", file=sys.stderr)
        return 2
    files["build.toml"] = KERNEL / "build.toml"
    org = args.repo_id.partition("/")[0]
    shutil.rmtree(args.store / args.repo_id, ignore_errors=True)
    fixture.set_org(args.store, org, trustedKernelPublisher=True)
    repo = kernel_repos.make_kernel_repo(args.store, args.repo_id, {args.kernel_version: files},
                                         readme=(KERNEL / "README.md").read_bytes())
    print(repo.versions[args.kernel_version])
    return 0


if __name__ == "__main__":
    sys.exit(main())
