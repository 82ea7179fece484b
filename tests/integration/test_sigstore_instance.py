"""The test-only Sigstore instance (tests/sigstore/instance.py) is held to sigstore-python 4.x,
the verifier kernels 0.17.2 uses: its bundles verify offline against its trusted root, and every
tampering the tests use makes sigstore-python refuse the bundle. Only then do kwheel's own
signature tests, which sign fixture kernels with it, say anything about Sigstore."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from sigstore.errors import Error as SigstoreError
from sigstore.models import Bundle, InvalidBundle, TrustedRoot
from sigstore.verify import Verifier, policy

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "sigstore"))
import instance as si  # noqa: E402

ARTIFACT = b'{\n  "name": "relu",\n  "version": 1\n}'


@pytest.fixture(scope="module")
def sigstore(tmp_path_factory):
    inst = si.SigstoreInstance()
    path = tmp_path_factory.mktemp("sigstore") / "trusted_root.json"
    path.write_text(json.dumps(inst.trusted_root()))
    return inst, Verifier(trusted_root=TrustedRoot.from_file(str(path)))


def verify(verifier, bundle: dict, artifact: bytes = ARTIFACT, identity: si.Identity | None = None) -> None:
    identity = identity or si.Identity()
    verifier.verify_artifact(artifact, Bundle.from_json(si.bundle_bytes(bundle)),
                             policy.Identity(identity=identity.san_uri, issuer=identity.issuer))


def test_a_bundle_verifies_offline_with_the_instances_trusted_root(sigstore):
    inst, verifier = sigstore
    verify(verifier, inst.sign(ARTIFACT))
    other = si.Identity.workflow("someone/else", "release.yml")
    verify(verifier, inst.sign(ARTIFACT, other), identity=other)


def test_the_identity_is_what_the_certificate_says(sigstore):
    inst, verifier = sigstore
    with pytest.raises(SigstoreError):
        verify(verifier, inst.sign(ARTIFACT, si.Identity.workflow("someone/else", "release.yml")))


def test_another_artifact_is_refused(sigstore):
    inst, verifier = sigstore
    with pytest.raises(SigstoreError):
        verify(verifier, inst.sign(ARTIFACT), artifact=ARTIFACT + b" ")


@pytest.mark.parametrize("kind", sorted(si.MUTATIONS))
def test_every_tampering_is_refused_by_sigstore_python(sigstore, kind):
    inst, verifier = sigstore
    bundle = inst.sign(ARTIFACT)
    verify(verifier, bundle)
    with pytest.raises((SigstoreError, InvalidBundle)):
        verify(verifier, si.mutated(bundle, kind))


def test_another_instances_bundle_is_refused(sigstore):
    _, verifier = sigstore
    with pytest.raises(SigstoreError):
        verify(verifier, si.SigstoreInstance(name="elsewhere").sign(ARTIFACT))


def test_a_timestamp_from_the_instances_tsa_verifies_and_alone_it_must_hold(sigstore):
    """With the inclusion promise gone, the TSA's RFC 3161 timestamp is the only source of time:
    sigstore-python verifies the bundle, and refuses it once the timestamp is broken."""
    inst, verifier = sigstore
    verify(verifier, inst.sign(ARTIFACT, timestamped=True))
    alone = inst.sign(ARTIFACT, timestamped=True, inclusion_promise=False)
    verify(verifier, alone)
    with pytest.raises(SigstoreError):
        verify(verifier, si.mutated(alone, "timestamp"))
