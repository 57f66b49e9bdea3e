#include <doctest/doctest.h>

#include "attest/base64.hpp"

using namespace reverify;

namespace {
std::string decode_error(std::string_view text) {
  auto decoded = base64_decode(text);
  REQUIRE_FALSE(decoded.ok());
  return decoded.error().message;
}
}  // namespace

TEST_CASE("RFC 4648 test vectors encode and decode") {
  const std::pair<const char*, const char*> vectors[] = {{"", ""},
                                                         {"f", "Zg=="},
                                                         {"fo", "Zm8="},
                                                         {"foo", "Zm9v"},
                                                         {"foob", "Zm9vYg=="},
                                                         {"fooba", "Zm9vYmE="},
                                                         {"foobar", "Zm9vYmFy"}};
  for (auto [plain, encoded] : vectors) {
    CAPTURE(plain);
    CHECK(base64_encode(plain) == encoded);
    CHECK(*base64_decode(encoded) == plain);
  }
}

TEST_CASE("every byte value round-trips, at every length modulo 3") {
  std::string bytes;
  for (int i = 0; i < 256; ++i)
    bytes.push_back(static_cast<char>(i));
  for (std::size_t n : {0u, 1u, 2u, 3u, 254u, 255u, 256u}) {
    auto encoded = base64_encode(bytes.substr(0, n));
    CHECK(encoded.size() % 4 == 0);
    CHECK(*base64_decode(encoded) == bytes.substr(0, n));
  }
}

TEST_CASE("the URL-safe alphabet and unpadded text are accepted (DSSE: verifiers accept either)") {
  const std::string bytes = "\xfb\xff\xbf\xfe";  // standard "+/+/" territory
  const std::string standard = base64_encode(bytes);
  CHECK(standard == "+/+//g==");
  CHECK(*base64_decode("-_-__g==") == bytes);
  CHECK(*base64_decode("-_-__g") == bytes);
  CHECK(*base64_decode("+/+//g") == bytes);
}

TEST_CASE("malformed base64 is refused with the offset and the reason") {
  CHECK(decode_error("Zm9v!mFy").find("offset 4: '!' is not a base64 character") !=
        std::string::npos);
  CHECK(decode_error("Zm9v\nYmF").find("offset 4: byte 10") != std::string::npos);
  CHECK(decode_error("+/-_").find("mixes the standard") != std::string::npos);
  CHECK(decode_error("Zm9vY").find("single character in the last group (truncated?)") !=
        std::string::npos);
  CHECK(decode_error("Zm9vYg=").find("not a multiple of 4 (truncated?)") != std::string::npos);
  CHECK(decode_error("Zg===").find("more than two '='") != std::string::npos);
  CHECK(decode_error("Zg=v").find("'=' (padding) before the end") != std::string::npos);
  // "Zh==" decodes to 'f' only if the 4 bits after it are dropped: one spelling per byte string.
  CHECK(decode_error("Zh==").find("non-zero bits after the last byte") != std::string::npos);
}
