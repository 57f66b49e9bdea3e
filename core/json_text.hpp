#pragma once
// JSON text written straight into a string, byte for byte what nlohmann::json::dump(2) prints for
// the same document, for an answer served so often that building a document per request is most
// of its cost (the gate: GET /v1/gate/...). The caller writes each object's members in the order
// dump() prints them, keys sorted bytewise (tests compare the text with dump(2) of its parse).
// Strings are escaped as dump() escapes them; a byte that is not part of valid UTF-8 becomes
// U+FFFD, where dump() would throw.

#include <cstdint>
#include <string>
#include <string_view>

namespace reverify {

class JsonTextWriter {
 public:
  // Appends to `out`, which must outlive the writer.
  explicit JsonTextWriter(std::string& out) : out_(out) {}

  // A value: the document itself, or the value of the member named by the last key().
  void begin_object();
  void end_object();
  void key(std::string_view name);
  void string(std::string_view text);
  void integer(std::int64_t number);
  void boolean(bool value);
  void null();

 private:
  std::string& out_;
  int depth_ = 0;
  bool empty_object_ = false;  // the innermost open object has no member yet
};

// The length of the valid UTF-8 sequence starting at text[i] (RFC 3629: no overlong form, no
// surrogate, nothing above U+10FFFF), or 0 when it is invalid or cut short. REQUIRES: i < size.
// JSON text must be UTF-8: the strict manifest reader checks with it too.
std::size_t utf8_sequence_length(std::string_view text, std::size_t i);

// `text` as a JSON string literal (quotes included), escaped as nlohmann's dump() escapes it.
void append_json_string(std::string& out, std::string_view text);

}  // namespace reverify
