#include "attest/ed25519.hpp"

#include <fcntl.h>
#include <openssl/bio.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <new>
#include <stdexcept>

#include "core/hashing.hpp"

namespace reverify {
namespace {

using detail::PkeyPtr;

PkeyPtr own(EVP_PKEY* key) {
  return PkeyPtr(key, [](EVP_PKEY* k) { EVP_PKEY_free(k); });
}

struct BioFree {
  void operator()(BIO* bio) const { BIO_free(bio); }
};
using BioPtr = std::unique_ptr<BIO, BioFree>;

struct MdCtxFree {
  void operator()(EVP_MD_CTX* ctx) const { EVP_MD_CTX_free(ctx); }
};
using MdCtxPtr = std::unique_ptr<EVP_MD_CTX, MdCtxFree>;

BioPtr memory_bio(std::string_view bytes) {
  BioPtr bio(BIO_new_mem_buf(bytes.data(), static_cast<int>(bytes.size())));
  if (!bio)
    throw std::bad_alloc();
  return bio;
}

std::string bio_text(BIO* bio) {
  char* data = nullptr;
  const long size = BIO_get_mem_data(bio, &data);
  return std::string(data, static_cast<std::size_t>(size));
}

// The first queued OpenSSL error as text, and the queue cleared (errors are per thread).
std::string openssl_reason() {
  const unsigned long code = ERR_get_error();
  ERR_clear_error();
  if (code == 0)
    return "no detail from OpenSSL";
  char buffer[256];
  ERR_error_string_n(code, buffer, sizeof buffer);
  return buffer;
}

std::string spki_der(EVP_PKEY* key) {
  unsigned char* der = nullptr;
  const int size = i2d_PUBKEY(key, &der);
  if (size <= 0)
    throw std::runtime_error("i2d_PUBKEY failed: " + openssl_reason());
  std::string out(reinterpret_cast<const char*>(der), static_cast<std::size_t>(size));
  OPENSSL_free(der);
  return out;
}

Status require_ed25519(EVP_PKEY* key, const std::string& what) {
  if (EVP_PKEY_get_id(key) != EVP_PKEY_ED25519) {
    const char* type = EVP_PKEY_get0_type_name(key);
    return make_error(
        ErrorCode::invalid_argument,
        what + ": an " + std::string(type ? type : "unknown") + " key, expected an Ed25519 key");
  }
  return Status::success();
}

// Reads a whole file through one descriptor, checking the mode of what was opened (no window
// between the check and the read).
Result<std::string> read_private_file(const std::filesystem::path& path) {
  const std::string what = path.string();
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    return make_error(errno == ENOENT ? ErrorCode::not_found : ErrorCode::io,
                      what + ": cannot open: " + std::strerror(errno));
  }
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  struct stat st {};
  if (::fstat(fd, &st) != 0)
    return make_error(ErrorCode::io, what + ": cannot stat: " + std::strerror(errno));
  if (!S_ISREG(st.st_mode))
    return make_error(ErrorCode::invalid_argument, what + ": not a regular file");
  if ((st.st_mode & 077) != 0) {
    char mode[8];
    std::snprintf(mode, sizeof mode, "%04o", unsigned(st.st_mode & 07777));
    return make_error(ErrorCode::invalid_argument,
                      what + ": permissions " + mode +
                          " are too open: a signing key must not be accessible by the group or "
                          "others (chmod 600 it)");
  }
  std::string text;
  char buffer[4096];
  for (;;) {
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0)
      return make_error(ErrorCode::io, what + ": cannot read: " + std::strerror(errno));
    if (n == 0)
      break;
    text.append(buffer, static_cast<std::size_t>(n));
    if (text.size() > 64 * 1024)
      return make_error(ErrorCode::invalid_argument, what + ": larger than a PEM key can be");
  }
  OPENSSL_cleanse(buffer, sizeof buffer);
  return text;
}

}  // namespace

