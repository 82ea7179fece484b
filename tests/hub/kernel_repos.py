"""Kernel build variants as kernel-builder writes them, in the three layouts the Hub holds.

A Hub kernel repo keeps one directory per build variant under `build/`. Over time
kernel-builder has written three layouts, and all three are still on the Hub:

    nested   build/<v>/<pkg>/{__init__.py,_ops.py,*.so}   (+ build/<v>/metadata.json)   before Nov 2025
    compat   build/<v>/{__init__.py,_ops.py,*.so,metadata.json}                         Nov 2025 - Jul 2026
             + build/<v>/<pkg>/__init__.py, kernel-builder's compat module, which
               re-exports the flat package for `import <pkg>` from build/<v>
    flat     build/<v>/{__init__.py,_ops.py,*.so,metadata.json}                         today

Every current variant carries metadata.json as kernels-data's `Metadata` serialises it
(serde_json pretty printing: two-space indent, no trailing newline, fields in struct
order), with `digest.files` = {path: base64(sha256)} over every file of the variant
but the top-level metadata.json(.sigstore), `__pycache__` and `*.pyc`. The digest is
computed here, in Python, independently of kernels (see `digest_files`), so a test that
lets kernels' own `Digest.hash_variant` check it proves both agree.

    from kernel_repos import write_variant, variant_tree, make_kernel_repo, demo_package

    write_variant(repo_dir, "torch-cpu", layout="flat", name="relu", files=demo_package("relu", "v1"))
    repo = make_kernel_repo(hub_root, "org/relu", {1: tree_v1, 2: tree_v2})   # main (README), v1, v2

Standard library only: tests of the C++ tool use it to write repos on disk, too.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import re
import sys
from pathlib import Path, PurePosixPath
from typing import Literal, Mapping

Layout = Literal["nested", "compat", "flat"]
LAYOUTS: tuple[Layout, ...] = ("nested", "compat", "flat")

# The compatibility module a flat+compat variant carries at <pkg>/__init__.py:
# it re-exports the flat package one directory up. (kwheel's own text, not
# kernel-builder's template; loaders never read it when a top-level
# __init__.py exists, and kwheel recognises the directory by its shape.)
COMPAT_INIT = (Path(__file__).resolve().parents[2] / "kernels" / "img2gray" / "cmake" / "compat.py").read_bytes()

# kernels-data's KernelName rule: what `Metadata` accepts as `name`.
KERNEL_NAME = re.compile(r"^[a-z][-a-z0-9]*[a-z0-9]$")

# Backend names in variant names -> kernels-data `Backend` (metadata.json `backend.type`).
_BACKEND_PREFIXES = (("cuda", "cuda"), ("cu", "cuda"), ("rocm", "rocm"), ("xpu", "xpu"), ("metal", "metal"), ("cann", "cann"),
                     ("npu", "cann"), ("neuron", "neuron"), ("tpu", "tpu"), ("cpu", "cpu"))


def python_name(name: str) -> str:
    """The import name of kernel `name` (kernels-data: dashes become underscores)."""
    return name.replace("-", "_")


def backend_of(variant: str) -> str:
    """metadata.json's backend type for a variant name: torch-cuda and torch28-cxx11-cu128-... are cuda.

    Noarch `torch-universal` (and anything unknown) has no backend of its own; "cpu" is what
    kernels accepts for it and what a CPU machine selects.
    """
    parts = variant.split("-")
    candidates = parts[1:2] if parts[0] == "torch" else parts[1:]
    for part in candidates:
        for prefix, backend in _BACKEND_PREFIXES:
            if part == prefix or (part.startswith(prefix) and part[len(prefix):].isdigit()):
                return backend
    return "cpu"


# --------------------------------------------------------------------------- digest


def _b64(raw: bytes) -> str:
    """base64 as kernels-data writes it: the standard alphabet, padded (BASE64_STANDARD)."""
    return base64.b64encode(raw).decode("ascii")


def file_digest(data: bytes, algorithm: str = "sha256") -> str:
    """The digest.files value of one file."""
    return _b64(hashlib.new(algorithm, data).digest())


def _hashed(rel: str, full_parts: tuple[str, ...]) -> bool:
    """Whether kernels-data's Digest::hash_variant hashes the file at `rel` (variant-relative).

    Not hashed: the variant's own metadata.json and metadata.json.sigstore (the digest lives in
    the first, the signature over it in the second; copies deeper down are hashed), bytecode
    (`*.pyc`, anything with a `__pycache__` path component).
    """
    if rel in ("metadata.json", "metadata.json.sigstore"):
        return False
    return "__pycache__" not in full_parts and PurePosixPath(rel).suffix != ".pyc"  # Rust: extension() == "pyc"


def digest_files(variant_dir, algorithm: str = "sha256") -> dict[str, str]:
    """{relative posix path: base64 digest} over the files of a variant directory on disk.

    Mirrors Digest::hash_variant (kernels-data/src/digest.rs): a walk that does not descend
    into symlinked directories but follows symlinked files (the HF cache is symlinks), paths
    relative to the variant with "/" separators, sorted by bytes (a BTreeMap). One difference:
    a dangling symlink is skipped here, where kernels fails on it.
    """
    root = Path(variant_dir)
    out: dict[str, str] = {}
    for dirpath, _dirnames, filenames in os.walk(root):
        for fn in filenames:
            p = Path(dirpath) / fn
            if not p.is_file():  # follows symlinks, like fs::canonicalize + is_file
                continue
            rel = p.relative_to(root).as_posix()
            if _hashed(rel, p.parts):
                out[rel] = file_digest(p.read_bytes(), algorithm)
    return dict(sorted(out.items(), key=lambda kv: kv[0].encode()))


def digest_of_tree(files: Mapping[str, bytes], algorithm: str = "sha256") -> dict[str, str]:
    """digest_files for an in-memory variant ({variant-relative path: bytes})."""
    out = {rel: file_digest(data, algorithm) for rel, data in files.items() if _hashed(rel, tuple(rel.split("/")))}
    return dict(sorted(out.items(), key=lambda kv: kv[0].encode()))


# --------------------------------------------------------------------------- metadata


def metadata(*, name: str, kernel_id: str, version: int = 1, license: str = "Apache-2.0",
             python_depends: list[str] | tuple[str, ...] = (), backend: str = "cpu", archs: list[str] | None = None,
             digest: Mapping[str, str] | None = None, algorithm: str = "sha256", upstream: str | None = None,
             source: str | None = None, kernels_minver: str | None = None,
             kernel_depends: list[dict] | None = None, provenance: dict | None = None) -> dict:
    """metadata.json's object, keys in kernels-data's `Metadata` field order (name, id, version, ...).

    Optional fields are left out when None, as serde's skip_serializing_if does; `kernel-depends`
    is always written (kernel-builder emits `[]`). `archs` is sorted and deduplicated like
    kernel-builder's add_build_metadata.py does. `kernels-minver` (read by kernels 0.17) is not in
    kernel-builder's writer we can see, so it is only written when given.
    """
    if not KERNEL_NAME.match(name) or len(name) < 2:
        raise ValueError(f"invalid kernel name {name!r} (kernels-data: ^[a-z][-a-z0-9]*[a-z0-9]$)")
    meta: dict = {"name": name, "id": kernel_id, "version": version}
    if kernels_minver is not None:
        meta["kernels-minver"] = kernels_minver
    meta["license"] = license
    if upstream is not None:
        meta["upstream"] = upstream
    if source is not None:
        meta["source"] = source
    meta["python-depends"] = list(python_depends)
    meta["kernel-depends"] = list(kernel_depends or [])
    meta["backend"] = {"type": backend}
    if archs is not None:
        meta["backend"]["archs"] = sorted(set(archs))
    if digest is not None:
        meta["digest"] = {"algorithm": algorithm, "files": dict(digest)}
    if provenance is not None:
        meta["provenance"] = provenance
    return meta


def metadata_bytes(meta: Mapping) -> bytes:
    """serde_json::to_writer_pretty's bytes: two-space indent, ": ", no trailing newline, UTF-8 as is."""
    return json.dumps(meta, indent=2, ensure_ascii=False).encode()


