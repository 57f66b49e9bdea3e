#include <doctest/doctest.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <sys/stat.h>

#include "attest/base64.hpp"
#include "attest/ed25519.hpp"
#include "core/hashing.hpp"
#include "tests/support/temp_dir.hpp"

using namespace reverify;
using reverify::test::TempDir;

namespace {

std::string from_hex(std::string_view hex) {
  std::string out;
  for (std::size_t i = 0; i + 1 < hex.size(); i += 2)
    out.push_back(static_cast<char>(std::stoi(std::string(hex.substr(i, 2)), nullptr, 16)));
  return out;
}

std::string pem(const char* label, const std::string& der) {
  std::string body = base64_encode(der), out = std::string("-----BEGIN ") + label + "-----\n";
  for (std::size_t i = 0; i < body.size(); i += 64)
    out += body.substr(i, 64) + "\n";
  return out + "-----END " + label + "-----\n";
}

// RFC 8032 section 7.1, TEST 1, wrapped by hand in PKCS#8 / SubjectPublicKeyInfo (RFC 8410).
const std::string kSecret =
    from_hex("9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60");
const std::string kPublic =
    from_hex("d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a");
const std::string kSignatureOfEmpty = from_hex(
    "e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555fb8821590a33bacc61e39701cf9b4"
    "6bd25bf5f0595bbe24655141438e7a100b");
const std::string kPkcs8 = from_hex("302e020100300506032b657004220420") + kSecret;
const std::string kSpki = from_hex("302a300506032b6570032100") + kPublic;

std::string rsa_public_pem() {
  EVP_PKEY* key = EVP_PKEY_Q_keygen(nullptr, nullptr, "RSA", size_t{2048});
  REQUIRE(key != nullptr);
  BIO* bio = BIO_new(BIO_s_mem());
  PEM_write_bio_PUBKEY(bio, key);
  char* data = nullptr;
  long size = BIO_get_mem_data(bio, &data);
  std::string text(data, static_cast<std::size_t>(size));
  BIO_free(bio);
  EVP_PKEY_free(key);
  return text;
}

}  // namespace

TEST_CASE("RFC 8032 test 1: the signature, the public key and the key id") {
  auto key = Ed25519SigningKey::parse_pem(pem("PRIVATE KEY", kPkcs8), "rfc8032");
  REQUIRE_MESSAGE(key.ok(), key.error().message);
  CHECK(key->sign("") == kSignatureOfEmpty);
  CHECK(key->public_key().verify("", kSignatureOfEmpty));
  // Key id: sha256 of the DER SubjectPublicKeyInfo, recomputable from the public key alone.
  CHECK(key->key_id() == sha256_hex(kSpki));
  auto public_keys = Ed25519PublicKey::parse_pem(pem("PUBLIC KEY", kSpki), "rfc8032.pub");
  REQUIRE(public_keys.ok());
  REQUIRE(public_keys->size() == 1);
  CHECK(public_keys->front().key_id() == key->key_id());
  CHECK(public_keys->front().pem() == pem("PUBLIC KEY", kSpki));
}

TEST_CASE("a signature verifies only for its message and its key") {
  auto a = Ed25519SigningKey::generate();
  auto b = Ed25519SigningKey::generate();
  CHECK(a.key_id() != b.key_id());
  const auto signature = a.sign("message");
  CHECK(signature.size() == 64);
  CHECK(a.public_key().verify("message", signature));
  CHECK_FALSE(a.public_key().verify("massage", signature));
  CHECK_FALSE(b.public_key().verify("message", signature));
  CHECK_FALSE(a.public_key().verify("message", signature.substr(0, 63)));
  CHECK_FALSE(a.public_key().verify("message", ""));
}

