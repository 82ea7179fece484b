"""`kwheel link`: code written for kernels runs the installed wheels, offline.

The peers decide, not kwheel: kernels 0.17.2 from PyPI (get_kernel, has_kernel, kernelize with
LayerRepository, load_kernel and get_locked_kernel with the kernels.lock its own `kernels lock`
wrote, get_kernel_dep) on Debian's torch, pip installs and uninstalls. The kernels are built by
kwheel from the fixture Hub (tests/hub) while it is up; everything after that runs with the Hub
stopped, HF_HUB_OFFLINE=1, HF_ENDPOINT at a closed port and an empty HF_HOME, so the only way a
kernel loads is through what `kwheel link` wrote. Results are checked against the formula in
kernels/img2gray/__init__.py, computed in the test with torch.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(ROOT / "tests" / "hub"))
sys.path.insert(0, str(HERE))
import fixture as hubfix  # noqa: E402
import hubtest as H  # noqa: E402
import kernel_repos as kr  # noqa: E402

ORG = "kernels-test"
IMG2GRAY = f"{ORG}/img2gray"   # the real kernel, CPU: v1 compat, v2 flat
ACT = f"{ORG}/act"             # pure Python, what USES depends on
USES = f"{ORG}/uses-act"       # kernel-depends on ACT version 1; its __init__ calls get_kernel_dep
DEBIAN_DIST = Path("/usr/lib/python3/dist-packages")
VENV_SITE = Path(sysconfig.get_paths()["purelib"])  # the test venv's: kernels 0.17.2 and huggingface_hub
CPU = "torch-cpu"

USES_INIT = b'''from kernels import get_kernel_dep

from ._ops import ops, add_op_namespace_prefix

_act = get_kernel_dep("kernels-test/act")


def hello() -> str:
    return "uses " + _act.hello()
'''


def uses_tree() -> dict[str, bytes]:
    files = kr.demo_package("uses-act", "unused")
    files["__init__.py"] = USES_INIT
    return kr.variant_tree(CPU, layout="flat", name="uses-act", files=files, kernel_depends=[{"repo-id": ACT, "version": 1}])


def kernels_lock(hub, where: Path, deps: dict[str, int]) -> Path:
    """kernels.lock as kernels 0.17.2's own `kernels lock` writes it, with the Hub up."""
    where.mkdir(parents=True, exist_ok=True)
    lines = "".join(f'"{repo}" = {n}\n' for repo, n in deps.items())
    (where / "pyproject.toml").write_text(f'[project]\nname = "p"\nversion = "0"\n\n[tool.kernels.dependencies]\n{lines}')
    r = subprocess.run([str(Path(sys.executable).parent / "kernels"), "lock", str(where)], env=hubfix.client_env(hub, where / "khome"),
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    return where / "kernels.lock"


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    """Wheels built from the fixture Hub and a lock from `kernels lock`; then the Hub is stopped."""
    if not (DEBIAN_DIST / "torch" / "__init__.py").exists():
        pytest.fail("Debian's python3-torch is not installed; run scripts/setup")
    base = tmp_path_factory.mktemp("link")
    root = base / "root"
    hubfix.set_org(root, ORG, trustedKernelPublisher=True)
    trees = {}
    for n, layout in ((1, "compat"), (2, "flat")):
        out = base / f"img2gray-{layout}"
        r = subprocess.run([str(ROOT / "scripts" / "build-kernel"), "--cpu", "--layout", layout, "--kernel-version", str(n),
                            "--out", str(out)], capture_output=True, text=True, timeout=900)
        assert r.returncode == 0, r.stderr
        trees[n] = out
    img = kr.make_kernel_repo(root, IMG2GRAY, trees)
    act = kr.make_kernel_repo(root, ACT, {1: kr.variant_tree(CPU, layout="flat", name="act", files=kr.demo_package("act", "act v1"))})
    uses = kr.make_kernel_repo(root, USES, {1: uses_tree()})
    dist = {1: base / "dist1", 2: base / "dist2"}
    with hubfix.hub_server(root) as hub:
        env = H.clean_env(base / "home", HF_ENDPOINT=hub.endpoint)
        for n in (1, 2):
            r = H.kwheel("build", IMG2GRAY, "--version", str(n), "-o", dist[n], env=env)
            assert r.returncode == 0, str(r)
        for repo in (ACT, USES):
            r = H.kwheel("build", repo, "-o", dist[1], env=env)
            assert r.returncode == 0, str(r)
        lock = kernels_lock(hub, base / "project", {IMG2GRAY: 1})
    # The Hub is stopped from here on.
    return {"base": base, "dist": dist, "lock": lock, "img2gray": img.versions, "act": act.versions, "uses": uses.versions}


def make_venv(where: Path) -> Path:
    """A user's venv: kernels and huggingface_hub from the test venv, torch from Debian (after them)."""
    r = subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(where)], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    (site,) = list(where.glob("lib/python3*/site-packages"))
    (site / "_peers.pth").write_text(f"{VENV_SITE}\n{DEBIAN_DIST}\n")
    return where / "bin" / "python"


