// The command lines of `reverify` and `reverifyd` as a new user meets them: help with units and
// defaults, --version, a mistyped command or option named with the closest match, bad values
// named with what was expected, and a hint when no daemon answers.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "tests/support/free_port.hpp"
#include "tests/support/run_program.hpp"
#include "tests/support/temp_dir.hpp"
#include "tests/support/text_search.hpp"

using reverify::test::Ran;

namespace {

const reverify::test::TempDir scratch("reverify-arguments-itest-");

Ran reverify_cli(std::vector<std::string> args) {
  return reverify::test::run_cli(std::move(args), scratch.path);
}

Ran reverifyd(std::vector<std::string> args) {
  return reverify::test::run_reverifyd(std::move(args), scratch.path);
}

using reverify::test::contains;

// Help text with its line wrapping undone: every run of white space becomes one space.
std::string flat(const std::string& text) {
  std::string out;
  for (char c : text) {
    const bool space = c == ' ' || c == '\n';
    if (!space || out.empty() || out.back() != ' ')
      out += space ? ' ' : c;
  }
  return out;
}

}  // namespace

TEST_CASE("--version on both binaries prints the name and version on stdout, exit 0") {
  Ran cli = reverify_cli({"--version"});
  CHECK(cli.exit_code == 0);
  CHECK(cli.out.rfind("reverify ", 0) == 0);
  CHECK(cli.err.empty());
  Ran daemon = reverifyd({"--version"});
  CHECK(daemon.exit_code == 0);
  CHECK(daemon.out.rfind("reverifyd ", 0) == 0);
  // Both are the same build.
  CHECK(cli.out.substr(std::string("reverify ").size()) ==
        daemon.out.substr(std::string("reverifyd ").size()));
}

TEST_CASE("reverify --help lists every command and where the daemon is found; no args is usage") {
  Ran help = reverify_cli({"--help"});
  CHECK(help.exit_code == 0);
  for (const char* command : {"run", "lint", "diff", "bisect", "hash", "compare", "capture",
                              "calibrate", "gate", "status", "trigger", "plan"}) {
    CHECK_MESSAGE(contains(help.out, std::string("  ") + command + " "), command);
  }
  CHECK(contains(help.out, "REVERIFY_URL"));
  CHECK(contains(help.out, "http://127.0.0.1:8420"));
  Ran none = reverify_cli({});
  CHECK(none.exit_code == 2);
  CHECK(none.out.empty());
  CHECK(contains(none.err, "Usage:"));
  CHECK(reverify_cli({"help"}).out == help.out);
}

TEST_CASE("a command's --help explains every flag with its unit and default") {
  const Ran run_help = reverify_cli({"run", "--help"});
  const Ran run{run_help.exit_code, flat(run_help.out), run_help.err};
  CHECK(run.exit_code == 0);
  CHECK(contains(run.out, "--timeout DURATION"));
  CHECK(contains(run.out, "unit s, m, h, d, w or mo"));
  CHECK(contains(run.out, "--mode full|steps|subsample"));
  CHECK(contains(run.out, "[default: full]"));
  CHECK(contains(run.out, "--runner process|docker|kubernetes|slurm"));
  CHECK(contains(run.out, "--code-mirror URL=PATH"));
  const std::string calibrate = flat(reverify_cli({"calibrate", "--help"}).out);
  CHECK(contains(calibrate, "--seeds N reruns to add: seed-only reruns"));
  CHECK(contains(calibrate, "(--mode steps) [default: 5]"));
  const Ran gate = reverify_cli({"help", "gate"});
  CHECK(gate.exit_code == 0);
  CHECK(contains(flat(gate.out), "$REVERIFY_URL"));
  CHECK(contains(flat(gate.out), "api.default_max_age applies (40d unless configured)"));
  // Every unit the parser takes, named where a duration is asked for.
  CHECK(contains(flat(gate.out),
                 "--max-age DURATION the last pass must be at most this old: a "
                 "duration with unit s, m, h, d, w or mo (e.g. 40d)"));
  CHECK(contains(flat(reverify_cli({"attest", "verify", "--help"}).out),
                 "a duration with unit s, m, h, d, w or mo"));
  CHECK(contains(flat(reverify_cli({"capture", "--help"}).out), "[env: $REVERIFY_DATA]"));
  // trigger takes every mode, and its --help describes each.
  const std::string trigger = flat(reverify_cli({"trigger", "--help"}).out);
  CHECK(contains(trigger, "--mode full|steps|subsample"));
  CHECK(contains(trigger, "subsample: the job on the release's recorded subsample"));
}

