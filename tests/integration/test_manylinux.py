"""Platform tags from ELF evidence, checked against the tools users already trust.

Every shared object here is compiled at test time (C and C++, glibc functions
chosen for the symbol version they bind to, a `.symver` directive, a stand-in
libc for a glibc newer than this machine's, clang/lld cross-links) and packed
as the only `.so` of a `torch27-cxx11-cpu-x86_64-linux` variant. Then:

* `kwheel build DIR --json` must tag the wheel with the policy expected here,
  or refuse it with the expected exit code and a one-line error;
* `auditwheel show --json` (auditwheel 6.8.2, the version kwheel's policy data
  is copied from) on the same wheel must give the same symbol-version policy
  (`sym_tag`); its `overall_tag` differs where kwheel accepts torch-provided
  libraries by design. Objects kwheel refuses are shown to auditwheel in a
  copy of a good wheel with the object swapped in, to record what it says;
* `kwheel inspect --json` on the wheel and on the bare `.so` must say the same;
* kernel-abi-check (PyPI), asked for each manylinux rung, must give the verdict
  recorded in docs/manylinux.md (it agrees on the plain cases and is blind
  where it reads `.symtab` only; the table explains each row).

Expectations live in CASES below; `test_doc_table_matches` keeps the table in
docs/manylinux.md in step with them.
"""

from __future__ import annotations

import base64
import functools
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
KWHEEL = os.environ.get("KWHEEL_BIN") or str(ROOT / "build" / "kwheel")
VENV_BIN = Path(sys.executable).parent
AUDITWHEEL = str(VENV_BIN / "auditwheel")
DOC = ROOT / "docs" / "manylinux.md"
POLICY_JSON = ROOT / "manylinux" / "policy.json"
VARIANT = "torch27-cxx11-cpu-x86_64-linux"
ARM_VARIANT = "torch27-cxx11-cpu-aarch64-linux"
SO_NAME = "_k_0a1b2c3.abi3.so"  # what kernel-builder names an op library
BAD_INPUT, POLICY = 3, 9  # kwheel exit codes (ErrorKind::input, ErrorKind::policy)

pytestmark = [
    pytest.mark.skipif(not os.access(KWHEEL, os.X_OK), reason=f"kwheel not built at {KWHEEL} (set KWHEEL_BIN)"),
    pytest.mark.skipif(shutil.which("cc") is None or shutil.which("c++") is None, reason="needs cc and c++"),
]


def have(*needs: str) -> bool:
    """Tools on PATH; "pkg:NAME" is a library pkg-config knows (headers installed)."""
    def one(n: str) -> bool:
        if n.startswith("pkg:"):
            return shutil.which("pkg-config") is not None and \
                subprocess.run(["pkg-config", "--exists", n[4:]]).returncode == 0
        return shutil.which(n) is not None
    return all(one(n) for n in needs)


# --------------------------------------------------------------------------- sources

NEEDS_217 = "#include <time.h>\nlong f(void) { struct timespec t; return clock_gettime(0, &t); }\n"
NEEDS_228 = ("#define _GNU_SOURCE\n#include <sys/stat.h>\n#include <fcntl.h>\n"
             "int f(void) { struct statx st; return statx(0, \"x\", 0, 0, &st); }\n")
NEEDS_234 = ("#include <pthread.h>\nstatic void* run(void* x) { return x; }\n"
             "int f(void) { pthread_t t; return pthread_create(&t, 0, run, 0); }\n")
# memcpy's default version on x86_64 is GLIBC_2.14 (-> manylinux_2_17); the
# .symver directive binds the call to the original GLIBC_2.2.5 one instead.
MEMCPY = "#include <string.h>\nvoid f(char* d, const char* s, size_t n) { memcpy(d, s, n); }\n"
SYMVER_MEMCPY = '__asm__(".symver memcpy,memcpy@GLIBC_2.2.5");\n' + MEMCPY
# operator>>(istream&, char*) became std::__istream_extract@GLIBCXX_3.4.29 (GCC 11).
NEEDS_GLIBCXX_3429 = "#include <istream>\nvoid f(std::istream& in) { char b[16]; in >> b; }\n"
TORCH_KERNEL = ("#include <time.h>\nvoid c10_thing(void); void torch_thing(void);\n"
                "long f(void) { struct timespec t; c10_thing(); torch_thing(); return clock_gettime(0, &t); }\n")
