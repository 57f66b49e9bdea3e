// reverify check-job [options] -- ENTRYPOINT...: runs a training job locally the way a runner
// would, before it is released, and reports check by check what would make its verification fail
// or lie (policies/job_check.hpp, policies/job_trace.hpp): outputs that break the contract, seeds
// that do not reach the data order or the workers, nondeterminism and the level it allows, a seed
// override or steps mode the job ignores, a subsample not drawn by the rule, reads outside the
// contract's paths and network use, metrics that disagree with the predictions. Each finding
// names the silent failure it points to and the fix. The runs (cli/check_job_runs.hpp) go through
// the process runner: a clean checkout of the commit plus the working tree's diff, a cleared
// environment, the contract's variables. Exit 0 when nothing failed (warnings allowed), 1 when a
// check failed, 2 for usage errors.
#include <unistd.h>

#include <algorithm>
#include <iostream>

#include <nlohmann/json.hpp>

#include "cli/capture_facts.hpp"
#include "cli/check_job_runs.hpp"
#include "cli/command.hpp"
#include "cli/scoring_flags.hpp"
#include "core/eval_columns.hpp"
#include "core/file_write.hpp"
#include "core/hashing.hpp"
#include "core/subsample_rule.hpp"
#include "core/text.hpp"
#include "core/unix_time.hpp"
#include "core/uri.hpp"
#include "policies/job_trace.hpp"
#include "policies/own_scores.hpp"
#include "runners/process_runner.hpp"