TEST_CASE("bisect refuses a bad --budget and the same version twice before anything runs") {
  const Ran fraction = reverify_cli({"bisect", "m@1", "m@2", "--budget", "2.5"});
  CHECK(fraction.exit_code == 2);
  CHECK(contains(fraction.err,
                 "reverify bisect: --budget: expected a count of rebuilds (3) or "
                 "GPU-hours (2.5gpu-h), got \"2.5\""));
  const Ran same = reverify_cli({"bisect", "m@1", "m@1"});
  CHECK(same.exit_code == 2);
  CHECK(contains(same.err, "A and B are the same version (m@1)"));
  const std::string help = flat(reverify_cli({"bisect", "--help"}).out);
  CHECK(contains(help, "--budget N|Xgpu-h"));
  CHECK(contains(help, "--config FILE reverifyd's config file: its sources find both manifests"));
  CHECK(contains(help, "--registry DIR"));
}

TEST_CASE("calibrate --help says when --until-power stops, and when it measures again") {
  const std::string help = flat(reverify_cli({"calibrate", "--help"}).out);
  CHECK(contains(help,
                 "--until-power full mode: keep adding seed-only reruns until every band with a "
                 "declared tolerance.detect catches that shift with 80% probability, or the "
                 "calibration holds --max-runs seed runs, or a rerun fails, or no number of runs "
                 "would even with a spread at the low end of what the runs so far allow (95% "
                 "lower confidence limit)."));
  CHECK(contains(help,
                 "when it says no number of runs would do but the low end says some would, that "
                 "spread is itself an estimate, so half as many runs again (at least 5) are added "
                 "and it looks again"));
  CHECK(contains(help, "already used); full mode only"));  // --first-seed
}

TEST_CASE("a mistyped command or option is named, with the closest match") {
  Ran verb = reverify_cli({"lnit", "x.json"});
  CHECK(verb.exit_code == 2);
  CHECK(contains(verb.err, "unknown command \"lnit\"; did you mean \"lint\"?"));
  Ran far = reverify_cli({"frobnicate"});
  CHECK(far.exit_code == 2);
  CHECK(contains(far.err, "unknown command \"frobnicate\""));
  CHECK(!contains(far.err, "did you mean"));

  Ran option = reverify_cli({"lint", "x.json", "--min-scor", "3"});
  CHECK(option.exit_code == 2);
  CHECK(
      contains(option.err, "reverify lint: unknown option --min-scor (did you mean --min-score?)"));
  Ran unknown = reverify_cli({"gate", "m@v", "--frobnicate=1"});
  CHECK(unknown.exit_code == 2);
  CHECK(contains(unknown.err, "reverify gate: unknown option --frobnicate\n"));
  Ran extra = reverify_cli({"diff", "a.json", "b.json", "c.json"});
  CHECK(extra.exit_code == 2);
  CHECK(contains(extra.err, "unexpected argument \"c.json\""));
}

TEST_CASE("a mistyped subcommand gets a suggestion at every level") {
  Ran nested = reverify_cli({"attest", "verfy", "x.json", "--key", "k.pem"});
  CHECK(nested.exit_code == 2);
  CHECK(
      contains(nested.err, "reverify attest: unknown command \"verfy\"; did you mean \"verify\"?"));
  Ran nested_far = reverify_cli({"attest", "frobnicate"});
  CHECK(nested_far.exit_code == 2);
  CHECK(contains(nested_far.err, "reverify attest: unknown command \"frobnicate\""));
  CHECK(!contains(nested_far.err, "did you mean"));
  Ran top = reverify_cli({"trigegr", "m@v"});
  CHECK(contains(top.err, "unknown command \"trigegr\"; did you mean \"trigger\"?"));
}