PNG_KERNEL = "#include <png.h>\nconst char* f(void) { return png_get_libpng_ver(0); }\n"
# Python C-API imports, declared by hand: the test needs the undefined
# symbols, not Python's headers. _PyObject_GC_New is abi_only but in the 3.9
# stable ABI (PyObject_GC_New expands to it); PyUnicode_AsUTF8 joined the
# limited API only in 3.13, PyUnicode_AsUTF8AndSize in 3.10.
PY_STABLE = ("void* PyModule_Create2(void*, int); void* _PyObject_GC_New(void*);\n"
             "void* f(void* d, void* t) { _PyObject_GC_New(t); return PyModule_Create2(d, 3); }\n")
PY_ASUTF8 = ("void* PyModule_Create2(void*, int); const char* PyUnicode_AsUTF8(void*);\n"
             "const char* f(void* d, void* o) { PyModule_Create2(d, 3); return PyUnicode_AsUTF8(o); }\n")
PY_ASUTF8_SIZE = ("void* PyModule_Create2(void*, int); const char* PyUnicode_AsUTF8AndSize(void*, long*);\n"
                  "const char* f(void* d, void* o) { PyModule_Create2(d, 3); return PyUnicode_AsUTF8AndSize(o, 0); }\n")


# --------------------------------------------------------------------------- cases


@dataclass(frozen=True)
class Case:
    kwheel: str                 # the platform tag kwheel gives, or "refused (exit N)"
    auditwheel: str             # auditwheel's sym_tag on the wheel, or "refused: ..." (AUDITWHEEL_REFUSALS)
    kac: str                    # kernel-abi-check: oldest manylinux rung without violations, or what it says
    error: tuple[str, ...] = () # fragments of kwheel's one-line error
    build_args: tuple[str, ...] = ()
    variant: str = VARIANT
    needs: tuple[str, ...] = ()  # tools without which the case is skipped
    kac_python: tuple[str, ...] = field(default=())  # kernel-abi-check check_python_abi("3.9") findings


