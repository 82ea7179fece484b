#!/usr/bin/env python3
"""Capture real Hub API response shapes from the fixture Hub (tests/hub) as
seeds for the hub_json and link_header fuzz targets:

    python3 tests/fuzz/capture-hub-seeds.py tests/fuzz/seeds

A kernel repo with two variants (one LFS .so each, a pure-Python variant),
two commits, branches main/v1 and tags v0.1.0/v0.1.1, served with a tree page
size of 3 so the listing paginates; then the refs listing, revision info by
branch, tag and sha, every tree page (the body to hub_json/, the Link header
to link_header/) and an error body."""
import sys
import tempfile
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "hub"))
import fixture  # noqa: E402

out = Path(sys.argv[1])
(out / "hub_json").mkdir(parents=True, exist_ok=True)
(out / "link_header").mkdir(parents=True, exist_ok=True)

so = b"\x7fELF" + bytes(range(256)) * 8  # big enough to go to LFS below
tree = {
    "build/torch27-cxx11-cu126-x86_64-linux/img2gray/__init__.py": "from ._ops import ops\n",
    "build/torch27-cxx11-cu126-x86_64-linux/img2gray/_ops.py": "import torch\nops = torch.ops._img2gray_0abc123\n",
    "build/torch27-cxx11-cu126-x86_64-linux/img2gray/_img2gray_0abc123.abi3.so": so,
    "build/torch29-cxx11-cpu-x86_64-linux/img2gray/__init__.py": "from ._ops import ops\n",
    "build/torch29-cxx11-cpu-x86_64-linux/img2gray/_img2gray_0abc123.abi3.so": so + b"cpu",
    "build/torch-universal/img2gray/__init__.py": "def f():\n    return 1\n",
    "README.md": "# img2gray\n",
}
newer = dict(tree)
newer["build/torch-universal/img2gray/__init__.py"] = "def f():\n    return 2\n"

with tempfile.TemporaryDirectory() as root:
    repo = fixture.make_repo(root, "kernels-community/img2gray", [tree, newer],
                             branches={"main": -1, "v1": -1}, tags={"v0.1.0": 0, "v0.1.1": 1},
                             types=["model", "kernel"], lfs_threshold=1024)
    with fixture.HubServer(root, page_size=3) as hub:
        api = f"{hub.endpoint}/api/kernels/kernels-community/img2gray"

        def get(url):
            try:
                with urllib.request.urlopen(url) as r:
                    return r.read(), r.headers.get("Link")
            except urllib.error.HTTPError as e:
                return e.read(), None

        saved = []
        def save(sub, name, data):
            (out / sub / name).write_bytes(data)
            saved.append(f"{sub}/{name} ({len(data)} B)")

        save("hub_json", "refs.json", get(f"{api}/refs")[0])
        save("hub_json", "revision-main.json", get(f"{api}/revision/main")[0])
        save("hub_json", "revision-tag.json", get(f"{api}/revision/v0.1.0")[0])
        save("hub_json", "revision-sha.json", get(f"{api}/revision/{repo.shas[0]}")[0])
        save("hub_json", "error-not-found.json", get(f"{api}/revision/nope")[0])
        url, page = f"{api}/tree/{repo.shas[1]}/build?recursive=true&expand=false", 0
        while url:
            body, link = get(url)
            save("hub_json", f"tree-page{page}.json", body)
            if link:
                save("link_header", f"page{page}.txt", link.encode())
                url = link[link.index("<") + 1:link.index(">")]
            else:
                url = None
            page += 1
        print("\n".join(saved))
