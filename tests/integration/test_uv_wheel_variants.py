"""What uv 0.13.9 does with a PEP 825 variant index: the rules `kwheel index --variants` is built on.

No kwheel here: tiny wheels written with zipfile (a variant wheel is a normal wheel plus
`<dist-info>/variant.json` and its RECORD row, its filename `{name}-{version}-{py}-{abi}-{plat}-
{label}.whl`), a PEP 503 project page linking them and `{name}-{version}-variants.json` (PEP 850
schema, one `nvidia` namespace whose provider is the `nvidia-variant-provider` uv vendors), and
`uv pip install --preview-features wheel-variants` from that file:// index, with uv's NVIDIA
provider forced (NV_VARIANT_PROVIDER_FORCE_CUDA_DRIVER_VERSION, NV_VARIANT_PROVIDER_FORCE_SM_ARCH).
Each installed wheel names its label in `probe/__init__.py`. Each case gets a fresh uv cache.

If a uv upgrade changes one of these, the variant index kwheel writes may need to change with it:
which label wins (driver bound first, then GPU, then the label's name), that the variants.json link
must be on the page under that exact name with a right #sha256, that uv reads the HTML page (not
index.json) of a file:// index, that a provider uv does not recognise silently leaves only the
null variant, and that the chosen wheel's own variant.json is checked again at install.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import sys
import zipfile
from pathlib import Path
from urllib.parse import quote

import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import variant_kernel as vk  # noqa: E402

NAME = "probe"
SCHEMA_850 = "https://variants-schema.wheelnext.dev/peps/850/v0.2.0.json"
SCHEMA_825 = "https://variants-schema.wheelnext.dev/peps/825/v0.1.1.json"
PROVIDERS = {"nvidia": {"requires": ["nvidia-variant-provider>=0.0.1,<0.1"],
                        "plugin-api": "nvidia_variant_provider.plugin:NvidiaVariantPlugin"}}
LABELS = {
    "null": {},
    "cu130": {"nvidia": {"cuda_version_lower_bound": ["13.0"], "sm_arch": ["90_real"]}},
    "cu129": {"nvidia": {"cuda_version_lower_bound": ["12.9"], "sm_arch": ["100_real"]}},
    "cu126": {"nvidia": {"cuda_version_lower_bound": ["12.6"], "sm_arch": ["80_real", "90_real"]}},
}
TAG = "cp39-abi3-manylinux1_x86_64.manylinux_2_5_x86_64"  # what kwheel tags a libc-light x86_64 kernel


def variants_doc(variants: dict, schema: str = SCHEMA_850, providers: dict | None = PROVIDERS) -> dict:
    doc: dict = {"$schema": schema, "default-priorities": {"namespace": ["nvidia"]}}
    if providers is not None:
        doc["providers"] = providers
    doc["variants"] = variants
    return doc


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def write_wheel(dest: Path, version: str, label: str | None, *, variant_json: dict | None = None, schema: str = SCHEMA_850,
                providers: dict | None = PROVIDERS, with_variant_json: bool = True) -> Path:
    """probe-<version>-<TAG>[-<label>].whl whose probe/__init__.py says LABEL = <label>."""
    di = f"{NAME}-{version}.dist-info"
    files = {
        f"{NAME}/__init__.py": f"LABEL = {label!r}\n".encode(),
        f"{di}/METADATA": f"Metadata-Version: 2.4\nName: {NAME}\nVersion: {version}\n".encode(),
        f"{di}/WHEEL": f"Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: false\nTag: {TAG}\n".encode(),
    }
    if label is not None and with_variant_json:
        doc = variant_json if variant_json is not None else variants_doc({label: LABELS[label]}, schema, providers)
        files[f"{di}/variant.json"] = json.dumps(doc, indent=2).encode()
    files[f"{di}/RECORD"] = ("".join(f"{n},sha256={_b64(d)},{len(d)}\n" for n, d in files.items()) + f"{di}/RECORD,,\n").encode()
    path = dest / (f"{NAME}-{version}-{TAG}" + (f"-{label}" if label is not None else "") + ".whl")
    with zipfile.ZipFile(path, "w") as z:
        for n, d in files.items():
            z.writestr(n, d)
    return path


def make_index(root: Path, labels=("null", "cu130", "cu129", "cu126"), *, version: str = "1.0.0", plain: bool = False,
               index_doc: dict | None = None, link_json: bool = True, json_name: str | None = None, hashes: bool = True,
               bad_hash: str | None = None, html: bool = True, schema: str = SCHEMA_850, providers: dict | None = PROVIDERS,
               wheel_docs: dict | None = None, no_variant_json: tuple = ()) -> Path:
    """root/files/ and root/simple/probe/index.html; returns root/simple."""
    files = root / "files"
    files.mkdir(parents=True)
    links = [write_wheel(files, version, lab, schema=schema, providers=providers, variant_json=(wheel_docs or {}).get(lab),
                         with_variant_json=lab not in no_variant_json) for lab in labels]
    if plain:
        links.append(write_wheel(files, version, None))
    vj = files / (json_name or f"{NAME}-{version}-variants.json")
    vj.write_text(json.dumps(index_doc if index_doc is not None else variants_doc({l: LABELS[l] for l in labels}, schema, providers)))
    if link_json:
        links.append(vj)
    page = root / "simple" / NAME
    page.mkdir(parents=True)
    rows, entries = [], []
    for p in links:
        sha = "0" * 64 if bad_hash and p.name.endswith(bad_hash) else hashlib.sha256(p.read_bytes()).hexdigest()
        url = f"../../files/{quote(p.name)}"
        rows.append(f'<a href="{url}{"#sha256=" + sha if hashes else ""}">{p.name}</a><br/>')
        entries.append({"filename": p.name, "url": url, "hashes": {"sha256": sha}})
    if html:
        (page / "index.html").write_text("<!DOCTYPE html>\n<html><body>\n" + "\n".join(rows) + "\n</body></html>\n")
    else:
        (page / "index.json").write_text(json.dumps({"meta": {"api-version": "1.1"}, "name": NAME, "files": entries}))
    return root / "simple"


def install(venv_bin: Path, simple: Path, tmp: Path, driver=None, sm=None, preview=True) -> tuple[vk.Installed, str | None]:
    """uv installs probe; returns the run and the label of what it installed (None: nothing, "plain": the plain wheel)."""
    inst = vk.uv_install(venv_bin / "uv", venv_bin / "python", simple, tmp / "target", driver=driver, sm=sm, preview=preview,
                         name=NAME)
    init = inst.target / NAME / "__init__.py"
    if not inst.ok or not init.is_file():
        return inst, None
    label = init.read_text().split("=", 1)[1].strip()
    return inst, "plain" if label == "None" else label.strip("'")


# --------------------------------------------------------------------------- which label wins

MATRIX = [
    ("13.0", "9.0", "cu130"),
    ("13", "9.0", "cu130"),        # a major-only driver version means 13.0
    ("13.0", "10.0", "cu129"),
    ("12.9", "9.0", "cu126"),      # cu129 is sm_100 only
    ("12.8", "9.0", "cu126"),
    ("12.6", "9.0", "cu126"),
    ("12.6", "8.6", "cu126"),      # 8.6 takes 86_real ... 80_real: sm_80 code runs there
    ("12.6", "10.0", "null"),
    ("13.1", "12.0", "null"),      # sm_90 / sm_100 code does not run on 12.0
    ("13.0", None, "null"),        # a driver and no GPU: every sm_arch is unsupported
    (None, "9.0", "null"),         # a GPU and no driver: the provider reports nothing
    (None, None, "null"),
]


@pytest.mark.parametrize("driver,sm,want", MATRIX, ids=[f"driver{d}-sm{s}-{w}" for d, s, w in MATRIX])
def test_uv_takes_the_best_supported_label(venv_bin, tmp_path, driver, sm, want):
    inst, got = install(venv_bin, make_index(tmp_path / "site"), tmp_path, driver, sm)
    assert got == want, str(inst)


def test_a_local_version_names_the_release_too(venv_bin, tmp_path):
    """One release per torch version, e.g. 1.0.0+torch2.11: variants.json is named with it, and it works."""
    simple = make_index(tmp_path / "site", version="1.0.0+torch2.11")
    assert (tmp_path / "site" / "files" / "probe-1.0.0+torch2.11-variants.json").is_file()
    inst, got = install(venv_bin, simple, tmp_path, "13.0", "9.0")
    assert got == "cu130", str(inst)


def test_a_plain_wheel_comes_after_the_null_variant_and_alone_without_the_flag(venv_bin, tmp_path):
    simple = make_index(tmp_path / "site", plain=True)
    assert install(venv_bin, simple, tmp_path / "a")[1] == "null"
    assert install(venv_bin, simple, tmp_path / "b", "13.0", "9.0")[1] == "cu130"
    assert install(venv_bin, simple, tmp_path / "c", "13.0", "9.0", preview=False)[1] == "plain"
    # Without a null variant, a machine without a GPU falls back to the plain wheel.
    simple = make_index(tmp_path / "site2", labels=("cu130", "cu129", "cu126"), plain=True)
    assert install(venv_bin, simple, tmp_path / "d")[1] == "plain"


# --------------------------------------------------------------------------- what uv refuses


def test_without_the_preview_flag_every_variant_wheel_is_unsupported(venv_bin, tmp_path):
    inst, got = install(venv_bin, make_index(tmp_path / "site"), tmp_path, "13.0", "9.0", preview=False)
    assert got is None and inst.run.returncode == 1, str(inst)
    assert "has only unsupported wheel variants" in inst.run.stderr, str(inst)


def test_without_a_null_variant_a_machine_without_a_gpu_gets_nothing(venv_bin, tmp_path):
    inst, got = install(venv_bin, make_index(tmp_path / "site", labels=("cu130", "cu129", "cu126")), tmp_path)
    assert got is None and "has only unsupported wheel variants" in inst.run.stderr, str(inst)


@pytest.mark.parametrize("how", ["unlinked", "renamed"])
def test_the_variants_json_link_must_be_on_the_page_under_its_name(venv_bin, tmp_path, how):
    simple = make_index(tmp_path / "site", link_json=how != "unlinked", json_name="probe-variants.json" if how == "renamed" else None)
    for case, (driver, sm) in {"gpu": ("13.0", "9.0"), "none": (None, None)}.items():
        inst, got = install(venv_bin, simple, tmp_path / case, driver, sm)
        assert got is None and "has only unsupported wheel variants" in inst.run.stderr, str(inst)  # not even null


def test_the_variants_json_hash_is_checked(venv_bin, tmp_path):
    inst, got = install(venv_bin, make_index(tmp_path / "site", bad_hash="-variants.json"), tmp_path, "13.0", "9.0")
    assert got is None and "Hash mismatch for package metadata" in inst.run.stderr, str(inst)


def test_links_without_hashes_still_install(venv_bin, tmp_path):
    assert install(venv_bin, make_index(tmp_path / "site", hashes=False), tmp_path, "13.0", "9.0")[1] == "cu130"


def test_a_file_index_is_read_from_its_html_page_only(venv_bin, tmp_path):
    inst, got = install(venv_bin, make_index(tmp_path / "site", html=False), tmp_path, "13.0", "9.0")
    assert got is None and "was not found in the package registry" in inst.run.stderr, str(inst)


def test_a_label_missing_from_variants_json_is_never_chosen(venv_bin, tmp_path):
    simple = make_index(tmp_path / "site", index_doc=variants_doc({l: LABELS[l] for l in ("null", "cu129", "cu126")}))
    assert install(venv_bin, simple, tmp_path, "13.0", "9.0")[1] == "cu126"


def test_uv_chooses_from_variants_json_and_rechecks_the_wheel(venv_bin, tmp_path):
    """The index says cu130 runs on driver 12.6; the wheel's own variant.json says 13.0: the install fails."""
    lie = variants_doc({"null": {}, "cu130": {"nvidia": {"cuda_version_lower_bound": ["12.6"], "sm_arch": ["90_real"]}}})
    inst, got = install(venv_bin, make_index(tmp_path / "site", labels=("null", "cu130"), index_doc=lie), tmp_path, "12.6", "9.0")
    assert got is None, str(inst)
    assert "Wheel variant `cu130` requires unsupported properties: `nvidia :: cuda_version_lower_bound :: 13.0`" in inst.run.stderr