CASES: dict[str, Case] = {
    "glibc_2_17": Case("manylinux_2_17_x86_64", "manylinux_2_17_x86_64", "manylinux_2_17"),
    "memcpy_2_14": Case("manylinux_2_17_x86_64", "manylinux_2_17_x86_64", "manylinux_2_17"),
    "symver_memcpy_2_2_5": Case("manylinux_2_5_x86_64", "manylinux_2_5_x86_64", "manylinux_2_5"),
    "glibc_2_28": Case("manylinux_2_28_x86_64", "manylinux_2_28_x86_64", "manylinux_2_28"),
    "glibc_2_34": Case("manylinux_2_34_x86_64", "manylinux_2_34_x86_64", "manylinux_2_34"),
    "glibc_2_38_stub": Case("manylinux_2_38_x86_64", "manylinux_2_38_x86_64", "manylinux_2_38"),
    "glibcxx_3_4_29": Case("manylinux_2_34_x86_64", "manylinux_2_34_x86_64", "manylinux_2_34"),
    # kernel-abi-check reads version needs from `.symtab` names (`sym@GLIBC_2.34`):
    # lld writes plain names there, `strip` removes the table.
    "glibc_2_34_lld": Case("manylinux_2_34_x86_64", "manylinux_2_34_x86_64", "manylinux_2_5", needs=("ld.lld",)),
    "glibc_2_34_stripped": Case("manylinux_2_34_x86_64", "manylinux_2_34_x86_64", "manylinux_2_5", needs=("strip",)),
    # auditwheel run with --ldpaths holding only the stand-in torch libraries,
    # so its sym_tag is this object's own; see test_torch_libraries_* for the rest.
    "torch_libs": Case("manylinux_2_17_x86_64", "manylinux_2_17_x86_64", "manylinux_2_17"),
    # Refused objects are shown to auditwheel in a wheel forged from a good one.
    "libpng": Case("refused (exit 9)", "manylinux_2_5_x86_64", "manylinux_2_5", error=("libpng16.so.16", SO_NAME, "not provided by torch"),
                   needs=("pkg:libpng16",)),
    # auditwheel with --ldpaths on an empty directory (both libpng cases): the object's own versions.
    "libpng_allowed": Case("manylinux_2_5_x86_64", "manylinux_2_5_x86_64", "manylinux_2_5",
                           build_args=("--allow-external", "libpng16.so.16"), needs=("pkg:libpng16",)),
    "claim_2_28_on_2_34": Case("refused (exit 9)", "manylinux_2_34_x86_64", "pthread_create@GLIBC_2.34 at manylinux_2_28",
                               error=(SO_NAME, "GLIBC_2.34", "`pthread_create`", "manylinux_2_28_x86_64"),
                               build_args=("--manylinux", "2_28")),
    "claim_2_34_on_2_28": Case("manylinux_2_34_x86_64", "manylinux_2_28_x86_64", "manylinux_2_28",
                               build_args=("--manylinux", "2_34")),
    "aarch64_in_x86_64": Case("refused (exit 9)", "refused: no x86_64 ELF file", "manylinux_2_17 (aarch64 table)",
                              error=(SO_NAME, "built for aarch64", "variant is x86_64")),
    "aarch64": Case("manylinux_2_17_aarch64", "manylinux_2_17_aarch64", "manylinux_2_17 (aarch64 table)",
                    variant=ARM_VARIANT),
    "not_elf": Case("refused (exit 3)", "refused: not a platform wheel", "error: Unknown file magic", error=(SO_NAME, "not an ELF shared object")),
    "abi3_stable": Case("manylinux_2_5_x86_64", "manylinux_2_5_x86_64", "manylinux_2_5"),
    # auditwheel has no abi3 check.
    "abi3_PyUnicode_AsUTF8": Case("refused (exit 9)", "manylinux_2_5_x86_64", "manylinux_2_5",
                                  error=(SO_NAME, "`PyUnicode_AsUTF8`", "3.9 stable ABI"),
                                  kac_python=("NonAbi3Symbol PyUnicode_AsUTF8",)),
    "abi3_PyUnicode_AsUTF8AndSize": Case("refused (exit 9)", "manylinux_2_5_x86_64", "manylinux_2_5",
                                         error=(SO_NAME, "`PyUnicode_AsUTF8AndSize`", "3.9 stable ABI"),
                                         kac_python=("IncompatibleAbi3Symbol PyUnicode_AsUTF8AndSize 3.10",)),
}

# What `auditwheel show` says (exit 1, JSON "error") about wheels it refuses.
AUDITWHEEL_REFUSALS = {
    "refused: no x86_64 ELF file": "with a 'x86_64' architecture found",
    "refused: not a platform wheel": "does not look like a platform wheel",
}
# auditwheel resolves DT_NEEDED on this machine's library path and folds what
# it finds into sym_tag; for these it runs on a path holding only what the
# case brings along, so sym_tag is the wheel's own evidence.
ISOLATED_LDPATH = {"torch_libs", "libpng", "libpng_allowed"}


# --------------------------------------------------------------------------- helpers


