// reverify subsample KEY... --fraction F --salt S: the subsample rule (docs/design.md, "The
// subsample rule") applied to keys given on the command line, in a file (one a line), or read from
// a CSV file's records (an id column's values, or each record's content key): for each key its h
// and whether it is in the subsample. A job author in any language compares their implementation
// with this output; docs/subsample-vectors.json holds the same rule as test vectors.
#include <algorithm>
#include <iomanip>
#include <iostream>
#include <iterator>
#include <sstream>

#include <nlohmann/json.hpp>

#include "cli/command.hpp"
#include "core/csv_records.hpp"
#include "core/subsample_rule.hpp"
#include "core/uri.hpp"

namespace reverify::cli {
namespace {

constexpr const char* kSubsampleName = "subsample";

struct SubsampleArguments {
  std::vector<std::string> keys;
  std::string fraction;
  std::string salt;
  std::optional<std::string> keys_file;
  std::optional<std::string> csv;
  std::optional<std::string> key_column;
  bool json = false;
};

Result<std::string> read_input(const std::string& path) {
  if (path == "-")
    return std::string(std::istreambuf_iterator<char>(std::cin), {});
  return read_uri(path);
}

// One key a line, split at line feeds exactly (a carriage return stays part of its key); a last
// line without a line feed counts, an empty last line does not.
std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);)
    lines.push_back(line);
  return lines;
}

// The keys of a CSV file's records: the column's values, or the content key of each record.
Result<std::vector<std::string>> csv_keys(const std::string& path,
                                          const std::optional<std::string>& column) {
  auto text = read_input(path);
  if (!text.ok())
    return text.error();
  const auto records = csv_record_bytes(*text);
  if (records.empty())
    return make_error(ErrorCode::invalid_argument, path + ": no header line");
  std::vector<std::string> keys;
  std::size_t index = 0;
  if (column) {
    auto header = csv_fields(records[0]);
    if (!header.ok())
      return make_error(ErrorCode::invalid_argument, path + ": header: " + header.error().message);
    const auto found = std::find(header->begin(), header->end(), *column);
    if (found == header->end())
      return make_error(ErrorCode::invalid_argument, path + " has no column \"" + *column + "\"");
    index = static_cast<std::size_t>(found - header->begin());
  }
  for (std::size_t r = 1; r < records.size(); ++r) {
    if (!column) {
      keys.push_back(content_key(records[r]));
      continue;
    }
    auto fields = csv_fields(records[r]);
    if (!fields.ok() || fields->size() <= index) {
      return make_error(
          ErrorCode::invalid_argument,
          path + ": record " + std::to_string(r) + ": " +
              (fields.ok() ? "has no field " + std::to_string(index + 1) : fields.error().message));
    }
    keys.push_back((*fields)[index]);
  }
  return keys;
}

Result<std::vector<std::string>> gather_keys(const SubsampleArguments& args) {
  std::vector<std::string> keys = args.keys;
  if (args.keys_file) {
    auto text = read_input(*args.keys_file);
    if (!text.ok())
      return text.error();
    for (auto& line : lines_of(*text))
      keys.push_back(std::move(line));
  }
  if (args.csv) {
    auto from_csv = csv_keys(*args.csv, args.key_column);
    if (!from_csv.ok())
      return from_csv.error();
    keys.insert(keys.end(), from_csv->begin(), from_csv->end());
  }
  for (const auto& key : keys) {
    if (key.empty())
      return make_error(ErrorCode::invalid_argument, "an empty key: every record needs a key");
  }
  return keys;
}

std::string hex16(std::uint64_t h) {
  std::ostringstream text;
  text << std::hex << std::setw(16) << std::setfill('0') << h;
  return text.str();
}

int run_subsample(const SubsampleArguments& args) {
  if (args.key_column && !args.csv)
    return usage_error(kSubsampleName, "--key-column names a column of the --csv file; give --csv");
  auto fraction = parse_subsample_fraction(args.fraction);
  if (!fraction.ok())
    return usage_error(kSubsampleName, "--fraction: " + fraction.error().message);
  if (args.salt.empty())
    return usage_error(kSubsampleName, "--salt: must not be empty");
  auto keys = gather_keys(args);
  if (!keys.ok())
    return usage_error(kSubsampleName, keys.error().message);
  std::vector<std::string> members;
  nlohmann::json rows = nlohmann::json::array();
  std::ostringstream lines;
  for (const auto& key : *keys) {
    const std::uint64_t h = subsample_hash(args.salt, key);
    const bool member = in_subsample(h, *fraction);
    if (member)
      members.push_back(key);
    rows.push_back({{"key", key}, {"h", hex16(h)}, {"member", member}});
    lines << hex16(h) << (member ? "  in   " : "  out  ") << key << "\n";
  }
  // A key holding a line feed has a place in the rule but none in a keys file (one key a line).
  auto digest = subsample_keys_digest(members);
  const std::string threshold = subsample_threshold_text(*fraction);
  if (args.json) {
    std::cout << nlohmann::json{{"fraction", fraction->text},
                                {"numerator", fraction->numerator},
                                {"digits", fraction->digits},
                                {"threshold", threshold},
                                {"salt", args.salt},
                                {"keys", rows},
                                {"members", members.size()},
                                {"members_distinct",
                                 digest.ok() ? nlohmann::json(digest->distinct) : nlohmann::json()},
                                {"members_sha256",
                                 digest.ok() ? nlohmann::json(digest->sha256) : nlohmann::json()}}
                     .dump(2)
              << "\n";
    return 0;
  }
  std::cout << "fraction " << fraction->text << " = " << fraction->numerator << " / 10^"
            << fraction->digits << ", salt " << args.salt << ": a key is in the subsample iff h < "
            << threshold << " (h: the first 8 bytes of SHA-256(salt \":\" key), big-endian)\n"
            << lines.str() << members.size() << " of " << keys->size() << " keys in the subsample; "
            << (digest.ok()
                    ? "sha256 of the distinct members, sorted, one a line: " + digest->sha256
                    : "no keys file can list them: " + digest.error().message)
            << "\n";
  return 0;
}

Action define_subsample(CLI::App& app) {
  auto o = std::make_shared<SubsampleArguments>();
  app.add_option("KEY", o->keys,
                 "record keys, exactly as stored (the id column's text, or a content key)");
  app.add_option("--fraction", o->fraction,
                 "f, as REVERIFY_SUBSAMPLE_FRACTION gives it: a plain decimal in (0, 1], e.g. 0.25")
      ->type_name("F")
      ->required();
  app.add_option("--salt", o->salt, "the salt, as REVERIFY_SUBSAMPLE_SALT gives it")
      ->type_name("S")
      ->required();
  app.add_option("--keys", o->keys_file,
                 "a file of keys, one a line (split at line feeds only); - reads stdin")
      ->type_name("FILE");
  app.add_option("--csv", o->csv,
                 "keys of a CSV file's records (its first line is the header): each record's "
                 "content key, the hex SHA-256 of its bytes without the line ending, or with "
                 "--key-column the values of that column")
      ->type_name("FILE");
  app.add_option("--key-column", o->key_column, "with --csv: the id column whose values are keys")
      ->type_name("NAME");
  add_json_flag(app, o->json);
  return [o] { return run_subsample(*o); };
}

const Registrar kSubsample{{kSubsampleName,
                            "apply the subsample rule to keys (given, from a file, or a CSV "
                            "file's records): each key's hash and whether it is in the subsample",
                            define_subsample}};

}  // namespace
}  // namespace reverify::cli
