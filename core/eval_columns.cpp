#include "core/eval_columns.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <map>
#include <span>

#include "core/hashing.hpp"
#include "core/manifest_path.hpp"
#include "core/predictions.hpp"
#include "core/uri.hpp"

namespace reverify {
namespace {

// An eval set of a million records with many feature columns is a few hundred MB of CSV.
constexpr std::size_t kMaxSourceBytes = std::size_t{4} << 30;
constexpr std::size_t kColumnsNamedInErrors = 8;

// A number as a key value: integers without a fraction ("3", not "3.0"), others in the shortest
// text that reads back as the same double.
std::string number_text(double value) {
  char buffer[32];
  if (value == std::floor(value) && std::abs(value) < 0x1p63)
    return std::to_string(static_cast<long long>(value));
  const auto [end, ec] = std::to_chars(buffer, buffer + sizeof buffer, value);
  return std::string(buffer, ec == std::errc() ? end : buffer);
}

// The non-blank lines of a text, each with its 1-based line number.
struct Line {
  std::string_view text;
  std::size_t number;
};

std::vector<Line> non_blank_lines(std::string_view text) {
  std::vector<Line> lines;
  std::size_t number = 0;
  while (!text.empty()) {
    const std::size_t newline = std::min(text.find('\n'), text.size());
    ++number;
    if (const auto line = trim_cell(text.substr(0, newline)); !line.empty())
      lines.push_back({text.substr(0, newline), number});
    text = newline < text.size() ? text.substr(newline + 1) : std::string_view{};
  }
  return lines;
}

std::vector<std::string_view> split_fields(std::string_view line) {
  std::vector<std::string_view> fields;
  for (;;) {
    const std::size_t comma = std::min(line.find(','), line.size());
    fields.push_back(trim_cell(line.substr(0, comma)));
    if (comma == line.size())
      return fields;
    line = line.substr(comma + 1);
  }
}

enum class Values { numbers, texts };

// "<file> has no column "x" (its columns: id, label, ... 66 in all)"
std::string no_column(const std::string& file, const std::vector<std::string_view>& header,
                      const std::string& column) {
  std::string names;
  for (std::size_t i = 0; i < std::min(header.size(), kColumnsNamedInErrors); ++i)
    names += (i ? ", " : "") + std::string(header[i]);
  if (header.size() > kColumnsNamedInErrors)
    names += ", ... " + std::to_string(header.size()) + " in all";
  return file + " has no column \"" + column + "\" (its columns: " + names + ")";
}

// One value per record, as read: texts (with their lines) from a text file, numbers from .npy.
struct ColumnValues {
  std::string file;                     // its path or URL
  std::vector<std::string_view> texts;  // views into the loaded file
  std::vector<std::size_t> lines;
  std::optional<std::vector<double>> numbers;

  std::size_t size() const { return numbers ? numbers->size() : texts.size(); }
  // "<file>: line 17 (record 15)", or "<file>: record 15" in an .npy file
  std::string where(std::size_t record) const {
    return file + ": " +
           (numbers ? "record " + std::to_string(record)
                    : "line " + std::to_string(lines[record]) + " (record " +
                          std::to_string(record) + ")");
  }
};

// A loaded source file: its bytes, read once per read_scoring_inputs call, hash-checked.
struct SourceFile {
  std::string name;  // the path or URL, for messages
  std::string bytes;

  bool is_npy() const { return bytes.size() >= 6 && bytes.compare(0, 6, "\x93NUMPY") == 0; }
};

class Reader {
 public:
  Reader(const EvalSources& sources, std::size_t rows) : sources_(sources), rows_(rows) {}

  // The column `source` names, checked to hold one value per record. `field` is its manifest
  // path ("evaluation.scoring.labels").
  Result<ColumnValues> column(const RecordColumn& source, const std::string& field, Values kind) {
    auto file = source.uri ? load(*source.uri, source.sha256, field, "the frozen file changed")
                           : eval_set(field);
    if (!file.ok())
      return file.error();
    const SourceFile& f = **file;
    Result<ColumnValues> values = [&]() -> Result<ColumnValues> {
      if (f.is_npy()) {
        if (source.column)
          return error(ErrorCode::invalid_argument, json_path_key(field, "column"),
                       f.name + " is an .npy array, which has no named columns");
        return npy_column(f, field);
      }
      if (source.column)
        return csv_column(f, *source.column, field);
      return line_column(f, kind);
    }();
    if (!values.ok())
      return values.error();
    values->file = f.name;
    if (values->size() != rows_)
      return error(ErrorCode::invalid_argument, field,
                   f.name + ": " + std::to_string(values->size()) +
                       " values, the predictions have " + std::to_string(rows_) +
                       " rows (one per eval record, in eval-set order)");
    return values;
  }

