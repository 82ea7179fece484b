#!/usr/bin/env python3
"""metadata.json for a kernel variant, as kernel-builder writes it and kernels
(kernels-data) reads it. Standard library only, Python >= 3.9.

  kernel_metadata.py write VARIANT_DIR --name NAME --id ID --version N
                     --license LICENSE --backend cpu|cuda|... [--archs 7.5,9.0+PTX]
      Hashes the variant's files and writes VARIANT_DIR/metadata.json, byte
      for byte what `kernel-builder hash` leaves behind: serde_json's pretty
      form (2-space indent, no trailing newline), keys in kernels-data's
      Metadata order, digest.files sorted.
  kernel_metadata.py digest VARIANT_DIR [--algorithm sha256|sha512]
      Prints the digest of the variant's files as JSON.
  kernel_metadata.py verify VARIANT_DIR
      Recomputes the digest and compares it with metadata.json's; exit status
      1 with one line per violation (kernels' wording) when they differ.

The digest follows kernels-data's Digest::hash_variant (digest.rs): every
regular file under VARIANT_DIR (a symlink counts as the file it points to;
symlinked directories are not entered), except metadata.json and
metadata.json.sigstore directly in VARIANT_DIR, anything with a __pycache__
path component and *.pyc files; keyed by the '/'-separated path relative to
VARIANT_DIR, valued by the standard (padded) base64 of the file's sha256.
"""

import argparse
import base64
import hashlib
import json
import os
import re
import sys

_NAME_RE = re.compile(r"^[a-z][-a-z0-9]*[a-z0-9]$")  # kernels-data KernelName
_ID_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")  # a Python module name
_ALGORITHMS = ("sha256", "sha512")


def _extension(name):
    """Rust's Path::extension: text after the last dot, none for '.name'."""
    before, dot, after = name.rpartition(".")
    return after if dot and before else None


def hash_variant(variant_dir, algorithm="sha256"):
    """{relative path: base64 digest}, as Digest::hash_variant computes it."""
    if algorithm not in _ALGORITHMS:
        raise ValueError(f"unknown digest algorithm {algorithm!r}")
    files = {}
    for dirpath, dirnames, filenames in os.walk(variant_dir, onerror=_raise):
        dirnames.sort()
        for name in sorted(filenames):
            path = os.path.join(dirpath, name)
            real = os.path.realpath(path, strict=True) if sys.version_info >= (3, 10) else _realpath_strict(path)
            if not os.path.isfile(real):
                continue
            rel = os.path.relpath(path, variant_dir).replace(os.sep, "/")
            if rel in ("metadata.json", "metadata.json.sigstore"):
                continue
            parts = path.replace(os.sep, "/").split("/")
            if "__pycache__" in parts or _extension(name) == "pyc":
                continue
            h = hashlib.new(algorithm)
            with open(path, "rb") as f:
                for chunk in iter(lambda: f.read(1 << 20), b""):
                    h.update(chunk)
            files[rel] = base64.b64encode(h.digest()).decode("ascii")
    return dict(sorted(files.items()))


def _raise(err):
    raise err


def _realpath_strict(path):
    # Python 3.9 has no realpath(strict=True); a dangling symlink must fail
    # as it does in kernels-data (fs::canonicalize).
    if not os.path.exists(path):
        raise FileNotFoundError(f"dangling symlink: {path}")
    return os.path.realpath(path)


def metadata_json(name, kernel_id, version, license, backend, archs, digest_files, algorithm="sha256"):
    """The metadata.json text, keys in kernels-data's Metadata field order."""
    backend_info = {"type": backend}
    if archs is not None:
        backend_info["archs"] = archs
    metadata = {
        "name": name,
        "id": kernel_id,
        "version": version,
        "license": license,
        "python-depends": [],
        "kernel-depends": [],
        "backend": backend_info,
        "digest": {"algorithm": algorithm, "files": digest_files},
    }
    # serde_json::to_writer_pretty: 2-space indent, ": " and "," separators,
    # non-ASCII unescaped, no newline at the end.
    return json.dumps(metadata, indent=2, ensure_ascii=False)


