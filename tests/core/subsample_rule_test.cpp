// The subsample rule against its published test vectors (docs/subsample-vectors.json, made by
// tests/vectors/make_subsample_vectors.py with Python's exact integers): the same file the job
// kit's tests and the `reverify subsample` test read.
#include <doctest/doctest.h>

#include <algorithm>

#include <nlohmann/json.hpp>

#include "core/csv_records.hpp"
#include "core/subsample_rule.hpp"
#include "tests/support/files.hpp"

namespace {

using nlohmann::json;

const json& vectors() {
  static const json v = json::parse(
      reverify::test::read_file(reverify::test::source_dir() / "docs" / "subsample-vectors.json"));
  return v;
}

reverify::SubsampleFraction fraction(const std::string& text) {
  auto f = reverify::parse_subsample_fraction(text);
  REQUIRE_MESSAGE(f.ok(), text);
  return *f;
}

std::uint64_t from_hex(const std::string& hex) {
  return std::stoull(hex, nullptr, 16);
}

}  // namespace

TEST_CASE("subsample vectors: h and membership of every (salt, key, fraction)") {
  const json& cases = vectors().at("membership");
  REQUIRE(cases.size() > 100);
  int members = 0;
  for (const auto& c : cases) {
    const std::string salt = c.at("salt"), key = c.at("key");
    CAPTURE(salt);
    CAPTURE(key);
    CAPTURE(c.at("fraction").get<std::string>());
    CHECK(reverify::subsample_hash(salt, key) == from_hex(c.at("h")));
    const bool member = reverify::in_subsample(salt, key, fraction(c.at("fraction")));
    CHECK(member == c.at("member").get<bool>());
    members += member ? 1 : 0;
  }
  CHECK(members > 0);
  CHECK(members < static_cast<int>(cases.size()));
}

TEST_CASE("subsample vectors: exact integer comparison at the boundary, where a double errs") {
  for (const auto& c : vectors().at("boundary")) {
    CAPTURE(c.dump());
    CHECK(reverify::in_subsample(from_hex(c.at("h")), fraction(c.at("fraction"))) ==
          c.at("member").get<bool>());
  }
}

TEST_CASE("subsample vectors: fraction texts, valid and not, with numerator, digits, threshold") {
  for (const auto& c : vectors().at("fractions")) {
    const std::string text = c.at("text");
    CAPTURE(text);
    auto f = reverify::parse_subsample_fraction(text);
    REQUIRE(f.ok() == c.at("valid").get<bool>());
    if (!f.ok()) {
      CHECK(f.error().message.find("subsample fraction") != std::string::npos);
      continue;
    }
    CHECK(f->text == c.at("canonical").get<std::string>());
    CHECK(f->numerator == c.at("numerator").get<std::uint64_t>());
    CHECK(f->digits == c.at("digits").get<int>());
    CHECK(reverify::subsample_threshold_text(*f) == c.at("threshold").get<std::string>());
  }
}

TEST_CASE("subsample vectors: content keys of CSV records and the keys digest") {
  for (const auto& r : vectors().at("csv_content_keys").at("records"))
    CHECK(reverify::content_key(r.at("bytes").get<std::string>()) == r.at("key"));
  const json& d = vectors().at("keys_digest");
  auto digest = reverify::subsample_keys_digest(d.at("keys").get<std::vector<std::string>>());
  REQUIRE(digest.ok());
  CHECK(digest->sha256 == d.at("sha256").get<std::string>());
  CHECK(digest->distinct == d.at("distinct").get<std::size_t>());
}

TEST_CASE("a manifest's fraction is read as its shortest decimal text") {
  auto f = reverify::subsample_fraction_of(0.3);
  REQUIRE(f.ok());
  CHECK(f->text == "0.3");
  CHECK(f->numerator == 3);
  CHECK(f->digits == 1);
  CHECK(reverify::subsample_fraction_of(1.0)->text == "1");
  CHECK(reverify::subsample_fraction_of(0.1 + 0.2)->text == "0.30000000000000004");
  CHECK(!reverify::subsample_fraction_of(0).ok());
  CHECK(!reverify::subsample_fraction_of(1.5).ok());
  auto tiny = reverify::subsample_fraction_of(1e-20);
  REQUIRE(!tiny.ok());
  CHECK(tiny.error().message.find("too many digits") != std::string::npos);
}

TEST_CASE("the keys digest refuses an empty key and a key holding a line feed") {
  auto empty = reverify::subsample_keys_digest({"a", ""});
  REQUIRE(!empty.ok());
  CHECK(empty.error().message == "an empty subsample key");
  auto newline = reverify::subsample_keys_digest({"a\nb"});
  REQUIRE(!newline.ok());
  CHECK(newline.error().message.find("line feed") != std::string::npos);
}

TEST_CASE("CSV records as the rule reads them: quotes, CRLF, empty lines; fields unquoted") {
  const std::string document = vectors().at("csv_content_keys").at("document").get<std::string>();
  const auto records = reverify::csv_record_bytes(document);
  const json& expected = vectors().at("csv_content_keys").at("records");
  REQUIRE(records.size() == expected.size() + 1);  // the header first
  CHECK(records[0] == "x,y,label");
  for (std::size_t i = 0; i < expected.size(); ++i)
    CHECK(records[i + 1] == expected[i].at("bytes").get<std::string>());
  auto fields = reverify::csv_fields(records[3]);
  REQUIRE(fields.ok());
  CHECK(*fields == std::vector<std::string>{"two\nlines", "4", "c"});
  CHECK(*reverify::csv_fields("\"a \"\"b\"\"\",,") == std::vector<std::string>{"a \"b\"", "", ""});
  CHECK(!reverify::csv_fields("\"open").ok());
  CHECK(!reverify::csv_fields("\"a\"b,c").ok());
}

TEST_CASE("a job's keys file: canonical bytes, its reported hash, every key against the rule") {
  const auto f = fraction("0.5");
  std::vector<std::string> in, out;
  for (int i = 0; in.size() < 3 || out.size() < 1; ++i) {
    const std::string key = "k" + std::to_string(i);
    (reverify::in_subsample("s", key, f) ? in : out).push_back(key);
  }
  std::sort(in.begin(), in.end());
  const auto file_of = [](const std::vector<std::string>& keys) {
    std::string text;
    for (const auto& k : keys)
      text += k + "\n";
    return text;
  };
  const std::string good = file_of(in);
  const std::string digest = reverify::subsample_keys_digest(in)->sha256;
  auto checked = reverify::check_keys_file(good, digest, "s", f);
  REQUIRE(checked.ok());
  CHECK(checked->keys == in.size());
  CHECK(checked->outside == 0);

  auto with_outsider = in;
  with_outsider.push_back(out[0]);
  std::sort(with_outsider.begin(), with_outsider.end());
  const std::string bad = file_of(with_outsider);
  auto outside = reverify::check_keys_file(
      bad, reverify::subsample_keys_digest(with_outsider)->sha256, "s", f);
  REQUIRE(outside.ok());
  CHECK(outside->outside == 1);
  CHECK(outside->first_outside == out[0]);

  CHECK(!reverify::check_keys_file(good, std::string(64, '0'), "s", f).ok());
  std::vector<std::string> reversed(in.rbegin(), in.rend());
  const std::string unsorted = file_of(reversed);
  auto refused = reverify::check_keys_file(unsorted, reverify::content_key(unsorted), "s", f);
  REQUIRE(!refused.ok());
  CHECK(refused.error().message.find("not distinct and sorted") != std::string::npos);
}
