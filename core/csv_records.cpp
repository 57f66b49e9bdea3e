#include "core/csv_records.hpp"

namespace reverify {

std::vector<std::string_view> csv_record_bytes(std::string_view document) {
  std::vector<std::string_view> records;
  const auto add = [&records](std::string_view record) {
    if (!record.empty() && record.back() == '\r')
      record.remove_suffix(1);
    if (!record.empty())
      records.push_back(record);
  };
  bool quoted = false;
  std::size_t start = 0;
  for (std::size_t i = 0; i < document.size(); ++i) {
    if (document[i] == '"') {
      quoted = !quoted;
    } else if (document[i] == '\n' && !quoted) {
      add(document.substr(start, i - start));
      start = i + 1;
    }
  }
  add(document.substr(start));
  return records;
}

Result<std::vector<std::string>> csv_fields(std::string_view record) {
  std::vector<std::string> fields(1);
  std::size_t i = 0;
  while (i <= record.size()) {
    std::string& field = fields.back();
    if (i < record.size() && record[i] == '"' && field.empty()) {
      // A quoted field: up to the quote that is not doubled.
      for (++i;; ++i) {
        if (i >= record.size())
          return make_error(ErrorCode::invalid_argument, "a quoted field does not close");
        if (record[i] == '"' && i + 1 < record.size() && record[i + 1] == '"') {
          field += '"';
          ++i;
        } else if (record[i] == '"') {
          ++i;
          break;
        } else {
          field += record[i];
        }
      }
      if (i < record.size() && record[i] != ',')
        return make_error(ErrorCode::invalid_argument, "text after a closing quote");
    }
    for (; i < record.size() && record[i] != ','; ++i)
      field += record[i];
    if (i >= record.size())
      break;
    fields.emplace_back();
    ++i;
  }
  return fields;
}

}  // namespace reverify
