"""The README's quickstart, run as written (issue 33).

The block after the `<!-- quickstart: ... -->` marker in README.md is executed by bash, line by
line as a user would paste it, in a fresh project directory. Only the example hosts change: the
mirror's host becomes the fixture Hub, served under the README's own Artifactory-style path, and
the index's host becomes a real pypiserver with the README's user and password. One of the two
kernels is a private repo, so the README's token line is what lets the build through. Tools we
did not write judge the result: kernels 0.17.2 writes the lock, pip installs from the index.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from urllib.parse import urlsplit

import pytest

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(ROOT / "tests" / "hub"))
sys.path.insert(0, str(HERE))
import fixture as hubfix  # noqa: E402
import hubtest as H  # noqa: E402
import kernel_repos as kr  # noqa: E402
from local_servers import pypiserver  # noqa: E402

DEBIAN_PYTHON = "/usr/bin/python3"  # imports Debian's python3-torch
KERNELS = {"acme/act": False, "acme/relu": True}  # repo -> private


def quickstart() -> str:
    text = (ROOT / "README.md").read_text()
    m = re.search(r"<!-- quickstart:[^>]*-->\s*```sh\n(.*?)```", text, re.S)
    assert m, "README.md has no quickstart block after a <!-- quickstart: ... --> marker"
    return m.group(1)


def example(script: str, pattern: str) -> str:
    """An example URL the README uses, e.g. the mirror's HF_ENDPOINT."""
    m = re.search(pattern, script)
    assert m, f"the quickstart no longer has {pattern!r}"
    return m.group(1)


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    root = tmp_path_factory.mktemp("quickstart-store") / "root"
    for repo, private in KERNELS.items():
        name = repo.split("/")[1]
        tree = kr.variant_tree("torch-cpu", layout="flat", name=name, version=1,
                               files=kr.demo_package(name, f"{name} v1"))
        kr.make_kernel_repo(root, repo, {1: tree}, private=private)
    return root


def test_the_readme_quickstart_runs_as_written(store, kwheel_bin, tmp_path):
    if not Path(DEBIAN_PYTHON).exists():
        pytest.skip(f"{DEBIAN_PYTHON} (Debian's, with python3-torch) is not installed")
    script = quickstart()
    endpoint = example(script, r"export HF_ENDPOINT=(\S+)")
    token = example(script, r"export HF_TOKEN=(\S+)")
    user, password = re.search(r"TWINE_USERNAME=(\S+) TWINE_PASSWORD=(\S+)", script).groups()
    upload = example(script, r"--repository-url (\S+)")
    mirror = urlsplit(endpoint)
    index = urlsplit(upload)
    assert mirror.path.count("/") > 1, "the quickstart's mirror should show a path prefix"

    proj = tmp_path / "proj"
    proj.mkdir()
    deps = "".join(f'"{repo}" = 1\n' for repo in KERNELS)
    (proj / "pyproject.toml").write_text(f'[project]\nname = "app"\nversion = "0"\n\n[tool.kernels.dependencies]\n{deps}')
    # The project's own environment: Debian's Python, whose torch the kernels must run with.
    subprocess.run([DEBIAN_PYTHON, "-m", "venv", "--system-site-packages", proj / ".venv"], check=True)
    torch_before = torch_version(proj)

    with hubfix.hub_server(store, token=token, path_prefix=mirror.path) as hub, \
            pypiserver(tmp_path / "index", {user: password}) as index_root:
        hub_origin = hub.endpoint[: -len(mirror.path)]
        script = (script.replace(f"{mirror.scheme}://{mirror.netloc}", hub_origin)
                        .replace(f"{index.scheme}://{index.netloc}", index_root))
        env = hubfix.client_env(hub, tmp_path / "home")
        env.pop("HF_ENDPOINT")  # the README sets it, and its token must be sent as a user's is
        env.pop("HF_HUB_DISABLE_IMPLICIT_TOKEN")
        env["PATH"] = os.pathsep.join([str(kwheel_bin.parent), str(Path(sys.executable).parent), env["PATH"]])
        env["PIP_CONFIG_FILE"] = os.devnull
        env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
        run = subprocess.run(["bash", "-euxo", "pipefail", "-c", script], cwd=proj, env=env,
                             capture_output=True, text=True, timeout=600)
        assert run.returncode == 0, f"the quickstart failed:\n{run.stdout}\n{run.stderr}"
        served = hub.log()

    # The fixture answers only under the mirror's path (elsewhere: 404, unlogged), and the private
    # repo's files were listed with the README's token.
    private = [r for r in served if r["path"].startswith("/api/kernels/acme/relu/tree/") and r["status"] == 200]
    assert private and all(r["auth"] for r in private), served
    lock = (proj / "kernels.lock").read_text()
    assert all(repo in lock for repo in KERNELS), lock
    reqs = (proj / "requirements.txt").read_text()
    for repo in KERNELS:
        name = repo.split("/")[1]
        assert re.search(rf"^{name}==\S+ --hash=sha256:[0-9a-f]{{64}}$", reqs, re.M), reqs
        out = subprocess.run([proj / ".venv/bin/python", "-c", f"import {name}; print({name}.hello())"],
                             capture_output=True, text=True, timeout=120)
        assert out.stdout.strip() == f"{name} v1", out.stderr
    # `kwheel link` wrote what kernels reads offline: refs/v1 at the locked commit, the variant a
    # link to the installed package.
    locked = {e["dependency"]["repo-id"]: e["lock"]["commit"] for e in json.loads(lock)}
    for repo, commit in locked.items():
        folder = proj / ".kernels" / ("kernels--" + repo.replace("/", "--"))
        assert (folder / "refs" / "v1").read_text() == commit
        (variant,) = list((folder / "snapshots" / commit / "build").iterdir())
        assert variant.is_symlink() and (variant / "metadata.json").is_file()
    assert (proj / "site" / "index.html").is_file()
    assert torch_version(proj) == torch_before  # installing kernels kept the project's torch
    assert token not in run.stdout + run.stderr.replace(f"HF_TOKEN={token}", "")  # never printed by a tool


def torch_version(proj: Path) -> str:
    out = subprocess.run([proj / ".venv/bin/python", "-c", "import torch; print(torch.__version__, torch.__file__)"],
                         capture_output=True, text=True, timeout=120, check=True)
    return out.stdout.strip()
