#pragma once
// Base64 (RFC 4648) as DSSE uses it: reverify writes the standard alphabet with padding; it reads
// the standard and the URL-safe alphabet (DSSE protocol: "verifiers MUST accept either"), padded
// or not. Anything else is refused with the offset and the reason, never skipped: whitespace,
// a mix of both alphabets, misplaced or wrong padding, a length no encoding produces, and
// non-zero bits after the last byte (so one byte string has exactly one accepted spelling per
// alphabet).

#include <string>
#include <string_view>

#include "core/result.hpp"

namespace reverify {

std::string base64_encode(std::string_view bytes);

// ErrorCode::parse with a message naming the offset ("offset 12: '!' is not a base64 character").
Result<std::string> base64_decode(std::string_view text);

}  // namespace reverify
