"""A kernel with python-depends, pinned, locked, installed and validated
against real tools (issue 37, "Dependencies pinned with hashes",
"pylock.toml", "validate with dependencies").

The kernel is a real `kwheel build` of a pure-Python torch-cpu build whose
metadata.json says `python-depends: ["einops"]` and whose package imports
einops. einops is PyPI's real wheel (`pip download einops==0.8.2`, held to
its sha256 below). Both are served by a real pypiserver (--disable-fallback,
no torch on it), resolved by real uv (`uv pip compile`, the tools venv's
0.13.9), installed by Debian's pip (--require-hashes), pip 26 and uv
(`-r pylock.toml`) into venvs of Debian's /usr/bin/python3 that see its
python3-torch (--system-site-packages), and validated by `kwheel validate`.
torch is never on the index: a resolution that asked for it would fail.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from conftest import torch_version  # noqa: E402
from local_servers import pypiserver  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
KWHEEL = os.environ.get("KWHEEL_BIN") or str(ROOT / "build" / "kwheel")
TOOLS = Path(sys.executable).parent  # the tools venv: pip 26, uv, pypi-server
UV = TOOLS / "uv"
TORCH_PYTHON = "/usr/bin/python3"
EINOPS_WHEEL = "einops-0.8.2-py3-none-any.whl"
# PyPI's sha256 for it (https://pypi.org/project/einops/0.8.2/#files).
EINOPS_SHA256 = "54058201ac7087911181bfec4af6091bb59380360f069276601256a76af08193"


TORCH = torch_version(TORCH_PYTHON)

pytestmark = [
    pytest.mark.skipif(TORCH is None, reason=f"needs torch importable by {TORCH_PYTHON} (Debian python3-torch)"),
    pytest.mark.skipif(not os.access(KWHEEL, os.X_OK), reason=f"kwheel not built at {KWHEEL} (set KWHEEL_BIN)"),
    pytest.mark.skipif(not os.access(UV, os.X_OK), reason=f"no uv at {UV} (scripts/setup installs it)"),
]


def run(argv, *, env=None, cwd=None, timeout=600) -> subprocess.CompletedProcess:
    return subprocess.run([str(a) for a in argv], capture_output=True, text=True, env=env, cwd=cwd, timeout=timeout)


def kwheel_env(**extra) -> dict:
    env = dict(os.environ, KWHEEL_UV=str(UV))
    env.update(extra)
    return env


def kernel_repo(root: Path, name: str, depends: list[str]) -> Path:
    """A torch-cpu (pure Python) kernel whose package imports each dependency."""
    repo = root / name
    pkg = repo / "build" / "torch-cpu" / name
    pkg.mkdir(parents=True)
    imports = "".join(f"import {d}\n" for d in depends if d == "einops")
    (pkg / "__init__.py").write_text(imports + "\n\ndef hello():\n    return 'einops ' + einops.__version__\n" if imports else "def hello():\n    return 'no deps'\n")
    meta = {"name": name, "version": 1, "license": "Apache-2.0", "python-depends": depends, "backend": {"type": "cpu"}}
    (repo / "build" / "torch-cpu" / "metadata.json").write_text(json.dumps(meta))
    return repo


def kwheel_build(repo: Path, dist: Path) -> Path:
    p = run([KWHEEL, "build", repo, "--version", "0.1.0", "-o", dist, "-q"])
    assert p.returncode == 0, p.stderr
    (wheel,) = dist.glob("*.whl")
    return wheel


def plain_wheel(dist: Path, name: str, version: str, requires: list[str]) -> Path:
    """A pure-Python wheel as the wheel spec lays it out, for a dependency
    that itself needs torch (as helion does)."""
    files = {f"{name}/__init__.py": b"", f"{name}-{version}.dist-info/WHEEL": b"Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
             f"{name}-{version}.dist-info/METADATA": (f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n"
                                                     + "".join(f"Requires-Dist: {r}\n" for r in requires)).encode()}
    record = "".join(f"{k},sha256={base64.urlsafe_b64encode(hashlib.sha256(v).digest()).rstrip(b'=').decode()},{len(v)}\n" for k, v in files.items())
    files[f"{name}-{version}.dist-info/RECORD"] = (record + f"{name}-{version}.dist-info/RECORD,,\n").encode()
    path = dist / f"{name}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as z:
        for k, v in files.items():
            z.writestr(k, v)
    return path


def torch_venv(where: Path, with_pip: bool = True) -> Path:
    """A venv of Debian's Python that sees its python3-torch."""
    args = [TORCH_PYTHON, "-m", "venv", "--system-site-packages", where]
    p = run(args if with_pip else args + ["--without-pip"])
    assert p.returncode == 0, p.stderr
    return where / "bin" / "python"


