// The tensor hash of a safetensors file and its strict header validation.
#include <doctest/doctest.h>

#include "core/hashing.hpp"
#include "tests/core/hashing_test_support.hpp"

using reverify::test::safetensors_bytes;
using reverify::test::TempDir;
using reverify::test::write_file;

namespace {

std::string hash_line(const std::string& name, const std::string& dtype, const std::string& dims,
                      const std::string& bytes) {
  return name + "\t" + dtype + "\t" + dims + "\t" + reverify::sha256_hex(bytes) + "\n";
}

reverify::Result<reverify::TensorHash> hash_bytes(const TempDir& dir, const std::string& bytes,
                                                  unsigned threads = 0) {
  static int counter = 0;
  const auto path = dir.path / ("file-" + std::to_string(counter++) + ".safetensors");
  write_file(path, bytes);
  return reverify::hash_safetensors(path, reverify::HashOptions{threads, {}, {}});
}

// Tensor "a": F32 [2] (8 bytes "AAAAAAAA"), tensor "b": U8 [2,2] (4 bytes "bbbb").
const std::string kDataAB = "AAAAAAAAbbbb";
const std::string kHeaderAB =
    R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"b":{"dtype":"U8","shape":[2,2],"data_offsets":[8,12]}})";

}  // namespace

TEST_CASE("tensor hash: one line per tensor sorted by name, each tensor's bytes hashed alone") {
  TempDir dir;
  auto hash = hash_bytes(dir, safetensors_bytes(kHeaderAB, kDataAB));
  REQUIRE(hash.ok());
  const std::string lines =
      hash_line("a", "F32", "2", "AAAAAAAA") + hash_line("b", "U8", "2,2", "bbbb");
  CHECK(hash->root == reverify::sha256_hex(lines));
  CHECK(hash->total_bytes == 12);
  REQUIRE(hash->tensors.size() == 2);
  CHECK(hash->tensors[1].name == "b");
  CHECK(hash->tensors[1].dtype == "U8");
  CHECK(hash->tensors[1].shape == std::vector<std::uint64_t>{2, 2});
  CHECK(hash->tensors[1].sha256 == reverify::sha256_hex("bbbb"));
}

TEST_CASE("tensor hash ignores header order, data layout, padding and __metadata__") {
  TempDir dir;
  const std::string reference = hash_bytes(dir, safetensors_bytes(kHeaderAB, kDataAB)).value().root;
  // Same tensors, "b" stored first, keys in another order, metadata, and space padding to 8 bytes.
  std::string header =
      R"({"__metadata__":{"format":"pt"},"b":{"shape":[2,2],"data_offsets":[0,4],"dtype":"U8"},)"
      R"("a":{"data_offsets":[4,12],"dtype":"F32","shape":[2]}})";
  header.append((8 - header.size() % 8) % 8 + 8, ' ');
  CHECK(hash_bytes(dir, safetensors_bytes(header, "bbbbAAAAAAAA"), 1).value().root == reference);
  // A change of one byte, of a dtype or of a shape changes the root.
  CHECK(hash_bytes(dir, safetensors_bytes(kHeaderAB, "AAAAAAAAbbbc")).value().root != reference);
  std::string as_i32 = kHeaderAB;
  as_i32.replace(as_i32.find("F32"), 3, "I32");
  CHECK(hash_bytes(dir, safetensors_bytes(as_i32, kDataAB)).value().root != reference);
  std::string as_4x1 = kHeaderAB;
  as_4x1.replace(as_4x1.find("[2,2]"), 5, "[4,1]");
  CHECK(hash_bytes(dir, safetensors_bytes(as_4x1, kDataAB)).value().root != reference);
}

