#include "runners/job_outputs.hpp"

#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>

namespace reverify {
namespace {

namespace fs = std::filesystem;

constexpr std::uintmax_t kMaxResultBytes = 16 * 1024 * 1024;

// The symbolic links the job left in its out folder (relative path -> target), which are never
// copied: a named output that is one is refused with these words.
using OutLinks = std::map<fs::path, fs::path>;

Error invalid(const std::string& path, const std::string& expected, const nlohmann::json& got) {
  std::string shown = got.dump();
  if (shown.size() > 80)
    shown = shown.substr(0, 77) + "...";
  return make_error(ErrorCode::job,
                    "result.json: " + path + ": expected " + expected + ", got " + shown);
}

Result<double> finite_number(const nlohmann::json& value, const std::string& path) {
  if (!value.is_number() || !std::isfinite(value.get<double>()))
    return invalid(path, "a finite number", value);
  return value.get<double>();
}

// A file named by result.json: a relative path that stays inside out_dir and is a regular file.
Result<std::filesystem::path> output_file(const std::filesystem::path& out_dir,
                                          const nlohmann::json& value, const std::string& path,
                                          const OutLinks& links) {
  if (!value.is_string() || value.get<std::string>().empty())
    return invalid(path, "a file name", value);
  const std::filesystem::path name(value.get<std::string>());
  if (name.is_absolute())
    return invalid(path, "a path relative to $REVERIFY_OUT", value);
  std::error_code ec;
  const auto root = std::filesystem::weakly_canonical(out_dir, ec);
  const auto file = std::filesystem::weakly_canonical(out_dir / name, ec);
  const auto rel = file.lexically_relative(root);
  if (ec || rel.empty() || *rel.begin() == "..") {
    return invalid(path, "a file inside $REVERIFY_OUT", value);
  }
  if (!std::filesystem::is_regular_file(file, ec)) {
    if (const auto link = links.find(name.lexically_normal()); link != links.end()) {
      return make_error(ErrorCode::job, "result.json: " + path + ": names " + name.string() +
                                            ", a symbolic link (to " + link->second.string() +
                                            "); the contract takes a regular file the job "
                                            "wrote in $REVERIFY_OUT");
    }
    return make_error(ErrorCode::job, "result.json: " + path + ": names " + name.string() +
                                          ", which the job did not write to $REVERIFY_OUT");
  }
  return file;
}

// Where a document that is not JSON goes wrong, and why when it is NaN or Infinity (Python's
// json.dump writes them; JSON has neither).
class FirstSyntaxError : public nlohmann::json_sax<nlohmann::json> {
 public:
  std::size_t byte = 0;
  bool null() override { return true; }
  bool boolean(bool) override { return true; }
  bool number_integer(number_integer_t) override { return true; }
  bool number_unsigned(number_unsigned_t) override { return true; }
  bool number_float(number_float_t, const string_t&) override { return true; }
  bool string(string_t&) override { return true; }
  bool binary(binary_t&) override { return true; }
  bool start_object(std::size_t) override { return true; }
  bool key(string_t&) override { return true; }
  bool end_object() override { return true; }
  bool start_array(std::size_t) override { return true; }
  bool end_array() override { return true; }
  bool parse_error(std::size_t position, const std::string&,
                   const nlohmann::detail::exception&) override {
    byte = position;
    return false;
  }
};

std::string syntax_error(const std::string& text) {
  FirstSyntaxError sax;
  nlohmann::json::sax_parse(text, &sax);
  std::size_t at = sax.byte > 0 ? sax.byte - 1 : 0;  // 0-based, where the parser gave up
  std::string why;
  for (const char* literal : {"NaN", "Infinity"}) {
    const std::size_t from = at > 16 ? at - 16 : 0;
    if (const auto found = text.find(literal, from); found != std::string::npos && found <= at) {
      at = found;
      why = std::string(": ") + literal +
            " is not JSON; a metric the job could not compute is a failed run (exit non-zero), "
            "or is left out";
      break;
    }
  }
  std::string near = text.substr(at > 24 ? at - 24 : 0, 40);
  for (char& c : near) {
    if (c < 0x20 || c == 0x7f)
      c = ' ';
  }
  return "result.json: not valid JSON at byte " + std::to_string(at + 1) + ", near \"" + near +
         "\"" + why;
}

// Every entry of the out folder, not followed: links recorded; a special file, or an entry the
// verifier may not read, is the job's error (it cannot be collected).
Result<OutLinks> survey_out_folder(const fs::path& out_dir) {
  OutLinks links;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(out_dir, ec);
       !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    const auto rel = it->path().lexically_relative(out_dir);
    const auto status = it->symlink_status(ec);
    if (fs::is_symlink(status)) {
      links[rel] = fs::read_symlink(it->path(), ec);
      continue;
    }
    if (!fs::is_regular_file(status) && !fs::is_directory(status)) {
      return make_error(ErrorCode::job, "$REVERIFY_OUT/" + rel.string() +
                                            ": not a regular file or a folder (a FIFO, socket or "
                                            "device); the contract takes files");
    }
    const int mode = fs::is_directory(status) ? R_OK | X_OK : R_OK;
    if (::access(it->path().c_str(), mode) != 0) {
      return make_error(ErrorCode::job, "$REVERIFY_OUT/" + rel.string() +
                                            ": the job left it unreadable to the verifier (" +
                                            std::strerror(errno) + ")");
    }
  }
  if (ec)
    return make_error(ErrorCode::io, out_dir.string() + ": cannot list: " + ec.message());
  return links;
}

Status read_segments(const nlohmann::json& doc, JobOutputs& outputs) {
  if (!doc.contains("segments"))
    return {};
  const auto& segments = doc["segments"];
  if (!segments.is_object())
    return invalid("segments", "an object of segment -> {metric: number}", segments);
  for (const auto& [segment, metrics] : segments.items()) {
    const std::string where = "segments[\"" + segment + "\"]";
    if (!metrics.is_object())
      return invalid(where, "an object of metric -> number", metrics);
    for (const auto& [metric, value] : metrics.items()) {
      auto number = finite_number(value, where + "." + metric);
      if (!number)
        return number.error();
      outputs.segments[segment][metric] = *number;
    }
  }
  return {};
}

Result<std::int64_t> example_count(const nlohmann::json& value, const std::string& path) {
  if (!value.is_number_integer() || value.get<std::int64_t>() < 1)
    return invalid(path, "a positive integer (the examples the metric counts over)", value);
  return value.get<std::int64_t>();
}

// "segment_examples": {"digit=8": 39}: each segment's k (optional, beside "segments").
Status read_segment_examples(const nlohmann::json& doc, JobOutputs& outputs) {
  if (!doc.contains("segment_examples"))
    return {};
  const auto& counts = doc["segment_examples"];
  if (!counts.is_object())
    return invalid("segment_examples", "an object of segment -> integer", counts);
  for (const auto& [segment, value] : counts.items()) {
    auto k = example_count(value, "segment_examples[\"" + segment + "\"]");
    if (!k)
      return k.error();
    outputs.segment_examples[segment] = *k;
  }
  return {};
}

Status read_steps(const nlohmann::json& doc, JobOutputs& outputs) {
  if (!doc.contains("steps"))
    return {};
  const auto& steps = doc["steps"];
  if (!steps.is_object() || !steps.contains("metric") || !steps["metric"].is_string() ||
      !steps.contains("values") || !steps["values"].is_array()) {
    return invalid("steps", "{\"metric\": string, \"values\": [numbers]}", steps);
  }
  outputs.steps_metric = steps["metric"].get<std::string>();
  for (std::size_t i = 0; i < steps["values"].size(); ++i) {
    auto number = finite_number(steps["values"][i], "steps.values[" + std::to_string(i) + "]");
    if (!number)
      return number.error();
    outputs.steps_values.push_back(*number);
  }
  return {};
}

// "subsample": {"records": n, "keys": k, "candidates": N, "keys_sha256": "...", "keys_file":
// "subsample-keys.txt", "key": "...", "fraction": "0.25", "salt": "..."} (optional): what a job in
// subsample mode trained on; its keys file must be one of its outputs.
Status read_subsample_report(const std::filesystem::path& out_dir, const nlohmann::json& doc,
                             const OutLinks& links, JobOutputs& outputs) {
  if (!doc.contains("subsample"))
    return {};
  const auto& report = doc["subsample"];
  if (!report.is_object())
    return invalid("subsample", "an object (docs/design.md, \"The subsample rule\")", report);
  const auto count = [&report](const char* key) -> Result<std::int64_t> {
    const auto value = report.value(key, nlohmann::json());
    if (!value.is_number_integer() || value.get<std::int64_t>() < 0)
      return invalid(std::string("subsample.") + key, "a non-negative integer", value);
    return value.get<std::int64_t>();
  };
  SubsampleDrawn drawn;
  auto records = count("records");
  auto keys_count = count("keys");
  if (!records)
    return records.error();
  if (!keys_count)
    return keys_count.error();
  drawn.records = *records;
  drawn.keys = *keys_count;
  if (report.contains("candidates")) {
    auto candidates = count("candidates");
    if (!candidates)
      return candidates.error();
    drawn.candidates = *candidates;
  }
  const auto& digest = report.value("keys_sha256", nlohmann::json());
  const bool hex =
      digest.is_string() && digest.get<std::string>().size() == 64 &&
      digest.get<std::string>().find_first_not_of("0123456789abcdef") == std::string::npos;
  if (!hex)
    return invalid("subsample.keys_sha256", "64 lowercase hex characters (sha256)", digest);
  drawn.keys_sha256 = digest.get<std::string>();
  auto keys = output_file(out_dir, report.value("keys_file", nlohmann::json("subsample-keys.txt")),
                          "subsample.keys_file", links);
  if (!keys)
    return keys.error();
  outputs.subsample = drawn;
  outputs.subsample_keys = *keys;
  if (report.contains("key") && report["key"].is_string())
    outputs.subsample_key = report["key"].get<std::string>();
  return {};
}

// read_job_outputs() of a collected folder whose links were not copied.
Result<JobOutputs> read_outputs(const std::filesystem::path& out_dir, const OutLinks& links) {
  const auto path = out_dir / "result.json";
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) {
    if (const auto link = links.find("result.json"); link != links.end()) {
      return make_error(ErrorCode::job, "result.json: a symbolic link (to " +
                                            link->second.string() +
                                            "); the contract takes a regular file the job wrote "
                                            "in $REVERIFY_OUT");
    }
    return make_error(
        ErrorCode::job,
        "the job wrote no result.json to $REVERIFY_OUT (the rebuild contract requires it)");
  }
  if (const auto size = std::filesystem::file_size(path, ec); !ec && size > kMaxResultBytes) {
    return make_error(ErrorCode::job, "result.json: " + std::to_string(size) +
                                          " bytes, over the contract's limit of " +
                                          std::to_string(kMaxResultBytes) + " bytes");
  }
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  nlohmann::json doc = nlohmann::json::parse(text.str(), nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded())
    return make_error(ErrorCode::job, syntax_error(text.str()));
  if (!doc.is_object())
    return invalid("(document)", "an object", doc);