# --------------------------------------------------------------------------- variants


def default_kernel_id(name: str, backend: str, files: Mapping[str, bytes]) -> str:
    """_<pkg>_<backend>_<7 hex>, kernel-builder's id shape (KernelIdentifier::to_string_for_backend).

    kernel-builder takes the 7 hex from the source's git tree; here they come from the files, so
    another package content gets another id (kernels registers the module as sys.modules[id]).
    """
    h = hashlib.sha1()
    for rel in sorted(files):
        h.update(rel.encode() + b"\0" + hashlib.sha1(files[rel]).digest())
    return f"_{python_name(name)}_{backend}_{h.hexdigest()[:7]}"


def variant_tree(variant: str, *, layout: Layout, name: str, files: Mapping[str, bytes | str], version: int = 1,
                 backend: str | None = None, python_depends: list[str] | tuple[str, ...] = (),
                 archs: list[str] | None = None, license: str = "Apache-2.0", with_metadata: bool = True,
                 digest: bool = True, kernel_id: str | None = None, sign=None, **meta_extra) -> dict[str, bytes]:
    """One variant as {repo path: bytes} (paths start with build/<variant>/).

    files:  the Python package's files, {package-relative path: bytes}, e.g. __init__.py, _ops.py,
            _relu_abc1234.abi3.so, layers/__init__.py.
    layout: where they go (see the module docstring); "compat" adds kernel-builder's compat module
            as build/<v>/<pkg>/__init__.py, which the digest covers like any other file.
    with_metadata=False writes no metadata.json (the oldest nested variants had none);
    digest=False writes metadata.json without a digest (builds before kernel-builder's `hash`).
    sign: a function of metadata.json's bytes returning a Sigstore bundle (bytes), written beside it
          as metadata.json.sigstore, as kernel-builder's signing step does (tests/sigstore/instance.py).
    meta_extra: more `metadata()` keywords (upstream, source, kernels_minver, provenance, ...).
    """
    if layout not in LAYOUTS:
        raise ValueError(f"layout must be one of {LAYOUTS}, not {layout!r}")
    pkg = python_name(name)
    payload = {str(k).strip("/"): (v.encode() if isinstance(v, str) else bytes(v)) for k, v in files.items()}
    if layout == "nested":
        inner = {f"{pkg}/{rel}": data for rel, data in payload.items()}
    else:
        inner = dict(payload)
        if layout == "compat":
            inner[f"{pkg}/__init__.py"] = COMPAT_INIT
    if with_metadata:
        backend = backend or backend_of(variant)
        meta = metadata(name=name, kernel_id=kernel_id or default_kernel_id(name, backend, payload), version=version,
                        license=license, python_depends=python_depends, backend=backend, archs=archs,
                        digest=digest_of_tree(inner) if digest else None, **meta_extra)
        inner["metadata.json"] = metadata_bytes(meta)
        if sign is not None:
            inner["metadata.json.sigstore"] = sign(inner["metadata.json"])
    return {f"build/{variant}/{rel}": data for rel, data in sorted(inner.items())}


