#include "attest/base64.hpp"

#include <array>
#include <cstdint>
#include <optional>

namespace reverify {
namespace {

constexpr char kStandard[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

enum class Alphabet { unknown, standard, url_safe };

// The 6-bit value of c in either alphabet, and which alphabet c belongs to (letters and digits
// belong to both).
std::optional<std::uint8_t> sextet(char c, Alphabet& seen, bool& mixed) {
  if (c >= 'A' && c <= 'Z')
    return std::uint8_t(c - 'A');
  if (c >= 'a' && c <= 'z')
    return std::uint8_t(c - 'a' + 26);
  if (c >= '0' && c <= '9')
    return std::uint8_t(c - '0' + 52);
  const bool standard = c == '+' || c == '/';
  const bool url_safe = c == '-' || c == '_';
  if (!standard && !url_safe)
    return std::nullopt;
  const Alphabet alphabet = standard ? Alphabet::standard : Alphabet::url_safe;
  if (seen != Alphabet::unknown && seen != alphabet)
    mixed = true;
  seen = alphabet;
  return std::uint8_t(c == '+' || c == '-' ? 62 : 63);
}

std::string at(std::size_t offset) {
  return "offset " + std::to_string(offset) + ": ";
}

Error invalid(std::string message) {
  return make_error(ErrorCode::parse, "not valid base64: " + std::move(message));
}

}  // namespace

std::string base64_encode(std::string_view bytes) {
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  std::size_t i = 0;
  for (; i + 3 <= bytes.size(); i += 3) {
    const std::uint32_t v = std::uint32_t(std::uint8_t(bytes[i])) << 16 |
                            std::uint32_t(std::uint8_t(bytes[i + 1])) << 8 |
                            std::uint8_t(bytes[i + 2]);
    out += kStandard[v >> 18];
    out += kStandard[(v >> 12) & 63];
    out += kStandard[(v >> 6) & 63];
    out += kStandard[v & 63];
  }
  const std::size_t rest = bytes.size() - i;
  if (rest > 0) {
    std::uint32_t v = std::uint32_t(std::uint8_t(bytes[i])) << 16;
    if (rest == 2)
      v |= std::uint32_t(std::uint8_t(bytes[i + 1])) << 8;
    out += kStandard[v >> 18];
    out += kStandard[(v >> 12) & 63];
    out += rest == 2 ? kStandard[(v >> 6) & 63] : '=';
    out += '=';
  }
  return out;
}

Result<std::string> base64_decode(std::string_view text) {
  std::size_t data_length = text.size();
  while (data_length > 0 && text[data_length - 1] == '=')
    --data_length;
  const std::size_t padding = text.size() - data_length;
  if (padding > 2)
    return invalid(at(data_length) + "more than two '=' of padding");
  if (padding > 0 && text.size() % 4 != 0) {
    return invalid("length " + std::to_string(text.size()) +
                   " with padding is not a multiple of 4 (truncated?)");
  }
  if (data_length % 4 == 1) {
    return invalid("length " + std::to_string(data_length) +
                   " leaves a single character in the last group (truncated?)");
  }
  std::string out;
  out.reserve(data_length / 4 * 3 + 2);
  Alphabet alphabet = Alphabet::unknown;
  bool mixed = false;
  std::uint32_t bits = 0;
  int bit_count = 0;
  for (std::size_t i = 0; i < data_length; ++i) {
    auto value = sextet(text[i], alphabet, mixed);
    if (!value) {
      const unsigned char c = static_cast<unsigned char>(text[i]);
      if (c == '=')
        return invalid(at(i) + "'=' (padding) before the end");
      return invalid(at(i) +
                     (c >= 0x20 && c < 0x7f ? "'" + std::string(1, char(c)) + "'"
                                            : "byte " + std::to_string(c)) +
                     " is not a base64 character");
    }
    if (mixed)
      return invalid(at(i) + "mixes the standard (+/) and URL-safe (-_) alphabets");
    bits = (bits << 6) | *value;
    bit_count += 6;
    if (bit_count >= 8) {
      bit_count -= 8;
      out += char((bits >> bit_count) & 0xff);
    }
  }
  if ((bits & ((1u << bit_count) - 1)) != 0)
    return invalid(at(data_length - 1) + "non-zero bits after the last byte (truncated?)");
  return out;
}

}  // namespace reverify