def test_a_wheels_variant_json_must_name_its_filenames_label(venv_bin, tmp_path):
    other = variants_doc({"cu131": LABELS["cu130"]})
    inst, got = install(venv_bin, make_index(tmp_path / "site", wheel_docs={"cu130": other}), tmp_path, "13.0", "9.0")
    assert got is None and "Expected `variant.json` to describe only the variant `cu130`" in inst.run.stderr, str(inst)


def test_the_null_wheel_needs_its_variant_json_too(venv_bin, tmp_path):
    inst, got = install(venv_bin, make_index(tmp_path / "site", no_variant_json=("null",)), tmp_path)
    assert got is None and "variant.json" in inst.run.stderr, str(inst)


# --------------------------------------------------------------------------- providers


def test_the_pep_850_schema_requires_providers(venv_bin, tmp_path):
    inst, got = install(venv_bin, make_index(tmp_path / "site", providers=None), tmp_path, "13.0", "9.0")
    assert got is None and "has invalid metadata" in inst.run.stderr, str(inst)


OTHER_PROVIDERS = {
    "pep825-no-providers": None,
    "no-plugin-api": {"nvidia": {"requires": ["nvidia-variant-provider"]}},
    "two-requirements": {"nvidia": {**PROVIDERS["nvidia"], "requires": [*PROVIDERS["nvidia"]["requires"], "packaging"]}},
    "a-version-uv-does-not-vendor": {"nvidia": {**PROVIDERS["nvidia"], "requires": ["nvidia-variant-provider>=0.1"]}},
}


