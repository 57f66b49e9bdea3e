#!/usr/bin/python3
"""A second, independent implementation of reverify's signed verification summaries.

Shares no code with reverify: the DSSE envelope and PAE are written here from the DSSE v1
protocol (secure-systems-lab/dsse protocol.md, envelope.md), the statement from in-toto
Statement v1 and SLSA VSA v1 (in-toto/attestation spec/v1, slsa-framework/slsa
spec/verification_summary.md), Ed25519 from Debian's python3-cryptography.

  keygen PRIVATE.pem PUBLIC.pem
  statement OUT.json MODEL VERSION WEIGHTS_SHA256 TENSOR_SHA256 MANIFEST_SHA256 RESULT TIME
  sign STATEMENT.json PRIVATE.pem OUT.envelope [--payload-type T]
  verify ENVELOPE PUBLIC.pem          -> prints the statement's gist as JSON; exit 0, or 2 + reason
  tamper KIND ENVELOPE OUT            -> payload | subject | truncate | keyid (no re-signing)
"""
import base64
import hashlib
import json
import sys

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

IN_TOTO = "application/vnd.in-toto+json"
STATEMENT_V1 = "https://in-toto.io/Statement/v1"
VSA_V1 = "https://slsa.dev/verification_summary/v1"


def pae(payload_type: bytes, body: bytes) -> bytes:
    # protocol.md: "DSSEv1" + SP + LEN(type) + SP + type + SP + LEN(body) + SP + body
    return b" ".join([b"DSSEv1", str(len(payload_type)).encode(), payload_type,
                      str(len(body)).encode(), body])


def key_id(public_key) -> str:
    der = public_key.public_bytes(serialization.Encoding.DER,
                                  serialization.PublicFormat.SubjectPublicKeyInfo)
    return hashlib.sha256(der).hexdigest()


def b64decode_strict(text: str) -> bytes:
    # Either alphabet (protocol.md); validate=True refuses characters outside it.
    alphabet = text.replace("-", "+").replace("_", "/")
    return base64.b64decode(alphabet + "=" * (-len(alphabet) % 4), validate=True)


def fail(reason: str):
    print(reason, file=sys.stderr)
    sys.exit(2)


def cmd_keygen(private_path, public_path):
    key = Ed25519PrivateKey.generate()
    with open(private_path, "wb") as f:
        f.write(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                  serialization.NoEncryption()))
    with open(public_path, "wb") as f:
        f.write(key.public_key().public_bytes(serialization.Encoding.PEM,
                                              serialization.PublicFormat.SubjectPublicKeyInfo))


def cmd_statement(out, model, version, weights_sha, tensor_sha, manifest_sha, result, time):
    statement = {
        "_type": STATEMENT_V1,
        "subject": [
            {"name": "model.safetensors",
             "digest": {"sha256": weights_sha, "reverify-tensor-sha256": tensor_sha}},
            {"name": "manifest.json", "digest": {"sha256": manifest_sha}},
        ],
        "predicateType": VSA_V1,
        "predicate": {
            "verifier": {"id": "https://second-implementation.example/verifier",
                         "version": {"dsse_reference.py": "1"}},
            "timeVerified": time,
            "resourceUri": f"reverify:{model}@{version}",
            "policy": {"uri": f"reverify:tolerance-policy/{model}@{version}",
                       "digest": {"sha256": hashlib.sha256(b"policy").hexdigest()}},
            "verificationResult": result,
            "verifiedLevels": ["REVERIFY_EQUIVALENT_V1"] if result == "PASSED" else ["FAILED"],
            "reverify:verification/v1": {
                "model": model, "version": version, "verificationId": 1,
                "verdict": "passed" if result == "PASSED" else "failed:out-of-tolerance",
                "level": "equivalent", "mode": "full",
                "explanation": "written by the second implementation", "checks": [],
            },
        },
    }
    with open(out, "w") as f:
        json.dump(statement, f, indent=1)