def write(args):
    if not _NAME_RE.match(args.name):
        sys.exit(f"kernel_metadata: invalid kernel name {args.name!r} (must match {_NAME_RE.pattern})")
    if not _ID_RE.match(args.id):
        sys.exit(f"kernel_metadata: id {args.id!r} is not a valid Python module name")
    if args.version < 0:
        sys.exit("kernel_metadata: --version must be >= 0")
    archs = None
    if args.archs is not None:
        # kernel-builder's add_build_metadata.py: sorted(set(...)) of the
        # list, i.e. sorted as strings ("10.0" < "7.5").
        archs = sorted(set(a for a in re.split(r"[,;]", args.archs) if a))
    elif args.backend in ("cuda", "rocm"):
        sys.exit(f"kernel_metadata: a {args.backend} variant needs --archs (kernels checks the device against them)")
    if not os.path.isdir(args.variant_dir):
        sys.exit(f"kernel_metadata: not a directory: {args.variant_dir}")
    files = hash_variant(args.variant_dir, args.algorithm)
    if not files:
        sys.exit(f"kernel_metadata: no files to hash in {args.variant_dir}")
    text = metadata_json(args.name, args.id, args.version, args.license, args.backend, archs, files, args.algorithm)
    dest = os.path.join(args.variant_dir, "metadata.json")
    tmp = dest + ".tmp"
    with open(tmp, "w", encoding="utf-8", newline="") as f:
        f.write(text)
    os.chmod(tmp, 0o644)
    os.replace(tmp, dest)


def digest(args):
    print(json.dumps({"algorithm": args.algorithm, "files": hash_variant(args.variant_dir, args.algorithm)}, indent=2))


def verify(args):
    path = os.path.join(args.variant_dir, "metadata.json")
    with open(path, "rb") as f:
        metadata = json.loads(f.read())
    expected = metadata.get("digest")
    if not isinstance(expected, dict):
        sys.exit(f"kernel_metadata: {path} has no digest")
    algorithm = expected.get("algorithm")
    if algorithm not in _ALGORITHMS:
        sys.exit(f"kernel_metadata: {path}: unknown digest algorithm {algorithm!r}")
    expected_files = expected.get("files") or {}
    got = hash_variant(args.variant_dir, algorithm)
    # Digest::validate's order and wording.
    violations = []
    for rel, want in sorted(expected_files.items()):
        if rel not in got:
            violations.append(f"Missing file: {rel}")
        elif got[rel] != want:
            violations.append(f"File hash mismatch for {rel}: expected: {want}, got: {got[rel]}")
    violations += [f"Unknown file: {rel}" for rel in got if rel not in expected_files]
    if violations:
        print("\n".join(violations))
        sys.exit(1)
    print(f"ok: {len(got)} files match the {algorithm} digest in {path}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("write", help="hash VARIANT_DIR and write its metadata.json")
    p.add_argument("variant_dir")
    p.add_argument("--name", required=True)
    p.add_argument("--id", required=True)
    p.add_argument("--version", type=int, required=True)
    p.add_argument("--license", required=True)
    p.add_argument("--backend", required=True,
                   choices=["cann", "cpu", "cuda", "metal", "neuron", "rocm", "tpu", "xpu"])
    p.add_argument("--archs", help="','- (or ';'-) separated, kernel-builder form: 8.0, 9.0a, 9.0+PTX")
    p.add_argument("--algorithm", default="sha256", choices=_ALGORITHMS)
    p.set_defaults(func=write)

    p = sub.add_parser("digest", help="print the digest of VARIANT_DIR")
    p.add_argument("variant_dir")
    p.add_argument("--algorithm", default="sha256", choices=_ALGORITHMS)
    p.set_defaults(func=digest)

    p = sub.add_parser("verify", help="check VARIANT_DIR against its metadata.json digest")
    p.add_argument("variant_dir")
    p.set_defaults(func=verify)

    args = parser.parse_args()
    args.func(args)


if __name__ == "__main__":
    main()
