#pragma once
// DSSE v1 (secure-systems-lab/dsse, protocol.md and envelope.md, version 1.0.2): the signature is
// over PAE(payloadType, payload), never over JSON, and the JSON envelope carries the payload and
// each signature in base64.
//
//   PAE(type, body) = "DSSEv1" SP LEN(type) SP type SP LEN(body) SP body
//   (LEN: decimal byte length, no leading zeros; SP: one ASCII space)
//   {"payload": "<base64(body)>", "payloadType": "<type>",
//    "signatures": [{"keyid": "<key id>", "sig": "<base64(signature)>"}]}
//
// Reading follows the protocol's order: decode, verify a signature against PAE of exactly the
// bytes decoded, and only then hand those same bytes on (they are never re-read from the JSON).

#include <string>
#include <string_view>
#include <vector>

#include "attest/ed25519.hpp"
#include "core/result.hpp"

namespace reverify {

std::string dsse_pae(std::string_view payload_type, std::string_view payload);

struct DsseSignature {
  std::string keyid;  // "" = unset (the spec treats both alike)
  std::string sig;    // raw signature bytes (decoded)
};

struct DsseEnvelope {
  std::string payload_type;
  std::string payload;  // raw bytes (decoded)
  std::vector<DsseSignature> signatures;
};

// Signs PAE(payload_type, payload) with `key`; keyid = key.key_id().
DsseEnvelope dsse_sign(std::string payload_type, std::string payload, const Ed25519SigningKey& key);

// The JSON envelope (standard base64, with padding).
std::string dsse_envelope_json(const DsseEnvelope& envelope);

// Parses a JSON envelope. ErrorCode::parse naming the field: not JSON, not an object, `payload`,
// `payloadType`, `signatures` missing or of the wrong type, no signature, a `sig` or `payload`
// that is not base64 (either alphabet). Unknown fields are ignored (envelope.md).
Result<DsseEnvelope> dsse_parse_envelope(std::string_view json_text);

struct DsseVerified {
  std::string payload_type;
  std::string payload;  // the exact bytes the accepted signature covers
  std::string key_id;   // of the public key that accepted it
};

// The payload when at least one signature verifies under one of `keys` (threshold 1). The keyid
// hint orders the attempts but decides nothing. ErrorCode::unauthorized otherwise, saying which
// key ids the envelope names and which were given, and whether a named key failed (payload or
// type altered) or no given key was named (wrong key).
Result<DsseVerified> dsse_verify(const DsseEnvelope& envelope,
                                 const std::vector<Ed25519PublicKey>& keys);

}  // namespace reverify
