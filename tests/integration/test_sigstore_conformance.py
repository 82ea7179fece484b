"""sigstore-conformance's bundle-verify cases against `kwheel verify`.

Every case directory of tests/data/sigstore-conformance/bundle-verify (the
suite's assets, SOURCE.md) runs as the suite's CLI protocol says
(verify-bundle), twice: with the artifact's path and with its sha256:
digest. A happy case must exit 0; a `_fail` case must exit with a
documented refusal code: 1 is kwheel's "internal error", a crash is a bug.
Cases kwheel cannot verify yet are listed in UNSUPPORTED with the reason
and reported as skipped, never dropped silently.
"""

from __future__ import annotations

import hashlib
import subprocess
from pathlib import Path

import pytest

ASSETS = Path(__file__).resolve().parent.parent / "data" / "sigstore-conformance" / "bundle-verify"
DEFAULT_ARTIFACT = ASSETS / "a.txt"
# test/client.py's defaults (BundleMaterials.from_dir).
DEFAULT_IDENTITY = (
    "https://github.com/sigstore-conformance/extremely-dangerous-public-oidc-beacon/"
    ".github/workflows/extremely-dangerous-oidc-beacon.yml@refs/heads/main"
)
DEFAULT_ISSUER = "https://token.actions.githubusercontent.com"
# kwheel's exit code for a refused bundle (ErrorKind::input, src/main.cpp).
REFUSED = 3

DSSE = "DSSE envelopes (in-toto attestations) are not verified yet"
MANAGED_KEY = "managed-key (--key) bundles are not verified yet"
UNSUPPORTED = {
    "dsse-invalid-sig_fail": DSSE,
    "dsse-mismatch-envelope_fail": DSSE,
    "dsse-mismatch-sig_fail": DSSE,
    "happy-path-intoto-in-dsse-v3": DSSE,
    "intoto-expired-certificate_fail": DSSE,
    "intoto-log-entry-mismatch_fail": DSSE,
    "intoto-missing-inclusion-proof_fail": DSSE,
    "intoto-set-outside-signing-cert-validity_fail": DSSE,
    "intoto-tsa-timestamp-outside-cert-validity_fail": DSSE,
    "intoto-with-custom-trust-root": DSSE,
    "rekor2-dsse-happy-path": DSSE,
    "rekor2-dsse-invalid-sig_fail": DSSE,
    "rekor2-dsse-mismatch-envelope_fail": DSSE,
    "rekor2-dsse-mismatch-sig_fail": DSSE,
    "managed-key-and-trusted-root": MANAGED_KEY,
    "managed-key-happy-path": MANAGED_KEY,
    "managed-key-no-key_fail": MANAGED_KEY,
    "managed-key-wrong-key_fail": MANAGED_KEY,
}


def case_dirs() -> list[Path]:
    return sorted(p for p in ASSETS.iterdir() if p.is_dir())


def test_assets_are_there():
    cases = case_dirs()
    assert len(cases) >= 70, f"expected the suite's 70 bundle-verify cases in {ASSETS}"
    assert DEFAULT_ARTIFACT.is_file()
    assert set(UNSUPPORTED) <= {p.name for p in cases}, "UNSUPPORTED names a case that does not exist"


def verify_args(case: Path, artifact_arg: str) -> list[str]:
    args = ["verify", "--bundle", str(case / "bundle.sigstore.json")]
    if (case / "key.pub").exists():
        args += ["--key", str(case / "key.pub")]
    else:
        identity = (case / "identity").read_text().strip() if (case / "identity").exists() else DEFAULT_IDENTITY
        issuer = (case / "issuer").read_text().strip() if (case / "issuer").exists() else DEFAULT_ISSUER
        args += ["--certificate-identity", identity, "--certificate-oidc-issuer", issuer]
    if (case / "trusted_root.json").exists():
        args += ["--trusted-root", str(case / "trusted_root.json")]
    return args + [artifact_arg]


@pytest.mark.parametrize("form", ["path", "digest"])
@pytest.mark.parametrize("case", case_dirs(), ids=lambda p: p.name)
def test_bundle_verify(kwheel_bin, case: Path, form: str):
    if case.name in UNSUPPORTED:
        pytest.skip(UNSUPPORTED[case.name])
    artifact = case / "artifact" if (case / "artifact").exists() else DEFAULT_ARTIFACT
    arg = str(artifact) if form == "path" else "sha256:" + hashlib.sha256(artifact.read_bytes()).hexdigest()
    r = subprocess.run([str(kwheel_bin), *verify_args(case, arg)], capture_output=True, text=True, timeout=60)
    said = f"kwheel exited {r.returncode}\nstdout:\n{r.stdout}\nstderr:\n{r.stderr}"
    if case.name.endswith("_fail"):
        assert r.returncode == REFUSED, said
    else:
        assert r.returncode == 0, said
