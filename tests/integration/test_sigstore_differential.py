"""Differential tests: `kwheel verify` against sigstore-python 4.x, offline (issue 31).

Every bundle here is verified twice, by kwheel's C++ verifier (the binary) and by
sigstore-python's Verifier (the verifier kernels 0.17.2 uses), and the two verdicts must
agree: kwheel exits 0 exactly when sigstore-python returns, and exits 3 (a refused bundle,
src/main.cpp) exactly when sigstore-python raises. Any other exit (1 "internal error", a
crash, a usage error) fails the test whatever sigstore-python said.

The bundles:

* real production and conformance bundles: sigstore-conformance's non-DSSE, keyless happy
  cases (tests/data/sigstore-conformance/bundle-verify), v0.1, v0.2 and v0.3 shapes, Rekor
  v1 and v2, with and without RFC 3161 timestamps;
* a bundle from the test-only Sigstore instance (tests/sigstore/instance.py), the kind
  kwheel's own signature tests sign kernels with.

Each is checked as it is, then with one part broken (MUTATIONS below, generic over the
v0.1/v0.2 `x509CertificateChain` and v0.3 `certificate` shapes). A bundle that lacks the
part (Rekor v2 has no SET and no integrated time; some bundles have no checkpoint) is
skipped with the reason in the skip message, never silently dropped.

Besides the eight parts issue 31 names (signature, certificate, proof hash, checkpoint, SET,
integrated time, body, media type), chain-with-root adds the Fulcio root to a v0.1/v0.2 chain:
the one place kwheel is meant to be stricter than sigstore-python on a real bundle.

Where kwheel is deliberately stricter than sigstore-python, the pair is listed in
EXPECTED_DIFFERENCES with the reason, and the test asserts that exact difference (so it
fails if the difference goes away or changes sides).

Issue 38's defects 6-9 add whole hostile bundles and trusted roots (instance.py's HOSTILE: a
rotated-out TSA certificate, CA-shaped signing certificates, CAs and CT keys outside their
validFor, moved unsigned Rekor fields), each with both verdicts recorded in HOSTILE_EXPECTED.
"""

from __future__ import annotations

import base64
import json
import os
import socket
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
from cryptography import x509
from sigstore.models import Bundle, TrustedRoot
from sigstore.verify import Verifier, policy

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "sigstore"))
sys.path.insert(0, str(Path(__file__).resolve().parent))
import instance as si  # noqa: E402
from test_sigstore_conformance import ASSETS, DEFAULT_ARTIFACT, DEFAULT_IDENTITY, DEFAULT_ISSUER, REFUSED  # noqa: E402

# kwheel's embedded public-good root (sigstore-data/), which `kwheel verify` uses without
# --trusted-root; sigstore-python's offline production verifier must be using the same one.
KWHEEL_PRODUCTION_ROOT = ROOT / "sigstore-data" / "trusted_root.json"

# The conformance suite's keyless, non-DSSE happy cases (DSSE and managed keys are not
# verified by kwheel yet: test_sigstore_conformance.UNSUPPORTED).
CONFORMANCE_CASES = [
    "bundle-with-sct-with-extensions",
    "happy-path-v0.1",
    "happy-path-v0.2",
    "happy-path-v0.3",
    "happy-path-v0.3-new-mediaType",
    "rekor2-checkpoint-cosigned",
    "rekor2-checkpoint-multiple-cosigs",
    "rekor2-checkpoint-origin-not-first",
    "rekor2-checkpoint-two-sigs-cosigned",
    "rekor2-checkpoint-two-sigs-from-origin",
    "rekor2-happy-path",
    "rekor2-timestamp-with-embedded-cert",
    "rekor2-timestamp-with-expired-cert-chain",
    "rekor2-timestamp-without-embedded-cert",
    "trust-root-tlog-validity-end-inclusive",
    "trust-root-tsa-validity-end-inclusive",
]
INSTANCE_CASE = "test-instance-v0.3"
# The instance's bundles with an RFC 3161 timestamp from its TSA (OpenSSL's responder): beside
# the Rekor inclusion promise, and as the only source of time (no SET).
INSTANCE_TIMESTAMPED = "test-instance-timestamped"
INSTANCE_TIMESTAMP_ONLY = "test-instance-timestamp-only"
# A Rekor v2 entry (hashedrekord 0.0.2, no SET, no integrated time) with its TSA timestamp.
INSTANCE_REKOR_V2 = "test-instance-rekor-v2"
INSTANCE_CASES = [INSTANCE_CASE, INSTANCE_TIMESTAMPED, INSTANCE_TIMESTAMP_ONLY, INSTANCE_REKOR_V2]
INSTANCE_ARTIFACT = b'{\n  "name": "relu",\n  "version": 1\n}'

