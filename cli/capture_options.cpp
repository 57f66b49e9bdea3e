// reverify capture's flags (capture_args.hpp).
#include <cstdlib>
#include <string>

#include "cli/capture_args.hpp"
#include "cli/command.hpp"
#include "core/manifest.hpp"
#include "policies/bands.hpp"
#include "policies/scoring.hpp"

namespace reverify::cli {

namespace {

// Who and what is released, and where from: --out, --model, --version, --owner, --level, --code,
// --repo, --result and the entrypoint after --.
void define_identity_options(CLI::App& app, CaptureArguments* o) {
  app.add_option("--out", o->out,
                 "release folder: manifest.json, the predictions and weights, snapshot.sha256 "
                 "and code.diff go here")
      ->type_name("DIR")
      ->required();
  app.add_option("--model", o->model, "model name ([A-Za-z0-9][A-Za-z0-9._-]{0,127})")
      ->type_name("M")
      ->required();
  app.add_option("--version", o->version, "version name, same characters as --model")
      ->type_name("V")
      ->required();
  app.add_option("--owner", o->owner, "the team paged when a rebuild fails")
      ->type_name("O")
      ->required();
  app.add_option("--level", o->level, "the reproducibility level the release promises")
      ->type_name("rerunnable|equivalent|bitwise")
      ->check(one_of(enum_choices<ReproLevel>()))
      ->capture_default_str();
  app.add_option("--code", o->code,
                 "the job's git checkout: commit, dirty flag and diff are read from it")
      ->type_name("DIR")
      ->capture_default_str();
  app.add_option("--repo", o->repo,
                 "code.repo to record; without it: the checkout's origin remote, else its path")
      ->type_name("URL");
  app.add_option("--result", o->result,
                 "the job's result.json; without it: $REVERIFY_OUT/result.json")
      ->type_name("FILE");
  app.add_option("ENTRYPOINT", o->entrypoint, "the job's argv, after --, e.g. -- python3 train.py");
}

// The inputs and the run: data, eval set, config, seeds, split, lockfile, interpreter, image,
// world size, workdir, times, the machine.
void define_inputs_options(CLI::App& app, CaptureArguments* o) {
  app.add_option("--data", o->data, "the training data folder, hashed into a file manifest")
      ->type_name("DIR")
      ->envname("REVERIFY_DATA");
  app.add_option("--data-uri", o->data_uri,
                 "data.snapshot.uri to record (relative to --out, or absolute); without it: "
                 "file:// of --data")
      ->type_name("URI");
  app.add_option("--eval", o->eval, "the eval set (file or folder), hashed")
      ->type_name("PATH")
      ->envname("REVERIFY_EVAL");
  app.add_option("--eval-uri", o->eval_uri,
                 "evaluation.set.uri to record; without it: file:// of --eval")
      ->type_name("URI");
  app.add_option("--config", o->config, "the job's resolved config, as JSON")
      ->type_name("FILE")
      ->envname("REVERIFY_CONFIG");
  app.add_option("--seeds", o->seeds, "the job's seeds, a JSON object of integers")
      ->type_name("FILE")
      ->envname("REVERIFY_SEEDS");
  app.add_option("--split-rule", o->split_rule,
                 "data.split.rule, e.g. \"sha256(id + salt) % 100 < 20\"")
      ->type_name("RULE");
  app.add_option("--split-salt", o->split_salt, "data.split.salt")->type_name("SALT");
  app.add_option("--lockfile", o->lockfile, "dependency lockfile, relative to --code; hashed")
      ->type_name("PATH");
  app.add_option("--python", o->python, "interpreter whose version (and --framework) is recorded")
      ->type_name("EXE")
      ->capture_default_str();
  app.add_option("--framework", o->framework,
                 "Python module whose version is recorded (torch, numpy, ...)")
      ->type_name("MODULE");
  app.add_option("--image", o->image, "the training image, by digest (name@sha256:<64 hex>)")
      ->type_name("REF")
      ->envname("REVERIFY_IMAGE");
  app.add_option("--world-size", o->world_size, "processes in the training job")
      ->type_name("N")
      ->check(integer_in(1, 1'000'000))
      ->capture_default_str();
  app.add_option("--workdir", o->workdir, "run.workdir: the job's working folder in its image")
      ->type_name("DIR");
  app.add_option("--started-at", o->started_at,
                 "run.started_at, RFC 3339 (e.g. 2026-11-02T03:00:00Z); without it: now")
      ->type_name("TIME");
  app.add_option("--duration-s", o->duration_s, "run.duration_s: the job's wall time, in seconds")
      ->type_name("SECONDS")
      ->check(finite_number());
  app.add_option("--ci-runner", o->ci_runner,
                 "run.runner: the machine or CI runner; without it: "
                 "this host's name")
      ->type_name("NAME");
}

// The release's tolerance: its seed-only and same-seed reruns, the owner's detect and floor, the
// primary metric's direction.
void define_tolerance_options(CLI::App& app, CaptureArguments* o) {
  app.add_option("--seed-runs", o->seed_runs,
                 "a folder of seed-only reruns: one sub-folder per rerun of this job with "
                 "REVERIFY_SEED_OVERRIDE set (every seed replaced, all else as released), holding "
                 "that rerun's $REVERIFY_OUT (result.json and the files it names); name the "
                 "sub-folders by their seed override (1, 2, ...) to record it. Their metrics, and "
                 "their predictions against the release's, become tolerance (at least " +
                     std::to_string(kMinSeedRuns) + "; about 20 for a tight primary band)")
      ->type_name("DIR");
  app.add_option("--same-seed-runs", o->same_seed_runs,
                 "a folder of reruns with the release's own seeds (REVERIFY_MODE=steps and "
                 "REVERIFY_MAX_STEPS=N are enough), one $REVERIFY_OUT per sub-folder: their step "
                 "curves become the steps-mode band (at least " +
                     std::to_string(kMinSeedRuns) + "; exact when they reproduce the release's)")
      ->type_name("DIR");
  app.add_option("--detect", o->detect,
                 "tolerance.detect: the shift of a check that must be caught with 80% "
                 "probability, in the metric's units: the primary metric by name "
                 "(accuracy=0.01), others by check name (segment:digit=8:accuracy=0.05, "
                 "distribution:psi=0.05, steps:loss=0.001); repeatable")
      ->type_name("CHECK=SHIFT");
  app.add_option("--floor", o->floor,
                 "tolerance.floor: the smallest band half-width (metrics) or bound (statistics) "
                 "for a metric or check, in its units (accuracy=0.002); repeatable")
      ->type_name("CHECK=VALUE");
  app.add_flag("--lower-is-better", o->lower_is_better,
               "the primary metric improves downwards (a loss, an error rate); without it, "
               "result.json's primary.higher_is_better decides (true when absent), and the flag "
               "is refused when result.json says true");
}

// The subsample reference: the subsample job's outputs, seed runs, fraction, salt and key.
void define_subsample_options(CLI::App& app, CaptureArguments* o) {
  app.add_option("--subsample-out", o->subsample_out,
                 "the subsample job's output folder (its $REVERIFY_OUT, run with REVERIFY_MODE="
                 "subsample): recorded as the manifest's subsample reference, which subsample "
                 "rebuilds are judged against (docs/job-guide.md \"Subsample mode\")")
      ->type_name("DIR");
  app.add_option("--subsample-seed-runs", o->subsample_seed_runs,
                 "the subsample job's seed-only reruns, one sub-folder each (named by the seed "
                 "override): the subsample reference's own bands")
      ->type_name("DIR");
  app.add_option("--subsample-fraction", o->subsample_fraction,
                 "REVERIFY_SUBSAMPLE_FRACTION the subsample job ran with, in (0, 1]")
      ->type_name("F")
      ->check(CLI::Validator(
          [](std::string& text) -> std::string {
            char* end = nullptr;
            const double f = std::strtod(text.c_str(), &end);
            const bool ok = end != text.c_str() && *end == '\0' && f > 0 && f <= 1;
            return ok ? "" : "must be a number in (0, 1], got " + text;
          },
          ""));
  app.add_option("--subsample-salt", o->subsample_salt,
                 "REVERIFY_SUBSAMPLE_SALT the subsample job ran with")
      ->type_name("SALT");
  app.add_option("--subsample-key", o->subsample_key,
                 "what a training record's stable key is, in words (recorded as subsample.key)")
      ->type_name("TEXT");
  app.add_option("--subsample-duration-s", o->subsample_duration_s,
                 "the subsample job's wall time, in seconds")
      ->type_name("SECONDS")
      ->check(CLI::NonNegativeNumber);
}

// evaluation.scoring: reverify scores every set of predictions itself.
void define_scoring_options(CLI::App& app, CaptureArguments* o) {
  ScoringArguments& scoring = o->scoring;
  app.add_option("--task", scoring.task,
                 "evaluation.scoring.task: reverify scores every set of predictions itself "
                 "from the eval set's labels (docs/job-guide.md \"Scoring spec\"); needs --labels")
      ->type_name(enum_names<ScoringTask>("|"))
      ->check(one_of(enum_choices<ScoringTask>()));
  app.add_option("--labels", scoring.labels,
                 "the eval set's labels: a column of --eval (a CSV file with a header row), or "
                 "a file with one label per eval record (.npy, or one per line), or FILE:COLUMN "
                 "of a CSV file; files are copied into --out and hashed")
      ->type_name("COLUMN|FILE[:COLUMN]");
  app.add_option("--classes", scoring.classes,
                 "multiclass: the number of classes (labels are 0..N-1)")
      ->type_name("N")
      ->check(integer_in(2, 1'000'000));
  app.add_option("--metric", scoring.metrics,
                 "a metric to compute (without it: the task's full set); repeatable")
      ->type_name("NAME");
  app.add_option("--segment-key", scoring.segment_keys,
                 "segment keys per record: a record whose key is v is in the segment NAME=v "
                 "(NAME defaults to the column's or the file's name); repeatable")
      ->type_name("[NAME=]COLUMN|FILE[:COLUMN]");
  app.add_option("--threshold", scoring.thresholds,
                 "binary: an operating threshold, decision = score >= X (without it: 0.5); "
                 "regression: a decision threshold whose crossings parity counts; repeatable")
      ->type_name("X")
      ->check(finite_number());
  app.add_option("--k", scoring.k, "ranking: the cut-off of ndcg@k and precision@k")
      ->type_name("N")
      ->check(integer_in(1, 1'000'000));
  app.add_option("--query", scoring.query,
                 "ranking: each record's query id, as a column of --eval or a file")
      ->type_name("COLUMN|FILE[:COLUMN]");
}

}  // namespace

void define_capture_options(CLI::App& app, CaptureArguments& args) {
  define_identity_options(app, &args);
  define_inputs_options(app, &args);
  define_tolerance_options(app, &args);
  define_subsample_options(app, &args);
  define_scoring_options(app, &args);
}

}  // namespace reverify::cli