def write_tree(dst, tree: Mapping[str, bytes]) -> Path:
    """Write {relative path: bytes} below `dst`; returns `dst`."""
    dst = Path(dst)
    for rel, data in tree.items():
        p = dst / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(data)
    return dst


def write_variant(dst, variant: str, *, layout: Layout, name: str, files: Mapping[str, bytes | str], version: int = 1,
                  backend: str | None = None, python_depends: list[str] | tuple[str, ...] = (),
                  archs: list[str] | None = None, license: str = "Apache-2.0", with_metadata: bool = True,
                  digest: bool = True, kernel_id: str | None = None, **meta_extra) -> Path:
    """Write one variant into the repo directory `dst` (as dst/build/<variant>/...); returns the variant dir.

    Same keywords as variant_tree; files on disk are what a test of the C++ tool reads.
    """
    write_tree(dst, variant_tree(variant, layout=layout, name=name, files=files, version=version, backend=backend,
                                 python_depends=python_depends, archs=archs, license=license,
                                 with_metadata=with_metadata, digest=digest, kernel_id=kernel_id, **meta_extra))
    return Path(dst) / "build" / variant


def read_metadata(variant_dir) -> dict:
    return json.loads((Path(variant_dir) / "metadata.json").read_bytes())


def demo_package(name: str, label: str, *, so: bytes | None = None) -> dict[str, bytes]:
    """A pure-Python kernel package whose hello() returns `label` (and an optional .so it never loads).

    Its __init__ imports its own _ops module relatively, as kernel-builder's packages do, so a
    loader that gets the package wrong fails loudly.
    """
    pkg = python_name(name)
    out = {
        "__init__.py": (f"from ._ops import ops, add_op_namespace_prefix\n\n__all__ = [\"hello\"]\n\n\n"
                        f"def hello() -> str:\n    return {label!r}\n").encode(),
        "_ops.py": (f"ops = None  # a compiled kernel binds torch.ops._{pkg}_... here\n\n\n"
                    f"def add_op_namespace_prefix(op_name: str) -> str:\n    return f\"_{pkg}::{{op_name}}\"\n").encode(),
    }
    if so is not None:
        out[f"_{pkg}_0123abc.abi3.so"] = so
    return out


