#pragma once
// Strict requests (docs/operating.md "Strict requests"; docs/security.md "Fail-closed rules"): a
// request reverify cannot read exactly is refused (400, naming what it accepts) instead of being
// answered as if the part it did not read were absent. A gate asked `?max-age=1s` must not answer
// 200 as though no max_age were given.
//
// Query strings: every endpoint declares the parameters it accepts (api/http_api.cpp); an unknown
// one (with the closest accepted name when one is within a typo of it, `max-age` -> `max_age`:
// core/text.hpp closest_match), one given twice, or a malformed percent-escape is refused. Names
// and values are percent-decoded; empty pairs ("a=1&&b=2", a trailing "&") are skipped.
//
// Headers: HTTP's header namespace is open (clients and proxies add their own), so a header
// reverify does not read passes, except one within a typo of a header it reads ("Authorisation")
// and any in reverify's own "X-Reverify-" namespace, which it reads in no request. A header whose
// single value decides something (Authorization, Host, Content-Length, Content-Type), given twice,
// is refused: which one counts would be a guess.
//
// Pure, and cheap enough for the gate's hot path: no allocation for a query of accepted names
// beyond the decoded copies.

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <boost/beast/http/fields.hpp>

#include "core/result.hpp"

namespace reverify {

struct QueryParameters {
  std::vector<std::pair<std::string, std::string>> values;  // decoded, in the order given

  // The value of `name`, when given ("" for "?name" or "?name=").
  std::optional<std::string> get(std::string_view name) const;
};

// Parses `query` (after the '?', without it) against the endpoint's `accepted` names. Errors are
// ErrorCode::invalid_argument, their message the 400's: `unknown query parameter "max-age" (did
// you mean "max_age"?); this endpoint accepts max_age, mode`.
Result<QueryParameters> parse_query(std::string_view query,
                                    const std::vector<std::string>& accepted);

// The request's headers by the rules above; an error's message is the 400's.
Status check_headers(const boost::beast::http::fields& headers);

}  // namespace reverify