# (bundle, mutation) -> (kwheel verifies, sigstore-python verifies, why they differ).
EXPECTED_DIFFERENCES: dict[tuple[str, str], tuple[bool, bool, str]] = {
    # The RFC 3161 timestamp's genTime is exactly the TSA's validFor.end in the trusted root.
    # The conformance suite (the case's README) and the trusted-root spec make TimeRange a
    # closed interval, so the bundle verifies; kwheel treats the end as inclusive.
    # sigstore-python 4.5.1 checks `gen_time < validity_period_end`
    # (verify/verifier.py, _verify_signed_timestamp), drops the only timestamp and raises
    # "not enough sources of verified time": it fails this conformance case. kwheel is right.
    # (Every mutation of this bundle is refused by both, sigstore-python for this reason too,
    # so on those pairs its verdict confirms only that kwheel refuses.)
    ("trust-root-tsa-validity-end-inclusive", "none"): (True, False, "TSA validity end is inclusive (closed TimeRange)"),
    # A v0.1/v0.2 chain that carries the Fulcio root. protobuf-specs' client policy says the
    # chain MUST NOT include a root CA, and sigstore-conformance's bundle-with-root-cert_fail
    # expects a refusal; kwheel refuses (a root shipped in the bundle invites trusting it).
    # sigstore-python 4.5.1 only logs a warning ("this bundle contains a root CA, making it
    # subject to misuse", models.py, Bundle._verify) because old bundles did this, and
    # verifies. kwheel is deliberately stricter.
    **{(name, "chain-with-root"): (False, True, "kwheel refuses a bundle chain that carries a root CA")
       for name in ("happy-path-v0.1", "happy-path-v0.2", "trust-root-tlog-validity-end-inclusive")},
}


# --------------------------------------------------------------------------- mutations


class Absent(Exception):
    """The bundle has no such part: the mutation does not apply."""


def _flip_b64(text: str, at: int = -8) -> str:
    raw = bytearray(base64.b64decode(text))
    raw[at] ^= 0x01
    return base64.b64encode(bytes(raw)).decode()


def _entry(b: dict) -> dict:
    return b["verificationMaterial"]["tlogEntries"][0]


def _proof(b: dict) -> dict:
    proof = _entry(b).get("inclusionProof")
    if not proof:
        raise Absent("no inclusion proof")
    return proof


def _signature(b: dict) -> None:
    if "messageSignature" not in b:
        raise Absent("no message signature (a DSSE envelope)")
    b["messageSignature"]["signature"] = _flip_b64(b["messageSignature"]["signature"])


def _certificate(b: dict) -> None:
    vm = b["verificationMaterial"]
    if "certificate" in vm:
        cert = vm["certificate"]
    elif "x509CertificateChain" in vm:
        cert = vm["x509CertificateChain"]["certificates"][0]
    else:
        raise Absent("no certificate (a managed key)")
    # 20 bytes from the end: inside the CA's signature over the TBS, so the DER still parses
    # and the chain check is what must refuse it.
    cert["rawBytes"] = _flip_b64(cert["rawBytes"], at=-20)


def _proof_hash(b: dict) -> None:
    proof = _proof(b)
    if not proof.get("hashes"):
        raise Absent("an inclusion proof with no hashes (a one-entry tree)")
    proof["hashes"][0] = _flip_b64(proof["hashes"][0], at=0)


def _checkpoint(b: dict) -> None:
    envelope = _proof(b).get("checkpoint", {}).get("envelope")
    if not envelope:
        raise Absent("no checkpoint")
    note, sigs = envelope.split("\n\n", 1)
    lines = []
    for line in sigs.rstrip("\n").split("\n"):
        # "— <name> <base64(4-byte key hint || signature)>": break every signature, the log's
        # and any witness's, so no line of the note still verifies.
        dash, name, sig = line.split(" ")
        lines.append(f"{dash} {name} {_flip_b64(sig)}")
    _proof(b)["checkpoint"]["envelope"] = note + "\n\n" + "\n".join(lines) + "\n"


def _set(b: dict) -> None:
    promise = _entry(b).get("inclusionPromise")
    if not promise:
        raise Absent("no SET (inclusion promise), as in Rekor v2")
    promise["signedEntryTimestamp"] = _flip_b64(promise["signedEntryTimestamp"])