def run(argv, *, cwd: Path | None = None, timeout: int = 300, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([str(a) for a in argv], capture_output=True, text=True, cwd=cwd, timeout=timeout, env=env)


def sh(argv, cwd: Path) -> None:
    r = run(argv, cwd=cwd)
    assert r.returncode == 0, f"{' '.join(map(str, argv))} failed:\n{r.stdout}\n{r.stderr}"


def stub_library(d: Path, soname: str, versions: dict[str, list[str]] | None = None, symbols: list[str] = (),
                 target: str | None = None) -> Path:
    """A stand-in shared library `soname`: `versions` {"GLIBC_2.38": ["strlcpy"]} are
    defined under a version script (what a real libc records), `symbols` unversioned.
    target=None links with the host cc, else clang --target=... with lld."""
    d.mkdir(parents=True, exist_ok=True)
    names = [s for syms in (versions or {}).values() for s in syms] + list(symbols)
    (d / f"{soname}.c").write_text("".join(f"void {s}(void) {{}}\n" for s in names))
    argv = ["cc"] if target is None else ["clang", f"--target={target}", "-fuse-ld=lld"]
    argv += ["-shared", "-fPIC", "-nostdlib", f"-Wl,-soname,{soname}", f"{soname}.c", "-o", soname]
    if versions:
        prev, script = None, ""
        for node, syms in versions.items():
            script += f"{node} {{ global: {'; '.join(syms)}; }}{' ' + prev if prev else ''};\n"
            prev = node
        (d / f"{soname}.map").write_text(script)
        argv.append(f"-Wl,--version-script={soname}.map")
    sh(argv, d)
    return d / soname


def can_cross_link(target: str) -> bool:
    if not have("clang", "ld.lld"):
        return False
    return run(["clang", f"--target={target}", "-fuse-ld=lld", "-nostdlib", "-shared", "-x", "c", "/dev/null",
                "-o", "/dev/null"]).returncode == 0


def compile_so(d: Path, name: str, source: str, *, cxx: bool = False, flags: tuple[str, ...] = ()) -> Path:
    d.mkdir(parents=True, exist_ok=True)
    src = d / (name + (".cpp" if cxx else ".c"))
    src.write_text(source)
    argv = ["c++", "-std=c++20"] if cxx else ["cc"]
    sh([*argv, "-shared", "-fPIC", "-O1", src.name, "-o", name, *flags], d)
    return d / name


def build_object(case: str, d: Path) -> Path:
    """The .so for a case, compiled in its own directory `d`."""
    if case == "glibc_2_17":
        return compile_so(d, "k.so", NEEDS_217)
    if case == "memcpy_2_14":
        return compile_so(d, "k.so", MEMCPY, flags=("-fno-builtin",))
    if case == "symver_memcpy_2_2_5":
        return compile_so(d, "k.so", SYMVER_MEMCPY, flags=("-fno-builtin",))
    if case in ("glibc_2_28", "claim_2_34_on_2_28"):
        return compile_so(d, "k.so", NEEDS_228)
    if case in ("glibc_2_34", "claim_2_28_on_2_34"):
        return compile_so(d, "k.so", NEEDS_234)
    if case == "glibc_2_34_lld":
        return compile_so(d, "k.so", NEEDS_234, flags=("-fuse-ld=lld",))
    if case == "glibc_2_34_stripped":
        so = compile_so(d, "k.so", NEEDS_234)
        sh(["strip", "--strip-all", so.name], d)
        return so
    if case == "glibc_2_38_stub":
        # glibc 2.38 is newer than the build machine's: a stand-in libc.so.6
        # defining strlcpy@GLIBC_2.38 makes the linker record the same need.
        libc = stub_library(d / "stub", "libc.so.6", {"GLIBC_2.2.5": ["puts"], "GLIBC_2.38": ["strlcpy"]})
        return compile_so(d, "k.so", "void strlcpy(void); void puts(void);\nvoid f(void) { strlcpy(); puts(); }\n",
                          flags=("-nostdlib", str(libc)))
    if case == "glibcxx_3_4_29":
        return compile_so(d, "k.so", NEEDS_GLIBCXX_3429, cxx=True)
    if case == "torch_libs":
        # The sonames pip's torch wheels ship in torch/lib (unversioned).
        stub_library(d / "torchlib", "libc10.so", symbols=["c10_thing"])
        stub_library(d / "torchlib", "libtorch.so", symbols=["torch_thing"])
        return compile_so(d, "k.so", TORCH_KERNEL, flags=("-Ltorchlib", "-lc10", "-ltorch"))
    if case in ("libpng", "libpng_allowed"):
        return compile_so(d, "k.so", PNG_KERNEL, flags=("-lpng16",))
    if case in ("aarch64", "aarch64_in_x86_64"):
        if can_cross_link("aarch64-linux-gnu"):
            libc = stub_library(d / "stub", "libc.so.6", {"GLIBC_2.17": ["clock_gettime", "puts"]},
                                target="aarch64-linux-gnu")
            (d / "k.c").write_text("void clock_gettime(void); void puts(void);\nvoid f(void) { clock_gettime(); puts(); }\n")
            sh(["clang", "--target=aarch64-linux-gnu", "-fuse-ld=lld", "-nostdlib", "-shared", "-fPIC", "k.c",
                str(libc), "-o", "k.so"], d)
            return d / "k.so"
        # No cross toolchain: an x86_64 object relabelled aarch64 (e_machine).
        so = compile_so(d, "k.so", NEEDS_217)
        data = bytearray(so.read_bytes())
        data[18:20] = (183).to_bytes(2, "little")
        so.write_bytes(bytes(data))
        return so
    if case == "not_elf":
        d.mkdir(parents=True, exist_ok=True)
        (d / "k.so").write_bytes(b"#!/bin/sh\necho this is not a shared object\n" + bytes(range(256)) * 8)
        return d / "k.so"
    if case == "abi3_stable":
        return compile_so(d, "k.so", PY_STABLE)
    if case == "abi3_PyUnicode_AsUTF8":
        return compile_so(d, "k.so", PY_ASUTF8)
    if case == "abi3_PyUnicode_AsUTF8AndSize":
        return compile_so(d, "k.so", PY_ASUTF8_SIZE)
    raise KeyError(case)


@dataclass
class Built:
    case: str
    so: Path          # the object as compiled
    packed: Path      # the same bytes inside the variant directory
    proc: subprocess.CompletedProcess
    report: dict
    wheel: Path | None

    @property
    def variant(self) -> dict:
        return self.report["variants"][0]

    def __str__(self) -> str:
        return f"{self.case}: kwheel build -> {self.proc.returncode}\n{self.proc.stdout}\n{self.proc.stderr}"


class Lab:
    """Builds each case once per session: object, variant dir, wheel, reports."""

    def __init__(self, root: Path):
        self.root = root

    @functools.cache
    def built(self, case: str) -> Built:
        spec = CASES[case]
        missing = [n for n in spec.needs if not have(n)]
        if missing:
            pytest.skip(f"needs {', '.join(missing)}")
        d = self.root / case
        so = build_object(case, d / "obj")
        pkg = d / "src" / "build" / spec.variant / "k"
        pkg.mkdir(parents=True)
        (pkg / "__init__.py").write_text("")
        packed = pkg / SO_NAME
        shutil.copyfile(so, packed)
        proc = run([KWHEEL, "build", d / "src", "--version", "0.1.0", "--name", "k", "--json",
                    "-o", d / "dist", *spec.build_args])
        try:
            report = json.loads(proc.stdout)
        except ValueError:
            pytest.fail(f"kwheel build printed no JSON report:\n{proc.stdout}\n{proc.stderr}")
        wheel = Path(report["variants"][0]["wheel"]) if report["variants"][0].get("wheel") else None
        return Built(case, so, packed, proc, report, wheel)

    @functools.cache
    def shown_wheel(self, case: str) -> Path:
        """The case's wheel; for a refused case, the glibc_2_17 wheel with the
        case's object in place of its .so (RECORD updated), i.e. what a tool
        that does not check would have shipped."""
        b = self.built(case)
        if b.wheel is not None:
            return b.wheel
        base = self.built("glibc_2_17").wheel
        data = b.so.read_bytes()
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        forged = self.root / case / "forged" / base.name
        forged.parent.mkdir(parents=True)
        with zipfile.ZipFile(base) as zin, zipfile.ZipFile(forged, "w", zipfile.ZIP_DEFLATED) as zout:
            for info in zin.infolist():
                member = zin.read(info)
                if info.filename.endswith("/" + SO_NAME):
                    member = data
                elif info.filename.endswith(".dist-info/RECORD"):
                    member = "".join(
                        f"k/{SO_NAME},sha256={digest},{len(data)}\n" if ln.startswith(f"k/{SO_NAME},") else ln + "\n"
                        for ln in member.decode().splitlines()).encode()
                zout.writestr(info, member)
        return forged

    @functools.cache
    def auditwheel(self, case: str, ldpaths: str | None = None) -> tuple[int, dict]:
        argv = [AUDITWHEEL, "show", "--json", self.shown_wheel(case)]
        if ldpaths is not None:
            argv[2:2] = ["--ldpaths", ldpaths]
        r = run(argv)
        try:
            return r.returncode, json.loads(r.stdout)
        except ValueError:
            pytest.fail(f"auditwheel show printed no JSON ({r.returncode}):\n{r.stdout}\n{r.stderr}")

    def auditwheel_ok(self, case: str, ldpaths: str | None = None) -> dict:
        rc, report = self.auditwheel(case, ldpaths)
        assert rc == 0, report
        return report

    def isolated_ldpath(self, case: str) -> str:
        d = self.root / case / "obj" / "torchlib"
        if not d.is_dir():
            d = self.root / "empty-ldpath"
            d.mkdir(exist_ok=True)
        return str(d)

    def auditwheel_as_compared(self, case: str) -> tuple[int, dict]:
        return self.auditwheel(case, self.isolated_ldpath(case) if case in ISOLATED_LDPATH else None)


@pytest.fixture(scope="module")
def lab(tmp_path_factory) -> Lab:
    return Lab(tmp_path_factory.mktemp("manylinux"))


def policy_key(tag: str) -> tuple[int, int]:
    """manylinux_2_34_x86_64 -> (2, 34); linux_* sorts last."""
    m = re.match(r"manylinux_(\d+)_(\d+)", tag)
    return (int(m.group(1)), int(m.group(2))) if m else (99, 99)


def inspect(path: Path, *args: str) -> tuple[int, dict]:
    r = run([KWHEEL, "inspect", "--json", path, *args])
    try:
        return r.returncode, json.loads(r.stdout)
    except ValueError:
        pytest.fail(f"kwheel inspect printed no JSON:\n{r.stdout}\n{r.stderr}")


# --------------------------------------------------------------------------- kwheel vs auditwheel

BUILT_CASES = [c for c, s in CASES.items() if not s.kwheel.startswith("refused")]
REFUSED_CASES = [c for c, s in CASES.items() if s.kwheel.startswith("refused")]


@pytest.mark.parametrize("case", BUILT_CASES)
def test_kwheel_tag(lab: Lab, case: str):
    spec, b = CASES[case], lab.built(case)
    assert b.proc.returncode == 0, str(b)
    platform = b.variant["platform"]
    assert platform["tag"] == spec.kwheel, str(b)
    # The wheel's file name carries the tag (compressed with the legacy alias where one exists).
    assert spec.kwheel in b.wheel.name
    assert f"cp39-abi3-{spec.kwheel}" in b.variant["tags"], b.variant["tags"]
    # The reason names the version and the file when a version decided it.
    if "needed by" in platform["reason"]:
        assert SO_NAME in platform["reason"], platform["reason"]


@pytest.mark.parametrize("case", list(CASES))
def test_auditwheel_symbol_policy_agrees(lab: Lab, case: str):
    spec = CASES[case]
    rc, aw = lab.auditwheel_as_compared(case)
    if spec.auditwheel in AUDITWHEEL_REFUSALS:
        assert rc != 0 and AUDITWHEEL_REFUSALS[spec.auditwheel] in aw.get("error", ""), aw
        assert spec.kwheel.startswith("refused")  # both refuse
        return
    assert rc == 0, aw
    assert aw["sym_tag"] == spec.auditwheel
    b = lab.built(case)
    if b.wheel is None:
        return  # kwheel refused for a reason auditwheel does not check (see CASES)
    # kwheel's tag is auditwheel's symbol-version policy, except where a newer
    # tag was explicitly claimed (allowed: it is a weaker promise).
    tag = b.variant["platform"]["tag"]
    if "--manylinux" in spec.build_args:
        assert policy_key(tag) > policy_key(aw["sym_tag"])
    else:
        assert tag == aw["sym_tag"]


@pytest.mark.parametrize("case", BUILT_CASES)
def test_inspect_agrees_with_build(lab: Lab, case: str):
    b = lab.built(case)
    extra = list(CASES[case].build_args[:2]) if "--allow-external" in CASES[case].build_args else []
    rc, whl = inspect(b.wheel, *extra)
    assert rc == 0 and whl["ok"], whl
    rc, so = inspect(b.so, *extra)
    assert rc == 0 and so["ok"], so
    # What the evidence supports, even where the build honoured a newer claim.
    expected_best = re.sub(r"_(x86_64|aarch64)$", "", CASES[case].auditwheel)
    for report in (whl["manylinux"], so["manylinux"]):
        assert report["best_policy"] == expected_best, report
    assert so["manylinux"]["platform_tag"].startswith(expected_best)
    # The wheel's own tag is what inspect reads off its name.
    assert CASES[case].kwheel in whl["current_platform_tags"]


def test_aarch64_object_in_aarch64_variant(lab: Lab):
    """The object refused in the x86_64 variant tags cleanly in an aarch64
    one, with the legacy alias, and auditwheel's overall verdict agrees."""
    arm = lab.built("aarch64")
    assert arm.wheel.name.endswith("manylinux2014_aarch64.manylinux_2_17_aarch64.whl")
    assert lab.auditwheel_ok("aarch64")["overall_tag"] == "manylinux_2_17_aarch64"


@pytest.mark.parametrize("case", REFUSED_CASES)
def test_refused_with_one_line_error(lab: Lab, case: str):
    spec, b = CASES[case], lab.built(case)
    want_rc = int(re.search(r"exit (\d+)", spec.kwheel).group(1))
    assert b.proc.returncode == want_rc, str(b)
    assert b.report["ok"] is False and b.wheel is None
    assert not list((lab.root / case).glob("dist/*.whl"))
    error = b.variant["error"]
    assert "\n" not in error, error
    for fragment in spec.error:
        assert fragment in error, error
    # The terminal table says the same on one line.
    text = run([KWHEEL, "build", lab.root / case / "src", "--version", "0.1.0", "--name", "k",
                "-o", lab.root / case / "dist-text", *spec.build_args])
    assert text.returncode == want_rc
    lines = [ln for ln in text.stdout.splitlines() if spec.error[0] in ln and spec.error[-1] in ln]
    assert len(lines) == 1, text.stdout


def test_libpng_inspect_and_allow_external(lab: Lab):
    so = lab.built("libpng").so
    rc, report = inspect(so)
    assert rc == POLICY and not report["ok"]
    assert [e["soname"] for e in report["manylinux"]["external"]] == ["libpng16.so.16"]
    rc, report = inspect(so, "--allow-external", "libpng16.so.16")
    assert rc == 0 and report["ok"], report
    assert [e["soname"] for e in report["manylinux"]["allowed_external"]] == ["libpng16.so.16"]
    allowed = lab.built("libpng_allowed")
    assert allowed.proc.returncode == 0, str(allowed)
    rc, report = inspect(allowed.wheel, "--allow-external", "libpng16.so.16")
    assert rc == 0 and [e["soname"] for e in report["manylinux"]["allowed_external"]] == ["libpng16.so.16"]
    # auditwheel calls libpng external (it would graft it); with its real
    # search path its sym_tag also folds in libpng's own needs, so it is
    # never older than kwheel's, which judges only what the wheel ships.
    aw = lab.auditwheel_ok("libpng_allowed")
    assert aw["overall_tag"] == "linux_x86_64"
    assert "libpng16.so.16" in aw["external_libs"]
    assert policy_key(aw["sym_tag"]) >= policy_key(allowed.variant["platform"]["tag"])


def test_claim_too_old_names_file_and_symbol(lab: Lab):
    b = lab.built("claim_2_28_on_2_34")
    assert "needs GLIBC_2.34 (symbol `pthread_create`) but manylinux_2_28_x86_64 allows at most GLIBC_2.28" \
        in b.variant["error"]


def test_torch_libraries_accepted_where_auditwheel_sees_external(lab: Lab):
    """auditwheel's blind spot for torch kernels: libc10.so/libtorch.so are
    loaded by `import torch` before any kernel, but auditwheel only knows its
    whitelist, so it calls them external (overall tag linux_x86_64) and, where
    the build machine has some libtorch under that soname (Debian's
    libtorch-dev does), folds that library's whole dependency tree into its
    sym_tag. kwheel accepts them as torch-provided, lists them, and judges
    only the kernel's own symbol versions, which is what auditwheel's
    symbol policy says once its search path holds just the stand-ins."""
    b = lab.built("torch_libs")
    platform = b.variant["platform"]
    assert platform["tag"] == "manylinux_2_17_x86_64"
    assert sorted(t["soname"] for t in platform["torch_provided"]) == ["libc10.so", "libtorch.so"]
    assert all(t["reason"] for t in platform["torch_provided"])

    isolated = lab.auditwheel_ok("torch_libs", lab.isolated_ldpath("torch_libs"))
    assert isolated["sym_tag"] == platform["tag"]
    assert isolated["overall_tag"] == "linux_x86_64"
    assert set(isolated["external_libs"]) == {"libc10.so", "libtorch.so"}

    system = lab.auditwheel_ok("torch_libs")
    assert system["overall_tag"] == "linux_x86_64"
    assert {"libc10.so", "libtorch.so"} <= set(system["external_libs"])
    assert policy_key(system["sym_tag"]) >= policy_key(platform["tag"])

    rc, report = inspect(b.wheel)
    assert rc == 0 and not report["manylinux"]["external"]
    assert sorted(t["soname"] for t in report["manylinux"]["torch_provided"]) == ["libc10.so", "libtorch.so"]


def test_abi3_stable_imports_pass(lab: Lab):
    abi3 = lab.built("abi3_stable").variant["platform"]["abi3"]
    assert abi3["status"] == "stable_abi_only"
    assert abi3["python_symbols"] == 2
    # An op library with no Python API at all passes trivially.
    assert lab.built("glibc_2_34").variant["platform"]["abi3"]["status"] == "no_python_api"


# --------------------------------------------------------------------------- kernel-abi-check


def manylinux_ladder(arch: str) -> list[str]:
    """Policy names for `arch`, most compatible first, from kwheel's copy of auditwheel's data."""
    data = json.loads(POLICY_JSON.read_text())
    rungs = [p for p in data["policies"] if p["name"] != "linux" and arch in p["symbol_versions"]]
    return [p["name"] for p in sorted(rungs, key=lambda p: -p["priority"])]


def kac_verdict(kac, so: Path, arch: str) -> str:
    """kernel-abi-check has no 'best policy': ask each rung, oldest first."""
    try:
        obj = kac.ObjectFile(str(so))
        obj.format()
    except (ValueError, OSError) as e:
        return "error: " + str(e).rsplit(": ", 1)[-1]
    for name in manylinux_ladder(arch):
        try:
            if not obj.check_manylinux(name):
                return name
        except ValueError as e:  # a rung its own (older) policy copy lacks
            if "Unknown manylinux version" in str(e):
                continue
            return "error: " + str(e)
    return "none"


@pytest.fixture(scope="module")
def kac():
    return pytest.importorskip("kernel_abi_check", reason="kernel-abi-check is not installed (scripts/requirements-test.txt)")


@pytest.mark.parametrize("case", list(CASES))
def test_kernel_abi_check_verdict(lab: Lab, kac, case: str):
    spec, b = CASES[case], lab.built(case)
    arch = "aarch64" if case.startswith("aarch64") else "x86_64"
    verdict = kac_verdict(kac, b.so, arch)
    if case.startswith("claim_"):
        # kernel-abi-check checks one claimed version: ask it the claim.
        claim = "manylinux_" + spec.build_args[1]
        found = kac.ObjectFile(str(b.so)).check_manylinux(claim)
        said = ", ".join(f"{v.name}@{v.dep}_{v.version}" for v in found)
        verdict = f"{said} at {claim}" if found else verdict
    if arch == "aarch64":
        verdict += " (aarch64 table)"
    assert verdict == spec.kac
    python = [f"{type(v).__name__} {v.name}" + (f" {v.version_added}" if hasattr(v, "version_added") else "")
              for v in kac.ObjectFile(str(b.so)).check_python_abi("3.9")] if not case == "not_elf" else []
    assert tuple(python) == spec.kac_python


# --------------------------------------------------------------------------- the doc


def test_doc_table_matches():
    """docs/manylinux.md's comparison table has one row per case with these cells."""
    rows = {}
    for line in DOC.read_text().splitlines():
        m = re.match(r"\|\s*`([a-z0-9_A-Z]+)`\s*\|(.*)\|\s*$", line)
        if m and m.group(1) in CASES:
            rows[m.group(1)] = [c.strip().strip("`") for c in m.group(2).split("|")]
    assert sorted(rows) == sorted(CASES), "docs/manylinux.md table rows != CASES"
    for case, spec in CASES.items():
        kwheel_cell, auditwheel_cell, kac_cell = rows[case][1], rows[case][2], rows[case][3]
        assert kwheel_cell.startswith(spec.kwheel), (case, kwheel_cell)
        assert auditwheel_cell.startswith(spec.auditwheel), (case, auditwheel_cell)
        assert kac_cell.startswith(spec.kac), (case, kac_cell)