# --------------------------------------------------------------------------- repos on the fixture Hub


def make_kernel_repo(root, repo_id: str, versions: Mapping[int, object], *, readme: bytes | None = None,
                     main: int | None = None, tags: Mapping[str, int] | None = None, **options):
    """A kernel-type repo on the fixture Hub, shaped the way `kernel-builder upload` shapes it.

    versions: {N: commit content (a directory or {repo path: bytes})}, N >= 0 (0 = alpha).
    The history: one commit on `main` holding README.md (`readme`, default "# <name>"); then, for
    each N in ascending order, a commit forked from it that adds N's content, branch vN pointing at
    it (upload creates vN from main and commits the build there; README changes go to main).
    kernels >= 0.11 resolves version=N through branch vN and ignores main.
    main:     None keeps main at the README commit (today's uploads); N moves main to vN's commit
              too (older uploads kept the builds on main).
    tags:     {tag name: N}, for the vX.Y.Z tags of old repos.
    options:  fixture.make_repo's private, gated, gated_granted, types (default ["kernel"]: served
              under /api/kernels and /kernels only, like the Hub's kernel repos).
    Returns fixture.RepoHandle: .shas = [README commit, then one per version], .versions = {N: sha}.
    """
    if str(Path(__file__).resolve().parent) not in sys.path:
        sys.path.insert(0, str(Path(__file__).resolve().parent))
    import fixture  # tests/hub/fixture.py; imported here so writing variants needs no server code

    if not versions or min(versions) < 0:
        raise ValueError("a kernel repo needs versions N >= 0")
    org_name = repo_id.partition("/")[2]
    readme = readme if readme is not None else f"# {org_name}\n".encode()
    options.setdefault("types", ["kernel"])
    handle = fixture.make_repo(root, repo_id, [{"README.md": readme}], branches={"main": 0},
                               messages=["Add README"], **options)
    base = handle.shas[0]
    for n in sorted(versions):
        content = {"README.md": readme, **fixture.files_of(versions[n])}
        sha = fixture.add_commit(handle.dir, content, message=f"Build version {n}", branch=f"v{n}", parents=[base])
        handle.shas.append(sha)
        handle.versions[n] = sha
    if main is not None:
        fixture.set_ref(handle.dir, "main", handle.versions[main])
    for tag, n in (tags or {}).items():
        fixture.set_ref(handle.dir, tag, handle.versions[n], tag=True)
    return handle