// What bash offers after `words` (the last one being completed), with the script that
// `reverify completion bash` prints sourced.
std::string bash_completes(const std::string& words) {
  const std::string script =
      "source <(\"$REVERIFY_CLI\" completion bash) || exit 9\n"
      "COMP_WORDS=(" +
      words +
      ")\n"
      "COMP_CWORD=$(( ${#COMP_WORDS[@]} - 1 ))\n"
      "_reverify\n"
      "echo \"${COMPREPLY[*]}\"\n";
  Ran ran = reverify::test::run_program({"bash", "-c", script}, scratch.path);
  REQUIRE(ran.exit_code == 0);
  return ran.out.substr(0, ran.out.find('\n'));
}

TEST_CASE("reverify completion bash: generated from the commands, sourced by bash") {
  CHECK(bash_completes("reverify tri") == "trigger");
  CHECK(bash_completes("reverify attest ver") == "verify");
  CHECK(bash_completes("reverify trigger m@v --wa") == "--wait");
  CHECK(bash_completes("reverify status --st") == "--state");
  CHECK(bash_completes("reverify run m@v --mode ''") == "full steps subsample");
  CHECK(bash_completes("reverify completion ''") == "bash zsh");
  CHECK(contains(" " + bash_completes("reverify ''") + " ", " status "));
  Ran zsh = reverify_cli({"completion", "zsh"});
  CHECK(zsh.exit_code == 0);
  CHECK(zsh.out.starts_with("#compdef reverify\n"));
  CHECK(contains(zsh.out, "bashcompinit"));
  CHECK(contains(zsh.out, "complete -o default -F _reverify reverify"));
  Ran fish = reverify_cli({"completion", "fish"});
  CHECK(fish.exit_code == 2);
  CHECK(contains(fish.err, "must be bash or zsh, got \"fish\""));
}

TEST_CASE("bad values name the option and what was expected, before anything runs") {
  Ran mode = reverify_cli({"run", "m@v", "--mode", "fast"});
  CHECK(mode.exit_code == 2);
  CHECK(contains(mode.err, "--mode: must be full, steps or subsample, got \"fast\""));
  Ran runner = reverify_cli({"run", "m@v", "--runner", "k8s"});
  CHECK(runner.exit_code == 2);
  CHECK(
      contains(runner.err, "--runner: must be process, docker, kubernetes or slurm, got \"k8s\""));
  Ran timeout = reverify_cli({"run", "m@v", "--timeout", "soon"});
  CHECK(timeout.exit_code == 2);
  CHECK(contains(timeout.err, "--timeout: "));
  Ran seeds = reverify_cli({"calibrate", "m@v", "--seeds", "1001"});
  CHECK(seeds.exit_code == 2);
  CHECK(contains(seeds.err, "--seeds: must be an integer from 0 to 1000, got \"1001\""));
  Ran missing = reverify_cli({"gate"});
  CHECK(missing.exit_code == 2);
  CHECK(contains(missing.err, "MODEL@VERSION is required"));
}

TEST_CASE(
    "no daemon listening: the error says reverifyd may not be running and how the URL was "
    "chosen") {
  const auto port = reverify::test::free_port();
  Ran gate = reverify_cli({"gate", "m@v", "--url", "http://127.0.0.1:" + std::to_string(port)});
  CHECK(gate.exit_code == 2);
  CHECK(contains(gate.err, "is reverifyd running"));
  CHECK(contains(gate.err, "REVERIFY_URL"));
}

TEST_CASE("reverifyd: --help on stdout with exit 0; a missing or unknown option is named") {
  Ran help = reverifyd({"--help"});
  CHECK(help.exit_code == 0);
  CHECK(contains(help.out, "--config FILE"));
  CHECK(contains(help.out, "--check-config"));
  CHECK(help.err.empty());
  Ran none = reverifyd({});
  CHECK(none.exit_code == 2);
  CHECK(contains(none.err, "--config is required"));
  Ran typo = reverifyd({"--confg", "x.yaml"});
  CHECK(typo.exit_code == 2);
  CHECK(contains(typo.err, "unknown option --confg (did you mean --config?)"));
}
