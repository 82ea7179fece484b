"""Warm rebuilds keep wheels whose inputs did not change, and what they keep
is byte-identical to a fresh build."""

import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from elfgen import shared_object  # noqa: E402

KWHEEL = os.environ.get("KWHEEL_BIN", str(Path(__file__).resolve().parents[2] / "build" / "kwheel"))
VARIANTS = ["torch27-cxx11-cu126-x86_64-linux", "torch29-cxx11-cpu-x86_64-linux", "torch-universal"]


def make_repo(root: Path) -> Path:
    for v in VARIANTS:
        pkg = root / "build" / v / "img2gray"
        pkg.mkdir(parents=True)
        (pkg / "__init__.py").write_text(f"VARIANT = {v!r}\n")
        if v != "torch-universal":
            (pkg / "_img2gray_abc1234.abi3.so").write_bytes(shared_object("x86_64", v.encode() * 1000))
    return root


def build_text(repo: Path, out: Path, *extra: str) -> str:
    r = subprocess.run([KWHEEL, "build", str(repo), "--version", "0.1.0", "--name", "img2gray", "-o", str(out), *extra],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return r.stdout


def build(repo: Path, out: Path, *extra: str) -> dict:
    return {v["variant"]: v for v in json.loads(build_text(repo, out, "--json", *extra))["variants"]}


def sha(p: Path) -> str:
    return hashlib.sha256(p.read_bytes()).hexdigest()


def test_unchanged_inputs_reuse_the_wheel(tmp_path):
    repo = make_repo(tmp_path / "repo")
    out = tmp_path / "dist"
    first = build(repo, out)
    assert not any(v["reused"] for v in first.values())
    mtimes = {p.name: p.stat().st_mtime_ns for p in out.glob("*.whl")}
    second = build(repo, out)
    assert all(v["reused"] for v in second.values())
    assert {p.name: p.stat().st_mtime_ns for p in out.glob("*.whl")} == mtimes, "reused wheels must not be rewritten"
    for v, r in second.items():
        assert r["sha256"] == first[v]["sha256"] == sha(Path(r["wheel"]))
    # What was kept equals a fresh build, byte for byte.
    fresh = build(repo, tmp_path / "fresh", "--no-reuse")
    for v, r in fresh.items():
        assert r["sha256"] == second[v]["sha256"]


def test_a_changed_input_rebuilds_only_its_variant(tmp_path):
    repo = make_repo(tmp_path / "repo")
    out = tmp_path / "dist"
    first = build(repo, out)
    init = repo / "build" / VARIANTS[1] / "img2gray" / "__init__.py"
    init.write_text(init.read_text() + "# changed\n")
    again = build(repo, out)
    assert again[VARIANTS[1]]["reused"] is False
    assert again[VARIANTS[1]]["sha256"] != first[VARIANTS[1]]["sha256"]
    assert again[VARIANTS[0]]["reused"] is True and again[VARIANTS[2]]["reused"] is True


def test_same_content_rewritten_in_place_is_not_trusted_blindly(tmp_path):
    # Rewriting a file with identical bytes changes its ctime: kwheel rebuilds
    # (cheap and safe) rather than trusting a guess; the bytes come out equal.
    repo = make_repo(tmp_path / "repo")
    out = tmp_path / "dist"
    first = build(repo, out)
    so = next((repo / "build" / VARIANTS[0] / "img2gray").glob("*.so"))
    so.write_bytes(so.read_bytes())
    again = build(repo, out)
    assert again[VARIANTS[0]]["reused"] is False
    assert again[VARIANTS[0]]["sha256"] == first[VARIANTS[0]]["sha256"]


def test_a_tampered_wheel_in_out_is_rewritten(tmp_path):
    repo = make_repo(tmp_path / "repo")
    out = tmp_path / "dist"
    first = build(repo, out)
    wheel = Path(first[VARIANTS[0]]["wheel"])
    data = bytearray(wheel.read_bytes())
    data[-30] ^= 0xFF
    wheel.write_bytes(bytes(data))
    again = build(repo, out)
    assert again[VARIANTS[0]]["reused"] is False
    assert sha(wheel) == first[VARIANTS[0]]["sha256"]


def test_changed_options_rebuild(tmp_path):
    repo = make_repo(tmp_path / "repo")
    out = tmp_path / "dist"
    build(repo, out)
    again = build(repo, out, "--compression-level", "9")
    assert not any(v["reused"] for v in again.values())
    env_epoch = dict(os.environ, SOURCE_DATE_EPOCH="1700000000")
    r = subprocess.run([KWHEEL, "build", str(repo), "--version", "0.1.0", "--name", "img2gray", "-o", str(out), "--json",
                        "--compression-level", "9"], capture_output=True, text=True, env=env_epoch)
    assert r.returncode == 0, r.stderr
    assert not any(v["reused"] for v in json.loads(r.stdout)["variants"])


def test_a_build_without_json_takes_no_digest_and_a_later_json_run_takes_it_once(tmp_path):
    # Without --json nothing reports the wheels' sha256, so the build does not
    # hash them; a later --json run that keeps them hashes each once, and
    # records it for the runs after it.
    repo = make_repo(tmp_path / "repo")
    out = tmp_path / "dist"
    build_text(repo, out, "-q")
    wheels = sorted(out.glob("*.whl"))
    assert len(wheels) == len(VARIANTS)
    states = {w: out / ".kwheel" / (w.name + ".json") for w in wheels}
    assert all("sha256" not in json.loads(s.read_text()) for s in states.values())
    mtimes = {w: w.stat().st_mtime_ns for w in wheels}
    second = build(repo, out)
    assert all(v["reused"] for v in second.values())
    assert {Path(v["wheel"]): v["sha256"] for v in second.values()} == {w: sha(w) for w in wheels}
    assert {w: json.loads(s.read_text())["sha256"] for w, s in states.items()} == {w: sha(w) for w in wheels}
    assert {w: w.stat().st_mtime_ns for w in wheels} == mtimes, "taking a digest must not rewrite the wheel"
    third = build(repo, out)
    assert all(v["reused"] for v in third.values())
    assert {v["variant"]: v["sha256"] for v in third.values()} == {v["variant"]: v["sha256"] for v in second.values()}
    # A later run without --json keeps the wheels and the digests recorded (the table says
    # so; -q would print nothing).
    table = build_text(repo, out)
    assert table.count("unchanged") == len(VARIANTS), table
    assert {w: json.loads(s.read_text())["sha256"] for w, s in states.items()} == {w: sha(w) for w in wheels}
    fresh = build(repo, tmp_path / "fresh", "--no-reuse")
    assert {v["variant"]: v["sha256"] for v in fresh.values()} == {v["variant"]: v["sha256"] for v in second.values()}