def _integrated_time(b: dict) -> None:
    entry = _entry(b)
    if int(entry.get("integratedTime", 0) or 0) == 0:
        raise Absent("no integrated time, as in Rekor v2")
    entry["integratedTime"] = str(int(entry["integratedTime"]) + 1)


def _body(b: dict) -> None:
    entry = _entry(b)
    body = json.loads(base64.b64decode(entry["canonicalizedBody"]))
    spec = body["spec"]
    if "hashedRekordV002" in spec:  # Rekor v2: {"data": {"algorithm", "digest": base64}}
        data = spec["hashedRekordV002"]["data"]
        data["digest"] = _flip_b64(data["digest"], at=0)
    elif "data" in spec and "hash" in spec["data"]:  # hashedrekord 0.0.1: {"hash": {"algorithm", "value": hex}}
        spec["data"]["hash"]["value"] = "00" * 32
    else:
        raise Absent(f"a {body.get('kind')} body with no artifact hash")
    entry["canonicalizedBody"] = base64.b64encode(si.canonical_json(body)).decode()


def _chain_with_root(b: dict, root: dict) -> None:
    vm = b["verificationMaterial"]
    if "x509CertificateChain" not in vm:
        raise Absent("a v0.3 bundle carries one certificate, no chain")
    leaf = x509.load_der_x509_certificate(base64.b64decode(vm["x509CertificateChain"]["certificates"][0]["rawBytes"]))
    for ca in root["certificateAuthorities"]:
        certs = ca["certChain"]["certificates"]
        if x509.load_der_x509_certificate(base64.b64decode(certs[0]["rawBytes"])).subject == leaf.issuer:
            # The leaf's own Fulcio intermediate and root, as an old client that shipped the
            # whole chain would have: the leaf still chains to the trusted root.
            vm["x509CertificateChain"]["certificates"] += certs
            return
    raise Absent("no Fulcio CA in the trusted root issued the leaf")


def _timestamp(b: dict) -> None:
    stamps = b["verificationMaterial"].get("timestampVerificationData", {}).get("rfc3161Timestamps", [])
    if not stamps:
        raise Absent("no RFC 3161 timestamp")
    stamps[0]["signedTimestamp"] = _flip_b64(stamps[0]["signedTimestamp"], at=-30)


def _media_type(b: dict) -> None:
    old_style = ";version=" in b["mediaType"]
    b["mediaType"] = "application/vnd.dev.sigstore.bundle+json;version=0.9" if old_style else "application/vnd.dev.sigstore.bundle.v0.9+json"


# Each breaks one part of a bundle that verifies. chain-with-root needs the trusted root (the
# parsed trusted_root.json) to find the Fulcio chain; the others look at the bundle only.
MUTATIONS: dict[str, Callable[..., None] | None] = {
    "none": None,
    "signature": _signature,
    "certificate": _certificate,
    "proof-hash": _proof_hash,
    "checkpoint": _checkpoint,
    "set": _set,
    "integrated-time": _integrated_time,
    "body": _body,
    "media-type": _media_type,
    "chain-with-root": _chain_with_root,
    # A broken timestamp beside a verified inclusion promise is not counted, by both (sigstore-
    # python's _verify_timestamp_authority keeps only those that verify); alone, it refuses.
    "timestamp": _timestamp,
}
NEEDS_ROOT = {"chain-with-root"}


# --------------------------------------------------------------------------- cases


@dataclass
class Case:
    name: str
    bundle: dict
    artifact: Path
    identity: str
    issuer: str
    trusted_root: Path | None  # None: Sigstore's production root (kwheel's embedded one)


def conformance_case(name: str) -> Case:
    d = ASSETS / name
    assert (d / "bundle.sigstore.json").is_file(), f"no conformance case {name}"

    def text(f: str, default: str) -> str:
        return (d / f).read_text().strip() if (d / f).exists() else default

    return Case(name=name,
                bundle=json.loads((d / "bundle.sigstore.json").read_text()),
                artifact=d / "artifact" if (d / "artifact").exists() else DEFAULT_ARTIFACT,
                identity=text("identity", DEFAULT_IDENTITY),
                issuer=text("issuer", DEFAULT_ISSUER),
                trusted_root=d / "trusted_root.json" if (d / "trusted_root.json").exists() else None)


