"""A test-only Sigstore instance: a Fulcio-like CA, a CT log, a Rekor (v1) log, made with
`cryptography` for kwheel's tests.

It issues what Sigstore's production services issue, with keys that live only in the test:

* Fulcio: a P-384 root and intermediate; short-lived leaf certificates for an ephemeral P-256
  key, carrying Fulcio's OIDC extensions (issuer v1 and v2, build signer URI, source repository
  URI), the SAN identity, key usage digitalSignature, EKU codeSigning, and an embedded SCT;
* the CT log: an RFC 6962 SCT over the precertificate (the TBS without the SCT list);
* Rekor v1: a hashedrekord 0.0.1 entry, its inclusion promise (the SET, over the RFC 8785 form of
  body, integratedTime, logID and logIndex), an RFC 6962 inclusion proof in a tree of several
  entries, and a checkpoint as a signed note;
* a timestamp authority: OpenSSL's own RFC 3161 responder (`openssl ts -reply`) signing with a
  TSA certificate (EKU timeStamping) under a root of its own, over the bundle's signature, as
  Sigstore's TSA does;
* a trusted_root.json naming all of it, for `--trusted-root` (and for sigstore-python's
  `TrustedRoot.from_file`, the oracle the tests hold this instance to).

`sign()` returns a bundle (v0.3 JSON) for an artifact; its `mutate` hook lets a test break one
thing the way an attacker or a broken service would. Standard library plus `cryptography`.
"""

from __future__ import annotations

import base64
import datetime as dt
import hashlib
import json
import struct
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID, ObjectIdentifier

OIDC_ISSUER_V1 = ObjectIdentifier("1.3.6.1.4.1.57264.1.1")
OIDC_ISSUER_V2 = ObjectIdentifier("1.3.6.1.4.1.57264.1.8")
BUILD_SIGNER_URI = ObjectIdentifier("1.3.6.1.4.1.57264.1.9")
SOURCE_REPOSITORY_URI = ObjectIdentifier("1.3.6.1.4.1.57264.1.12")
SCT_LIST = ObjectIdentifier("1.3.6.1.4.1.11129.2.4.2")

GITHUB_ISSUER = "https://token.actions.githubusercontent.com"
BUNDLE_MEDIA_TYPE = "application/vnd.dev.sigstore.bundle.v0.3+json"
TRUSTED_ROOT_MEDIA_TYPE = "application/vnd.dev.sigstore.trustedroot+json;version=0.1"


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def der_utf8(text: str) -> bytes:
    """A DER UTF8String: how Fulcio writes its v2 extensions."""
    raw = text.encode()
    assert len(raw) < 0x10000
    if len(raw) < 0x80:
        length = bytes([len(raw)])
    elif len(raw) < 0x100:
        length = bytes([0x81, len(raw)])
    else:
        length = bytes([0x82]) + struct.pack(">H", len(raw))
    return b"\x0c" + length + raw


def der_octet_string(raw: bytes) -> bytes:
    assert len(raw) < 0x10000
    length = bytes([len(raw)]) if len(raw) < 0x80 else bytes([0x82]) + struct.pack(">H", len(raw))
    return b"\x04" + length + raw


def spki(key) -> bytes:
    return key.public_key().public_bytes(serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)