def pip(py: Path, *args) -> subprocess.CompletedProcess:
    r = subprocess.run([sys.executable, "-m", "pip", "--python", str(py), "--disable-pip-version-check", *args],
                       capture_output=True, text=True, timeout=300, env={**os.environ, "PIP_CONFIG_FILE": "/dev/null"})
    assert r.returncode == 0, r.stdout + r.stderr
    return r


def install(py: Path, *wheels: Path, upgrade: bool = False, force: bool = False) -> None:
    pip(py, "install", "-q", "--no-deps", "--no-index", *(["-U"] if upgrade else []), *(["--force-reinstall"] if force else []), *map(str, wheels))


def wheels_of(d: Path, prefix: str) -> list[Path]:
    return sorted(d.glob(f"{prefix}-*.whl"))


def offline_env(home: Path, cache: Path | None) -> dict:
    env = H.clean_env(home, HF_HUB_OFFLINE="1", HF_ENDPOINT="http://127.0.0.1:9")
    env.pop("KERNELS_CACHE", None)
    if cache is not None:
        env["KERNELS_CACHE"] = str(cache)
    return env


def link(py: Path, *args, env: dict | None = None, json_out: bool = True):
    return H.kwheel("link", "--python", py, "--allow-unsigned", *args, env=env or offline_env(py.parents[1] / "home", None), json_out=json_out)


def run_py(py: Path, code: str, env: dict, *args) -> subprocess.CompletedProcess:
    return subprocess.run([str(py), "-c", code, *map(str, args)], capture_output=True, text=True, timeout=300, env=env, cwd=py.parents[1])


CHECK_IMG2GRAY = r"""
import torch
def expected(x):
    r, g, b = (x[..., i].to(torch.int32) for i in range(3))
    return ((21 * r + 72 * g + 7 * b + 50) // 100).to(torch.uint8)
x = torch.randint(0, 256, (13, 17, 3), dtype=torch.uint8, generator=torch.Generator().manual_seed(7))
"""


@pytest.fixture(scope="module")
def linked(world, tmp_path_factory):
    """img2gray v1, act and uses-act installed in one venv and linked into a cache of their own."""
    where = tmp_path_factory.mktemp("user")
    py = make_venv(where / "venv")
    install(py, *wheels_of(world["dist"][1], "img2gray"), *wheels_of(world["dist"][1], "act"), *wheels_of(world["dist"][1], "uses_act"))
    cache = where / ".kernels"
    r = link(py, "--cache", cache)
    assert r.returncode == 0, str(r)
    return {"py": py, "cache": cache, "run": r, "env": offline_env(where / "home", cache)}


# --------------------------------------------------------------------------- 1, 2: get_kernel and has_kernel


