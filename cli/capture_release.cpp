#include "cli/capture_release.hpp"

#include <fstream>
#include <system_error>

#include "core/hashing.hpp"
#include "core/names.hpp"
#include "core/predictions.hpp"
#include "core/scoring_inputs.hpp"
#include "policies/scoring.hpp"

namespace reverify::cli {

namespace fs = std::filesystem;

namespace {

// COLUMN (of --eval), FILE, or FILE:COLUMN (a CSV file with a header row) for `option`: a file
// is copied into the release folder and recorded by name and sha256.
Result<RecordColumn> record_column(const std::string& text, const std::string& option,
                                   const CaptureArguments& args, const fs::path& out_dir,
                                   ReleaseNames& names) {
  std::error_code ec;
  std::optional<fs::path> file;
  std::optional<std::string> column;
  if (fs::is_regular_file(text, ec)) {
    file = text;
  } else if (const auto colon = text.rfind(':');
             colon != std::string::npos && fs::is_regular_file(text.substr(0, colon), ec)) {
    file = text.substr(0, colon);
    column = text.substr(colon + 1);
  } else {
    column = text;
  }
  const fs::path table = file ? *file : fs::path(args.eval.value_or(""));
  if (!file && (!args.eval || !fs::is_regular_file(*args.eval, ec)))
    return make_error(
        ErrorCode::invalid_argument,
        option + " " + text + ": not a file, and no --eval CSV file whose column it could be");
  if (column) {
    if (Status found = check_csv_column(table, *column); !found.ok())
      return make_error(found.error().code, option + " " + text + ": " + found.error().message);
  }
  if (!file)
    return RecordColumn{std::nullopt, std::nullopt, column};
  if (Status claimed = names.claim(*file, option); !claimed.ok())
    return claimed.error();
  auto ref = release_file(*file, out_dir);
  if (!ref.ok())
    return make_error(ref.error().code, option + " " + text + ": " + ref.error().message);
  return RecordColumn{ref->uri, ref->sha256, column};
}

}  // namespace

Result<nlohmann::json> read_json_file(const fs::path& path) {
  std::ifstream in(path);
  if (!in)
    return make_error(ErrorCode::io, path.string() + ": cannot open");
  auto doc = nlohmann::json::parse(in, nullptr, false);
  if (doc.is_discarded())
    return make_error(ErrorCode::parse, path.string() + ": not valid JSON");
  return doc;
}

std::string file_uri(const fs::path& path) {
  return "file://" + fs::absolute(path).lexically_normal().string();
}

Result<FileRef> release_file(const fs::path& source, const fs::path& out_dir,
                             const fs::path& under) {
  std::error_code ec;
  fs::create_directories(out_dir / under, ec);
  fs::copy_file(source, out_dir / under / source.filename(), fs::copy_options::overwrite_existing,
                ec);
  if (ec)
    return make_error(ErrorCode::io, source.string() + ": cannot copy: " + ec.message());
  auto digest = sha256_file(source);
  if (!digest.ok())
    return digest.error();
  return FileRef{(under / source.filename()).generic_string(), *digest};
}

Status ReleaseNames::claim(const fs::path& source, const std::string& option) {
  std::error_code ec;
  const fs::path real = fs::weakly_canonical(source, ec);
  auto [it, fresh] = by_name_.emplace(source.filename().string(), real);
  if (!fresh && it->second != real)
    return make_error(ErrorCode::invalid_argument,
                      option + " " + source.string() + ": the release folder already holds " +
                          it->second.string() + " under the name " + it->first);
  return Status::success();
}

Result<ScoringSpec> scoring_spec(const CaptureArguments& args, const fs::path& out_dir,
                                 ReleaseNames& names) {
  const ScoringArguments& a = args.scoring;
  if (!a.task)
    return make_error(ErrorCode::invalid_argument,
                      "--task is required with the other scoring flags (--labels, --classes, "
                      "--metric, --segment-key, --threshold, --k, --query)");
  if (!a.labels)
    return make_error(ErrorCode::invalid_argument,
                      "--labels is required with --task (a column of --eval, or a file)");
  ScoringSpec spec;
  spec.task = *enum_from_string<ScoringTask>(*a.task);  // checked by one_of()
  auto labels = record_column(*a.labels, "--labels", args, out_dir, names);
  if (!labels.ok())
    return labels.error();
  spec.labels = *labels;
  spec.classes = a.classes;
  for (const std::string& name : a.metrics) {
    const auto metric = enum_from_string<ScoringMetric>(name);
    if (!metric || !metric_applies(*metric, spec.task)) {
      std::string known;
      for (ScoringMetric m : task_metrics(spec.task))
        known += (known.empty() ? "" : ", ") + std::string(to_string(m));
      return make_error(
          ErrorCode::invalid_argument,
          "--metric " + name + ": not a metric of task " + *a.task + " (one of " + known + ")");
    }
    spec.metrics.push_back(*metric);
  }
  for (const std::string& item : a.segment_keys) {
    // [NAME=]COLUMN|FILE[:COLUMN]
    const auto eq = item.find('=');
    const bool named = eq != std::string::npos && is_valid_name(item.substr(0, eq));
    auto values =
        record_column(named ? item.substr(eq + 1) : item, "--segment-key", args, out_dir, names);
    if (!values.ok())
      return values.error();
    spec.segments.push_back(
        SegmentKeySpec{named ? item.substr(0, eq) : default_segment_key_name(*values), *values});
  }
  spec.thresholds = a.thresholds;
  spec.k = a.k;
  if (a.query) {
    auto query = record_column(*a.query, "--query", args, out_dir, names);
    if (!query.ok())
      return query.error();
    spec.query = *query;
  }
  return spec;
}

Result<ScoringTried> try_scoring(const Manifest& m, const CaptureArguments& args,
                                 const fs::path& out_dir, const fs::path& predictions_file) {
  auto predictions = read_predictions(predictions_file);
  if (!predictions.ok())
    return predictions.error();
  std::optional<FileRef> eval_set;
  if (args.eval && m.evaluation.set)
    eval_set = FileRef{fs::absolute(*args.eval).string(), m.evaluation.set->sha256};
  const EvalSources sources{(out_dir / "manifest.json").string(), eval_set};
  auto inputs = read_scoring_inputs(*m.evaluation.scoring, sources, predictions->rows);
  if (!inputs.ok())
    return inputs.error();
  auto scores = scoring::score(*inputs, *predictions);
  if (!scores.ok())
    return make_error(scores.error().code,
                      predictions_file.string() + ": " + scores.error().message);
  std::string line = std::string("scoring: ") + to_string(inputs->task) + ", " +
                     std::to_string(inputs->records()) + " records, " +
                     std::to_string(scores->segments.size()) + " segments";
  const scoring::MetricScore& first = scores->overall.metrics.front();
  line += "; the release's " + first.name + " " +
          (first.judged() ? std::to_string(*first.value) : "not judged: " + first.not_judged);
  if (first.count)
    line += " (" + std::to_string(static_cast<long long>(first.count->numerator)) + "/" +
            std::to_string(static_cast<long long>(first.count->denominator)) + ")";
  return ScoringTried{std::move(line), std::move(inputs).value()};
}

}  // namespace reverify::cli
