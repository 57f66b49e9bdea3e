#pragma once
// The records of a CSV document as the subsample rule reads them (docs/design.md, "The subsample
// rule"): a record ends at a line feed (LF or CRLF) outside double quotes, its line ending is not
// part of it, empty lines are no records, and the first record is the header. A record's bytes are
// what a content key hashes; its fields (RFC 4180: a quoted field may hold commas, line feeds and
// doubled quotes) are what an id column is read from.

#include <string>
#include <string_view>
#include <vector>

#include "core/result.hpp"

namespace reverify {

// Every record's bytes, in file order, the header first.
std::vector<std::string_view> csv_record_bytes(std::string_view document);

// The fields of one record, unquoted. invalid_argument for a quote that does not close or text
// after a closing quote.
Result<std::vector<std::string>> csv_fields(std::string_view record);

}  // namespace reverify