def test_get_kernel_loads_the_installed_version_and_nothing_else(world, linked):
    v1, v2 = world["img2gray"][1], world["img2gray"][2]
    code = CHECK_IMG2GRAY + r"""
import sys
from kernels import get_kernel
k = get_kernel("kernels-test/img2gray", version=1)
assert torch.equal(k.img2gray(x), expected(x))
print("FILE", k.__file__)
try:
    get_kernel("kernels-test/img2gray", version=2)
except ValueError as e:
    print("V2", e)
else:
    raise SystemExit("version 2 loaded, but only version 1 is installed")
k = get_kernel("kernels-test/img2gray", revision=sys.argv[1])
assert torch.equal(k.img2gray(x), expected(x))
try:
    get_kernel("kernels-test/img2gray", revision=sys.argv[2])
except Exception as e:
    print("REV2", type(e).__name__)
else:
    raise SystemExit("v2's commit loaded")
"""
    r = run_py(linked["py"], code, linked["env"], v1, v2)
    assert r.returncode == 0, r.stderr
    (file_line,) = [ln for ln in r.stdout.splitlines() if ln.startswith("FILE ")]
    # The module kernels loaded is the installed package, through the link.
    site = next(linked["py"].parents[1].glob("lib/python3*/site-packages"))
    assert Path(file_line.split(" ", 1)[1]).resolve() == (site / "img2gray" / "__init__.py").resolve()
    assert "V2 Version 2 not found, available versions: 1" in r.stdout
    assert "REV2 FileNotFoundError" in r.stdout
    j = linked["run"].json
    (img,) = [k for k in j["kernels"] if k["repo_id"] == IMG2GRAY]
    assert (img["status"], img["version"], img["revision"]) == ("linked", 1, v1)
    assert j["export"] == f"export KERNELS_CACHE={linked['cache']}" and j["default_cache"] is False


def test_has_kernel(world, linked):
    code = r"""
import sys
from kernels import has_kernel
print("V1", has_kernel("kernels-test/img2gray", version=1))
print("REV1", has_kernel("kernels-test/img2gray", revision=sys.argv[1]))
print("REV2", has_kernel("kernels-test/img2gray", revision=sys.argv[2]))
"""
    r = run_py(linked["py"], code, linked["env"], world["img2gray"][1], world["img2gray"][2])
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["V1", "True", "REV1", "True", "REV2", "False"]


# --------------------------------------------------------------------------- 3: kernelize


def test_kernelize_swaps_in_the_installed_layer(linked):
    code = CHECK_IMG2GRAY + r"""
import torch.nn as nn
from kernels import LayerRepository, Mode, kernelize, use_kernel_forward_from_hub, use_kernel_mapping

@use_kernel_forward_from_hub("Img2Gray")
class Gray(nn.Module):
    def forward(self, input: torch.Tensor) -> torch.Tensor:
        return torch.zeros(input.shape[:2], dtype=torch.uint8)  # not the kernel's answer

model = nn.Sequential(Gray())
assert not torch.equal(model(x), expected(x))
mapping = {"Img2Gray": {"cpu": LayerRepository("kernels-test/img2gray", layer_name="Img2Gray", version=1)}}
with use_kernel_mapping(mapping, inherit_mapping=False):
    model = kernelize(model, mode=Mode.INFERENCE, device="cpu")
assert torch.equal(model(x), expected(x))
print("KERNELIZED", type(model[0]).forward.__module__)
"""
    r = run_py(linked["py"], code, linked["env"])
    assert r.returncode == 0, r.stderr
    assert "KERNELIZED" in r.stdout


# --------------------------------------------------------------------------- 4: locked loaders


def test_load_kernel_and_get_locked_kernel_with_the_lock_kernels_wrote(world, linked):
    lock = json.loads(world["lock"].read_text())
    assert [e["lock"]["commit"] for e in lock if e["dependency"]["repo-id"] == IMG2GRAY] == [world["img2gray"][1]]
    code = CHECK_IMG2GRAY + r"""
import sys
import sysconfig
from pathlib import Path
from kernels import get_locked_kernel, load_kernel
for load in (load_kernel, get_locked_kernel):
    k = load("kernels-test/img2gray", lockfile=Path(sys.argv[1]))
    assert torch.equal(k.img2gray(x), expected(x)), load.__name__
    print("OK", load.__name__)
"""
    r = run_py(linked["py"], code, linked["env"], world["lock"])
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["OK", "load_kernel", "OK", "get_locked_kernel"]
    ok = link(linked["py"], "--cache", linked["cache"], "--lock", world["lock"])
    assert ok.returncode == 0 and ok.json["lock_mismatches"] == [], str(ok)


