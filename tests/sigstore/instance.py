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
* Rekor v2: a hashedrekord 0.0.2 entry with its inclusion proof and checkpoint, no SET (time
  then comes from the TSA alone);
* a trusted_root.json naming all of it, for `--trusted-root` (and for sigstore-python's
  `TrustedRoot.from_file`, the oracle the tests hold this instance to), with options for the
  validity windows a real root rotates keys and CAs with.

`HOSTILE` (at the end) builds the bundles and roots of issue 38's defects 6-9: what a verifier
must refuse, or must not be steered by.

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
        self.tsa = self._tsa_leaf(self.tsa_key)
        # A TSA signing certificate under the same TSA root that the trusted root does not list:
        # one the TSA rotated out (or any other its root's owner issued).
        self.rotated_tsa_key = ec.generate_private_key(ec.SECP384R1())
        self.rotated_tsa = self._tsa_leaf(self.rotated_tsa_key, cn=f"{name}-tsa-rotated-out")
        # A Rekor log key the root has retired (trusted_root(rotated_log=True) ends its validFor).
        self.retired_rekor_key = ec.generate_private_key(ec.SECP256R1())
        self.retired_rekor_log_id = hashlib.sha256(spki(self.retired_rekor_key)).digest()

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

    def _tsa_leaf(self, key, cn: str | None = None) -> x509.Certificate:
        return (x509.CertificateBuilder()
                .subject_name(x509.Name([x509.NameAttribute(NameOID.ORGANIZATION_NAME, "kwheel tests"),
                                         x509.NameAttribute(NameOID.COMMON_NAME, cn or f"{self.name}-tsa")]))
                .issuer_name(self.tsa_root.subject)
                .public_key(key.public_key())
                .serial_number(x509.random_serial_number())
                .not_valid_before(self.epoch)
                .not_valid_after(self.epoch + dt.timedelta(days=3650))
                .add_extension(x509.KeyUsage(digital_signature=True, content_commitment=False, key_encipherment=False,
                                             data_encipherment=False, key_agreement=False, key_cert_sign=False,
                                             crl_sign=False, encipher_only=False, decipher_only=False), critical=True)
                .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.TIME_STAMPING]), critical=True)
                .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
                .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(self.tsa_root_key.public_key()), critical=False)
                .sign(self.tsa_root_key, hashes.SHA384()))

    def timestamp(self, message: bytes, *, rotated: bool = False) -> bytes:
        """An RFC 3161 TimeStampResp over `message`, made by OpenSSL's responder (`openssl ts`),
        the time now, the TSA certificate included; `rotated` signs with the TSA certificate the
        trusted root does not list (still under the TSA's root)."""
        cert, key = (self.rotated_tsa, self.rotated_tsa_key) if rotated else (self.tsa, self.tsa_key)
        with tempfile.TemporaryDirectory() as d:
            d = Path(d)
            (d / "message").write_bytes(message)
            (d / "tsa.pem").write_bytes(cert.public_bytes(serialization.Encoding.PEM))
            (d / "tsa.key").write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
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

    def _leaf_builder(self, key, identity: Identity, not_before: dt.datetime, ca: str | None = None) -> x509.CertificateBuilder:
        builder = (x509.CertificateBuilder()
                .subject_name(x509.Name([]))
                .issuer_name(self.intermediate.subject)
                .public_key(key.public_key())
                .serial_number(x509.random_serial_number())
                .not_valid_before(not_before)
                .not_valid_after(not_before + dt.timedelta(minutes=10))
                .add_extension(x509.KeyUsage(digital_signature=True, content_commitment=False, key_encipherment=False,
                                             data_encipherment=False, key_agreement=False, key_cert_sign=ca == "ca",
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
        # A signing certificate that is itself a CA: "ca" as a CA is made (basicConstraints
        # cA=TRUE and keyUsage keyCertSign), "ca-flag" with cA=TRUE alone.
        if ca:
            builder = builder.add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        return builder

    def _sct(self, precert_tbs: bytes, when: dt.datetime) -> bytes:
        """One RFC 6962 v1 SCT for a precertificate entry, TLS-encoded."""
        ts = int(when.timestamp() * 1000)
        issuer_key_hash = hashlib.sha256(spki(self.intermediate_key)).digest()
        signed = (b"\x00\x00" + struct.pack(">Q", ts) + b"\x00\x01" + issuer_key_hash
                  + struct.pack(">I", len(precert_tbs))[1:] + precert_tbs + b"\x00\x00")
        sig = self.ct_key.sign(signed, ec.ECDSA(hashes.SHA256()))
        return (b"\x00" + self.ct_log_id + struct.pack(">Q", ts) + b"\x00\x00" + b"\x04\x03"
                + struct.pack(">H", len(sig)) + sig)

    def issue(self, key, identity: Identity, when: dt.datetime, ca: str | None = None) -> x509.Certificate:
        """A Fulcio leaf with its SCT embedded: the precertificate is the same certificate
        without the SCT list, which goes last so that removing it gives the precert's TBS.
        `ca` makes the leaf a CA (see _leaf_builder)."""
        builder = self._leaf_builder(key, identity, when - dt.timedelta(seconds=30), ca)
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

    @staticmethod
    def hashedrekord_v002(certificate: x509.Certificate, signature: bytes, digest: bytes) -> dict:
        """Rekor v2's hashedrekord 0.0.2 body, as sigstore-python rebuilds it to compare."""
        return {"apiVersion": "0.0.2", "kind": "hashedrekord",
                "spec": {"hashedRekordV002": {
                    "data": {"algorithm": "SHA2_256", "digest": b64(digest)},
                    "signature": {"content": b64(signature),
                                  "verifier": {"keyDetails": "PKIX_ECDSA_P256_SHA_256",
                                               "x509Certificate": {"rawBytes": b64(certificate.public_bytes(serialization.Encoding.DER))}}}}}}

    def _checkpoint(self, size: int, root: bytes, *, retired_key: bool = False) -> str:
        key, log_id = (self.retired_rekor_key, self.retired_rekor_log_id) if retired_key else (self.rekor_key, self.rekor_log_id)
        note = f"{self.origin}\n{size}\n{b64(root)}\n"
        sig = key.sign(note.encode(), ec.ECDSA(hashes.SHA256()))
        name = self.origin.split(" ")[0]
        return note + "\n" + f"\u2014 {name} {b64(log_id[:4] + sig)}\n"

    def _tlog_entry(self, parts: Parts, *, rekor_v2: bool = False, retired_key: bool = False) -> dict:
        """The log entry for `parts`: Rekor v1 (hashedrekord 0.0.1 with a SET), or with
        `rekor_v2` a Rekor v2 one (0.0.2, no SET, no integrated time unless `parts` sets one:
        nothing signs it there). `retired_key` signs the checkpoint (and SET) with the log key
        trusted_root(rotated_log=True) retires."""
        if rekor_v2:
            parts.body = self.hashedrekord_v002(parts.certificate, parts.signature, parts.digest)
        body = canonical_json(parts.body)
        self._log.append(body)
        index = parts.log_index if parts.log_index >= 0 else len(self._log) - 1
        leaves = [leaf_hash(x) for x in self._log]
        root = tree_root(leaves)
        key, log_id = (self.retired_rekor_key, self.retired_rekor_log_id) if retired_key else (self.rekor_key, self.rekor_log_id)
        entry = {"logIndex": str(index), "logId": {"keyId": b64(log_id)},
                 "kindVersion": {"kind": "hashedrekord", "version": "0.0.2" if rekor_v2 else "0.0.1"},
                 "integratedTime": str(parts.integrated_time),
                 "inclusionProof": {"logIndex": str(index), "rootHash": b64(root), "treeSize": str(len(leaves)),
                                    "hashes": [b64(h) for h in audit_path(len(leaves) - 1, leaves)],
                                    "checkpoint": {"envelope": self._checkpoint(len(leaves), root, retired_key=retired_key)}},
                 "canonicalizedBody": b64(body)}
        if not rekor_v2:
            payload = parts.set_payload or {"body": b64(body), "integratedTime": parts.integrated_time,
                                            "logID": log_id.hex(), "logIndex": index}
            set_sig = key.sign(canonical_json(payload), ec.ECDSA(hashes.SHA256()))
            entry["inclusionPromise"] = {"signedEntryTimestamp": b64(set_sig)}
        return entry

    # ---- signing

    def sign(self, artifact: bytes, identity: Identity | None = None, *, when: dt.datetime | None = None,
             mutate=None, timestamped: bool = False, inclusion_promise: bool = True, rekor_v2: bool = False,
             retired_log_key: bool = False, rotated_tsa: bool = False, ca_leaf: str | None = None) -> dict:
        """A v0.3 bundle over `artifact` (a message signature, as kernel-builder makes for
        metadata.json). `mutate(parts)` may change any part before the log entry is made;
        `timestamped` adds an RFC 3161 timestamp over the signature from the instance's TSA;
        without `inclusion_promise` (no SET) that timestamp is the only source of time.
        `rekor_v2` logs a Rekor v2 entry (timestamped, no SET); `retired_log_key` has the
        retired log key sign the checkpoint and SET; `rotated_tsa` has the rotated-out TSA
        certificate sign the timestamp; `ca_leaf` makes the signing certificate a CA."""
        identity = identity or Identity()
        when = (when or self.now).replace(microsecond=0)
        key = ec.generate_private_key(ec.SECP256R1())
        cert = self.issue(key, identity, when, ca=ca_leaf)
        digest = hashlib.sha256(artifact).digest()
        signature = key.sign(artifact, ec.ECDSA(hashes.SHA256()))
        # Rekor v2 writes no integrated time ("0"); a `mutate` may write one, which nothing signs.
        parts = Parts(cert, signature, digest, self.hashedrekord(cert, signature, digest), 0 if rekor_v2 else int(when.timestamp()), -1)
        if mutate:
            mutate(parts)
        entry = self._tlog_entry(parts, rekor_v2=rekor_v2, retired_key=retired_log_key)
        if rekor_v2:
            timestamped = True  # a Rekor v2 entry has no SET: the TSA is the only source of time
        if not inclusion_promise and not rekor_v2:
            del entry["inclusionPromise"]
        material = {"certificate": {"rawBytes": b64(parts.certificate.public_bytes(serialization.Encoding.DER))},
                    "tlogEntries": [entry]}
        if timestamped:
            material["timestampVerificationData"] = {"rfc3161Timestamps": [{"signedTimestamp": b64(self.timestamp(parts.signature, rotated=rotated_tsa))}]}
        return {"mediaType": BUNDLE_MEDIA_TYPE,
                "verificationMaterial": material,
                "messageSignature": {"messageDigest": {"algorithm": "SHA2_256", "digest": b64(parts.digest)},
                                     "signature": b64(parts.signature)}}

    def trusted_root(self, *, rotated_log: bool = False, ca_valid_for: tuple | None = None,
                     ct_valid_for: tuple | None = None) -> dict:
        """The root naming this instance. Validity windows, each (start, end or None):
        `ca_valid_for` for the Fulcio CA, `ct_valid_for` for the CT log key; `rotated_log`
        lists the retired Rekor key as valid until ROTATION before now and the current one
        from then on, as a real root rotates a log key."""
        def der(cert):
            return {"rawBytes": b64(cert.public_bytes(serialization.Encoding.DER))}

        def window(valid_for):
            start, end = valid_for or (self.epoch, None)
            return {"start": rfc3339(start), **({"end": rfc3339(end)} if end else {})}

        def log(key, log_id, url, valid_for=None):
            return {"baseUrl": url, "hashAlgorithm": "SHA2_256",
                    "publicKey": {"rawBytes": b64(spki(key)), "keyDetails": "PKIX_ECDSA_P256_SHA_256",
                                  "validFor": window(valid_for)},
                    "logId": {"keyId": b64(log_id)}}

        rekor_url = f"https://rekor.{self.name}.test"
        tlogs = [log(self.rekor_key, self.rekor_log_id, rekor_url)]
        if rotated_log:
            rotation = self.now - ROTATION
            tlogs = [log(self.retired_rekor_key, self.retired_rekor_log_id, rekor_url, (self.epoch, rotation)),
                     log(self.rekor_key, self.rekor_log_id, rekor_url, (rotation, None))]
        return {"mediaType": TRUSTED_ROOT_MEDIA_TYPE,
                "tlogs": tlogs,
                "certificateAuthorities": [{"subject": {"organization": "kwheel tests", "commonName": f"{self.name}-intermediate"},
                                            "uri": f"https://fulcio.{self.name}.test",
                                            "certChain": {"certificates": [der(self.intermediate), der(self.root)]},
                                            "validFor": window(ca_valid_for)}],
                "ctlogs": [log(self.ct_key, self.ct_log_id, f"https://ctfe.{self.name}.test", ct_valid_for)],
                "timestampAuthorities": [{"subject": {"organization": "kwheel tests", "commonName": f"{self.name}-tsa"},
                                          "uri": f"https://tsa.{self.name}.test/api/v1/timestamp",
                                          "certChain": {"certificates": [der(self.tsa), der(self.tsa_root)]},
                                          "validFor": {"start": rfc3339(self.epoch)}}]}


# How long before the instance's `now` trusted_root(rotated_log=True) rotates the Rekor key.
ROTATION = dt.timedelta(hours=1)


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


# --------------------------------------------------------------------------- issue 38, defects 6-9


def as_v02(bundle: dict) -> dict:
    """The same bundle in v0.2's shape: the signing certificate as a one-certificate
    x509CertificateChain (the path the v0.1/v0.2 bundle checks take)."""
    out = json.loads(json.dumps(bundle))
    vm = out["verificationMaterial"]
    vm["x509CertificateChain"] = {"certificates": [vm.pop("certificate")]}
    out["mediaType"] = "application/vnd.dev.sigstore.bundle+json;version=0.2"
    return out


def _moved_integrated_time(inst: SigstoreInstance):
    """A `mutate` that writes an integrated time twice ROTATION before now into the entry:
    inside the retired log key's window of trusted_root(rotated_log=True), before the current
    key's. In a Rekor v2 entry, or a v1 entry without its SET, nothing signs it."""
    def mutate(parts: Parts) -> None:
        parts.integrated_time = int((inst.now - 2 * ROTATION).timestamp())
    return mutate


def _proof_sides(index: int, size: int, length: int) -> list[str] | None:
    """Which side each of `length` proof hashes goes on, RFC 9162's inclusion verification for
    leaf `index` of `size`; None when that many hashes cannot prove it."""
    if index >= size:
        return None
    fn, sn, sides = index, size - 1, []
    for _ in range(length):
        if sn == 0:
            return None
        if fn & 1 or fn == sn:
            sides.append("left")
            while not fn & 1 and fn != 0:
                fn, sn = fn >> 1, sn >> 1
        else:
            sides.append("right")
        fn, sn = fn >> 1, sn >> 1
    return sides if sn == 0 else None


def proof_at_another_index(bundle: dict) -> dict:
    """The same inclusion proof (same hashes, same root, same signed checkpoint) claimed for
    another leaf index of another tree size: RFC 9162's check only hashes in the order the
    (index, size) pair says, so any pair with the same order of sides proves the same leaf to
    the same root. The entry's own logIndex follows it. Only the checkpoint's signed size
    tells them apart."""
    out = json.loads(json.dumps(bundle))
    entry = out["verificationMaterial"]["tlogEntries"][0]
    proof = entry["inclusionProof"]
    index, size, length = int(proof["logIndex"]), int(proof["treeSize"]), len(proof["hashes"])
    sides = _proof_sides(index, size, length)
    for other_size in range(1, 2 * size + 2):
        for other_index in range(other_size):
            if other_size != size and _proof_sides(other_index, other_size, length) == sides:
                proof["logIndex"] = entry["logIndex"] = str(other_index)
                proof["treeSize"] = str(other_size)
                return out
    raise AssertionError(f"no other (index, size) proves leaf {index} of {size} with {length} hashes")


# name -> (inst, artifact) -> (bundle, trusted_root): what a verifier must refuse, or must not be
# steered by. tests/integration/test_sigstore_differential.py holds kwheel and sigstore-python
# to each.
HOSTILE = {
    # 6: a timestamp, the only source of time, signed by a TSA certificate under the TSA's root
    # that the trusted root does not list (rotated out).
    "tsa-rotated-out-certificate": lambda inst, a: (
        inst.sign(a, timestamped=True, inclusion_promise=False, rotated_tsa=True), inst.trusted_root()),
    # 7: the signing certificate is a CA, on the v0.3 path and on the v0.2 one.
    "ca-leaf-v0.3": lambda inst, a: (inst.sign(a, ca_leaf="ca"), inst.trusted_root()),
    "ca-flag-leaf-v0.3": lambda inst, a: (inst.sign(a, ca_leaf="ca-flag"), inst.trusted_root()),
    "ca-flag-leaf-v0.2": lambda inst, a: (as_v02(inst.sign(a, ca_leaf="ca-flag")), inst.trusted_root()),
    # 8: a Fulcio CA or CT log key used outside its validFor at the signing time.
    "fulcio-ca-retired-before-signing": lambda inst, a: (
        inst.sign(a), inst.trusted_root(ca_valid_for=(inst.epoch, inst.now - dt.timedelta(days=1)))),
    "fulcio-ca-started-after-signing": lambda inst, a: (
        inst.sign(a, when=inst.now - dt.timedelta(days=2)), inst.trusted_root(ca_valid_for=(inst.now - dt.timedelta(days=1), None))),
    "ct-key-retired-before-signing": lambda inst, a: (
        inst.sign(a), inst.trusted_root(ct_valid_for=(inst.epoch, inst.now - dt.timedelta(days=1)))),
    # 9: an unsigned integrated time moved: out of the signing key's window (the bundle is
    # good), or into a retired key's window (that key signed the checkpoint).
    "rekor-v2-integrated-time-before-key": lambda inst, a: (
        inst.sign(a, rekor_v2=True, mutate=_moved_integrated_time(inst)), inst.trusted_root(rotated_log=True)),
    "rekor-v2-retired-key-integrated-time-moved-in": lambda inst, a: (
        inst.sign(a, rekor_v2=True, retired_log_key=True, mutate=_moved_integrated_time(inst)), inst.trusted_root(rotated_log=True)),
    "timestamp-only-v1-integrated-time-before-key": lambda inst, a: (
        inst.sign(a, timestamped=True, inclusion_promise=False, mutate=_moved_integrated_time(inst)), inst.trusted_root(rotated_log=True)),
    # 9's class: another unsigned field of a Rekor v2 entry, the proof's index and tree size
    # (no SET signs the entry's index; the checkpoint signs the size).
    "rekor-v2-proof-at-another-index": lambda inst, a: (proof_at_another_index(inst.sign(a, rekor_v2=True)), inst.trusted_root()),
    "timestamp-only-v1-retired-key-integrated-time-moved-in": lambda inst, a: (
        inst.sign(a, timestamped=True, inclusion_promise=False, retired_log_key=True, mutate=_moved_integrated_time(inst)),
        inst.trusted_root(rotated_log=True)),
}