def imports_kernel(python: Path, name: str) -> str:
    p = run([python, "-c", f"import {name}, torch; print({name}.hello()); print(torch.__file__)"])
    assert p.returncode == 0, p.stderr
    hello, torch_file = p.stdout.split("\n")[:2]
    assert torch_file.startswith("/usr/lib/python3/dist-packages/torch/"), torch_file  # the interpreter's, not replaced
    return hello


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """pypiserver with depkern (python-depends einops), plainkern (none),
    twodeps (einops + helion, whose stand-in needs torch>=2.8) and einops."""
    work = tmp_path_factory.mktemp("pin-deps")
    wheels = work / "wheels"
    wheels.mkdir()
    p = run([TOOLS / "pip", "download", "einops==0.8.2", "--no-deps", "--only-binary", ":all:", "-d", wheels, "-q"])
    assert p.returncode == 0, p.stderr
    assert hashlib.sha256((wheels / EINOPS_WHEEL).read_bytes()).hexdigest() == EINOPS_SHA256
    plain_wheel(wheels, "helion", "0.9.0", ["torch>=2.8"])
    kernels = {n: kwheel_build(kernel_repo(work / "repos", n, d), work / f"dist-{n}")
               for n, d in (("depkern", ["einops"]), ("plainkern", []), ("twodeps", ["einops", "helion"]))}
    with pypiserver(work / "server", {"ci": "secret"}) as root:
        for w in [*wheels.glob("*.whl"), *kernels.values()]:
            shutil.copy(w, work / "server" / "packages")
        yield {"work": work, "index": f"{root}/simple/", "wheels": wheels, "kernels": kernels}


def pin(served, *args, env=None) -> subprocess.CompletedProcess:
    return run([KWHEEL, "pin", served["index"], *args], env=env or kwheel_env())


def uv_version() -> str:
    p = run([UV, "--version"])
    return " ".join(p.stdout.split()[:2])  # "uv 0.13.9"


def test_requirements_install_kernel_and_einops_with_hashes(served, tmp_path):
    target = torch_venv(tmp_path / "target")
    req = tmp_path / "requirements.txt"
    p = pin(served, "--name", "depkern", "--python", target, "-o", req)
    assert p.returncode == 0, p.stderr
    text = req.read_text()
    assert f"# dependencies resolved by {uv_version()} (uv pip compile --generate-hashes)" in text, text
    lines = [line for line in text.splitlines() if not line.startswith("#")]
    assert lines[0] == f"--index-url {served['index']}"
    assert lines[1].startswith("depkern==0.1.0+torch.cpu --hash=sha256:")
    assert lines[2] == f"einops==0.8.2 --hash=sha256:{EINOPS_SHA256}"
    assert not any(line.startswith("torch") for line in lines), text
    p = run([target, "-m", "pip", "install", "--require-hashes", "-r", req, "-q"])
    assert p.returncode == 0, p.stderr
    assert imports_kernel(target, "depkern") == "einops 0.8.2"


def test_json_reports_the_dependencies(served, tmp_path):
    p = pin(served, "--name", "depkern", "--python", TORCH_PYTHON, "--json")
    assert p.returncode == 0, p.stderr
    j = json.loads(p.stdout)
    assert j["resolver"] == uv_version()
    assert j["dependencies"] == [{"name": "einops", "version": "0.8.2", "marker": "", "hashes": [EINOPS_SHA256], "index": served["index"]}]
    assert j["kernel_depends"] == []