namespace reverify::cli {
namespace {

namespace fs = std::filesystem;
constexpr const char* kCheckJobName = "check-job";
// A seed's value in its own run: far from any a job would choose, and never the override's.
constexpr std::int64_t kSeedShift = 1'000'003;

struct CheckJobArguments {
  std::string code = ".";
  std::optional<std::string> data, eval, config, seeds, work_dir;
  std::vector<std::string> env, allow_read, entrypoint;
  ReproLevel level = ReproLevel::equivalent;
  std::int64_t max_steps = 20;
  std::int64_t seed_override = 7919;
  std::string subsample_fraction = "0.25";
  std::string subsample_salt = "reverify-check-job";
  bool no_subsample = false, no_trace = false, json = false;
  std::string timeout = "1h";
  ScoringArguments scoring;
};

Result<nlohmann::json> read_json(const std::string& option, const std::optional<std::string>& path,
                                 const nlohmann::json& absent) {
  if (!path)
    return absent;
  auto text = read_uri(fs::absolute(*path).string());
  if (!text.ok())
    return make_error(ErrorCode::invalid_argument, option + ": " + text.error().message);
  auto doc = nlohmann::json::parse(*text, nullptr, false);
  if (doc.is_discarded() || !doc.is_object())
    return make_error(ErrorCode::invalid_argument, option + " " + *path + ": not a JSON object");
  return doc;
}

// The job as a draft manifest: the commit and diff of --code, config, seeds, environment.env,
// the entrypoint. Writes work/code.diff when the tree is dirty (the runner applies it).
Result<CheckJobSetup> make_setup(const CheckJobArguments& args, const fs::path& work) {
  CheckJobSetup setup;
  setup.work = work;
  setup.manifest_location = (work / "manifest.json").string();
  Manifest& m = setup.draft;
  m.model = "check-job";
  m.version = "0";
  m.owner = "check-job";
  m.level = args.level;
  auto git = read_git_facts(args.code);
  if (!git.ok())
    return make_error(ErrorCode::invalid_argument,
                      "--code " + args.code + ": " + git.error().message +
                          " (a runner runs a commit: the job must be in a git repository)");
  m.code.repo = fs::absolute(args.code).lexically_normal().string();
  m.code.commit = git->commit;
  m.code.dirty = git->dirty;
  if (git->diff) {
    m.code.diff_sha256 = sha256_hex(*git->diff);
    if (auto s = write_file(work / "code.diff", *git->diff); !s.ok())
      return s.error();
  }
  Environment env;
  env.env = determinism_env();
  for (const auto& item : args.env) {
    const auto equals = item.find('=');
    if (equals == std::string::npos || equals == 0)
      return make_error(ErrorCode::invalid_argument, "--env " + item + ": expected NAME=VALUE");
    env.env[item.substr(0, equals)] = item.substr(equals + 1);
  }
  m.environment = env;
  auto config = read_json("--config", args.config, nlohmann::json::object());
  auto seeds = read_json("--seeds", args.seeds, nlohmann::json::object());
  if (!config.ok())
    return config.error();
  if (!seeds.ok())
    return seeds.error();
  m.config = *config;
  for (const auto& [name, value] : seeds->items()) {
    if (!value.is_number_integer())
      return make_error(ErrorCode::invalid_argument,
                        "--seeds: seed \"" + name + "\" is not an integer");
    m.seeds[name] = value.get<std::int64_t>();
  }
  m.run.entrypoint = args.entrypoint;
  if (!args.no_subsample) {
    SubsampleReference subsample;
    subsample.fraction = std::stod(args.subsample_fraction);
    subsample.salt = args.subsample_salt;
    m.subsample = subsample;
  }
  if (args.data)
    setup.data = fs::absolute(*args.data).lexically_normal();
  if (args.eval)
    setup.eval = fs::absolute(*args.eval).lexically_normal();
  return setup;
}

// The runs, in order: full (traced), the same again, the seed override, steps mode, each seed
// changed alone in steps mode, subsample mode with and without the override.
std::vector<CheckJobRun> planned_runs(const CheckJobArguments& args, const Manifest& draft) {
  std::vector<CheckJobRun> runs = {
      {"full", RebuildMode::full, 0, std::nullopt, {}, true},
      {"same-seed", RebuildMode::full, 0, std::nullopt, {}, false},
      {"override", RebuildMode::full, 0, args.seed_override, {}, false},
      {"steps", RebuildMode::steps, args.max_steps, std::nullopt, {}, false}};
  for (const auto& [name, value] : draft.seeds)
    runs.push_back({"seed:" + name,
                    RebuildMode::steps,
                    args.max_steps,
                    std::nullopt,
                    {{name, value + kSeedShift}},
                    false});
  if (!args.no_subsample) {
    runs.push_back({"subsample", RebuildMode::subsample, 0, std::nullopt, {}, false});
    runs.push_back(
        {"subsample-override", RebuildMode::subsample, 0, args.seed_override, {}, false});
  }
  return runs;
}

// The full run's predictions scored with the spec the scoring flags make (their files read in
// place): the eval set's record count for the outputs check, and the metrics finding.
struct Scored {
  std::size_t records = 0;
  JobFinding metrics;
};
Result<Scored> score_full_run(const CheckJobArguments& args, const CheckJobSetup& setup,
                              const JobRunRecord& full) {
  auto spec = scoring_spec(
      args.scoring,
      [&](const std::string& text, const std::string& option) -> Result<RecordColumn> {
        auto source = column_source(text, option, args.eval);
        if (!source.ok())
          return source.error();
        if (!source->file)
          return RecordColumn{std::nullopt, std::nullopt, source->column};
        auto digest = sha256_file(*source->file);
        if (!digest.ok())
          return digest.error();
        return RecordColumn{fs::absolute(*source->file).string(), *digest, source->column};
      });
  if (!spec.ok())
    return spec.error();
  std::optional<FileRef> eval_set;
  if (setup.eval && fs::is_regular_file(*setup.eval)) {
    auto digest = sha256_file(*setup.eval);
    if (!digest.ok())
      return digest.error();
    eval_set = FileRef{setup.eval->string(), *digest};
  }
  auto inputs =
      read_scoring_inputs(*spec, {setup.manifest_location, eval_set}, full.predictions->rows);
  if (!inputs.ok())
    return inputs.error();
  auto scores = scoring::score(*inputs, *full.predictions);
  if (!scores.ok())
    return scores.error();
  // result.json as the runner validated it: segments of numbers, a primary with name and value.
  SegmentMetrics job_segments;
  const nlohmann::json& result = full.result;
  if (result.contains("segments")) {
    for (const auto& [segment, metrics] : result["segments"].items()) {
      for (const auto& [metric, value] : metrics.items())
        job_segments[segment][metric] = value.get<double>();
    }
  }
  const auto& primary = result["primary"];
  const CheckResult agreement = job_agreement_check(
      primary["value"].get<double>(), primary["name"].get<std::string>(), job_segments, *scores);
  return Scored{inputs->records(), judge_metrics(agreement)};
}

const JobRunRecord* find_run(const std::vector<JobRunRecord>& runs, const std::string& name) {
  for (const auto& run : runs) {
    if (run.name == name)
      return &run;
  }
  return nullptr;
}

std::vector<JobFinding> judge(const CheckJobArguments& args, const CheckJobSetup& setup,
                              const std::vector<JobRunRecord>& runs, bool traced) {
  const ReproLevel level = setup.draft.level;
  std::optional<Result<Scored>> scored;
  if (args.scoring.any() && !runs.front().error && runs.front().predictions)
    scored = score_full_run(args, setup, runs.front());
  std::optional<std::size_t> records;
  if (scored && scored->ok())
    records = (*scored)->records;
  std::vector<JobFinding> findings{judge_outputs(runs, records, level)};
  if (findings.front().status == FindingStatus::fail)
    return findings;
  const JobRunRecord& full = *find_run(runs, "full");
  const JobRunRecord& again = *find_run(runs, "same-seed");
  const RunDistance same_seed = run_distance(full, again);
  findings.push_back(judge_same_seed(full, again, level));
  findings.push_back(judge_seed_override(full, *find_run(runs, "override"), args.seed_override));
  const JobRunRecord& steps = *find_run(runs, "steps");
  findings.push_back(judge_steps_mode(steps, full, args.max_steps, same_seed));
  for (const auto& [name, value] : setup.draft.seeds)
    findings.push_back(judge_seed_reach(name, steps, *find_run(runs, "seed:" + name), same_seed));
  if (!args.no_subsample) {
    findings.push_back(
        judge_subsample({args.subsample_fraction, args.subsample_salt, find_run(runs, "subsample"),
                         find_run(runs, "subsample-override"), &full}));
  }
  if (!traced) {
    findings.push_back({"inputs",
                        FindingStatus::skip,
                        args.no_trace ? "not traced (--no-trace)"
                                      : "not traced: strace is not installed (apt-get install "
                                        "strace)",
                        JobFailure::none,
                        {},
                        {}});
  } else {
    auto log = read_uri((setup.work / "trace.log").string());
    TraceScope scope;
    for (const auto& path : {setup.data, setup.eval})
      if (path)
        scope.contract.push_back(path->string());
    // The scratch folder holds the checkout (src/), config and seeds (in/) and REVERIFY_OUT.
    scope.checkout = (setup.work / "scratch").string();
    scope.allowed = args.allow_read;
    const fs::path cwd = setup.work / "scratch" / "check-job-full" / "src";
    findings.push_back(judge_trace(parse_strace(log.ok() ? *log : "", cwd.string()), scope));
  }
  if (!scored) {
    findings.push_back({"metrics",
                        FindingStatus::skip,
                        "not checked: give the scoring spec (--task, --labels, ... as capture "
                        "takes them) to score the job's predictions",
                        JobFailure::none,
                        {},
                        {}});
  } else if (!scored->ok()) {
    findings.push_back(
        {"metrics",
         FindingStatus::fail,
         "the scoring spec cannot score the job's predictions: " + scored->error().message,
         JobFailure::contract_outputs,
         "predictions with one row per eval record, in eval-set order, in the "
         "shape the task reads (docs/job-guide.md \"Scoring spec\")",
         {}});
  } else {
    findings.push_back((*scored)->metrics);
  }
  return findings;
}

void print_findings(std::ostream& out, const std::vector<JobFinding>& findings) {
  for (const auto& f : findings) {
    std::string status = to_string(f.status);
    for (auto& c : status)
      c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    out << status << std::string(6 - status.size(), ' ') << f.id << ": " << f.summary << "\n";
    for (const auto& d : f.details)
      out << "        " << d << "\n";
    if (f.failure != JobFailure::none && f.status != FindingStatus::pass) {
      out << "        field notes: " << to_string(f.failure) << "\n";
      out << "        fix: " << f.fix << "\n";
    }
  }
}

nlohmann::json findings_json(const std::vector<JobFinding>& findings) {
  nlohmann::json list = nlohmann::json::array();
  for (const auto& f : findings) {
    nlohmann::json j = {{"id", f.id},
                        {"status", to_string(f.status)},
                        {"summary", f.summary},
                        {"details", f.details}};
    if (f.failure != JobFailure::none) {
      j["failure"] = to_string(f.failure);
      j["fix"] = f.fix;
    }
    list.push_back(std::move(j));
  }
  return list;
}

int run_check_job(const CheckJobArguments& args) {
  if (args.entrypoint.empty())
    return usage_error(kCheckJobName, "the job's entrypoint is missing: -- python3 train.py");
  if (!args.no_subsample) {
    if (auto f = parse_subsample_fraction(args.subsample_fraction); !f.ok())
      return usage_error(kCheckJobName, "--subsample-fraction: " + f.error().message);
  }
  fs::path work = args.work_dir ? fs::absolute(*args.work_dir)
                                : fs::temp_directory_path() /
                                      ("reverify-check-job-" + std::to_string(::getpid()));
  std::error_code ec;
  fs::remove_all(work, ec);
  fs::create_directories(work / "scratch-root", ec);
  auto setup = make_setup(args, work);
  if (!setup.ok())
    return usage_error(kCheckJobName, setup.error().message);
  setup->timeout = std::chrono::seconds(*parse_duration_s(args.timeout));
  ProcessRunnerConfig config;
  config.scratch_root = work / "scratch-root";
  // The author's own job, on their machine, traced by strace into `work`: it runs as the author
  // (trusted, unsandboxed), since the sandbox's job uid could neither write the trace nor be
  // traced from outside its PID namespace. Verification runs are sandboxed as configured.
  JobIsolation trusted;
  trusted.trust_job_code = true;
  ProcessRunner runner(config, trusted);
  const auto trace =
      args.no_trace ? std::nullopt : strace_prefix(work / "trace.log", config.path_env);
  const auto plan = planned_runs(args, setup->draft);
  std::vector<JobRunRecord> runs;
  std::size_t index = 0;
  for (const auto& planned : plan) {
    runs.push_back(run_job_once(*setup, planned, runner, trace, [&](const std::string& name) {
      std::cerr << "[" << ++index << "/" << plan.size() << "] " << name
                << (planned.traced && trace ? " (traced)" : "") << "\n";
    }));
    if (planned.name == "full" && runs.back().error)
      break;  // nothing else can be judged against a job that does not run
  }
  const auto findings = judge(args, *setup, runs, trace.has_value());
  const FindingStatus overall = overall_status(findings);
  const auto failed = std::count_if(findings.begin(), findings.end(),
                                    [](const auto& f) { return f.status == FindingStatus::fail; });
  const auto warned = std::count_if(findings.begin(), findings.end(),
                                    [](const auto& f) { return f.status == FindingStatus::warn; });
  if (args.json) {
    std::cout << nlohmann::json{{"commit", setup->draft.code.commit},
                                {"entrypoint", args.entrypoint},
                                {"status", to_string(overall)},
                                {"checks", findings_json(findings)},
                                {"work_dir", work.string()}}
                     .dump(2)
              << "\n";
  } else {
    std::string argv;
    for (const auto& word : args.entrypoint)
      argv += (argv.empty() ? "" : " ") + shell_word(word);
    std::cout << "check-job: " << argv << " at commit " << setup->draft.code.commit.substr(0, 12)
              << (setup->draft.code.dirty ? " + diff" : "") << ", " << runs.size() << " runs\n";
    print_findings(std::cout, findings);
    std::cout << failed << " failed, " << warned << " warning(s)"
              << (args.work_dir ? "; runs kept in " + work.string() : "") << "\n";
  }
  if (!args.work_dir)
    fs::remove_all(work, ec);
  return overall == FindingStatus::fail ? 1 : 0;
}

Action define_check_job(CLI::App& app) {
  auto o = std::make_shared<CheckJobArguments>();
  app.add_option("--code", o->code,
                 "the job's git repository: its HEAD plus the working tree's "
                 "diff is what runs")
      ->type_name("DIR")
      ->capture_default_str();
  app.add_option("--data", o->data, "REVERIFY_DATA: the dataset snapshot")
      ->type_name("DIR")
      ->envname("REVERIFY_DATA");
  app.add_option("--eval", o->eval, "REVERIFY_EVAL: the eval set")
      ->type_name("PATH")
      ->envname("REVERIFY_EVAL");
  app.add_option("--config", o->config, "the resolved config (JSON) the job gets")
      ->type_name("FILE")
      ->envname("REVERIFY_CONFIG");
  app.add_option("--seeds", o->seeds, "the seeds (JSON) the job gets; each is also changed alone")
      ->type_name("FILE")
      ->envname("REVERIFY_SEEDS");
  app.add_option("--env", o->env,
                 "environment.env entries beyond the determinism variables of this environment "
                 "(as capture records them); repeatable")
      ->type_name("NAME=VALUE");
  add_enum_option(app, "--level", o->level,
                  "the level the release will claim: at bitwise, same-seed runs must be identical "
                  "and weights present");
  app.add_option("--max-steps", o->max_steps, "REVERIFY_MAX_STEPS of the steps-mode runs")
      ->type_name("N")
      ->check(integer_in(1, 1'000'000))
      ->capture_default_str();
  app.add_option("--seed-override", o->seed_override, "REVERIFY_SEED_OVERRIDE of the override run")
      ->type_name("N")
      ->check(integer_in(0, 1'000'000))
      ->capture_default_str();
  app.add_option("--subsample-fraction", o->subsample_fraction,
                 "REVERIFY_SUBSAMPLE_FRACTION of the subsample runs")
      ->type_name("F")
      ->capture_default_str();
  app.add_option("--subsample-salt", o->subsample_salt, "REVERIFY_SUBSAMPLE_SALT of those runs")
      ->type_name("S")
      ->capture_default_str();
  app.add_flag("--no-subsample", o->no_subsample,
               "the job has no subsample mode: skip its check (a large model without one gets no "
               "subsample rebuilds)");
  app.add_option("--allow-read", o->allow_read,
                 "a folder the job may read besides the contract's paths, its checkout and the "
                 "system's (a virtual environment, a model cache); repeatable")
      ->type_name("DIR");
  app.add_flag("--no-trace", o->no_trace, "do not run the first run under strace");
  app.add_option("--timeout", o->timeout, "each run's time limit")
      ->type_name("DURATION")
      ->check(duration())
      ->capture_default_str();
  app.add_option("--work-dir", o->work_dir, "keep every run's outputs and the trace here")
      ->type_name("DIR");
  add_scoring_flags(app, o->scoring);
  add_json_flag(app, o->json);
  app.add_option("ENTRYPOINT", o->entrypoint, "the job's argv, after --, e.g. -- python3 train.py");
  return [o] { return run_check_job(*o); };
}

const Registrar kCheckJob{{kCheckJobName,
                           "run a training job locally the way a runner would, before release, "
                           "and name what would make its verification fail or lie",
                           define_check_job}};

}  // namespace
}  // namespace reverify::cli