 private:
  static Error error(ErrorCode code, const std::string& field, const std::string& message) {
    return make_error(code, field + ": " + message);
  }

  Result<const SourceFile*> load(const std::string& uri, const std::optional<std::string>& sha256,
                                 const std::string& field, const std::string& meaning) {
    const std::string resolved = resolve_uri(sources_.manifest_location, uri);
    if (auto it = files_.find(resolved); it != files_.end())
      return &it->second;
    auto bytes = read_uri(resolved, FetchLimits{kMaxSourceBytes, 600});
    if (!bytes.ok())
      return error(bytes.error().code, field, bytes.error().message);
    const std::string name = local_path(resolved).ok() ? local_path(resolved)->string() : resolved;
    if (sha256) {
      const std::string actual = sha256_hex(*bytes);
      if (actual != *sha256)
        return error(ErrorCode::input_drift, json_path_key(field, "sha256"),
                     name + " hashes to " + actual + ", the manifest records " + *sha256 + " (" +
                         meaning + ")");
    }
    auto [it, fresh] = files_.emplace(resolved, SourceFile{name, std::move(bytes).value()});
    return &it->second;
  }

  Result<const SourceFile*> eval_set(const std::string& field) {
    if (!sources_.eval_set)
      return error(ErrorCode::invalid_argument, json_path_key(field, "column"),
                   "names a column of the eval set, but evaluation.set is missing");
    const auto path = local_path(resolve_uri(sources_.manifest_location, sources_.eval_set->uri));
    if (std::error_code ec; path.ok() && std::filesystem::is_directory(*path, ec))
      return error(ErrorCode::invalid_argument, json_path_key(field, "column"),
                   "names a column of the eval set, but the eval set " + path->string() +
                       " is a folder (a column needs a CSV file)");
    return load(sources_.eval_set->uri, sources_.eval_set->sha256, "evaluation.set",
                "the eval set changed since release");
  }

  Result<ColumnValues> npy_column(const SourceFile& f, const std::string& field) {
    auto array =
        parse_npy_numbers(std::as_bytes(std::span(f.bytes.data(), f.bytes.size())), f.name);
    if (!array.ok())
      return error(array.error().code, field, array.error().message);
    if (array->cols != 1)
      return error(ErrorCode::invalid_argument, field,
                   f.name + ": " + std::to_string(array->rows) + " x " +
                       std::to_string(array->cols) +
                       " array, expected one value per record (1-D, or 2-D with one column)");
    ColumnValues values;
    values.numbers = std::move(array->values);
    return values;
  }

  Result<ColumnValues> csv_column(const SourceFile& f, const std::string& column,
                                  const std::string& field) {
    const std::vector<Line> lines = non_blank_lines(f.bytes);
    if (lines.empty())
      return error(ErrorCode::parse, field, f.name + ": empty (expected a header row)");
    if (auto quote = f.bytes.find('"'); quote != std::string::npos) {
      const auto line = std::count(f.bytes.begin(), f.bytes.begin() + quote, '\n') + 1;
      return error(ErrorCode::parse, field,
                   f.name + ": line " + std::to_string(line) +
                       ": quoted fields are not supported (a CSV field holds '\"')");
    }
    const auto header = split_fields(lines.front().text);
    const auto at = std::find(header.begin(), header.end(), column);
    if (at == header.end())
      return error(ErrorCode::invalid_argument, json_path_key(field, "column"),
                   no_column(f.name, header, column));
    const std::size_t index = static_cast<std::size_t>(at - header.begin());
    ColumnValues values;
    values.texts.reserve(lines.size() - 1);
    values.lines.reserve(lines.size() - 1);
    for (std::size_t i = 1; i < lines.size(); ++i) {
      const std::string_view line = lines[i].text;
      const auto fields = static_cast<std::size_t>(std::count(line.begin(), line.end(), ',')) + 1;
      if (fields != header.size())
        return error(ErrorCode::parse, field,
                     f.name + ": line " + std::to_string(lines[i].number) + ": " +
                         std::to_string(fields) + " fields, the header has " +
                         std::to_string(header.size()));
      std::string_view rest = line;
      for (std::size_t skip = 0; skip < index; ++skip)
        rest = rest.substr(rest.find(',') + 1);
      values.texts.push_back(trim_cell(rest.substr(0, std::min(rest.find(','), rest.size()))));
      values.lines.push_back(lines[i].number);
    }
    return values;
  }

