#include "cli/scoring_flags.hpp"

#include "core/eval_columns.hpp"
#include "core/names.hpp"
#include "core/predictions.hpp"

namespace reverify::cli {

namespace fs = std::filesystem;

void add_scoring_flags(CLI::App& app, ScoringArguments& args) {
  add_enum_option(
      app, "--task", args.task,
      "evaluation.scoring.task: reverify scores every set of predictions itself from the "
      "eval set's labels (docs/job-guide.md \"Scoring spec\"); needs --labels");
  app.add_option("--labels", args.labels,
                 "the eval set's labels: a column of --eval (a CSV file with a header row), or "
                 "a file with one label per eval record (.npy, or one per line), or FILE:COLUMN "
                 "of a CSV file; files are copied into --out and hashed")
      ->type_name("COLUMN|FILE[:COLUMN]");
  app.add_option("--classes", args.classes, "multiclass: the number of classes (labels are 0..N-1)")
      ->type_name("N")
      ->check(integer_in(2, 1'000'000));
  app.add_option("--metric", args.metrics,
                 "a metric to compute (without it: the task's full set); repeatable")
      ->type_name("NAME");
  app.add_option("--segment-key", args.segment_keys,
                 "segment keys per record: a record whose key is v is in the segment NAME=v "
                 "(NAME defaults to the column's or the file's name); repeatable")
      ->type_name("[NAME=]COLUMN|FILE[:COLUMN]");
  app.add_option("--threshold", args.thresholds,
                 "binary: an operating threshold, decision = score >= X (without it: 0.5); "
                 "regression: a decision threshold whose crossings parity counts; repeatable")
      ->type_name("X")
      ->check(finite_number());
  app.add_option("--k", args.k, "ranking: the cut-off of ndcg@k and precision@k")
      ->type_name("N")
      ->check(integer_in(1, 1'000'000));
  app.add_option("--query", args.query,
                 "ranking: each record's query id, as a column of --eval or a file")
      ->type_name("COLUMN|FILE[:COLUMN]");
}

Result<ColumnSource> column_source(const std::string& text, const std::string& option,
                                   const std::optional<std::string>& eval) {
  std::error_code ec;
  ColumnSource source;
  if (fs::is_regular_file(text, ec)) {
    source.file = text;
  } else if (const auto colon = text.rfind(':');
             colon != std::string::npos && fs::is_regular_file(text.substr(0, colon), ec)) {
    source.file = text.substr(0, colon);
    source.column = text.substr(colon + 1);
  } else {
    source.column = text;
  }
  if (!source.file && (!eval || !fs::is_regular_file(*eval, ec)))
    return make_error(
        ErrorCode::invalid_argument,
        option + " " + text + ": not a file, and no --eval CSV file whose column it could be");
  if (source.column) {
    const fs::path table = source.file ? *source.file : fs::path(*eval);
    if (Status found = check_csv_column(table, *source.column); !found.ok())
      return make_error(found.error().code, option + " " + text + ": " + found.error().message);
  }
  return source;
}

// evaluation.scoring from the flags; the manifest's validation judges the combination.
Result<ScoringSpec> scoring_spec(const ScoringArguments& a, const ColumnRecorder& record) {
  if (!a.task)
    return make_error(ErrorCode::invalid_argument,
                      "--task is required with the other scoring flags (--labels, --classes, "
                      "--metric, --segment-key, --threshold, --k, --query)");
  if (!a.labels)
    return make_error(ErrorCode::invalid_argument,
                      "--labels is required with --task (a column of --eval, or a file)");
  ScoringSpec spec;
  spec.task = *a.task;
  auto labels = record(*a.labels, "--labels");
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
      return make_error(ErrorCode::invalid_argument,
                        "--metric " + name + ": not a metric of task " + to_string(*a.task) +
                            " (one of " + known + ")");
    }
    spec.metrics.push_back(*metric);
  }
  for (const std::string& item : a.segment_keys) {
    // [NAME=]COLUMN|FILE[:COLUMN]
    const auto eq = item.find('=');
    const bool named = eq != std::string::npos && is_valid_name(item.substr(0, eq));
    auto values = record(named ? item.substr(eq + 1) : item, "--segment-key");
    if (!values.ok())
      return values.error();
    spec.segments.push_back(
        SegmentKeySpec{named ? item.substr(0, eq) : default_segment_key_name(*values), *values});
  }
  spec.thresholds = a.thresholds;
  spec.k = a.k;
  if (a.query) {
    auto query = record(*a.query, "--query");
    if (!query.ok())
      return query.error();
    spec.query = *query;
  }
  return spec;
}

Result<ScoringTried> try_scoring(const ScoringSpec& spec, const std::string& manifest_location,
                                 const std::optional<FileRef>& eval_set,
                                 const fs::path& predictions_file) {
  auto predictions = read_predictions(predictions_file);
  if (!predictions.ok())
    return predictions.error();
  auto inputs =
      read_scoring_inputs(spec, EvalSources{manifest_location, eval_set}, predictions->rows);
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
  return ScoringTried{std::move(line), std::move(inputs).value(), std::move(scores).value()};
}

}  // namespace reverify::cli
