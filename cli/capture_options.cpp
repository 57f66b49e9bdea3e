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
  add_enum_option(app, "--level", o->level, "the reproducibility level the release promises");
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
                 "override): the subsample reference's own bands. At least " +
                     std::to_string(kMinSeedRuns) +
                     "; 20 or more recommended, as many as --seed-runs: a model trained on a "
                     "fraction of the records spreads more from seed to seed than the full one, "
                     "and a band from n runs is a prediction interval whose width falls steeply "
                     "with n (one check at a false-page rate of 0.01: +-11.5 standard deviations "
                     "from 3 runs, 5.0 from 5, 3.4 from 10, 2.9 from 20, 2.7 from 40), so few runs "
                     "give bands that let real shifts through. Every run must draw the same "
                     "records as --subsample-out (the rule does not depend on the seed)")
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

}  // namespace

void define_capture_options(CLI::App& app, CaptureArguments& args) {
  define_identity_options(app, &args);
  define_inputs_options(app, &args);
  define_tolerance_options(app, &args);
  define_subsample_options(app, &args);
  add_scoring_flags(app, args.scoring);  // evaluation.scoring (cli/scoring_flags.hpp)
}

}  // namespace reverify::cli