def rfc3339(t: dt.datetime) -> str:
    return t.astimezone(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def canonical_json(obj) -> bytes:
    """RFC 8785 for what the SET signs: an object of ASCII strings and small integers."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


# --------------------------------------------------------------------------- RFC 6962 trees


def leaf_hash(data: bytes) -> bytes:
    return hashlib.sha256(b"\x00" + data).digest()


def node_hash(left: bytes, right: bytes) -> bytes:
    return hashlib.sha256(b"\x01" + left + right).digest()


def _split(n: int) -> int:
    k = 1
    while k * 2 < n:
        k *= 2
    return k


def tree_root(leaves: list[bytes]) -> bytes:
    if len(leaves) == 1:
        return leaves[0]
    k = _split(len(leaves))
    return node_hash(tree_root(leaves[:k]), tree_root(leaves[k:]))


def audit_path(m: int, leaves: list[bytes]) -> list[bytes]:
    """RFC 6962 PATH(m, D[n]), leaf-to-root order."""
    if len(leaves) <= 1:
        return []
    k = _split(len(leaves))
    if m < k:
        return audit_path(m, leaves[:k]) + [tree_root(leaves[k:])]
    return audit_path(m - k, leaves[k:]) + [tree_root(leaves[:k])]


# --------------------------------------------------------------------------- the instance


@dataclass
class Identity:
    """Who signs: a GitHub Actions workflow by default, as kernel-builder signs."""

    san_uri: str = "https://github.com/huggingface/kernels-community/.github/workflows/build.yaml@refs/heads/main"
    issuer: str = GITHUB_ISSUER
    source_repository: str | None = "https://github.com/huggingface/kernels-community"
    build_signer: str | None = None  # defaults to san_uri

    @classmethod
    def workflow(cls, repo: str, workflow: str, ref: str = "refs/heads/main") -> "Identity":
        uri = f"https://github.com/{repo}/.github/workflows/{workflow}@{ref}"
        return cls(san_uri=uri, source_repository=f"https://github.com/{repo}")


@dataclass
class Parts:
    """What sign() assembles, handed to a test's `mutate` before the bundle is written."""

    certificate: x509.Certificate
    signature: bytes
    digest: bytes
    body: dict
    integrated_time: int
    log_index: int
    set_payload: dict | None = None
    extra: dict = field(default_factory=dict)


class SigstoreInstance:
    def __init__(self, name: str = "kwheel-test", now: dt.datetime | None = None):
        self.name = name
        self.now = (now or dt.datetime.now(dt.timezone.utc)).replace(microsecond=0)
        self.epoch = self.now - dt.timedelta(days=365)
        self.root_key = ec.generate_private_key(ec.SECP384R1())
        self.intermediate_key = ec.generate_private_key(ec.SECP384R1())
        self.ct_key = ec.generate_private_key(ec.SECP256R1())
        self.rekor_key = ec.generate_private_key(ec.SECP256R1())
        self.root = self._ca(f"{name}-root", self.root_key, self.root_key, None, path_length=1)
        self.intermediate = self._ca(f"{name}-intermediate", self.intermediate_key, self.root_key, self.root, path_length=0)
        self.rekor_log_id = hashlib.sha256(spki(self.rekor_key)).digest()
        self.ct_log_id = hashlib.sha256(spki(self.ct_key)).digest()
        self.origin = f"rekor.{name}.test - 1193050959916656506"
        self._log: list[bytes] = [f"earlier entry {i}".encode() for i in range(5)]
        self.tsa_root_key = ec.generate_private_key(ec.SECP384R1())
        self.tsa_key = ec.generate_private_key(ec.SECP384R1())
        self.tsa_root = self._ca(f"{name}-tsa-root", self.tsa_root_key, self.tsa_root_key, None, path_length=0)
        self.tsa = self._tsa_leaf()

    # ---- Fulcio

    def _ca(self, cn, key, signer, issuer_cert, *, path_length):
        subject = x509.Name([x509.NameAttribute(NameOID.ORGANIZATION_NAME, "kwheel tests"),
                             x509.NameAttribute(NameOID.COMMON_NAME, cn)])
        builder = (x509.CertificateBuilder()
                   .subject_name(subject)
                   .issuer_name(issuer_cert.subject if issuer_cert else subject)
                   .public_key(key.public_key())
                   .serial_number(x509.random_serial_number())
                   .not_valid_before(self.epoch)
                   .not_valid_after(self.epoch + dt.timedelta(days=3650))
                   .add_extension(x509.BasicConstraints(ca=True, path_length=path_length), critical=True)
                   .add_extension(x509.KeyUsage(digital_signature=False, content_commitment=False, key_encipherment=False,
                                                data_encipherment=False, key_agreement=False, key_cert_sign=True,
                                                crl_sign=True, encipher_only=False, decipher_only=False), critical=True)
                   .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False))
        if issuer_cert is not None:
            builder = (builder
                       .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.CODE_SIGNING]), critical=False)
                       .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(signer.public_key()), critical=False))
        return builder.sign(signer, hashes.SHA384())

    def _tsa_leaf(self) -> x509.Certificate:
        return (x509.CertificateBuilder()
                .subject_name(x509.Name([x509.NameAttribute(NameOID.ORGANIZATION_NAME, "kwheel tests"),
                                         x509.NameAttribute(NameOID.COMMON_NAME, f"{self.name}-tsa")]))
                .issuer_name(self.tsa_root.subject)
                .public_key(self.tsa_key.public_key())
                .serial_number(x509.random_serial_number())
                .not_valid_before(self.epoch)
                .not_valid_after(self.epoch + dt.timedelta(days=3650))
                .add_extension(x509.KeyUsage(digital_signature=True, content_commitment=False, key_encipherment=False,
                                             data_encipherment=False, key_agreement=False, key_cert_sign=False,
                                             crl_sign=False, encipher_only=False, decipher_only=False), critical=True)
                .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.TIME_STAMPING]), critical=True)
                .add_extension(x509.SubjectKeyIdentifier.from_public_key(self.tsa_key.public_key()), critical=False)
                .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(self.tsa_root_key.public_key()), critical=False)
                .sign(self.tsa_root_key, hashes.SHA384()))

    def timestamp(self, message: bytes) -> bytes:
        """An RFC 3161 TimeStampResp over `message`, made by OpenSSL's responder (`openssl ts`),
        the time now, the TSA certificate included."""
        with tempfile.TemporaryDirectory() as d:
            d = Path(d)
            (d / "message").write_bytes(message)
            (d / "tsa.pem").write_bytes(self.tsa.public_bytes(serialization.Encoding.PEM))
            (d / "tsa.key").write_bytes(self.tsa_key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                                                   serialization.NoEncryption()))
            (d / "serial").write_text("01\n")
            (d / "ts.cnf").write_text(f"""[ tsa ]
default_tsa = tsa_config
[ tsa_config ]
serial = {d}/serial
signer_cert = {d}/tsa.pem
signer_key = {d}/tsa.key
signer_digest = sha256
default_policy = 1.3.6.1.4.1.57264.2
digests = sha256, sha384, sha512
ordering = yes
tsa_name = no
ess_cert_id_chain = no
ess_cert_id_alg = sha256
""")
            run = lambda *a: subprocess.run(["openssl", "ts", *a], check=True, capture_output=True, timeout=60)  # noqa: E731
            run("-query", "-data", str(d / "message"), "-sha256", "-cert", "-no_nonce", "-out", str(d / "q.tsq"))
            run("-reply", "-queryfile", str(d / "q.tsq"), "-config", str(d / "ts.cnf"), "-out", str(d / "r.tsr"))
            return (d / "r.tsr").read_bytes()

    def _leaf_builder(self, key, identity: Identity, not_before: dt.datetime) -> x509.CertificateBuilder:
        return (x509.CertificateBuilder()
                .subject_name(x509.Name([]))
                .issuer_name(self.intermediate.subject)
                .public_key(key.public_key())
                .serial_number(x509.random_serial_number())
                .not_valid_before(not_before)
                .not_valid_after(not_before + dt.timedelta(minutes=10))
                .add_extension(x509.KeyUsage(digital_signature=True, content_commitment=False, key_encipherment=False,
                                             data_encipherment=False, key_agreement=False, key_cert_sign=False,
                                             crl_sign=False, encipher_only=False, decipher_only=False), critical=True)
                .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.CODE_SIGNING]), critical=False)
                .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
                .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(self.intermediate_key.public_key()),
                               critical=False)
                .add_extension(x509.SubjectAlternativeName([x509.UniformResourceIdentifier(identity.san_uri)]), critical=True)
                .add_extension(x509.UnrecognizedExtension(OIDC_ISSUER_V1, identity.issuer.encode()), critical=False)
                .add_extension(x509.UnrecognizedExtension(OIDC_ISSUER_V2, der_utf8(identity.issuer)), critical=False)
                .add_extension(x509.UnrecognizedExtension(BUILD_SIGNER_URI, der_utf8(identity.build_signer or identity.san_uri)),
                               critical=False))

    def _sct(self, precert_tbs: bytes, when: dt.datetime) -> bytes:
        """One RFC 6962 v1 SCT for a precertificate entry, TLS-encoded."""
        ts = int(when.timestamp() * 1000)
        issuer_key_hash = hashlib.sha256(spki(self.intermediate_key)).digest()
        signed = (b"\x00\x00" + struct.pack(">Q", ts) + b"\x00\x01" + issuer_key_hash
                  + struct.pack(">I", len(precert_tbs))[1:] + precert_tbs + b"\x00\x00")
        sig = self.ct_key.sign(signed, ec.ECDSA(hashes.SHA256()))
        return (b"\x00" + self.ct_log_id + struct.pack(">Q", ts) + b"\x00\x00" + b"\x04\x03"
                + struct.pack(">H", len(sig)) + sig)

    def issue(self, key, identity: Identity, when: dt.datetime) -> x509.Certificate:
        """A Fulcio leaf with its SCT embedded: the precertificate is the same certificate
        without the SCT list, which goes last so that removing it gives the precert's TBS."""
        builder = self._leaf_builder(key, identity, when - dt.timedelta(seconds=30))
        if identity.source_repository:
            builder = builder.add_extension(
                x509.UnrecognizedExtension(SOURCE_REPOSITORY_URI, der_utf8(identity.source_repository)), critical=False)
        precert = builder.sign(self.intermediate_key, hashes.SHA384())
        sct = self._sct(precert.tbs_certificate_bytes, when - dt.timedelta(seconds=29))
        sct_list = struct.pack(">H", len(sct) + 2) + struct.pack(">H", len(sct)) + sct
        final = builder.add_extension(x509.UnrecognizedExtension(SCT_LIST, der_octet_string(sct_list)), critical=False)
        return final.sign(self.intermediate_key, hashes.SHA384())

    # ---- Rekor v1

    @staticmethod
    def hashedrekord(certificate: x509.Certificate, signature: bytes, digest: bytes) -> dict:
        pem = certificate.public_bytes(serialization.Encoding.PEM)
        return {"apiVersion": "0.0.1", "kind": "hashedrekord",
                "spec": {"data": {"hash": {"algorithm": "sha256", "value": digest.hex()}},
                         "signature": {"content": b64(signature), "publicKey": {"content": b64(pem)}}}}

    def _checkpoint(self, size: int, root: bytes) -> str:
        note = f"{self.origin}\n{size}\n{b64(root)}\n"
        sig = self.rekor_key.sign(note.encode(), ec.ECDSA(hashes.SHA256()))
        name = self.origin.split(" ")[0]
        return note + "\n" + f"\u2014 {name} {b64(self.rekor_log_id[:4] + sig)}\n"

    def _tlog_entry(self, parts: Parts) -> dict:
        body = canonical_json(parts.body)
        self._log.append(body)
        index = parts.log_index if parts.log_index >= 0 else len(self._log) - 1
        leaves = [leaf_hash(x) for x in self._log]
        root = tree_root(leaves)
        payload = parts.set_payload or {"body": b64(body), "integratedTime": parts.integrated_time,
                                        "logID": self.rekor_log_id.hex(), "logIndex": index}
        set_sig = self.rekor_key.sign(canonical_json(payload), ec.ECDSA(hashes.SHA256()))
        return {"logIndex": str(index), "logId": {"keyId": b64(self.rekor_log_id)},
                "kindVersion": {"kind": "hashedrekord", "version": "0.0.1"},
                "integratedTime": str(parts.integrated_time),
                "inclusionPromise": {"signedEntryTimestamp": b64(set_sig)},
                "inclusionProof": {"logIndex": str(index), "rootHash": b64(root), "treeSize": str(len(leaves)),
                                   "hashes": [b64(h) for h in audit_path(len(leaves) - 1, leaves)],
                                   "checkpoint": {"envelope": self._checkpoint(len(leaves), root)}},
                "canonicalizedBody": b64(body)}

    # ---- signing

    def sign(self, artifact: bytes, identity: Identity | None = None, *, when: dt.datetime | None = None,
             mutate=None, timestamped: bool = False, inclusion_promise: bool = True) -> dict:
        """A v0.3 bundle over `artifact` (a message signature, as kernel-builder makes for
        metadata.json). `mutate(parts)` may change any part before the log entry is made;
        `timestamped` adds an RFC 3161 timestamp over the signature from the instance's TSA;
        without `inclusion_promise` (no SET) that timestamp is the only source of time."""
        identity = identity or Identity()
        when = (when or self.now).replace(microsecond=0)
        key = ec.generate_private_key(ec.SECP256R1())
        cert = self.issue(key, identity, when)
        digest = hashlib.sha256(artifact).digest()
        signature = key.sign(artifact, ec.ECDSA(hashes.SHA256()))
        parts = Parts(cert, signature, digest, self.hashedrekord(cert, signature, digest), int(when.timestamp()), -1)
        if mutate:
            mutate(parts)
        entry = self._tlog_entry(parts)
        if not inclusion_promise:
            del entry["inclusionPromise"]
        material = {"certificate": {"rawBytes": b64(parts.certificate.public_bytes(serialization.Encoding.DER))},
                    "tlogEntries": [entry]}
        if timestamped:
            material["timestampVerificationData"] = {"rfc3161Timestamps": [{"signedTimestamp": b64(self.timestamp(parts.signature))}]}
        return {"mediaType": BUNDLE_MEDIA_TYPE,
                "verificationMaterial": material,
                "messageSignature": {"messageDigest": {"algorithm": "SHA2_256", "digest": b64(parts.digest)},
                                     "signature": b64(parts.signature)}}

    def trusted_root(self) -> dict:
        def der(cert):
            return {"rawBytes": b64(cert.public_bytes(serialization.Encoding.DER))}

        def log(key, log_id, url):
            return {"baseUrl": url, "hashAlgorithm": "SHA2_256",
                    "publicKey": {"rawBytes": b64(spki(key)), "keyDetails": "PKIX_ECDSA_P256_SHA_256",
                                  "validFor": {"start": rfc3339(self.epoch)}},
                    "logId": {"keyId": b64(log_id)}}

        return {"mediaType": TRUSTED_ROOT_MEDIA_TYPE,
                "tlogs": [log(self.rekor_key, self.rekor_log_id, f"https://rekor.{self.name}.test")],
                "certificateAuthorities": [{"subject": {"organization": "kwheel tests", "commonName": f"{self.name}-intermediate"},
                                            "uri": f"https://fulcio.{self.name}.test",
                                            "certChain": {"certificates": [der(self.intermediate), der(self.root)]},
                                            "validFor": {"start": rfc3339(self.epoch)}}],
                "ctlogs": [log(self.ct_key, self.ct_log_id, f"https://ctfe.{self.name}.test")],
                "timestampAuthorities": [{"subject": {"organization": "kwheel tests", "commonName": f"{self.name}-tsa"},
                                          "uri": f"https://tsa.{self.name}.test/api/v1/timestamp",
                                          "certChain": {"certificates": [der(self.tsa), der(self.tsa_root)]},
                                          "validFor": {"start": rfc3339(self.epoch)}}]}


