// JsonTextWriter prints what nlohmann's dump(2) prints: indentation, separators, every escape.

#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "core/json_text.hpp"

using namespace reverify;

TEST_CASE("json text: nested objects and every kind of value, as dump(2) prints them") {
  std::string text;
  JsonTextWriter json(text);
  json.begin_object();
  json.key("a");
  json.integer(-9'000'000'000);
  json.key("b");
  json.begin_object();
  json.key("empty");
  json.begin_object();
  json.end_object();
  json.key("no");
  json.boolean(false);
  json.key("nothing");
  json.null();
  json.end_object();
  json.key("c");
  json.string("yes");
  json.key("d");
  json.boolean(true);
  json.end_object();
  const auto expected = nlohmann::json{
      {"a", -9'000'000'000},
      {"b", {{"empty", nlohmann::json::object()}, {"no", false}, {"nothing", nullptr}}},
      {"c", "yes"},
      {"d", true}};
  CHECK(text == expected.dump(2));

  std::string empty;
  JsonTextWriter(empty).begin_object();
  empty += '}';
  CHECK(empty == nlohmann::json::object().dump(2));
}

TEST_CASE("json text: strings escaped byte for byte as dump() escapes them") {
  std::string every_ascii;
  for (int c = 0; c < 0x80; ++c)
    every_ascii += char(c);
  for (const std::string& value :
       {every_ascii, std::string("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80 \xed\x9f\xbf"),
        std::string("\"quoted\" \\ back/slash")}) {
    std::string text;
    append_json_string(text, value);
    CHECK(text == nlohmann::json(value).dump());
    CHECK(nlohmann::json::parse(text) == value);
  }
}

TEST_CASE("json text: bytes that are not UTF-8 become U+FFFD instead of an exception") {
  for (const std::string& invalid : {std::string("a\xff"), std::string("\xc3"),  // cut short
                                     std::string("\xc0\xaf"),                    // overlong
                                     std::string("\xed\xa0\x80"),                // a surrogate
                                     std::string("\xf4\x90\x80\x80")}) {         // > U+10FFFF
    CAPTURE(invalid);
    CHECK_THROWS(nlohmann::json(invalid).dump());
    std::string text;
    append_json_string(text, invalid);
    const auto parsed = nlohmann::json::parse(text).get<std::string>();
    CHECK(parsed.find("\xEF\xBF\xBD") != std::string::npos);
    CHECK(parsed.find(invalid) == std::string::npos);
  }
}
