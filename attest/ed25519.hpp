#pragma once
// Ed25519 keys through OpenSSL 3 (EVP): the private key that signs verification summaries and
// the public keys that verify them.
//
// Files are PEM: a private key as PKCS#8 ("BEGIN PRIVATE KEY", what `openssl genpkey -algorithm
// ed25519` writes), public keys as SubjectPublicKeyInfo ("BEGIN PUBLIC KEY", `openssl pkey
// -pubout`). A public key file may hold several keys (a bundle: the current key and the ones it
// replaced, so summaries signed before a rotation still verify).
//
// The key id is the lowercase hex SHA-256 of the public key's DER SubjectPublicKeyInfo: anyone
// holding the public key can recompute it (`openssl pkey -pubin -outform DER | sha256sum`). In
// DSSE it is only a hint for choosing a key, never a reason to trust one.

#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.hpp"

struct evp_pkey_st;

namespace reverify {

namespace detail {
using PkeyPtr = std::shared_ptr<evp_pkey_st>;  // immutable once loaded: shared across threads
}  // namespace detail

class Ed25519PublicKey {
 public:
  // Every key of a PEM text (one or more "BEGIN PUBLIC KEY" blocks); `what` names the source in
  // errors. Refuses a text without keys, a key of another algorithm, and private keys.
  static Result<std::vector<Ed25519PublicKey>> parse_pem(std::string_view pem,
                                                         const std::string& what);
  static Result<std::vector<Ed25519PublicKey>> read_pem_file(const std::filesystem::path& path);

  const std::string& key_id() const { return key_id_; }
  std::string pem() const;  // SubjectPublicKeyInfo PEM
  // True when `signature` is a valid Ed25519 signature of `message` under this key.
  bool verify(std::string_view message, std::string_view signature) const;

 private:
  friend class Ed25519SigningKey;
  explicit Ed25519PublicKey(detail::PkeyPtr key);
  detail::PkeyPtr key_;
  std::string key_id_;
};

class Ed25519SigningKey {
 public:
  // Reads a PKCS#8 PEM private key. Refused (ErrorCode::invalid_argument) when the file is not a
  // regular file or when its mode gives the group or others any access (`chmod 600`): a signing
  // key others can read is not a secret. The PEM text is wiped from memory after parsing.
  static Result<Ed25519SigningKey> read_pem_file(const std::filesystem::path& path);
  static Result<Ed25519SigningKey> parse_pem(std::string_view pem, const std::string& what);
  // A fresh key (tests, key generation).
  static Ed25519SigningKey generate();

  const std::string& key_id() const { return public_key_.key_id(); }
  const Ed25519PublicKey& public_key() const { return public_key_; }
  std::string private_pem() const;  // PKCS#8 PEM, for writing a generated key to a file
  std::string sign(std::string_view message) const;  // 64 bytes

 private:
  Ed25519SigningKey(detail::PkeyPtr key, Ed25519PublicKey public_key);
  static Ed25519SigningKey from_private(detail::PkeyPtr key);
  detail::PkeyPtr key_;
  Ed25519PublicKey public_key_;
};

}  // namespace reverify