# --------------------------------------------------------------------------- 5: kernel-depends


def test_a_kernel_with_kernel_depends_imports_and_runs(linked):
    code = r"""
from kernels import get_kernel
print("HELLO", get_kernel("kernels-test/uses-act", version=1).hello())
"""
    r = run_py(linked["py"], code, linked["env"])
    assert r.returncode == 0, r.stderr
    assert "HELLO uses act v1" in r.stdout


# --------------------------------------------------------------------------- 6: locks, upgrades, uninstalls


def test_a_lock_naming_another_commit_fails_naming_the_kernel(world, linked, tmp_path):
    v1, v2 = world["img2gray"][1], world["img2gray"][2]
    lock = tmp_path / "kernels.lock"
    lock.write_text(json.dumps([{"dependency": {"repo-id": IMG2GRAY, "version": 2}, "lock": {"commit": v2}}]))
    before = sorted(str(p.relative_to(linked["cache"])) for p in linked["cache"].rglob("*"))
    r = link(linked["py"], "--cache", linked["cache"], "--lock", lock, json_out=False)
    assert r.returncode == 5, str(r)
    (line,) = [ln for ln in r.stderr.splitlines() if IMG2GRAY in ln]
    assert v2 in line and v1 in line, line
    assert sorted(str(p.relative_to(linked["cache"])) for p in linked["cache"].rglob("*")) == before  # nothing written
    # The older format, naming the installed commit, holds.
    kr_legacy = tmp_path / "legacy.lock"
    kr_legacy.write_text(json.dumps([{"repo_id": IMG2GRAY, "sha": v1, "variants": {}}]))
    ok = link(linked["py"], "--cache", linked["cache"], "--lock", kr_legacy)
    assert ok.returncode == 0, str(ok)
    legacy_other = tmp_path / "legacy2.lock"
    legacy_other.write_text(json.dumps([{"repo_id": ACT, "sha": "0" * 40, "variants": {}}]))
    bad = link(linked["py"], "--cache", linked["cache"], "--lock", legacy_other)
    assert bad.returncode == 5 and bad.json["lock_mismatches"][0]["repo_id"] == ACT and bad.json["written"] is False, str(bad)


LOADS = r"""
import sys
from kernels import get_kernel
for n in (1, 2):
    try:
        k = get_kernel("kernels-test/img2gray", version=n)
        print("LOADED", n, k.__file__)
    except Exception as e:
        print("REFUSED", n, type(e).__name__)
"""


def test_upgrade_and_uninstall_leave_only_what_is_installed(world, tmp_path):
    py = make_venv(tmp_path / "venv")
    home = tmp_path / "home"  # the default cache: HF_HOME/hub
    env = offline_env(home, None)
    install(py, *wheels_of(world["dist"][1], "img2gray"))
    assert link(py, env=env).returncode == 0
    folder = home / "hub" / "kernels--kernels-test--img2gray"
    assert (folder / "refs" / "v1").read_text() == world["img2gray"][1]
    assert "LOADED 1" in run_py(py, LOADS, env).stdout
    install(py, *wheels_of(world["dist"][2], "img2gray"), upgrade=True)
    r = link(py, env=env)
    assert r.returncode == 0 and "export" not in r.json, str(r)
    out = run_py(py, LOADS, env).stdout
    assert "REFUSED 1 ValueError" in out and "LOADED 2" in out, out
    assert sorted(p.name for p in (folder / "refs").iterdir()) == ["v2"]
    pip(py, "uninstall", "-y", "img2gray")
    r = link(py, env=env)
    assert r.returncode == 0 and r.json["removed"] == [IMG2GRAY], str(r)
    assert not folder.exists()
    out = run_py(py, LOADS, env).stdout
    assert out.split().count("REFUSED") == 2, out


# --------------------------------------------------------------------------- what link refuses