TEST_CASE("a private key file is read only when nobody but its owner can access it") {
  TempDir dir;
  auto key = Ed25519SigningKey::generate();
  auto file = dir.write("key.pem", key.private_pem());
  for (mode_t mode : {0644, 0640, 0604, 0620, 0602}) {
    CAPTURE(mode);
    ::chmod(file.c_str(), mode);
    auto read = Ed25519SigningKey::read_pem_file(file);
    REQUIRE_FALSE(read.ok());
    CHECK(read.error().message.find("are too open") != std::string::npos);
    CHECK(read.error().message.find("chmod 600") != std::string::npos);
  }
  ::chmod(file.c_str(), 0600);
  auto read = Ed25519SigningKey::read_pem_file(file);
  REQUIRE_MESSAGE(read.ok(), read.error().message);
  CHECK(read->key_id() == key.key_id());
  ::chmod(file.c_str(), 0400);
  CHECK(Ed25519SigningKey::read_pem_file(file).ok());

  auto missing = Ed25519SigningKey::read_pem_file(dir.path / "missing.pem");
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.error().code == ErrorCode::not_found);
  ::chmod(dir.path.c_str(), 0700);
  auto folder = Ed25519SigningKey::read_pem_file(dir.path);
  REQUIRE_FALSE(folder.ok());
  CHECK(folder.error().message.find("not a regular file") != std::string::npos);
  // An encrypted key is refused, not prompted for.
  EVP_PKEY* raw = EVP_PKEY_Q_keygen(nullptr, nullptr, "ED25519");
  BIO* bio = BIO_new(BIO_s_mem());
  char passphrase[] = "secret";
  REQUIRE(PEM_write_bio_PKCS8PrivateKey(bio, raw, EVP_aes_256_cbc(), passphrase, 6, nullptr,
                                        nullptr) == 1);
  char* data = nullptr;
  const long size = BIO_get_mem_data(bio, &data);
  auto encrypted = dir.write("encrypted.pem", std::string(data, static_cast<std::size_t>(size)));
  BIO_free(bio);
  EVP_PKEY_free(raw);
  ::chmod(encrypted.c_str(), 0600);
  auto refused = Ed25519SigningKey::read_pem_file(encrypted);
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.error().message.find("not a readable unencrypted PEM private key") !=
        std::string::npos);
  auto garbage = dir.write("garbage.pem", "not a key");
  ::chmod(garbage.c_str(), 0600);
  auto unreadable = Ed25519SigningKey::read_pem_file(garbage);
  REQUIRE_FALSE(unreadable.ok());
  CHECK(unreadable.error().message.find("not a readable unencrypted PEM private key") !=
        std::string::npos);
}

TEST_CASE("public key files: bundles for rotation, and what is refused") {
  auto old_key = Ed25519SigningKey::generate();
  auto new_key = Ed25519SigningKey::generate();
  auto bundle =
      Ed25519PublicKey::parse_pem(old_key.public_key().pem() + new_key.public_key().pem(), "b");
  REQUIRE_MESSAGE(bundle.ok(), bundle.error().message);
  REQUIRE(bundle->size() == 2);
  CHECK((*bundle)[0].key_id() == old_key.key_id());
  CHECK((*bundle)[1].key_id() == new_key.key_id());

  auto private_given = Ed25519PublicKey::parse_pem(old_key.private_pem(), "key.pem");
  REQUIRE_FALSE(private_given.ok());
  CHECK(private_given.error().message.find("holds a private key") != std::string::npos);
  auto rsa = Ed25519PublicKey::parse_pem(rsa_public_pem(), "rsa.pem");
  REQUIRE_FALSE(rsa.ok());
  CHECK(rsa.error().message.find("expected an Ed25519 key") != std::string::npos);
  auto empty = Ed25519PublicKey::parse_pem("", "empty.pem");
  REQUIRE_FALSE(empty.ok());
  CHECK(empty.error().message.find("no PEM public key") != std::string::npos);
  auto broken = old_key.public_key().pem();
  broken[40] = broken[40] == 'A' ? 'B' : 'A';  // inside the base64 body
  broken.insert(30, "!!");
  auto damaged = Ed25519PublicKey::parse_pem(broken, "damaged.pem");
  CHECK_FALSE(damaged.ok());
}
