#include "core/json_text.hpp"

#include <array>
#include <charconv>

namespace reverify {

namespace {

constexpr int kIndent = 2;  // dump(2)

}  // namespace

std::size_t utf8_sequence_length(std::string_view text, std::size_t i) {
  const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(text[k]); };
  const unsigned char b0 = byte(i);
  if (b0 < 0x80)
    return 1;
  std::size_t length;
  unsigned char low = 0x80, high = 0xBF;  // allowed range of the second byte
  if (b0 >= 0xC2 && b0 <= 0xDF) {
    length = 2;
  } else if (b0 >= 0xE0 && b0 <= 0xEF) {
    length = 3;
    if (b0 == 0xE0)
      low = 0xA0;  // overlong
    if (b0 == 0xED)
      high = 0x9F;  // UTF-16 surrogates
  } else if (b0 >= 0xF0 && b0 <= 0xF4) {
    length = 4;
    if (b0 == 0xF0)
      low = 0x90;  // overlong
    if (b0 == 0xF4)
      high = 0x8F;  // above U+10FFFF
  } else {
    return 0;
  }
  if (i + length > text.size())
    return 0;
  if (byte(i + 1) < low || byte(i + 1) > high)
    return 0;
  for (std::size_t k = 2; k < length; ++k) {
    if (byte(i + k) < 0x80 || byte(i + k) > 0xBF)
      return 0;
  }
  return length;
}

void append_json_string(std::string& out, std::string_view text) {
  static constexpr char kHex[] = "0123456789abcdef";
  // Printable ASCII other than '"' and '\\' is copied as it is: most strings are only that, and
  // one append of a run, found with one table look-up a byte, costs a fraction of one append per
  // byte (the gate's body, docs/benchmarks.md "Where the time goes").
  static constexpr auto kPlain = [] {
    std::array<bool, 256> plain{};
    for (unsigned c = 0x20; c < 0x80; ++c)
      plain[c] = c != '"' && c != '\\';
    return plain;
  }();
  out += '"';
  while (!text.empty()) {
    std::size_t run = 0;
    while (run < text.size() && kPlain[static_cast<unsigned char>(text[run])])
      ++run;
    out.append(text.data(), run);
    text.remove_prefix(run);
    if (text.empty())
      break;
    const auto c = static_cast<unsigned char>(text.front());
    std::size_t taken = 1;
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\b':
        out += "\\b";
        break;
      case '\f':
        out += "\\f";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (c < 0x20) {
          const char escape[] = {'\\', 'u', '0', '0', kHex[c >> 4], kHex[c & 0xF]};
          out.append(escape, sizeof escape);
        } else if (const auto length = utf8_sequence_length(text, 0); length > 0) {
          out.append(text.data(), length);
          taken = length;
        } else {
          out += "\xEF\xBF\xBD";  // U+FFFD REPLACEMENT CHARACTER
        }
    }
    text.remove_prefix(taken);
  }
  out += '"';
}

void JsonTextWriter::begin_object() {
  out_ += '{';
  ++depth_;
  empty_object_ = true;
}

void JsonTextWriter::end_object() {
  --depth_;
  if (!empty_object_) {
    out_ += '\n';
    out_.append(std::size_t(depth_ * kIndent), ' ');
  }
  out_ += '}';
  empty_object_ = false;
}

void JsonTextWriter::key(std::string_view name) {
  out_ += empty_object_ ? "\n" : ",\n";
  out_.append(std::size_t(depth_ * kIndent), ' ');
  append_json_string(out_, name);
  out_ += ": ";
  empty_object_ = false;
}

void JsonTextWriter::string(std::string_view text) {
  append_json_string(out_, text);
}

void JsonTextWriter::integer(std::int64_t number) {
  char digits[24];
  const auto end = std::to_chars(digits, digits + sizeof digits, number).ptr;
  out_.append(digits, end);
}

void JsonTextWriter::boolean(bool value) {
  out_ += value ? "true" : "false";
}

void JsonTextWriter::null() {
  out_ += "null";
}

}  // namespace reverify