  // One value per line; a numeric column's first line is a header when it is not a number.
  static Result<ColumnValues> line_column(const SourceFile& f, Values kind) {
    ColumnValues values;
    const std::vector<Line> lines = non_blank_lines(f.bytes);
    const bool header = kind == Values::numbers && !lines.empty() &&
                        !parse_cell_number(trim_cell(lines.front().text));
    for (std::size_t i = header ? 1 : 0; i < lines.size(); ++i) {
      values.texts.push_back(trim_cell(lines[i].text));
      values.lines.push_back(lines[i].number);
    }
    return values;
  }

  const EvalSources& sources_;
  std::size_t rows_;
  std::map<std::string, SourceFile> files_;  // by resolved URI
};

Result<std::vector<double>> read_labels(Reader& reader, const ScoringSpec& spec,
                                        const ScoringInputs& in) {
  const std::string field = "evaluation.scoring.labels";
  Result<ColumnValues> values = reader.column(spec.labels, field, Values::numbers);
  if (!values.ok())
    return values.error();
  std::vector<double> labels;
  labels.reserve(values->size());
  for (std::size_t i = 0; i < values->size(); ++i) {
    double label = 0;
    if (values->numbers) {
      label = (*values->numbers)[i];
    } else {
      auto number = parse_cell_number(values->texts[i]);
      if (!number)
        return make_error(ErrorCode::invalid_argument, field + ": " + values->where(i) + ": \"" +
                                                           std::string(values->texts[i]) +
                                                           "\" is not a number");
      label = *number;
    }
    if (auto violation = label_violation(in.task, in.classes, label))
      return make_error(ErrorCode::invalid_argument, field + ": " + values->where(i) + ": " +
                                                         (std::isfinite(label) ? number_text(label)
                                                          : std::isnan(label)  ? "NaN"
                                                                               : "Inf") +
                                                         " is not a label: must be " + *violation);
    labels.push_back(label);
  }
  return labels;
}

// Segment keys and query ids: texts, or numbers written as text.
Result<RecordKeys> read_keys(Reader& reader, const RecordColumn& source, const std::string& field) {
  Result<ColumnValues> values = reader.column(source, field, Values::texts);
  if (!values.ok())
    return values.error();
  std::vector<std::string> texts;
  texts.reserve(values->size());
  for (std::size_t i = 0; i < values->size(); ++i) {
    if (values->numbers) {
      const double number = (*values->numbers)[i];
      if (!std::isfinite(number))
        return make_error(ErrorCode::invalid_argument, field + ": " + values->where(i) + ": " +
                                                           (std::isnan(number) ? "NaN" : "Inf") +
                                                           " is not a key (must be finite)");
      texts.push_back(number_text(number));
    } else if (values->texts[i].empty()) {
      return make_error(ErrorCode::invalid_argument,
                        field + ": " + values->where(i) + ": empty value (every record needs one)");
    } else {
      texts.emplace_back(values->texts[i]);
    }
  }
  return intern_keys(texts);
}

}  // namespace

Result<ScoringInputs> read_scoring_inputs(const ScoringSpec& spec, const EvalSources& sources,
                                          std::size_t rows) {
  ScoringInputs in = scoring_settings(spec);
  Reader reader(sources, rows);
  auto labels = read_labels(reader, spec, in);
  if (!labels.ok())
    return labels.error();
  in.labels = std::move(labels).value();
  for (std::size_t i = 0; i < spec.segments.size(); ++i) {
    const SegmentKeySpec& key = spec.segments[i];
    auto keys = read_keys(reader, key.values, json_path_index("evaluation.scoring.segments", i));
    if (!keys.ok())
      return keys.error();
    in.segment_keys.push_back(SegmentKey{key.name, std::move(keys).value()});
  }
  if (spec.query) {
    auto queries = read_keys(reader, *spec.query, "evaluation.scoring.query");
    if (!queries.ok())
      return queries.error();
    in.queries = std::move(queries).value();
  }
  return in;
}

Status check_csv_column(const std::filesystem::path& path, const std::string& column) {
  auto bytes = read_uri(path.string(), FetchLimits{kMaxSourceBytes, 600});
  if (!bytes.ok())
    return bytes.error();
  const auto lines = non_blank_lines(*bytes);
  if (lines.empty())
    return make_error(ErrorCode::parse, path.string() + ": empty (expected a header row)");
  const auto header = split_fields(lines.front().text);
  if (std::find(header.begin(), header.end(), column) == header.end())
    return make_error(ErrorCode::invalid_argument, no_column(path.string(), header, column));
  return Status::success();
}

}  // namespace reverify