@pytest.mark.parametrize("case", list(OTHER_PROVIDERS))
def test_a_provider_uv_does_not_vendor_silently_leaves_the_null_variant(venv_bin, tmp_path, case):
    """uv runs no provider plugin: a namespace whose provider is not exactly its vendored
    nvidia-variant-provider 0.0.1 (`nvidia_variant_provider.plugin:NvidiaVariantPlugin`) reports no
    properties, so even a machine with a driver and a GPU gets the null variant, without a warning."""
    providers = OTHER_PROVIDERS[case]
    simple = make_index(tmp_path / "site", providers=providers, schema=SCHEMA_825 if providers is None else SCHEMA_850)
    inst, got = install(venv_bin, simple, tmp_path, "13.0", "9.0")
    assert got == "null", str(inst)
    assert "warning" not in inst.run.stderr.lower(), str(inst)


def test_the_provider_may_be_written_with_its_version_range(venv_bin, tmp_path):
    """PROVIDERS' `>=0.0.1,<0.1` contains the vendored 0.0.1, as `==0.0.1` (uv's own tests) does."""
    exact = {"nvidia": {**PROVIDERS["nvidia"], "requires": ["nvidia-variant-provider==0.0.1"]}}
    assert install(venv_bin, make_index(tmp_path / "a", providers=exact), tmp_path / "a", "13.0", "9.0")[1] == "cu130"
    assert re.fullmatch(r"nvidia-variant-provider>=0\.0\.1,<0\.1", PROVIDERS["nvidia"]["requires"][0])