def bundle_bytes(bundle: dict) -> bytes:
    return json.dumps(bundle, indent=None, separators=(",", ":")).encode()


# --------------------------------------------------------------------------- tampering


def _flip_b64(text: str, at: int = -8) -> str:
    raw = bytearray(base64.b64decode(text))
    raw[at] ^= 0x01
    return b64(bytes(raw))


def _entry(bundle: dict) -> dict:
    return bundle["verificationMaterial"]["tlogEntries"][0]


def _tamper_checkpoint(bundle: dict) -> None:
    proof = _entry(bundle)["inclusionProof"]
    note, sigs = proof["checkpoint"]["envelope"].split("\n\n")
    name, sig = sigs.rstrip("\n").split(" ")[1:]
    proof["checkpoint"]["envelope"] = note + "\n\n" + f"\u2014 {name} {_flip_b64(sig)}\n"


def _tamper_body(bundle: dict) -> None:
    entry = _entry(bundle)
    body = json.loads(base64.b64decode(entry["canonicalizedBody"]))
    body["spec"]["data"]["hash"]["value"] = "00" * 32
    entry["canonicalizedBody"] = b64(canonical_json(body))


# One change each to a bundle that verifies, as an attacker or a broken service would make it;
# every one must make the bundle fail (sigstore-python is the judge in tests/integration).
MUTATIONS = {
    "signature": lambda b: b["messageSignature"].update(signature=_flip_b64(b["messageSignature"]["signature"])),
    "certificate": lambda b: b["verificationMaterial"]["certificate"].update(
        rawBytes=_flip_b64(b["verificationMaterial"]["certificate"]["rawBytes"], at=-20)),
    "proof-hash": lambda b: _entry(b)["inclusionProof"].update(hashes=[_flip_b64(_entry(b)["inclusionProof"]["hashes"][0], at=0)]
                                                               + _entry(b)["inclusionProof"]["hashes"][1:]),
    "checkpoint": _tamper_checkpoint,
    "set": lambda b: _entry(b)["inclusionPromise"].update(signedEntryTimestamp=_flip_b64(_entry(b)["inclusionPromise"]["signedEntryTimestamp"])),
    "integrated-time": lambda b: _entry(b).update(integratedTime=str(int(_entry(b)["integratedTime"]) + 1)),
    "body": _tamper_body,
    "media-type": lambda b: b.update(mediaType="application/vnd.dev.sigstore.bundle.v0.9+json"),
}


def _tamper_timestamp(bundle: dict) -> None:
    ts = bundle["verificationMaterial"]["timestampVerificationData"]["rfc3161Timestamps"][0]
    ts["signedTimestamp"] = _flip_b64(ts["signedTimestamp"], at=-30)


# Only for bundles made with `timestamped=True`.
TIMESTAMP_MUTATIONS = {"timestamp": _tamper_timestamp}


def mutated(bundle: dict, kind: str) -> dict:
    out = json.loads(json.dumps(bundle))
    {**MUTATIONS, **TIMESTAMP_MUTATIONS}[kind](out)
    return out
