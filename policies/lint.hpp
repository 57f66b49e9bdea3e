#pragma once
// Readiness lint: scores a valid manifest against the silent ways a build stops being
// reproducible (docs/design.md, "reverify lint"). Pure: no I/O.
//
// Rules and weights (the weights sum to 100; the score is 100 minus the weights of the rules that
// produced a finding, so a manifest with no findings scores 100):
//   image-digest      15  error    environment.image missing (a tag never validates at all)
//   lockfile-hash     10  error    environment.lockfile missing, or without sha256
//   data-snapshot     15  error    no data.snapshot, or a table snapshot without an id
//   split-hash-rule   10  warning  no data.split, no salt, or a rule naming no hash function
//   determinism       15  error    cudnn_benchmark true, deterministic_algorithms false or tf32
//                                  true; for torch also cudnn_deterministic false (without
//                                  deterministic_algorithms), and a GPU run (accelerator.count >
//                                  0) without CUBLAS_WORKSPACE_CONFIG :4096:8 or :16:8
//                         warning  determinism flags not recorded; for torch also no intra-op
//                                  thread count (environment.threads.intra_op or OMP_NUM_THREADS)
//                                  or no data-loader worker count
//                         (one finding at most: the error lists every problem found)
//   machine-emitted   10  warning  no run.runner or no run.started_at
//   eval-set-hash     10  error    evaluation.set missing, or without sha256
//   dirty-tree         5  error    code.dirty without code.diff_sha256
//   seeds              5  warning  no seeds recorded
//   world-size         5  warning  environment.world_size missing
//   counts             0  warning  the primary metric or a segment metric without its example
//                                  count: not a reproducibility input, so it costs no points, but
//                                  its bands use an inferred count or are not judged (what the
//                                  finding says)
//   metric-names       0  error    a metric evaluation.scoring computes reported under a name it
//                                  does not take ("NDCG@10", "ndcg@5" with k = 10, "auc"):
//                                  judged on the job's figures alone; the finding names the
//                                  spelling to use (core/manifest.hpp metric_spelling_to_use)
//   subsample-reference 0  info   no `subsample` reference (a subsample rebuild is refused)
//                         warning a subsample reference with fewer than kMinSeedRuns seed runs
// One informational finding costs nothing: a snapshot kind reverify cannot re-hash (table formats
// are passed through to the job) is reported as such (rule data-snapshot, severity info, weight 0).

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/manifest.hpp"

#include "core/enum_names.hpp"

namespace reverify {

enum class LintSeverity { error, warning, info };
template <>
struct EnumNames<LintSeverity> {
  static constexpr EnumName<LintSeverity> table[] = {
      {LintSeverity::error, "error"},
      {LintSeverity::warning, "warning"},
      {LintSeverity::info, "info"},
  };
};

struct LintRule {
  const char* id;
  int weight;
  const char* checks;  // one line: what the rule looks for
};
// Every rule, in report order.
const std::vector<LintRule>& lint_rules();

struct LintFinding {
  std::string rule;  // a LintRule id
  LintSeverity severity = LintSeverity::warning;
  std::string path;     // the JSON path concerned ("environment.image")
  std::string message;  // what is wrong
  std::string fix;      // one line: what to record
  int weight = 0;       // points taken off the score
};

struct LintReport {
  std::vector<LintFinding> findings;  // in lint_rules() order
  int score = 100;                    // 0..100
};

LintReport lint_manifest(const Manifest& manifest);

// {"score": N, "findings": [{"rule", "severity", "path", "message", "fix", "weight"}],
//  "rules": [{"id", "weight", "checks", "passed"}]}
nlohmann::json to_json(const LintReport& report);

}  // namespace reverify