def test_pylock_installs_with_pip_26_and_uv(served, tmp_path):
    lock = tmp_path / "pylock.toml"
    p = pin(served, "--name", "depkern", "--python", TORCH_PYTHON, "-o", lock)
    assert p.returncode == 0, p.stderr
    data = tomllib.loads(lock.read_text())
    assert data["lock-version"] == "1.0"
    packages = {pkg["name"]: pkg for pkg in data["packages"]}
    assert set(packages) == {"depkern", "einops"}  # torch is the environment's
    assert packages["einops"]["version"] == "0.8.2"
    assert packages["einops"]["index"] == served["index"]
    (einops_wheel,) = packages["einops"]["wheels"]
    assert einops_wheel["hashes"] == {"sha256": EINOPS_SHA256} and einops_wheel["url"].endswith(EINOPS_WHEEL)
    (kernel_wheel,) = packages["depkern"]["wheels"]
    assert kernel_wheel["hashes"]["sha256"] == hashlib.sha256(served["kernels"]["depkern"].read_bytes()).hexdigest()
    assert packages["depkern"]["version"] == "0.1.0+torch.cpu"

    by_pip = torch_venv(tmp_path / "pip26", with_pip=False)
    p = run([TOOLS / "pip", "--python", by_pip, "install", "-r", lock, "-q"])
    assert p.returncode == 0, p.stderr
    assert imports_kernel(by_pip, "depkern") == "einops 0.8.2"
    by_uv = torch_venv(tmp_path / "uv", with_pip=False)
    p = run([UV, "pip", "install", "--python", by_uv, "-r", lock])
    assert p.returncode == 0, p.stderr
    assert imports_kernel(by_uv, "depkern") == "einops 0.8.2"


def test_torch_is_left_out_even_when_a_dependency_needs_it(served):
    # helion's stand-in needs torch>=2.8, which the index does not have and
    # Debian's 1.13 is not: excluded, torch is neither resolved nor pinned.
    p = pin(served, "--name", "twodeps", "--python", TORCH_PYTHON)
    assert p.returncode == 0, p.stderr
    names = [line.split("==")[0] for line in p.stdout.splitlines() if "==" in line]
    assert names == ["twodeps", "einops", "helion"], p.stdout


def test_a_kernel_without_dependencies_keeps_todays_output_and_needs_no_uv(served):
    without_uv = kwheel_env(KWHEEL_UV="/nonexistent/uv")
    p = pin(served, "--name", "plainkern", "--python", TORCH_PYTHON, env=without_uv)
    assert p.returncode == 0, p.stderr
    no_deps = pin(served, "--name", "plainkern", "--python", TORCH_PYTHON, "--no-deps", env=without_uv)
    assert p.stdout == no_deps.stdout and "resolved by" not in p.stdout


def test_without_uv_one_line_says_how_to_get_it(served):
    p = pin(served, "--name", "depkern", "--python", TORCH_PYTHON, env=kwheel_env(KWHEEL_UV="/nonexistent/uv"))
    assert p.returncode == 5, p.stderr
    (line,) = p.stderr.strip().splitlines()
    assert "KWHEEL_UV '/nonexistent/uv'" in line and "pip install uv" in line
    p = pin(served, "--name", "depkern", "--python", TORCH_PYTHON, "--no-deps", env=kwheel_env(KWHEEL_UV="/nonexistent/uv"))
    assert p.returncode == 0 and "einops" not in p.stdout


def test_lock_name_must_follow_pep_751(served, tmp_path):
    p = pin(served, "--name", "depkern", "--python", TORCH_PYTHON, "-o", tmp_path / "pylock.a.b.toml")
    assert p.returncode == 2
    (line,) = p.stderr.strip().splitlines()
    assert "pylock.NAME.toml" in line
    assert not (tmp_path / "pylock.a.b.toml").exists()


def validate(served, *args) -> tuple[subprocess.CompletedProcess, dict]:
    p = run([KWHEEL, "validate", served["kernels"]["depkern"], "--python", TORCH_PYTHON, "--device", "cpu", "--json", *args])
    return p, json.loads(p.stdout)


def test_validate_installs_dependencies_from_the_index_or_find_links(served, tmp_path):
    p, report = validate(served, "--index-url", served["index"])
    assert p.returncode == 0 and report["wheels"][0]["result"] == "PASS", report
    p, report = validate(served, "--find-links", served["wheels"])
    assert p.returncode == 0 and report["wheels"][0]["result"] == "PASS", report


def test_validate_names_the_missing_dependency_and_the_fix(served, tmp_path):
    p, report = validate(served)
    w = report["wheels"][0]
    assert w["result"] == "FAIL" and "\n" not in w["reason"], w
    assert "needs einops" in w["reason"] and "--index-url URL or --find-links DIR" in w["reason"], w
    assert "No module named" not in w["reason"]
    empty = tmp_path / "empty"
    empty.mkdir()
    p, report = validate(served, "--find-links", empty)
    w = report["wheels"][0]
    assert w["result"] == "FAIL" and "\n" not in w["reason"], w
    assert "einops" in w["reason"] and f"--find-links {empty}" in w["reason"], w