@pytest.fixture(scope="module")
def cases(tmp_path_factory) -> dict[str, Case]:
    out = {name: conformance_case(name) for name in CONFORMANCE_CASES}
    d = tmp_path_factory.mktemp("instance")
    inst = si.SigstoreInstance()
    (d / "trusted_root.json").write_text(json.dumps(inst.trusted_root()))
    (d / "artifact").write_bytes(INSTANCE_ARTIFACT)
    ident = si.Identity()
    for name, bundle in ((INSTANCE_CASE, inst.sign(INSTANCE_ARTIFACT)),
                         (INSTANCE_TIMESTAMPED, inst.sign(INSTANCE_ARTIFACT, timestamped=True)),
                         (INSTANCE_TIMESTAMP_ONLY, inst.sign(INSTANCE_ARTIFACT, timestamped=True, inclusion_promise=False)),
                         (INSTANCE_REKOR_V2, inst.sign(INSTANCE_ARTIFACT, rekor_v2=True))):
        out[name] = Case(name=name, bundle=bundle, artifact=d / "artifact", identity=ident.san_uri, issuer=ident.issuer,
                         trusted_root=d / "trusted_root.json")
    return out


@pytest.fixture(scope="module")
def no_network():
    """sigstore-python must not reach for the network: any connection fails at once (this
    machine may have none, and a hang would be worse than a failure) and is recorded."""
    attempts: list[object] = []
    real_connect, real_connect_ex = socket.socket.connect, socket.socket.connect_ex

    def refuse(self, address, *a, **kw):
        if self.family in (socket.AF_INET, socket.AF_INET6):
            attempts.append(address)
            raise OSError(f"test_sigstore_differential: no network (tried {address!r})")
        return real_connect(self, address, *a, **kw)

    socket.socket.connect = refuse
    socket.socket.connect_ex = refuse
    try:
        yield attempts
    finally:
        socket.socket.connect, socket.socket.connect_ex = real_connect, real_connect_ex


@pytest.fixture(scope="module")
def production_verifier(tmp_path_factory, no_network) -> Verifier:
    """`Verifier.production(offline=True)`: with offline=True sigstore-python builds no TUF
    Updater and reads trusted_root.json from its TUF targets cache, which it first fills from
    the root embedded in the package (sigstore/_internal/tuf.py, TrustUpdater). The cache
    lives under platformdirs' user cache dir, so XDG_* point at a fresh directory: a stale
    cache left by another run cannot stand in for the embedded root. The test then checks
    that the root it used is byte for byte kwheel's embedded root, so both verifiers trust
    the same keys, and that no connection was tried."""
    home = tmp_path_factory.mktemp("sigstore-python-home")
    saved = {k: os.environ.get(k) for k in ("XDG_CACHE_HOME", "XDG_DATA_HOME")}
    os.environ["XDG_CACHE_HOME"], os.environ["XDG_DATA_HOME"] = str(home / "cache"), str(home / "data")
    try:
        verifier = Verifier.production(offline=True)
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    used = list((home / "cache").rglob("trusted_root.json"))
    assert len(used) == 1, f"sigstore-python's offline production root is not where expected: {used}"
    assert used[0].read_bytes() == KWHEEL_PRODUCTION_ROOT.read_bytes(), \
        "sigstore-python's embedded production root differs from kwheel's sigstore-data/trusted_root.json"
    assert no_network == [], f"Verifier.production(offline=True) tried the network: {no_network}"
    return verifier


def mutate(bundle: dict, mutation: str, case: Case) -> None:
    fn = MUTATIONS[mutation]
    if mutation in NEEDS_ROOT:
        fn(bundle, json.loads((case.trusted_root or KWHEEL_PRODUCTION_ROOT).read_text()))
    else:
        fn(bundle)


# --------------------------------------------------------------------------- verdicts


def sigstore_python_verdict(case: Case, bundle_bytes: bytes, production_verifier: Verifier, no_network) -> tuple[bool, str]:
    verifier = (production_verifier if case.trusted_root is None
                else Verifier(trusted_root=TrustedRoot.from_file(str(case.trusted_root))))
    try:
        verifier.verify_artifact(case.artifact.read_bytes(), Bundle.from_json(bundle_bytes),
                                 policy.Identity(identity=case.identity, issuer=case.issuer))
    except Exception as e:  # noqa: BLE001 -- any refusal is a refusal: VerificationError, InvalidBundle, ...
        verdict = (False, f"{type(e).__name__}: {e}")
    else:
        verdict = (True, "verified")
    assert no_network == [], f"sigstore-python tried the network: {no_network}"
    return verdict