def test_a_tampered_install_is_named_and_not_linked(world, tmp_path):
    py = make_venv(tmp_path / "venv")
    install(py, *wheels_of(world["dist"][1], "img2gray"), *wheels_of(world["dist"][1], "act"))
    site = next((tmp_path / "venv").glob("lib/python3*/site-packages"))
    with open(site / "img2gray" / "__init__.py", "a") as f:
        f.write("\n# changed after the install\n")
    cache = tmp_path / "cache"
    r = link(py, "--cache", cache, json_out=False)
    assert r.returncode == 8, str(r)
    (line,) = [ln for ln in r.stderr.splitlines() if "not linked" in ln]
    assert "img2gray" in line and "img2gray/__init__.py" in line, line
    assert not (cache / "kernels--kernels-test--img2gray").exists()
    assert (cache / "kernels--kernels-test--act" / "refs" / "v1").is_file()  # the others are linked


def test_unsigned_kernels_need_allow_unsigned(world, tmp_path):
    py = make_venv(tmp_path / "venv")
    install(py, *wheels_of(world["dist"][1], "act"))
    r = H.kwheel("link", "--python", py, "--cache", tmp_path / "cache", env=offline_env(tmp_path / "home", None), json_out=False)
    assert r.returncode == 9 and "not linked: act" in r.stderr and "signer" in r.stderr, str(r)
    assert not (tmp_path / "cache" / "kernels--kernels-test--act").exists()


def test_a_cache_folder_kwheel_did_not_make_is_left_alone(world, tmp_path):
    py = make_venv(tmp_path / "venv")
    install(py, *wheels_of(world["dist"][1], "act"))
    hub_download = tmp_path / "cache" / "kernels--kernels-test--act"
    (hub_download / "refs").mkdir(parents=True)
    (hub_download / "refs" / "v1").write_text("f" * 40)
    r = link(py, "--cache", tmp_path / "cache", json_out=False)
    assert r.returncode == 3 and "not made by kwheel link" in r.stderr, str(r)
    assert (hub_download / "refs" / "v1").read_text() == "f" * 40 and sorted(p.name for p in hub_download.iterdir()) == ["refs"]


def test_a_directory_build_needs_a_repo_id(world, tmp_path):
    src = kr.write_tree(tmp_path / "src", kr.variant_tree(CPU, layout="flat", name="act", files=kr.demo_package("act", "dir act")))
    env = H.clean_env(tmp_path / "home")
    for out, extra in ((tmp_path / "plain", []), (tmp_path / "named", ["--repo-id", "acme/act"])):
        r = H.kwheel("build", src, "--version", "1", "-o", out, *extra, env=env)
        assert r.returncode == 0, str(r)
    bad = H.kwheel("build", ACT, "--repo-id", "acme/act", "-o", tmp_path / "x", env=env, json_out=False)
    assert bad.returncode == 2 and "--repo-id" in bad.stderr, str(bad)
    py = make_venv(tmp_path / "venv")
    install(py, *wheels_of(tmp_path / "plain", "act"))
    r = link(py, "--cache", tmp_path / "cache", json_out=False)
    assert r.returncode == 0 and "skipped: act" in r.stderr and "--repo-id ORG/NAME" in r.stderr, str(r)
    install(py, *wheels_of(tmp_path / "named", "act"), force=True)  # the same version, now with a repo id
    r = link(py, "--cache", tmp_path / "cache")
    assert r.returncode == 0, str(r)
    (k,) = r.json["kernels"]
    assert (k["status"], k["repo_id"], k["stand_in_revision"]) == ("linked", "acme/act", True)
    out = run_py(py, "from kernels import get_kernel\nprint(get_kernel('acme/act', version=1).hello())", offline_env(tmp_path / "home", tmp_path / "cache"))
    assert out.returncode == 0 and out.stdout.strip() == "dir act", out.stderr


def test_quiet_prints_only_the_export_line_and_help_has_examples(linked):
    r = link(linked["py"], "-q", "--cache", linked["cache"], json_out=False)
    assert r.returncode == 0 and r.stdout == f"export KERNELS_CACHE={linked['cache']}\n" and r.stderr == "", str(r)
    h = H.kwheel("link", "--help", json_out=False)
    assert h.returncode == 0 and "Examples:" in h.stdout and "--cache" in h.stdout and "--lock" in h.stdout
    usage = H.kwheel("link", "--python", "/nonexistent/python", json_out=False)
    assert usage.returncode == 2 and "/nonexistent/python" in usage.stderr, str(usage)