  JobOutputs outputs;
  outputs.out_dir = out_dir;
  if (!doc.contains("primary") || !doc["primary"].is_object()) {
    return invalid("primary", "{\"name\": string, \"value\": number}",
                   doc.value("primary", nlohmann::json()));
  }
  const auto& primary = doc["primary"];
  if (!primary.contains("name") || !primary["name"].is_string() ||
      primary["name"].get<std::string>().empty()) {
    return invalid("primary.name", "a metric name", primary.value("name", nlohmann::json()));
  }
  outputs.primary_name = primary["name"].get<std::string>();
  auto value = finite_number(primary.value("value", nlohmann::json()), "primary.value");
  if (!value)
    return value.error();
  outputs.primary_value = *value;
  if (primary.contains("higher_is_better")) {
    if (!primary["higher_is_better"].is_boolean())
      return invalid("primary.higher_is_better", "true or false", primary["higher_is_better"]);
    outputs.primary_higher_is_better = primary["higher_is_better"].get<bool>();
  }
  if (primary.contains("examples")) {
    auto k = example_count(primary["examples"], "primary.examples");
    if (!k)
      return k.error();
    outputs.primary_examples = *k;
  }
  if (auto s = read_segments(doc, outputs); !s)
    return s.error();
  if (auto s = read_segment_examples(doc, outputs); !s)
    return s.error();
  if (auto s = read_steps(doc, outputs); !s)
    return s.error();
  if (auto s = read_subsample_report(out_dir, doc, links, outputs); !s)
    return s.error();
  for (const char* key : {"predictions", "weights"}) {
    if (!doc.contains(key) || doc[key].is_null())
      continue;
    auto file = output_file(out_dir, doc[key], key, links);
    if (!file)
      return file.error();
    (std::string(key) == "predictions" ? outputs.predictions : outputs.weights) = *file;
  }
  outputs.result = std::move(doc);
  return outputs;
}

}  // namespace

Result<JobOutputs> read_job_outputs(const std::filesystem::path& out_dir) {
  return read_outputs(out_dir, {});
}

Result<JobOutputs> collect_outputs(const std::filesystem::path& out_dir,
                                   const std::filesystem::path& dest) {
  std::error_code ec;
  if (!std::filesystem::is_directory(out_dir, ec)) {
    return make_error(ErrorCode::job, out_dir.string() + ": the job's out folder is missing");
  }
  auto links = survey_out_folder(out_dir);
  if (!links)
    return links.error();
  std::filesystem::create_directories(dest, ec);
  if (!ec) {
    std::filesystem::copy(out_dir, dest,
                          std::filesystem::copy_options::recursive |
                              std::filesystem::copy_options::skip_symlinks |
                              std::filesystem::copy_options::overwrite_existing,
                          ec);
  }
  if (ec)
    return make_error(ErrorCode::io,
                      "copying " + out_dir.string() + " to " + dest.string() + ": " + ec.message());
  return read_outputs(dest, *links);
}

}  // namespace reverify