def kwheel_verdict(kwheel_bin: Path, case: Case, bundle_path: Path) -> tuple[bool, str]:
    args = [str(kwheel_bin), "verify", "--bundle", str(bundle_path),
            "--certificate-identity", case.identity, "--certificate-oidc-issuer", case.issuer]
    if case.trusted_root is not None:
        args += ["--trusted-root", str(case.trusted_root)]
    r = subprocess.run([*args, str(case.artifact)], capture_output=True, text=True, timeout=60)
    said = f"kwheel exited {r.returncode}\nstdout:\n{r.stdout}\nstderr:\n{r.stderr}"
    assert r.returncode in (0, REFUSED), f"kwheel must verify (0) or refuse (3), never anything else: {said}"
    return r.returncode == 0, said


@pytest.mark.parametrize("mutation", list(MUTATIONS))
@pytest.mark.parametrize("name", [*CONFORMANCE_CASES, *INSTANCE_CASES])
def test_kwheel_agrees_with_sigstore_python(kwheel_bin, cases, production_verifier, no_network, tmp_path, name, mutation):
    case = cases[name]
    bundle = json.loads(json.dumps(case.bundle))
    if MUTATIONS[mutation] is not None:
        try:
            mutate(bundle, mutation, case)
        except Absent as why:
            pytest.skip(f"{mutation} does not apply to {name}: {why}")
    path = tmp_path / "bundle.sigstore.json"
    path.write_text(json.dumps(bundle))

    py_ok, py_said = sigstore_python_verdict(case, path.read_bytes(), production_verifier, no_network)
    kw_ok, kw_said = kwheel_verdict(kwheel_bin, case, path)
    if mutation == "none":
        # The unmutated bundle is a happy case: both must verify it, or the mutations below
        # would say nothing.
        assert py_ok or (name, mutation) in EXPECTED_DIFFERENCES, f"sigstore-python refused the unmutated {name}: {py_said}"
        assert kw_ok, f"kwheel refused the unmutated {name}: {kw_said}"
    expected = EXPECTED_DIFFERENCES.get((name, mutation))
    if expected is not None:
        want_kw, want_py, why = expected
        assert (kw_ok, py_ok) == (want_kw, want_py), \
            f"the expected difference ({why}) changed: kwheel {kw_ok}, sigstore-python {py_ok}\n{py_said}\n{kw_said}"
        return
    assert kw_ok == py_ok, (f"{name} with {mutation}: kwheel {'verified' if kw_ok else 'refused'}, "
                            f"sigstore-python {'verified' if py_ok else 'refused'} ({py_said})\n{kw_said}")


def test_every_expected_difference_names_a_pair_that_runs():
    for name, mutation in EXPECTED_DIFFERENCES:
        assert name in [*CONFORMANCE_CASES, *INSTANCE_CASES] and mutation in MUTATIONS, (name, mutation)


def test_every_bundle_is_mutated_somewhere(cases):
    """A bundle every mutation skips would test nothing: each must take most of them."""
    for name, case in cases.items():
        applied = []
        for mutation, fn in MUTATIONS.items():
            if fn is None:
                continue
            try:
                mutate(json.loads(json.dumps(case.bundle)), mutation, case)
                applied.append(mutation)
            except Absent:
                pass
        assert {"signature", "certificate", "body", "media-type"} <= set(applied), (name, applied)
        assert len(applied) >= 5, (name, applied)


# --------------------------------------------------------------------------- issue 38, defects 6-9

# The hostile bundles and trusted roots of tests/sigstore/instance.py's HOSTILE, each verified by
# both: name -> (kwheel verifies, the check kwheel refuses by, sigstore-python verifies, why the
# two differ or None). Both verdicts and reasons are printed (pytest -rA shows them).
FROM_OUTSIDE_DIFFERS = ("sigstore-python 4.5.1 takes every Fulcio CA, CT log key and Rekor key whose validFor has "
                        "started by now, whatever the signing time (TrustedRoot.get_fulcio_certs, ct_keyring and "
                        "rekor_keyring with KeyringPurpose.VERIFY: allow_expired=True); kwheel, as sigstore-go, uses "
                        "one only when its validFor holds the signing time established from signed sources")