Ed25519PublicKey::Ed25519PublicKey(PkeyPtr key)
    : key_(std::move(key)), key_id_(sha256_hex(spki_der(key_.get()))) {}

Result<std::vector<Ed25519PublicKey>> Ed25519PublicKey::parse_pem(std::string_view pem,
                                                                  const std::string& what) {
  if (pem.find("PRIVATE KEY-----") != std::string_view::npos) {
    return make_error(ErrorCode::invalid_argument,
                      what +
                          ": holds a private key; give the public key (openssl pkey -in KEY "
                          "-pubout)");
  }
  auto bio = memory_bio(pem);
  std::vector<Ed25519PublicKey> keys;
  for (;;) {
    char* name = nullptr;
    char* header = nullptr;
    unsigned char* data = nullptr;
    long length = 0;
    if (PEM_read_bio(bio.get(), &name, &header, &data, &length) != 1) {
      // Only "no further PEM block" ends the text cleanly.
      const unsigned long last = ERR_peek_last_error();
      const bool clean_end =
          ERR_GET_LIB(last) == ERR_LIB_PEM && ERR_GET_REASON(last) == PEM_R_NO_START_LINE;
      const std::string reason = openssl_reason();
      if (!clean_end) {
        return make_error(ErrorCode::parse, what + ": block " + std::to_string(keys.size() + 1) +
                                                " is not readable PEM (" + reason + ")");
      }
      break;
    }
    const std::string label = name;
    const unsigned char* p = data;
    EVP_PKEY* key = label == "PUBLIC KEY" ? d2i_PUBKEY(nullptr, &p, length) : nullptr;
    OPENSSL_free(name);
    OPENSSL_free(header);
    OPENSSL_free(data);
    const std::string where = what + ": block " + std::to_string(keys.size() + 1);
    if (label != "PUBLIC KEY") {
      return make_error(ErrorCode::invalid_argument,
                        where + " is a \"" + label + "\", expected a \"PUBLIC KEY\"");
    }
    if (key == nullptr) {
      return make_error(ErrorCode::parse,
                        where + " is not a readable public key (" + openssl_reason() + ")");
    }
    auto owned = own(key);
    if (auto s = require_ed25519(key, where); !s)
      return s.error();
    keys.push_back(Ed25519PublicKey(std::move(owned)));
  }
  if (keys.empty()) {
    return make_error(ErrorCode::parse,
                      what + ": no PEM public key (expected \"-----BEGIN PUBLIC KEY-----\")");
  }
  return keys;
}

Result<std::vector<Ed25519PublicKey>> Ed25519PublicKey::read_pem_file(
    const std::filesystem::path& path) {
  auto bio = BioPtr(BIO_new_file(path.c_str(), "r"));
  if (!bio) {
    ERR_clear_error();
    return make_error(ErrorCode::not_found, path.string() + ": cannot open the public key file");
  }
  std::string text;
  char buffer[4096];
  int n = 0;
  while ((n = BIO_read(bio.get(), buffer, sizeof buffer)) > 0) {
    text.append(buffer, static_cast<std::size_t>(n));
    if (text.size() > 1024 * 1024)
      return make_error(ErrorCode::invalid_argument, path.string() + ": larger than 1 MiB");
  }
  return parse_pem(text, path.string());
}

std::string Ed25519PublicKey::pem() const {
  BioPtr bio(BIO_new(BIO_s_mem()));
  if (!bio || PEM_write_bio_PUBKEY(bio.get(), key_.get()) != 1)
    throw std::runtime_error("PEM_write_bio_PUBKEY failed: " + openssl_reason());
  return bio_text(bio.get());
}

