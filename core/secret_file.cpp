#include "core/secret_file.hpp"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

namespace reverify {
namespace {

bool is_token_char(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' ||
         c == '.' || c == '_' || c == '~' || c == '+' || c == '/' || c == '=';
}

// What is wrong with the secret's characters, or "" when nothing is.
std::string bad_characters(const std::string& secret, SecretForm form) {
  for (std::size_t i = 0; i < secret.size(); ++i) {
    const auto c = static_cast<unsigned char>(secret[i]);
    const bool fits = form == SecretForm::bearer_token ? is_token_char(static_cast<char>(c))
                                                       : (c >= 0x20 && c != 0x7F);
    if (!fits) {
      // Its position only: an error message must not carry any of the secret.
      return "byte " + std::to_string(i) + " is not allowed" +
             (form == SecretForm::bearer_token
                  ? ": a bearer token holds only A-Z a-z 0-9 - . _ ~ + / and trailing = "
                    "(e.g. `openssl rand -hex 32`)"
                  : ": a secret is one line of printable characters");
    }
  }
  if (form == SecretForm::bearer_token) {
    const auto padding = secret.find('=');
    if (padding != std::string::npos && secret.find_first_not_of('=', padding) != std::string::npos)
      return "'=' may only end a bearer token";
  }
  return {};
}

}  // namespace

Result<std::string> read_secret_file(const std::filesystem::path& path, const std::string& yaml_key,
                                     SecretForm form) {
  const std::string where = yaml_key + ": \"" + path.string() + "\"";
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  if (ec || !std::filesystem::exists(status))
    return make_error(ErrorCode::not_found, where + " does not exist");
  if (std::filesystem::is_directory(status)) {
    return make_error(ErrorCode::invalid_argument,
                      where + " is a directory; name the file that holds the secret");
  }
  if (!std::filesystem::is_regular_file(status))
    return make_error(ErrorCode::invalid_argument, where + " is not a regular file");
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return make_error(ErrorCode::io, where + ": cannot read: " + std::strerror(errno));
  std::ostringstream content;
  content << in.rdbuf();
  std::string secret = content.str();
  const char* space = " \t\r\n";
  const auto first = secret.find_first_not_of(space);
  secret = first == std::string::npos
               ? std::string()
               : secret.substr(first, secret.find_last_not_of(space) - first + 1);
  if (secret.empty())
    return make_error(ErrorCode::invalid_argument, where + " is empty");
  const std::size_t min = form == SecretForm::bearer_token ? kMinApiTokenBytes : kMinSecretBytes;
  if (secret.size() < min) {
    return make_error(
        ErrorCode::invalid_argument,
        where + " holds " + std::to_string(secret.size()) + " bytes; a secret needs at least " +
            std::to_string(min) +
            (form == SecretForm::bearer_token ? " (e.g. `openssl rand -hex 32`)" : ""));
  }
  if (form == SecretForm::bearer_token && secret.size() > kMaxApiTokenBytes) {
    return make_error(ErrorCode::invalid_argument, where + " holds " +
                                                       std::to_string(secret.size()) +
                                                       " bytes; a bearer token may have at most " +
                                                       std::to_string(kMaxApiTokenBytes));
  }
  if (auto bad = bad_characters(secret, form); !bad.empty())
    return make_error(ErrorCode::invalid_argument, where + ": " + bad);
  return secret;
}

}  // namespace reverify