HOSTILE_EXPECTED: dict[str, tuple[bool, str | None, bool, str | None]] = {
    # 6. Both refuse: sigstore-python gives rfc3161-client the listed certificate as the TSA's, so
    # the token's signer must be it; kwheel now pins it too (it accepted any signer under the root).
    "tsa-rotated-out-certificate": (False, "established time", False, None),
    # 7. Both refuse: cryptography's end-entity profile refuses a cA=TRUE leaf on v0.3, and
    # Bundle._verify's cert_is_leaf on v0.2 (cA without keyCertSign is an "invalid state"
    # there); kwheel's chain check refuses every version (it let v0.3 through, and cA alone on
    # every version, since X509_check_ca calls that "not a CA").
    "ca-leaf-v0.3": (False, "certificate chain", False, None),
    "ca-flag-leaf-v0.3": (False, "certificate chain", False, None),
    "ca-flag-leaf-v0.2": (False, "certificate chain", False, None),
    # 8. kwheel refuses, sigstore-python verifies.
    "fulcio-ca-retired-before-signing": (False, "certificate chain", True, FROM_OUTSIDE_DIFFERS),
    "fulcio-ca-started-after-signing": (False, "certificate chain", True, FROM_OUTSIDE_DIFFERS),
    "ct-key-retired-before-signing": (False, "signed certificate timestamp", True, FROM_OUTSIDE_DIFFERS),
    # 9. The moved integrated time is signed by nothing: both verify the good bundle whatever it
    # says (kwheel refused it, holding the key to the moved time) ...
    "rekor-v2-integrated-time-before-key": (True, None, True, None),
    "timestamp-only-v1-integrated-time-before-key": (True, None, True, None),
    # ... and kwheel refuses the retired key's checkpoint at the TSA's time (it verified it, at
    # the moved time). sigstore-python ignores the moved time too, but verifies because it uses
    # retired log keys at any time.
    "rekor-v2-retired-key-integrated-time-moved-in": (False, "log entry", True, FROM_OUTSIDE_DIFFERS),
    "timestamp-only-v1-retired-key-integrated-time-moved-in": (False, "log entry", True, FROM_OUTSIDE_DIFFERS),
    # 9's class: the proof claims leaf i' of a tree of n' (neither signed in Rekor v2), the same
    # hashes proving the same leaf to the same signed root. sigstore-python verifies the Merkle
    # proof at the proof's own size, compares only the root hash with the checkpoint and reports
    # no index, so it verifies; kwheel reports the index (the proof's, without a SET), so it
    # requires the proof's size to be the one the checkpoint signs, and refuses.
    "rekor-v2-proof-at-another-index": (False, "log entry", True,
                                        "sigstore-python does not tie the proof's treeSize to the checkpoint's signed size"),
}


@pytest.fixture(scope="module")
def hostile_instance() -> si.SigstoreInstance:
    return si.SigstoreInstance(name="kwheel-hostile")


def test_every_hostile_case_has_an_expectation():
    assert set(HOSTILE_EXPECTED) == set(si.HOSTILE)


@pytest.mark.parametrize("name", list(si.HOSTILE))
def test_hostile_bundle_against_sigstore_python(kwheel_bin, hostile_instance, production_verifier, no_network, tmp_path, name):
    bundle, root = si.HOSTILE[name](hostile_instance, INSTANCE_ARTIFACT)
    (tmp_path / "trusted_root.json").write_text(json.dumps(root))
    (tmp_path / "artifact").write_bytes(INSTANCE_ARTIFACT)
    ident = si.Identity()
    case = Case(name=name, bundle=bundle, artifact=tmp_path / "artifact", identity=ident.san_uri, issuer=ident.issuer,
                trusted_root=tmp_path / "trusted_root.json")
    path = tmp_path / "bundle.sigstore.json"
    path.write_text(json.dumps(bundle))

    py_ok, py_said = sigstore_python_verdict(case, path.read_bytes(), production_verifier, no_network)
    kw_ok, kw_said = kwheel_verdict(kwheel_bin, case, path)
    print(f"{name}: kwheel {'verified' if kw_ok else 'refused'}; sigstore-python {'verified' if py_ok else 'refused'} ({py_said})\n{kw_said}")
    want_kw, check, want_py, why = HOSTILE_EXPECTED[name]
    assert py_ok == want_py, f"sigstore-python's verdict on {name} is not the one recorded: {py_said}"
    assert kw_ok == want_kw, f"kwheel's verdict on {name} is not the one recorded: {kw_said}"
    if check is not None:
        assert f"{check}: " in kw_said, f"kwheel refused {name}, but not by its {check} check: {kw_said}"
    assert (why is not None) == (kw_ok != py_ok), f"{name}: a difference needs its reason, and agreement none"
