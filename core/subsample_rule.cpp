#include "core/subsample_rule.hpp"

#include <algorithm>
#include <charconv>

#include "core/hashing.hpp"
#include "core/sha256.hpp"

namespace reverify {
namespace {

using u128 = unsigned __int128;

constexpr std::string_view kFractionForm =
    "a decimal number in (0, 1] written as digits, optionally a point and more digits (\"0.25\", "
    "\"1\"), at most 18 digits after the point";

Error fraction_error(std::string_view text, std::string_view why) {
  return make_error(ErrorCode::invalid_argument, "subsample fraction \"" + std::string(text) +
                                                     "\": " + std::string(why) + " (expected " +
                                                     std::string(kFractionForm) + ")");
}

bool all_digits(std::string_view text) {
  return !text.empty() &&
         std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
}

u128 pow10(int digits) {
  u128 value = 1;
  for (int i = 0; i < digits; ++i)
    value *= 10;
  return value;
}

std::string decimal_text(u128 value) {
  if (value == 0)
    return "0";
  std::string text;
  for (; value > 0; value /= 10)
    text.insert(text.begin(), static_cast<char>('0' + static_cast<int>(value % 10)));
  return text;
}

}  // namespace

Result<SubsampleFraction> parse_subsample_fraction(std::string_view text) {
  const auto point = text.find('.');
  const std::string_view whole = text.substr(0, point);
  std::string_view part =
      point == std::string_view::npos ? std::string_view() : text.substr(point + 1);
  if (!all_digits(whole) || (point != std::string_view::npos && !all_digits(part)))
    return fraction_error(text, "not a plain decimal");
  while (!part.empty() && part.back() == '0')
    part.remove_suffix(1);
  if (part.size() > static_cast<std::size_t>(kMaxSubsampleFractionDigits))
    return fraction_error(text, "too many digits after the point");
  std::string_view integer = whole;
  while (integer.size() > 1 && integer.front() == '0')
    integer.remove_prefix(1);
  if (integer != "0" && integer != "1")
    return fraction_error(text, "greater than 1");
  SubsampleFraction f;
  f.digits = static_cast<int>(part.size());
  u128 numerator = integer == "1" ? pow10(f.digits) : 0;
  u128 digits_value = 0;
  for (char c : part)
    digits_value = digits_value * 10 + static_cast<unsigned>(c - '0');
  numerator += digits_value;
  if (numerator == 0)
    return fraction_error(text, "zero");
  if (numerator > pow10(f.digits))
    return fraction_error(text, "greater than 1");
  f.numerator = static_cast<std::uint64_t>(numerator);
  f.text = std::string(integer) + (part.empty() ? "" : "." + std::string(part));
  return f;
}

Result<SubsampleFraction> subsample_fraction_of(double fraction) {
  if (!(fraction > 0 && fraction <= 1))
    return fraction_error(std::to_string(fraction), "not in (0, 1]");
  char text[400];
  const auto written = std::to_chars(text, text + sizeof text, fraction, std::chars_format::fixed);
  return parse_subsample_fraction(
      std::string_view(text, static_cast<std::size_t>(written.ptr - text)));
}

std::uint64_t subsample_hash(std::string_view salt, std::string_view key) {
  Sha256 sha;
  sha.update(salt);
  sha.update(":");
  sha.update(key);
  const std::string hex = sha.final_hex();
  std::uint64_t h = 0;
  std::from_chars(hex.data(), hex.data() + 16, h, 16);
  return h;
}

bool in_subsample(std::uint64_t h, const SubsampleFraction& fraction) {
  return static_cast<u128>(h) * pow10(fraction.digits) <
         (static_cast<u128>(fraction.numerator) << 64);
}

bool in_subsample(std::string_view salt, std::string_view key, const SubsampleFraction& fraction) {
  return in_subsample(subsample_hash(salt, key), fraction);
}

std::string subsample_threshold_text(const SubsampleFraction& fraction) {
  const u128 scale = pow10(fraction.digits);
  return decimal_text(((static_cast<u128>(fraction.numerator) << 64) + scale - 1) / scale);
}

std::string content_key(std::string_view record_bytes) {
  return sha256_hex(record_bytes);
}

Result<SubsampleKeysDigest> subsample_keys_digest(std::vector<std::string> keys) {
  std::sort(keys.begin(), keys.end());
  keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
  Sha256 sha;
  for (const auto& key : keys) {
    if (key.empty())
      return make_error(ErrorCode::invalid_argument, "an empty subsample key");
    if (key.find('\n') != std::string::npos) {
      return make_error(ErrorCode::invalid_argument,
                        "subsample key \"" + key.substr(0, key.find('\n')) +
                            "\\n...\" holds a line feed (a key is one line of the keys file)");
    }
    sha.update(key);
    sha.update("\n");
  }
  return SubsampleKeysDigest{sha.final_hex(), keys.size()};
}

Result<KeysFileCheck> check_keys_file(std::string_view text, std::string_view keys_sha256,
                                      std::string_view salt, const SubsampleFraction& fraction) {
  if (sha256_hex(text) != keys_sha256) {
    return make_error(ErrorCode::invalid_argument,
                      "the keys file does not hash to the reported keys_sha256");
  }
  std::vector<std::string> keys;
  for (std::size_t start = 0; start < text.size();) {
    const auto end = text.find('\n', start);
    if (end == std::string_view::npos)
      return make_error(ErrorCode::invalid_argument, "the keys file's last line has no line feed");
    keys.emplace_back(text.substr(start, end - start));
    start = end + 1;
  }
  auto digest = subsample_keys_digest(keys);
  if (!digest.ok())
    return make_error(ErrorCode::invalid_argument, "the keys file: " + digest.error().message);
  if (digest->sha256 != keys_sha256) {
    return make_error(ErrorCode::invalid_argument,
                      "the keys file's keys are not distinct and sorted bytewise, one a line");
  }
  KeysFileCheck check;
  check.keys = keys.size();
  for (const auto& key : keys) {
    if (!in_subsample(salt, key, fraction) && check.outside++ == 0)
      check.first_outside = key;
  }
  return check;
}

}  // namespace reverify