TEST_CASE("scalars, empty tensors, sub-byte dtypes and an empty file hash") {
  TempDir dir;
  const std::string header =
      R"({"s":{"dtype":"F64","shape":[],"data_offsets":[0,8]},"e":{"dtype":"BF16","shape":[0,3],"data_offsets":[8,8]},)"
      R"("f4":{"dtype":"F4","shape":[2,3],"data_offsets":[8,11]},"f6":{"dtype":"F6_E2M3","shape":[4],"data_offsets":[11,14]}})";
  auto hash = hash_bytes(dir, safetensors_bytes(header, "12345678xyzuvw"));
  REQUIRE(hash.ok());
  const std::string lines =
      hash_line("e", "BF16", "0,3", "") + hash_line("f4", "F4", "2,3", "xyz") +
      hash_line("f6", "F6_E2M3", "4", "uvw") + hash_line("s", "F64", "", "12345678");
  CHECK(hash->root == reverify::sha256_hex(lines));
  auto empty = hash_bytes(dir, safetensors_bytes("{}", ""));
  REQUIRE(empty.ok());
  CHECK(empty->tensors.empty());
  CHECK(empty->root == reverify::sha256_hex(""));
}

TEST_CASE("each header violation is its own error naming the tensor and the rule") {
  struct Case {
    const char* rule;
    std::string file;
    std::string expected;
  };
  const std::string data = kDataAB;
  auto with = [&](const std::string& header) { return safetensors_bytes(header, data); };
  auto one = [&](const std::string& tensor) { return with(R"({"t":)" + tensor + "}"); };
  const Case cases[] = {
      {"short file", "abc", "3 bytes, too short for the 8-byte safetensors header length"},
      {"header too large", safetensors_bytes("{}", "", 100'000'001),
       "exceeds the limit of 100000000"},
      {"header past end", safetensors_bytes("{}", "", 50), "runs past the end of the 10-byte file"},
      {"not JSON", with("{\"a\":"), "not valid JSON"},
      {"invalid UTF-8", with("{\"\xff\":{}}"), "not valid JSON"},
      {"not an object", with("[1,2]"), "must be a JSON object, got array"},
      {"duplicate tensor",
       with(
           R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"a":{"dtype":"U8","shape":[4],"data_offsets":[8,12]}})"),
       "key \"a\" appears twice"},
      {"duplicate field", one(R"({"dtype":"U8","dtype":"U8","shape":[12],"data_offsets":[0,12]})"),
       "key \"dtype\" appears twice"},
      {"metadata not object",
       with(R"({"__metadata__":[],"t":{"dtype":"U8","shape":[12],"data_offsets":[0,12]}})"),
       "__metadata__ must be an object"},
      {"metadata value not string",
       with(
           R"({"__metadata__":{"epoch":3},"t":{"dtype":"U8","shape":[12],"data_offsets":[0,12]}})"),
       "__metadata__.epoch must be a string, got number"},
      {"tab in name", with(R"({"a\tb":{"dtype":"U8","shape":[12],"data_offsets":[0,12]}})"),
       "holds a tab, newline or NUL"},
      {"newline in name", with(R"({"a\nb":{"dtype":"U8","shape":[12],"data_offsets":[0,12]}})"),
       "holds a tab, newline or NUL"},
      {"NUL in name", with(R"({"a\u0000b":{"dtype":"U8","shape":[12],"data_offsets":[0,12]}})"),
       "holds a tab, newline or NUL"},
      {"tensor not object", one("[1]"), "tensor \"t\": must be an object, got array"},
      {"unknown field", one(R"({"dtype":"U8","shape":[12],"data_offsets":[0,12],"strides":[1]})"),
       "unknown key \"strides\""},
      {"missing dtype", one(R"({"shape":[12],"data_offsets":[0,12]})"),
       "tensor \"t\": dtype must be a string"},
      {"unknown dtype", one(R"({"dtype":"F128","shape":[12],"data_offsets":[0,12]})"),
       "unknown dtype \"F128\""},
      {"missing shape", one(R"({"dtype":"U8","data_offsets":[0,12]})"), "shape must be an array"},
      {"negative dim", one(R"({"dtype":"U8","shape":[-12],"data_offsets":[0,12]})"),
       "shape must hold non-negative integers, got -12"},
      {"fractional dim", one(R"({"dtype":"U8","shape":[1.5],"data_offsets":[0,12]})"),
       "shape must hold non-negative integers, got 1.5"},
      {"shape overflow",
       one(R"({"dtype":"U8","shape":[4294967296,4294967296],"data_offsets":[0,12]})"),
       "overflows 64 bits"},
      {"bytes overflow",
       one(R"({"dtype":"F64","shape":[4611686018427387904],"data_offsets":[0,12]})"),
       "overflows 64 bits"},
      {"sub-byte remainder", one(R"({"dtype":"F4","shape":[3],"data_offsets":[0,12]})"),
       "3 elements of F4 (4 bits each) do not fill whole bytes"},
      {"offsets not a pair", one(R"({"dtype":"U8","shape":[12],"data_offsets":[0]})"),
       "data_offsets must be an array [begin, end]"},
      {"offset negative", one(R"({"dtype":"U8","shape":[12],"data_offsets":[-1,12]})"),
       "data_offsets must hold non-negative integers"},
      {"offsets reversed", one(R"({"dtype":"U8","shape":[0],"data_offsets":[12,0]})"),
       "data_offsets [12, 0) end before they begin"},
      {"offsets out of range", one(R"({"dtype":"U8","shape":[13],"data_offsets":[0,13]})"),
       "run past the data section (12 bytes)"},
      {"size mismatch", one(R"({"dtype":"F32","shape":[2],"data_offsets":[0,12]})"),
       "shape [2] x F32 is 8 bytes but data_offsets [0, 12) span 12"},
      {"gap",
       with(
           R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"b":{"dtype":"U8","shape":[2],"data_offsets":[10,12]}})"),
       "data section bytes [8, 10) belong to no tensor (gap before tensor \"b\")"},
      {"gap at start", one(R"({"dtype":"U8","shape":[11],"data_offsets":[1,12]})"),
       "bytes [0, 1) belong to no tensor"},
      {"overlap",
       with(
           R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"b":{"dtype":"U8","shape":[6],"data_offsets":[6,12]}})"),
       "tensor \"b\": data_offsets [6, 12) overlap tensor \"a\" [0, 8)"},
      {"trailing bytes", one(R"({"dtype":"U8","shape":[10],"data_offsets":[0,10]})"),
       "data section bytes [10, 12) after the last tensor belong to no tensor"},
  };
  TempDir dir;
  for (const Case& c : cases) {
    CAPTURE(c.rule);
    auto hash = hash_bytes(dir, c.file);
    REQUIRE_FALSE(hash.ok());
    CHECK(hash.error().code == reverify::ErrorCode::parse);
    CHECK(hash.error().message.find(c.expected) != std::string::npos);
    CHECK(hash.error().message.find(".safetensors") != std::string::npos);  // names the file
  }
}

TEST_CASE("every dtype of the official list is accepted with its width") {
  const std::pair<const char*, int> dtypes[] = {
      {"BOOL", 8}, {"F4", 4},      {"F6_E2M3", 6}, {"F6_E3M2", 6}, {"U8", 8},
      {"I8", 8},   {"F8_E5M2", 8}, {"F8_E4M3", 8}, {"F8_E8M0", 8}, {"I16", 16},
      {"U16", 16}, {"F16", 16},    {"BF16", 16},   {"I32", 32},    {"U32", 32},
      {"F32", 32}, {"C64", 64},    {"F64", 64},    {"I64", 64},    {"U64", 64}};
  TempDir dir;
  for (const auto& [dtype, bits] : dtypes) {
    CAPTURE(dtype);
    const int bytes = 8 * bits / 8;  // 8 elements always fill whole bytes
    const std::string header = std::string(R"({"t":{"dtype":")") + dtype +
                               R"(","shape":[8],"data_offsets":[0,)" + std::to_string(bytes) +
                               "]}}";
    CHECK(hash_bytes(dir, safetensors_bytes(header, std::string(bytes, 'z'))).ok());
  }
}
