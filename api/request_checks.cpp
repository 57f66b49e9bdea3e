#include "api/request_checks.hpp"

#include <algorithm>
#include <array>
#include <cctype>

#include "core/text.hpp"
#include "core/uri.hpp"

namespace reverify {
namespace {

namespace http = boost::beast::http;

// The headers reverify reads whose single value decides something.
constexpr std::array kSingleValued{http::field::authorization, http::field::host,
                                   http::field::content_length, http::field::content_type};
// The headers whose misspelling would silently change an answer (a trigger's token), lowercase.
const std::vector<std::string> kReadHeaders{"authorization"};
constexpr std::string_view kOwnPrefix = "x-reverify-";

std::string accepted_text(const std::vector<std::string>& accepted) {
  return accepted.empty() ? "this endpoint accepts no query parameters"
                          : "this endpoint accepts " + joined(accepted);
}

std::string lowercase(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

Error refused(std::string message) {
  return make_error(ErrorCode::invalid_argument, std::move(message));
}

}  // namespace

std::optional<std::string> QueryParameters::get(std::string_view name) const {
  for (const auto& [key, value] : values) {
    if (key == name)
      return value;
  }
  return std::nullopt;
}

Result<QueryParameters> parse_query(std::string_view query,
                                    const std::vector<std::string>& accepted) {
  QueryParameters out;
  while (!query.empty()) {
    const std::size_t amp = std::min(query.find('&'), query.size());
    const std::string_view pair = query.substr(0, amp);
    query.remove_prefix(std::min(amp + 1, query.size()));
    if (pair.empty())
      continue;
    const std::size_t eq = std::min(pair.find('='), pair.size());
    auto name = percent_decode(pair.substr(0, eq));
    auto value = percent_decode(eq < pair.size() ? pair.substr(eq + 1) : std::string_view());
    if (!name || !value) {
      return refused("query: " + (!name ? name.error().message : value.error().message) + "; " +
                     accepted_text(accepted));
    }
    if (std::find(accepted.begin(), accepted.end(), *name) == accepted.end()) {
      const auto guess = closest_match(*name, accepted);
      return refused("unknown query parameter \"" + *name + "\"" +
                     (guess ? " (did you mean \"" + *guess + "\"?)" : std::string()) + "; " +
                     accepted_text(accepted));
    }
    if (out.get(*name)) {
      return refused("query parameter \"" + *name + "\" given twice: which one counts would be " +
                     "a guess; " + accepted_text(accepted));
    }
    out.values.emplace_back(std::move(name).value(), std::move(value).value());
  }
  return out;
}

Status check_headers(const http::fields& headers) {
  for (const auto field : kSingleValued) {
    if (headers.count(field) > 1) {
      return refused("header " + std::string(http::to_string(field)) +
                     " given twice: which one counts would be a guess");
    }
  }
  for (const auto& header : headers) {
    if (header.name() != http::field::unknown)
      continue;  // a header Beast knows by name is spelt as HTTP defines it
    const std::string name(header.name_string());
    if (lowercase(name).rfind(kOwnPrefix, 0) == 0) {
      return refused("unknown header " + name +
                     ": reverify reads no X-Reverify- header in a request");
    }
    if (auto guess = closest_match(lowercase(name), kReadHeaders)) {
      const auto field = http::string_to_field(*guess);
      return refused("unknown header " + name + " (did you mean " +
                     std::string(http::to_string(field)) + "?)");
    }
  }
  return Status();
}

}  // namespace reverify