bool Ed25519PublicKey::verify(std::string_view message, std::string_view signature) const {
  MdCtxPtr ctx(EVP_MD_CTX_new());
  if (!ctx)
    throw std::bad_alloc();
  // Ed25519 hashes the message itself: no digest is named (PureEdDSA, RFC 8032).
  if (EVP_DigestVerifyInit(ctx.get(), nullptr, nullptr, nullptr, key_.get()) != 1)
    throw std::runtime_error("EVP_DigestVerifyInit failed: " + openssl_reason());
  const int ok = EVP_DigestVerify(
      ctx.get(), reinterpret_cast<const unsigned char*>(signature.data()), signature.size(),
      reinterpret_cast<const unsigned char*>(message.data()), message.size());
  ERR_clear_error();  // a failed verification queues an error; it is an answer, not a fault
  return ok == 1;
}

Ed25519SigningKey::Ed25519SigningKey(PkeyPtr key, Ed25519PublicKey public_key)
    : key_(std::move(key)), public_key_(std::move(public_key)) {}

Result<Ed25519SigningKey> Ed25519SigningKey::parse_pem(std::string_view pem,
                                                       const std::string& what) {
  auto bio = memory_bio(pem);
  // An encrypted key is refused, never prompted for: OpenSSL's default callback would read a
  // passphrase from the terminal.
  pem_password_cb* no_passphrase = [](char*, int, int, void*) { return -1; };
  EVP_PKEY* key = PEM_read_bio_PrivateKey(bio.get(), nullptr, no_passphrase, nullptr);
  if (key == nullptr) {
    return make_error(ErrorCode::parse, what + ": not a readable unencrypted PEM private key (" +
                                            openssl_reason() + ")");
  }
  auto owned = own(key);
  if (auto s = require_ed25519(key, what); !s)
    return s.error();
  return from_private(std::move(owned));
}

// The public half as its own object, so verification never touches the private key.
Ed25519SigningKey Ed25519SigningKey::from_private(detail::PkeyPtr key) {
  const std::string der = spki_der(key.get());
  const unsigned char* p = reinterpret_cast<const unsigned char*>(der.data());
  EVP_PKEY* public_only = d2i_PUBKEY(nullptr, &p, static_cast<long>(der.size()));
  if (public_only == nullptr)
    throw std::runtime_error("d2i_PUBKEY failed: " + openssl_reason());
  return Ed25519SigningKey(std::move(key), Ed25519PublicKey(own(public_only)));
}

Result<Ed25519SigningKey> Ed25519SigningKey::read_pem_file(const std::filesystem::path& path) {
  auto text = read_private_file(path);
  if (!text.ok())
    return text.error();
  auto key = parse_pem(*text, path.string());
  OPENSSL_cleanse(text->data(), text->size());
  return key;
}

Ed25519SigningKey Ed25519SigningKey::generate() {
  EVP_PKEY* key = EVP_PKEY_Q_keygen(nullptr, nullptr, "ED25519");
  if (key == nullptr)
    throw std::runtime_error("Ed25519 key generation failed: " + openssl_reason());
  return from_private(own(key));
}

std::string Ed25519SigningKey::private_pem() const {
  BioPtr bio(BIO_new(BIO_s_mem()));
  if (!bio ||
      PEM_write_bio_PrivateKey(bio.get(), key_.get(), nullptr, nullptr, 0, nullptr, nullptr) != 1) {
    throw std::runtime_error("PEM_write_bio_PrivateKey failed: " + openssl_reason());
  }
  return bio_text(bio.get());
}

std::string Ed25519SigningKey::sign(std::string_view message) const {
  MdCtxPtr ctx(EVP_MD_CTX_new());
  if (!ctx)
    throw std::bad_alloc();
  if (EVP_DigestSignInit(ctx.get(), nullptr, nullptr, nullptr, key_.get()) != 1)
    throw std::runtime_error("EVP_DigestSignInit failed: " + openssl_reason());
  std::string signature(64, '\0');
  std::size_t size = signature.size();
  if (EVP_DigestSign(ctx.get(), reinterpret_cast<unsigned char*>(signature.data()), &size,
                     reinterpret_cast<const unsigned char*>(message.data()), message.size()) != 1) {
    throw std::runtime_error("EVP_DigestSign failed: " + openssl_reason());
  }
  signature.resize(size);
  return signature;
}

}  // namespace reverify
