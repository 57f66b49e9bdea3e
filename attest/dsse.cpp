#include "attest/dsse.hpp"

#include <nlohmann/json.hpp>

#include "attest/base64.hpp"

namespace reverify {
namespace {

Error malformed(const std::string& message) {
  return make_error(ErrorCode::parse, "DSSE envelope: " + message);
}

std::string short_id(const std::string& key_id) {
  return key_id.empty() ? "(none)" : key_id.substr(0, 16);
}

}  // namespace

std::string dsse_pae(std::string_view payload_type, std::string_view payload) {
  std::string out = "DSSEv1 ";
  out += std::to_string(payload_type.size());
  out += ' ';
  out += payload_type;
  out += ' ';
  out += std::to_string(payload.size());
  out += ' ';
  out += payload;
  return out;
}

DsseEnvelope dsse_sign(std::string payload_type, std::string payload,
                       const Ed25519SigningKey& key) {
  DsseEnvelope envelope{std::move(payload_type), std::move(payload), {}};
  envelope.signatures.push_back(
      {key.key_id(), key.sign(dsse_pae(envelope.payload_type, envelope.payload))});
  return envelope;
}

std::string dsse_envelope_json(const DsseEnvelope& envelope) {
  nlohmann::json signatures = nlohmann::json::array();
  for (const auto& s : envelope.signatures) {
    nlohmann::json entry = {{"sig", base64_encode(s.sig)}};
    if (!s.keyid.empty())
      entry["keyid"] = s.keyid;
    signatures.push_back(std::move(entry));
  }
  nlohmann::json j = {{"payload", base64_encode(envelope.payload)},
                      {"payloadType", envelope.payload_type},
                      {"signatures", std::move(signatures)}};
  return j.dump();
}

Result<DsseEnvelope> dsse_parse_envelope(std::string_view json_text) {
  auto j = nlohmann::json::parse(json_text, nullptr, false);
  if (j.is_discarded())
    return malformed("not valid JSON");
  if (!j.is_object())
    return malformed("expected a JSON object");
  auto string_field = [&](const nlohmann::json& object, const char* key,
                          const std::string& path) -> Result<std::string> {
    auto it = object.find(key);
    if (it == object.end())
      return malformed(path + ": required field is missing");
    if (!it->is_string())
      return malformed(path + ": must be a string");
    return it->get<std::string>();
  };
  DsseEnvelope envelope;
  auto payload_type = string_field(j, "payloadType", "payloadType");
  if (!payload_type)
    return payload_type.error();
  envelope.payload_type = std::move(*payload_type);
  auto payload = string_field(j, "payload", "payload");
  if (!payload)
    return payload.error();
  auto decoded = base64_decode(*payload);
  if (!decoded)
    return malformed("payload: " + decoded.error().message);
  envelope.payload = std::move(*decoded);
  auto signatures = j.find("signatures");
  if (signatures == j.end())
    return malformed("signatures: required field is missing");
  if (!signatures->is_array())
    return malformed("signatures: must be an array");
  if (signatures->empty())
    return malformed("signatures: the envelope is not signed (empty array)");
  for (std::size_t i = 0; i < signatures->size(); ++i) {
    const std::string path = "signatures[" + std::to_string(i) + "]";
    const auto& entry = (*signatures)[i];
    if (!entry.is_object())
      return malformed(path + ": must be an object");
    auto sig = string_field(entry, "sig", path + ".sig");
    if (!sig)
      return sig.error();
    auto raw = base64_decode(*sig);
    if (!raw)
      return malformed(path + ".sig: " + raw.error().message);
    DsseSignature signature{"", std::move(*raw)};
    if (auto keyid = entry.find("keyid"); keyid != entry.end()) {
      if (!keyid->is_string())
        return malformed(path + ".keyid: must be a string");
      signature.keyid = keyid->get<std::string>();
    }
    envelope.signatures.push_back(std::move(signature));
  }
  return envelope;
}

Result<DsseVerified> dsse_verify(const DsseEnvelope& envelope,
                                 const std::vector<Ed25519PublicKey>& keys) {
  const std::string message = dsse_pae(envelope.payload_type, envelope.payload);
  bool named_key_failed = false;
  // Two passes: keys each signature names first (the hint), then every key.
  for (int pass = 0; pass < 2; ++pass) {
    for (const auto& signature : envelope.signatures) {
      for (const auto& key : keys) {
        const bool named = signature.keyid == key.key_id();
        if ((pass == 0) != named)
          continue;
        if (key.verify(message, signature.sig))
          return DsseVerified{envelope.payload_type, envelope.payload, key.key_id()};
        if (named)
          named_key_failed = true;
      }
    }
  }
  std::string named, given;
  for (const auto& s : envelope.signatures)
    named += (named.empty() ? "" : ", ") + short_id(s.keyid);
  for (const auto& k : keys)
    given += (given.empty() ? "" : ", ") + short_id(k.key_id());
  if (named_key_failed) {
    return make_error(ErrorCode::unauthorized,
                      "bad signature: the signature by key " + named +
                          " does not verify over the payload and its type: the envelope was "
                          "altered after signing");
  }
  return make_error(ErrorCode::unauthorized,
                    "wrong key: no signature verifies with the given key(s) " + given +
                        "; the envelope names key id(s) " + named);
}

}  // namespace reverify