def cmd_sign(statement_path, private_path, out, payload_type=IN_TOTO):
    with open(private_path, "rb") as f:
        key = serialization.load_pem_private_key(f.read(), password=None)
    with open(statement_path, "rb") as f:
        body = f.read()
    signature = key.sign(pae(payload_type.encode(), body))
    envelope = {"payload": base64.b64encode(body).decode(), "payloadType": payload_type,
                "signatures": [{"keyid": key_id(key.public_key()),
                                "sig": base64.b64encode(signature).decode()}]}
    with open(out, "w") as f:
        json.dump(envelope, f)


def cmd_verify(envelope_path, public_path):
    with open(public_path, "rb") as f:
        public_key = serialization.load_pem_public_key(f.read())
    if not isinstance(public_key, Ed25519PublicKey):
        fail("not an Ed25519 public key")
    try:
        with open(envelope_path) as f:
            envelope = json.load(f)
        payload_type = envelope["payloadType"]
        body = b64decode_strict(envelope["payload"])
        signatures = envelope["signatures"]
    except (ValueError, KeyError, TypeError) as e:
        fail(f"malformed envelope: {e!r}")
    verified = False
    for signature in signatures:
        try:
            public_key.verify(b64decode_strict(signature["sig"]),
                              pae(payload_type.encode(), body))
            verified = True
            break
        except (InvalidSignature, ValueError, KeyError):
            continue
    if not verified:
        fail("no signature verifies with the given key")
    if payload_type != IN_TOTO:
        fail(f"payloadType {payload_type!r} is not {IN_TOTO}")
    statement = json.loads(body)  # the verified bytes, never re-read from the envelope
    if statement.get("_type") != STATEMENT_V1:
        fail(f"_type {statement.get('_type')!r}")
    if statement.get("predicateType") != VSA_V1:
        fail(f"predicateType {statement.get('predicateType')!r} is not {VSA_V1}")
    predicate = statement["predicate"]
    for field in ("verifier", "resourceUri", "policy", "verificationResult", "verifiedLevels"):
        if field not in predicate:
            fail(f"predicate.{field} missing")
    print(json.dumps({
        "keyid": key_id(public_key),
        "subject": statement["subject"],
        "verifier": predicate["verifier"]["id"],
        "timeVerified": predicate.get("timeVerified"),
        "resourceUri": predicate["resourceUri"],
        "policy": predicate["policy"],
        "verificationResult": predicate["verificationResult"],
        "verifiedLevels": predicate["verifiedLevels"],
        "slsaVersion": predicate.get("slsaVersion"),
    }, sort_keys=True))


def cmd_tamper(kind, envelope_path, out):
    with open(envelope_path) as f:
        envelope = json.load(f)
    statement = json.loads(base64.b64decode(envelope["payload"]))
    if kind == "payload":
        statement["predicate"]["verificationResult"] = (
            "FAILED" if statement["predicate"]["verificationResult"] == "PASSED" else "PASSED")
        envelope["payload"] = base64.b64encode(json.dumps(statement).encode()).decode()
    elif kind == "subject":
        statement["subject"][0]["digest"]["sha256"] = hashlib.sha256(b"other weights").hexdigest()
        envelope["payload"] = base64.b64encode(json.dumps(statement).encode()).decode()
    elif kind == "truncate":
        envelope["payload"] = envelope["payload"][:-3]
    else:
        fail(f"unknown tamper kind {kind}")
    with open(out, "w") as f:
        json.dump(envelope, f)


if __name__ == "__main__":
    command, args = sys.argv[1], sys.argv[2:]
    if command == "sign" and len(args) == 5 and args[3] == "--payload-type":
        cmd_sign(args[0], args[1], args[2], args[4])
    else:
        {"keygen": cmd_keygen, "statement": cmd_statement, "sign": cmd_sign,
         "verify": cmd_verify, "tamper": cmd_tamper}[command](*args)
