"""`kwheel index DIST -o SITE --variants`: a PEP 825 variant index per torch version, which uv
0.13.9 (`--preview-features wheel-variants`) installs from, picking the build the machine runs.

The kernel is variant_kernel.py's: four torch 2.11 builds of img2gray whose binaries differ for
real (CPU; ptxas 12.6 sm_80+sm_90; ptxas 12.9 sm_100 only; nvcc 13.0 sm_90), built by `kwheel
build DIR`. `kwheel index --variants` must write SITE/variants/torch2.11/simple/img2gray/, whose
page links one variant wheel per build and img2gray-<version>-variants.json. uv's NVIDIA provider
is forced to a driver version and a GPU (NV_VARIANT_PROVIDER_FORCE_CUDA_DRIVER_VERSION and
NV_VARIANT_PROVIDER_FORCE_SM_ARCH; this machine has no GPU, so neither set is a machine without
one). What uv installed is judged by the installed .so's bytes against the fixture's builds, not
by anything kwheel wrote, and by the installed dist-info/variant.json against the page's wheel.
Wheel filenames are read from the pages, never written here. Each case has its own uv cache.

What uv 0.13.9 does with such an index (checked by hand on tiny wheels before these tests were
written): it reads the file:// project page's HTML only (not index.json); it needs the
`<name>-<version>-variants.json` link on the page, or every variant wheel is "unsupported"; it
checks that file's #sha256 ("Hash mismatch for package metadata") as it checks the wheels'; it
chooses from variants.json and then re-checks the chosen wheel's own variant.json at install.
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import variant_kernel as vk  # noqa: E402
from conftest import clean_env  # noqa: E402
from kwheel_fixtures import rewrite_wheel  # noqa: E402
from variant_kernel import variant_kernel  # noqa: E402,F401  (the session fixture)

VARIANTS_JSON = re.compile(rf"^{vk.NAME}-(?P<version>[^-]+)-variants\.json$")


def kwheel(kwheel_bin, *args) -> subprocess.CompletedProcess:
    return subprocess.run([str(kwheel_bin), *map(str, args)], capture_output=True, text=True, env=clean_env(), timeout=300)


@pytest.fixture(scope="module")
def site(kwheel_bin, variant_kernel, tmp_path_factory) -> dict:
    """DIST from `kwheel build DIR`, SITE from `kwheel index DIST -o SITE --variants --json`."""
    base = tmp_path_factory.mktemp("variant-site")
    dist, site = base / "dist", base / "site"
    r = kwheel(kwheel_bin, "build", variant_kernel.repo, "-o", dist, "--version", vk.VERSION)
    assert r.returncode == 0, r.stdout + r.stderr
    r = kwheel(kwheel_bin, "index", dist, "-o", site, "--variants", "--json")
    assert r.returncode == 0, r.stdout + r.stderr
    report = json.loads(r.stdout)
    return {"base": base, "dist": dist, "site": site, "report": report}


@pytest.fixture(scope="module")
def index(site) -> Path:
    """The variant index of torch 2.11: SITE/variants/torch2.11/simple/."""
    p = site["site"] / "variants" / vk.TORCH / "simple"
    assert (p / vk.NAME / "index.html").is_file(), f"no project page under {p}: {sorted(str(x.relative_to(site['site'])) for x in site['site'].rglob('*'))[:60]}"
    return p


@pytest.fixture(scope="module")
def page(index) -> dict:
    """The project page, read: its wheels (name -> file, sha256) and its variants.json."""
    links = vk.page_links(index / vk.NAME / "index.html")
    jsons = {n: v for n, v in links.items() if n.endswith(".json")}
    wheels = {n: v for n, v in links.items() if n.endswith(".whl")}
    assert set(links) == set(jsons) | set(wheels), f"only wheels and variants.json: {sorted(links)}"
    assert len(jsons) == 1 and VARIANTS_JSON.match(next(iter(jsons))), f"one <name>-<version>-variants.json link: {sorted(links)}"
    (json_name, (json_path, json_sha)), = jsons.items()
    return {"wheels": wheels, "json_name": json_name, "json_path": json_path, "json_sha": json_sha,
            "variants": json.loads(json_path.read_bytes())}


def wheel_variant_json(wheel: Path) -> dict:
    with zipfile.ZipFile(wheel) as z:
        (name,) = [n for n in z.namelist() if re.fullmatch(r"[^/]+\.dist-info/variant\.json", n)]
        return json.loads(z.read(name))


def wheel_build(kernel: vk.VariantKernel, wheel: Path) -> str:
    """The fixture build whose .so the wheel carries."""
    with zipfile.ZipFile(wheel) as z:
        sos = [z.read(n) for n in z.namelist() if n.endswith(".so")]
    assert len(sos) == 1, f"{wheel.name}: {len(sos)} .so files"
    return kernel.build_of(sos[0])


def assert_installed(installed: vk.Installed, kernel: vk.VariantKernel, page: dict, expected: str) -> None:
    """uv installed `expected` (by the .so's bytes), from the page's wheel of that build (by variant.json)."""
    assert installed.ok, str(installed)
    got = kernel.build_of(installed.so())
    assert got == expected, f"installed the {got} build, expected {expected}\n{installed}"
    meta = installed.variant_json()
    (label,) = meta["variants"]
    (wheel,) = [p for _, (p, _) in page["wheels"].items() if wheel_build(kernel, p) == expected]
    assert label == vk.variant_label(wheel.name), (label, wheel.name)
    assert meta == wheel_variant_json(wheel)
    if expected == vk.CPU:
        assert label == "null" and meta["variants"] == {"null": {}}, meta
    else:
        assert label != "null" and meta["variants"][label], meta


# --------------------------------------------------------------------------- the index as uv reads it


def test_the_page_links_one_variant_wheel_per_build_and_the_variants_json(variant_kernel, page):
    builds = {name: wheel_build(variant_kernel, p) for name, (p, _) in page["wheels"].items()}
    assert sorted(builds.values()) == sorted(vk.BUILDS), builds
    labels = {name: vk.variant_label(name) for name in page["wheels"]}
    assert None not in labels.values(), f"a plain wheel on the variant page: {labels}"
    assert [n for n, b in builds.items() if labels[n] == "null"] == [n for n, b in builds.items() if b == vk.CPU]
    # One release: every wheel has the version variants.json is named for.
    version = VARIANTS_JSON.match(page["json_name"])["version"]
    assert {n.split("-")[1] for n in page["wheels"]} == {version}
    # variants.json lists exactly the page's labels, each as the wheel's own variant.json says.
    doc = page["variants"]
    assert doc["$schema"] and doc["default-priorities"]["namespace"], doc
    assert sorted(doc["variants"]) == sorted(labels.values())
    for name, (p, _) in page["wheels"].items():
        own = wheel_variant_json(p)
        assert list(own["variants"]) == [labels[name]], (name, own)
        assert own["variants"][labels[name]] == doc["variants"][labels[name]], name
        assert own["default-priorities"] == doc["default-priorities"] and own.get("providers") == doc.get("providers"), name


def test_every_link_carries_the_sha256_of_its_file(page, index):
    links = vk.page_links(index / vk.NAME / "index.html")
    for name, (p, sha) in links.items():
        assert sha == hashlib.sha256(p.read_bytes()).hexdigest(), name
    # The PEP 691 twin lists the same files and hashes.
    pj = json.loads((index / vk.NAME / "index.json").read_bytes())
    assert {f["filename"]: f["hashes"]["sha256"] for f in pj["files"]} == {n: s for n, (_, s) in links.items()}


@pytest.mark.parametrize("variant", list(vk.BUILDS))
def test_every_variant_wheel_has_a_valid_record(variant_kernel, page, variant):
    (wheel,) = [p for _, (p, _) in page["wheels"].items() if wheel_build(variant_kernel, p) == variant]
    assert vk.record_problems(wheel) == [], wheel.name


# --------------------------------------------------------------------------- uv chooses the build the machine runs

CASES = [
    # driver, GPU compute capability, the build uv must install
    ("13.0", "9.0", vk.CU130),
    ("13.0", "10.0", vk.CU129),   # the sm_100-only build; cu130 has no sm_100 code
    ("12.9", "9.0", vk.CU126),    # cu130 needs driver 13; the sm_100-only cu129 never runs on sm_90
    ("12.6", "9.0", vk.CU126),
    ("12.6", "10.0", vk.CPU),     # cu126 has no sm_100 code, cu129 needs driver 12.9: the null variant
    (None, None, vk.CPU),         # no NVIDIA driver at all
]


@pytest.mark.parametrize("driver,sm,expected", CASES,
                         ids=[f"driver{d or '-none'}-sm{s or '-none'}-{e.split('-')[2]}" for d, s, e in CASES])
def test_uv_installs_the_build_the_machine_runs(variant_kernel, page, index, venv_bin, tmp_path, driver, sm, expected):
    installed = vk.uv_install(venv_bin / "uv", venv_bin / "python", index, tmp_path / "target", driver=driver, sm=sm)
    assert_installed(installed, variant_kernel, page, expected)


def test_uv_without_the_preview_flag_refuses_the_variant_index(index, venv_bin, tmp_path):
    installed = vk.uv_install(venv_bin / "uv", venv_bin / "python", index, tmp_path / "target", driver="13.0", sm="9.0",
                              preview=False)
    assert installed.run.returncode != 0, str(installed)
    assert installed.nothing_installed(), str(installed)


def test_kwheel_verify_passes_on_the_uv_installed_variant_wheel(kwheel_bin, variant_kernel, page, index, venv_bin, tmp_path):
    installed = vk.uv_install(venv_bin / "uv", venv_bin / "python", index, tmp_path / "target", driver="13.0", sm="9.0")
    assert_installed(installed, variant_kernel, page, vk.CU130)
    r = kwheel(kwheel_bin, "verify", "--allow-unsigned", "--json", installed.target, vk.NAME)
    assert r.returncode == 0, r.stdout + r.stderr
    (item,) = json.loads(r.stdout)["items"]
    assert item["ok"] and "record" in item["passed"] and "digest" in item["passed"], item


# --------------------------------------------------------------------------- pip, and today's sub-indexes


def test_pip_installs_the_cu130_wheel_from_todays_sub_index(variant_kernel, site, venv_bin, tmp_path):
    sub = site["site"] / f"{vk.TORCH}-cu130" / "simple"
    links = vk.page_links(sub / vk.NAME / "index.html")
    assert links and all(vk.variant_label(n) is None for n in links if n.endswith(".whl")), sorted(links)
    installed = vk.pip_install(venv_bin / "pip", sub, tmp_path / "target")
    assert installed.ok, str(installed)
    assert variant_kernel.build_of(installed.so()) == vk.CU130
    (dist_info,) = installed.target.glob(f"{vk.NAME}-*.dist-info")
    assert not (dist_info / "variant.json").exists()


def test_pip_installs_nothing_from_the_variant_index(index, venv_bin, tmp_path):
    installed = vk.pip_install(venv_bin / "pip", index, tmp_path / "target")
    assert installed.run.returncode != 0, str(installed)
    assert "No matching distribution found for img2gray" in installed.run.stderr, str(installed)
    assert installed.nothing_installed(), str(installed)


def test_variants_leave_todays_index_as_it_was(kwheel_bin, site):
    """The same DIST indexed without --variants gives the same simple/ and sub-index pages and files."""
    plain = site["base"] / "site-plain"
    r = kwheel(kwheel_bin, "index", site["dist"], "-o", plain)
    assert r.returncode == 0, r.stdout + r.stderr
    before = {p.relative_to(plain): p.read_bytes() for p in plain.rglob("*") if p.is_file()
              and (p.relative_to(plain).parts[0] == "files" or "simple" in p.relative_to(plain).parts)}
    assert before
    changed = [str(rel) for rel, data in before.items()
               if not (site["site"] / rel).is_file() or (site["site"] / rel).read_bytes() != data]
    assert changed == []


# --------------------------------------------------------------------------- pin and inspect read it as uv does


def pin_for(kwheel_bin, index: Path, out: Path, driver: str | None, sm: str | None) -> subprocess.CompletedProcess:
    machine = ["--cuda-driver", driver or "none", *(["--sm-arch", sm] if sm else [])]
    return kwheel(kwheel_bin, "pin", index.as_uri() + "/", "--torch", "2.11", "--cuda", "13.0", *machine, "--no-deps", "-o", out)


@pytest.mark.parametrize("driver,sm,expected", CASES,
                         ids=[f"driver{d or '-none'}-sm{s or '-none'}-{e.split('-')[2]}" for d, s, e in CASES])
def test_pin_pins_what_uv_installs_on_that_machine(kwheel_bin, variant_kernel, page, index, venv_bin, tmp_path, driver, sm, expected):
    req = tmp_path / "requirements.txt"
    r = pin_for(kwheel_bin, index, req, driver, sm)
    assert r.returncode == 0, r.stdout + r.stderr
    # uv, on the same machine, installs exactly the pinned file (--require-hashes holds it to the sha256).
    target = tmp_path / "target"
    run = subprocess.run([str(venv_bin / "uv"), "pip", "install", "--python", str(venv_bin / "python"), "--preview-features", "wheel-variants",
                          "--require-hashes", "--no-deps", "-r", str(req), "--target", str(target)],
                         capture_output=True, text=True, env=vk.tool_env(tmp_path / "env", driver, sm), timeout=300)
    assert_installed(vk.Installed(run, target), variant_kernel, page, expected)


def test_a_pin_for_one_machine_fails_on_another(kwheel_bin, index, venv_bin, tmp_path):
    req = tmp_path / "requirements.txt"
    assert pin_for(kwheel_bin, index, req, "13.0", "9.0").returncode == 0
    target = tmp_path / "target"
    run = subprocess.run([str(venv_bin / "uv"), "pip", "install", "--python", str(venv_bin / "python"), "--preview-features", "wheel-variants",
                          "--require-hashes", "--no-deps", "-r", str(req), "--target", str(target)],
                         capture_output=True, text=True, env=vk.tool_env(tmp_path / "env", "12.6", "9.0"), timeout=300)
    assert run.returncode != 0 and vk.Installed(run, target).nothing_installed(), run.stdout + run.stderr


def test_pin_refuses_a_malformed_machine_in_one_line(kwheel_bin, index, tmp_path):
    r = kwheel(kwheel_bin, "pin", index.as_uri() + "/", "--torch", "2.11", "--cuda", "13.0", "--cuda-driver", "13", "--no-deps")
    assert r.returncode == 2 and r.stdout == "", r.stdout + r.stderr
    (line,) = r.stderr.splitlines()
    assert "--cuda-driver '13'" in line and "X.Y" in line


def test_inspect_shows_the_label_and_the_properties_variants_json_gives_it(kwheel_bin, page):
    for name, (wheel, _) in page["wheels"].items():
        r = kwheel(kwheel_bin, "inspect", wheel, "--json")
        assert r.returncode == 0, r.stdout + r.stderr
        shown = json.loads(r.stdout)["variant"]
        label = vk.variant_label(name)
        assert shown["label"] == label and shown["problem"] is None, shown
        assert shown["properties"] == page["variants"]["variants"][label], name


# --------------------------------------------------------------------------- the site over runs, and what is not a variant


def test_the_variant_index_is_reproducible_and_kept_until_no_variants(kwheel_bin, site):
    files = site["site"] / "variants" / "files"
    again = site["base"] / "site-again"
    assert kwheel(kwheel_bin, "index", site["dist"], "-o", again, "--variants").returncode == 0
    first = {p.name: p.read_bytes() for p in files.iterdir()}
    assert first == {p.name: p.read_bytes() for p in (again / "variants" / "files").iterdir()}
    # A later run without the flag keeps writing it (the manifest keeps the choice), --no-variants drops it.
    assert kwheel(kwheel_bin, "index", site["dist"], "-o", again).returncode == 0
    assert first == {p.name: p.read_bytes() for p in (again / "variants" / "files").iterdir()}
    assert kwheel(kwheel_bin, "index", site["dist"], "-o", again, "--no-variants").returncode == 0
    assert not (again / "variants").exists()


def test_a_variant_wheel_given_to_the_index_is_refused_in_one_line(kwheel_bin, page, tmp_path):
    wheel = next(p for _, (p, _) in page["wheels"].items())
    r = kwheel(kwheel_bin, "index", wheel, "-o", tmp_path / "site")
    assert r.returncode == 3, r.stdout + r.stderr
    (line,) = r.stderr.splitlines()
    assert "variant wheel" in line and wheel.name in line
    assert not (tmp_path / "site").exists()


def test_builds_uv_cannot_tell_apart_are_left_out_with_their_reason(kwheel_bin, tmp_path):
    """ROCm, cxx98 and pure-Python builds stay in their sub-indexes only (synthetic ELFs: their code is not read)."""
    from kwheel_fixtures import make_kernel_repo
    variants = ["torch211-cxx11-rocm64-x86_64-linux", "torch26-cxx98-cu124-x86_64-linux", "torch-universal", "torch211-cxx11-cu130-x86_64-linux"]
    repo = make_kernel_repo(tmp_path, variants=variants)
    assert kwheel(kwheel_bin, "build", repo, "-o", tmp_path / "dist", "--version", "1.0").returncode == 0
    r = kwheel(kwheel_bin, "index", tmp_path / "dist", "-o", tmp_path / "site", "--variants", "--json")
    assert r.returncode == 0, r.stdout + r.stderr
    v = json.loads(r.stdout)["variant_index"]
    reasons = {l["filename"].split("-")[1]: l["reason"] for l in v["left_out"]}
    assert v["wheels"] == [] and len(reasons) == 4, v
    assert "detects only NVIDIA GPUs" in reasons["1.0+torch2.11.rocm64"]
    assert "C++11" in reasons["1.0+torch2.6.cu124.cxx98"]
    assert "pure-Python" in reasons["1.0"]
    # This cu130 build's .so carries no device code (a synthetic host object): nothing to read a bound from.
    assert "no CUDA device code" in reasons["1.0+torch2.11.cu130"]
    assert not (tmp_path / "site" / "variants").exists()


# --------------------------------------------------------------------------- a wheel the variant index cannot re-label


def rewritten(wheel: Path, change) -> None:
    """`change(members, dist_info)` applied to the wheel's members, RECORD written anew over them: a
    wheel another tool might have built, which the site's RECORD check accepts."""
    rewrite_wheel(wheel, change)


def with_member(name: str, data: bytes):
    return lambda members, dist_info: members.__setitem__(name.format(dist_info=dist_info, data=dist_info[:-len(".dist-info")] + ".data"), data)


def with_broken_object(members, dist_info):
    (so,) = [n for n in members if n.endswith(".so")]
    members[so] = b"\x7fELF\x02\x01\x01" + b"\xff" * 60  # an ELF header whose section table cannot be read


# case -> (the build it breaks, the change, what the error must say)
UNRELABELLABLE = {
    "a .data directory": ("cpu", with_member("{data}/scripts/tool", b"#!/bin/sh\n"), ".data directory"),
    "a variant.json of its own": ("cpu", with_member("{dist_info}/variant.json", b'{"variants": {"null": {}}}\n'), "only a variant wheel carries"),
    "an object whose GPU code cannot be read": ("cu130", with_broken_object, "its GPU code cannot be read: img2gray/"),
}


@pytest.fixture(scope="module")
def plain_builds(kwheel_bin, tmp_path_factory) -> dict[str, dict[str, Path]]:
    """version -> build ("cpu", "cu130") -> wheel: make_kernel_repo's img2gray for torch 2.11, by kwheel build."""
    from kwheel_fixtures import make_kernel_repo
    base = tmp_path_factory.mktemp("plain-builds")
    repo = make_kernel_repo(base, variants=["torch211-cxx11-cpu-x86_64-linux", "torch211-cxx11-cu130-x86_64-linux"])
    out = {}
    for version in ("0.9", "1.0"):
        r = kwheel(kwheel_bin, "build", repo, "-o", base / version, "--version", version, "-q")
        assert r.returncode == 0, r.stdout + r.stderr
        out[version] = {b: next((base / version).glob(f"*+torch2.11.{b}-*.whl")) for b in ("cpu", "cu130")}
    return out


@pytest.mark.parametrize("case", sorted(UNRELABELLABLE))
def test_a_wheel_the_variant_index_cannot_relabel_is_named_as_given(kwheel_bin, plain_builds, tmp_path, monkeypatch, case):
    """A wheel the site accepts (its RECORD holds) that cannot become a variant wheel: the one line names
    the wheel of DIST as given, why and what to do, never the variant wheel being derived or a scratch
    file (files that exist nowhere), and the site already there is left byte for byte."""
    from kwheel_fixtures import tree_state
    build, change, reason = UNRELABELLABLE[case]
    monkeypatch.chdir(tmp_path)
    site = Path("site")
    (tmp_path / "before").mkdir()
    shutil.copy(plain_builds["0.9"]["cpu"], tmp_path / "before")
    r = kwheel(kwheel_bin, "index", "before", "-o", site, "--variants", "-q")
    assert r.returncode == 0, r.stdout + r.stderr
    before = tree_state(site)
    assert any(p.startswith("variants/files/") for p in before), sorted(before)
    dist = Path("dist")
    dist.mkdir()
    given = dist / plain_builds["1.0"][build].name
    shutil.copy(plain_builds["1.0"][build], given)
    rewritten(given, change)
    # The site takes it as a wheel: without --variants it is indexed.
    plain = kwheel(kwheel_bin, "index", dist, "-o", tmp_path / "no-variants", "-q")
    assert plain.returncode == 0, plain.stdout + plain.stderr

    r = kwheel(kwheel_bin, "index", dist, "-o", site, "--variants")
    assert r.returncode == 3, r.stdout + r.stderr
    (line,) = r.stderr.splitlines()
    assert line.startswith("kwheel: error: cannot ") and f"'{given}'" in line, line
    assert reason in line and ("rebuild" in line or "without --variants" in line), line
    derived = given.name.split("-")[1].split("+")[0] + "+torch2.11-"  # the variant wheel's version: 1.0+torch2.11
    assert derived not in line and "-null.whl" not in line and "kwheel-inspect" not in line and "member.so" not in line, line
    assert tree_state(site) == before


def test_a_version_field_without_the_space_is_relabelled(kwheel_bin, plain_builds, tmp_path):
    """`Version:1.0+torch2.11.cpu` is METADATA's Version to Python's email parser, as to the site; the
    variant wheel carries the variant's version, read back by the same parser."""
    import email.parser
    dist = tmp_path / "dist"
    dist.mkdir()
    given = dist / plain_builds["1.0"]["cpu"].name
    shutil.copy(plain_builds["1.0"]["cpu"], given)

    def squeeze(members, dist_info):
        members[f"{dist_info}/METADATA"] = members[f"{dist_info}/METADATA"].replace(b"\nVersion: ", b"\nVersion:", 1)
    rewritten(given, squeeze)
    with zipfile.ZipFile(given) as z:
        meta = z.read(next(n for n in z.namelist() if n.endswith(".dist-info/METADATA"))).decode()
    assert "\nVersion:1.0+torch2.11.cpu\n" in meta and email.parser.Parser().parsestr(meta)["Version"] == "1.0+torch2.11.cpu"
    r = kwheel(kwheel_bin, "index", dist, "-o", tmp_path / "site", "--variants", "--json")
    assert r.returncode == 0, r.stdout + r.stderr
    (wheel,) = json.loads(r.stdout)["variant_index"]["wheels"]
    with zipfile.ZipFile(tmp_path / "site" / "variants" / "files" / wheel["filename"]) as z:
        meta = z.read(next(n for n in z.namelist() if n.endswith(".dist-info/METADATA"))).decode()
    assert email.parser.Parser().parsestr(meta)["Version"] == "1.0+torch2.11" == wheel["version"]


def test_the_kernel_page_line_installs_from_the_variant_index(kwheel_bin, variant_kernel, site, venv_bin, tmp_path):
    """The torch 2.11 row's uv line, pasted as the page shows it (absolute URLs with --base-url), installs the
    build uv picks for the machine; only --no-deps is added, since no torch is on the (empty) dependency index."""
    import html
    deps = tmp_path / "deps" / "simple"
    deps.mkdir(parents=True)
    (deps / "index.html").write_text("<!DOCTYPE html><html><body></body></html>\n")
    out = tmp_path / "site"
    r = kwheel(kwheel_bin, "index", site["dist"], "-o", out, "--variants", "--base-url", out.as_uri(), "--deps-index-url", deps.as_uri() + "/")
    assert r.returncode == 0, r.stdout + r.stderr
    page = (out / "kernels" / f"{vk.NAME}.html").read_text()
    lines = re.findall(r'class="install variant-install">.*?<code class="install-line">(.*?)</code>', page)
    assert len(lines) == 1, lines  # one torch version, one line
    line = html.unescape(re.sub(r"<[^>]+>", "", lines[0]))
    assert "--preview-features wheel-variants" in line and (out / "variants" / vk.TORCH / "simple").as_uri() in line, line
    env_dir = tmp_path / "env"
    subprocess.run([str(venv_bin / "uv"), "venv", "-q", "--python", str(venv_bin / "python"), str(env_dir)], check=True,
                   env=vk.tool_env(tmp_path / "venv-env"), timeout=120)
    env = vk.tool_env(tmp_path / "uv-env", "13.0", "9.0")
    env["VIRTUAL_ENV"] = str(env_dir)
    env["PATH"] = f"{venv_bin}:{env.get('PATH', '')}"  # the uv the user has
    run = subprocess.run(["bash", "-c", line + " --no-deps"], cwd=tmp_path, capture_output=True, text=True, env=env, timeout=300)
    assert run.returncode == 0, run.stdout + run.stderr
    (so,) = (env_dir / "lib").glob(f"python*/site-packages/{vk.NAME}/*.so")
    assert variant_kernel.build_of(so.read_bytes()) == vk.CU130
