"""docs/ci.md, run: every `run:` step of its workflow, job after job, against
the fixture Hub (serving the real img2gray CPU kernel as a kernel repo), a
real pypiserver, and Debian's torch; then the night again.

The workflow is read from the document itself, so the recipe people copy is
the one tested. What the test changes is the table in docs/ci.md: `uses:` and
`Install kwheel` steps are skipped, `${{ vars.X }}` and `${{ secrets.X }}`
are filled in below, and any other `${{ }}` expression fails the test.

Expected values come from the peers: the lock from kernels' own `kernels
lock`, what the index holds from pypiserver's package directory, what
installs from pip.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(ROOT / "tests" / "hub"))
sys.path.insert(0, str(HERE))
import fixture as hubfix  # noqa: E402
import hubtest as H  # noqa: E402
import kernel_repos as kr  # noqa: E402
from test_publish_index_pin import free_port, stop, wait_listening  # noqa: E402

ORG = "kernels-test"
IMG2GRAY = f"{ORG}/img2gray"
TORCH_PYTHON = "/usr/bin/python3"
VENV_BIN = Path(sys.executable).parent
INDEX_PASSWORD = "pw-ci-Recipe-9f3b-not-in-any-output"
HF_TOKEN = "hf_ciRecipeTokenNotInAnyOutput0123456789"
RECIPE = ROOT / "docs" / "ci.md"


def workflow() -> dict:
    blocks = re.findall(r"```yaml\n(.*?)```", RECIPE.read_text(), re.S)
    assert len(blocks) == 1, f"{RECIPE} should hold exactly one yaml block"
    return yaml.safe_load(blocks[0])


def job_order(jobs: dict) -> list[str]:
    """Jobs in an order their `needs:` allow (a cycle fails)."""
    done: list[str] = []
    while len(done) < len(jobs):
        ready = [j for j, spec in jobs.items() if j not in done and set(_needs(spec)) <= set(done)]
        assert ready, f"jobs' needs form a cycle: {jobs.keys() - set(done)}"
        done.append(ready[0])
    return done


def _needs(spec: dict) -> list[str]:
    n = spec.get("needs", [])
    return [n] if isinstance(n, str) else n


def fill(value: str, context: dict[str, dict[str, str]]) -> str:
    def one(m: re.Match) -> str:
        scope, name = m.group(1), m.group(2)
        assert scope in context, f"{RECIPE}: ${{{{ {scope}.{name} }}}} is not something the test can fill"
        assert name in context[scope], f"{RECIPE}: the test has no value for {scope}.{name}"
        return context[scope][name]

    rest = re.sub(r"\$\{\{\s*(\w+)\.(\w+)\s*\}\}", one, str(value))
    assert "${{" not in rest, f"{RECIPE}: an expression the test cannot run: {value}"
    return rest


def run_steps(wf: dict, workdir: Path, base_env: dict, context: dict) -> list[tuple[str, subprocess.CompletedProcess]]:
    ran = []
    for job in job_order(wf["jobs"]):
        for step in wf["jobs"][job]["steps"]:
            if "run" not in step or step.get("name", "").startswith("Install kwheel"):
                continue
            env = dict(base_env)
            env.update({k: fill(v, context) for k, v in {**wf.get("env", {}), **wf["jobs"][job].get("env", {}),
                                                         **step.get("env", {})}.items()})
            p = subprocess.run(["bash", "-euo", "pipefail", "-c", fill(step["run"], context)], cwd=workdir, env=env,
                               capture_output=True, text=True, timeout=600)
            ran.append((f"{job}: {step.get('name', step['run'])}", p))
            assert p.returncode == 0, f"{job} / {step.get('name')}: exit {p.returncode}\n{p.stdout}\n{p.stderr}"
    return ran


@pytest.fixture(scope="module")
def hub(tmp_path_factory):
    if not (Path("/usr/lib/python3/dist-packages") / "torch" / "__init__.py").exists():
        pytest.fail("Debian's python3-torch is not installed; run scripts/setup")
    out = tmp_path_factory.mktemp("img2gray-flat")
    r = subprocess.run([str(ROOT / "scripts" / "build-kernel"), "--cpu", "--layout", "flat", "--kernel-version", "1",
                        "--out", str(out)], capture_output=True, text=True, timeout=900)
    assert r.returncode == 0, r.stderr
    root = tmp_path_factory.mktemp("ci-store") / "root"
    hubfix.set_org(root, ORG, trustedKernelPublisher=True)
    kr.make_kernel_repo(root, IMG2GRAY, {1: out})
    with hubfix.hub_server(root, token=HF_TOKEN) as srv:
        yield srv


@pytest.fixture(scope="module")
def pypiserver(tmp_path_factory):
    from passlib.apache import HtpasswdFile

    d = tmp_path_factory.mktemp("ci-pypiserver")
    packages = d / "packages"
    packages.mkdir()
    h = HtpasswdFile(str(d / "htpasswd"), new=True)
    h.set_password("factory", INDEX_PASSWORD)
    h.save()
    port = free_port()
    with open(d / "stderr.log", "w") as err:
        proc = subprocess.Popen([VENV_BIN / "pypi-server", "run", "-p", str(port), "-i", "127.0.0.1", "-a", "update",
                                 "-P", d / "htpasswd", "--disable-fallback", packages], stdout=subprocess.DEVNULL, stderr=err)
    try:
        wait_listening(proc, port, "pypiserver")
        yield f"http://127.0.0.1:{port}", packages
    finally:
        stop(proc)


def kernels_lock(hub, checkout: Path, home: Path) -> None:
    """kernels.lock at the checkout's root, as kernels 0.17.2's `kernels lock` writes it."""
    (checkout / "pyproject.toml").write_text(f'[project]\nname = "team"\nversion = "0"\n\n'
                                             f'[tool.kernels.dependencies]\n"{IMG2GRAY}" = 1\n')
    env = hubfix.client_env(hub, home, HF_TOKEN=HF_TOKEN)
    r = subprocess.run([str(VENV_BIN / "kernels"), "lock", str(checkout)], env=env, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert (checkout / "kernels.lock").is_file()


def sha256(p: Path) -> str:
    return hashlib.sha256(p.read_bytes()).hexdigest()


def test_the_nightly_workflow_runs_twice_end_to_end(hub, pypiserver, tmp_path):
    index_url, packages = pypiserver
    checkout = tmp_path / "checkout"
    checkout.mkdir()
    kernels_lock(hub, checkout, tmp_path / "khome")
    site = tmp_path / "site"
    context = {
        "secrets": {"HF_TOKEN": HF_TOKEN, "INDEX_PASSWORD": INDEX_PASSWORD},
        "vars": {"INDEX_URL": index_url, "INDEX_USER": "factory", "SITE_DIR": str(site), "SITE_URL": site.as_uri(),
                 "TORCH_PYTHON": TORCH_PYTHON, "KWHEEL_DEVICE": "cpu", "KWHEEL_INDEX": "unused: kwheel is on PATH"},
    }
    env = H.clean_env(tmp_path / "hf-home", HF_ENDPOINT=hub.endpoint)
    env["PATH"] = f"{Path(H.KWHEEL).parent}{os.pathsep}{env['PATH']}"
    wf = workflow()

    run_steps(wf, checkout, env, context)
    wheels = sorted((checkout / "dist").glob("*.whl"))
    assert len(wheels) == 1 and "+torch1.13.cpu-" in wheels[0].name, wheels
    wheel = wheels[0]
    build = json.loads((checkout / "build-report.json").read_text())
    locked = json.loads((checkout / "kernels.lock").read_text())
    assert [k["source"]["commit"] for k in build["kernels"]] == [e["lock"]["commit"] for e in locked]
    validated = json.loads((checkout / "validate-report.json").read_text())
    assert [(w["filename"], w["result"]) for w in validated["wheels"]] == [(wheel.name, "PASS")], validated
    assert sorted(p.name for p in packages.iterdir()) == [wheel.name]
    assert sha256(packages / wheel.name) == sha256(wheel)
    stored_mtime = (packages / wheel.name).stat().st_mtime_ns

    # pip resolves the kernel from the private index and from the static site to the same file.
    version = re.match(r"img2gray-([^-]+)-", wheel.name).group(1)
    for url in (f"{index_url}/simple/", f"{site.as_uri()}/simple/"):
        report = tmp_path / "pip-report.json"
        r = subprocess.run([sys.executable, "-m", "pip", "install", "--dry-run", "--ignore-installed", "--no-deps",
                            "--disable-pip-version-check", "--report", str(report), "--index-url", url,
                            f"img2gray=={version}"], capture_output=True, text=True, timeout=300, env=H.clean_env())
        assert r.returncode == 0, r.stderr
        [item] = json.loads(report.read_text())["install"]
        assert item["download_info"]["archive_info"]["hashes"]["sha256"] == sha256(wheel), url

    # The browsable page names the kernel's build in its matrix, linked to the wheel.
    page = (site / "kernels" / "img2gray.html").read_text()
    assert "<title>Our GPU kernels" in page and f'{site.as_uri()}/files/{wheel.name.replace("+", "%2B")}' in page, page[:2000]

    # The next night: the same lock, the same bytes; nothing uploaded again, and still green.
    (checkout / "dist").rename(tmp_path / "night-1-dist")
    ran = run_steps(wf, checkout, env, context)
    again = sorted((checkout / "dist").glob("*.whl"))
    assert [w.name for w in again] == [wheel.name] and sha256(again[0]) == sha256(wheel)
    assert (packages / wheel.name).stat().st_mtime_ns == stored_mtime
    publish = [p for name, p in ran if name.startswith("publish: Upload")]
    assert len(publish) == 1 and re.search(rf"^exists +{re.escape(wheel.name)} \(already on the index with the same bytes \(sha256 compared on {re.escape(index_url)}/simple/img2gray/\), skipped\)$", publish[0].stdout, re.M), publish[0].stdout
    for _, p in ran:
        assert INDEX_PASSWORD not in p.stdout + p.stderr and HF_TOKEN not in p.stdout + p.stderr
