#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include "attest/base64.hpp"
#include "attest/dsse.hpp"

using namespace reverify;

TEST_CASE("PAE is the DSSE protocol's test vector") {
  CHECK(dsse_pae("http://example.com/HelloWorld", "hello world") ==
        "DSSEv1 29 http://example.com/HelloWorld 11 hello world");
  CHECK(dsse_pae("", "") == "DSSEv1 0  0 ");
  // Lengths are of bytes, not characters.
  CHECK(dsse_pae("t", "\xc3\xa9") == "DSSEv1 1 t 2 \xc3\xa9");
}

TEST_CASE("an envelope round-trips through its JSON and verifies") {
  auto key = Ed25519SigningKey::generate();
  auto envelope = dsse_sign("application/vnd.in-toto+json", "{\"a\":1}", key);
  const auto text = dsse_envelope_json(envelope);
  auto j = nlohmann::json::parse(text);
  CHECK(j["payloadType"] == "application/vnd.in-toto+json");
  CHECK(j["payload"] == base64_encode("{\"a\":1}"));
  CHECK(j["signatures"][0]["keyid"] == key.key_id());
  // The signature is over PAE, checked here with the public key directly.
  CHECK(key.public_key().verify(dsse_pae("application/vnd.in-toto+json", "{\"a\":1}"),
                                *base64_decode(j["signatures"][0]["sig"].get<std::string>())));

  auto parsed = dsse_parse_envelope(text);
  REQUIRE(parsed.ok());
  auto verified = dsse_verify(*parsed, {key.public_key()});
  REQUIRE(verified.ok());
  CHECK(verified->payload == "{\"a\":1}");
  CHECK(verified->key_id == key.key_id());
}

TEST_CASE("verification: any trusted key, keyid only a hint") {
  auto signer = Ed25519SigningKey::generate();
  auto other = Ed25519SigningKey::generate();
  auto envelope = dsse_sign("t", "body", signer);
  CHECK(dsse_verify(envelope, {other.public_key(), signer.public_key()}).ok());
  // No keyid, or a keyid naming another key: the signature still decides.
  envelope.signatures[0].keyid.clear();
  CHECK(dsse_verify(envelope, {other.public_key(), signer.public_key()}).ok());
  envelope.signatures[0].keyid = other.key_id();
  CHECK(dsse_verify(envelope, {other.public_key(), signer.public_key()}).ok());
  // Several signatures: one valid under a trusted key is enough.
  auto both = dsse_sign("t", "body", other);
  both.signatures.push_back(dsse_sign("t", "body", signer).signatures[0]);
  CHECK(dsse_verify(both, {signer.public_key()}).ok());
}

TEST_CASE("a tampered envelope or the wrong key is rejected with its reason") {
  auto signer = Ed25519SigningKey::generate();
  auto other = Ed25519SigningKey::generate();
  auto envelope = dsse_sign("application/vnd.in-toto+json", "body", signer);

  auto payload_changed = envelope;
  payload_changed.payload = "bodY";
  auto bad = dsse_verify(payload_changed, {signer.public_key()});
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.error().code == ErrorCode::unauthorized);
  CHECK(bad.error().message.find("bad signature") != std::string::npos);

  auto type_changed = envelope;
  type_changed.payload_type = "application/json";
  CHECK_FALSE(dsse_verify(type_changed, {signer.public_key()}).ok());

  auto wrong = dsse_verify(envelope, {other.public_key()});
  REQUIRE_FALSE(wrong.ok());
  CHECK(wrong.error().message.find("wrong key") != std::string::npos);
  CHECK(wrong.error().message.find(signer.key_id().substr(0, 16)) != std::string::npos);
  CHECK(wrong.error().message.find(other.key_id().substr(0, 16)) != std::string::npos);
  CHECK_FALSE(dsse_verify(envelope, {}).ok());
}

TEST_CASE("malformed envelopes name the field") {
  auto error_of = [](const std::string& text) {
    auto parsed = dsse_parse_envelope(text);
    REQUIRE_FALSE(parsed.ok());
    CHECK(parsed.error().code == ErrorCode::parse);
    return parsed.error().message;
  };
  CHECK(error_of("{").find("not valid JSON") != std::string::npos);
  CHECK(error_of("[]").find("expected a JSON object") != std::string::npos);
  CHECK(error_of(R"({"payload":"","signatures":[]})").find("payloadType: required") !=
        std::string::npos);
  CHECK(error_of(R"({"payloadType":"t","signatures":[{"sig":""}]})").find("payload: required") !=
        std::string::npos);
  CHECK(error_of(R"({"payloadType":"t","payload":"Zm9","signatures":[{"sig":""}]})")
            .find("payload: not valid base64") != std::string::npos);
  CHECK(error_of(R"({"payloadType":"t","payload":""})").find("signatures: required") !=
        std::string::npos);
  CHECK(error_of(R"({"payloadType":"t","payload":"","signatures":[]})").find("not signed") !=
        std::string::npos);
  CHECK(error_of(R"({"payloadType":"t","payload":"","signatures":[{"keyid":"k"}]})")
            .find("signatures[0].sig: required") != std::string::npos);
  CHECK(error_of(R"({"payloadType":"t","payload":"","signatures":[{"sig":"AA=A"}]})")
            .find("signatures[0].sig: not valid base64") != std::string::npos);
  CHECK(error_of(R"({"payloadType":"t","payload":"","signatures":[{"sig":"","keyid":1}]})")
            .find("signatures[0].keyid: must be a string") != std::string::npos);
  // Unknown fields are ignored; an unset keyid is the same as an empty one.
  auto ok = dsse_parse_envelope(
      R"({"payloadType":"t","payload":"","signatures":[{"sig":"","extra":1}],"x":2})");
  REQUIRE(ok.ok());
  CHECK(ok->signatures[0].keyid.empty());
}
