#include "runners/slurm_cli.hpp"

#include <cstdlib>

#include "core/text.hpp"

namespace reverify {
namespace {

// The command's message: its stderr (trimmed, one line when it has several), else its status.
std::string failure_text(const std::string& program, const CommandRun& run) {
  std::string err = run.err;
  while (!err.empty() && (err.back() == '\n' || err.back() == ' '))
    err.pop_back();
  if (err.empty())
    return program + " exited with status " + std::to_string(run.exit_code);
  return program + ": " + one_line(err, 600);
}

bool unknown_job(const CommandRun& run) {
  return run.err.find("Invalid job id") != std::string::npos;
}

}  // namespace

SlurmCli::SlurmCli(const SlurmConfig& config) : bin_dir_(config.bin_dir) {
  // Nothing of the daemon's environment: sbatch --export=ALL hands the job what sbatch has.
  options_.inherit_env = false;
  const char* path = std::getenv("PATH");
  options_.env["PATH"] = path ? path : "/usr/bin:/bin";
  const char* conf = std::getenv("SLURM_CONF");
  if (!config.slurm_conf.empty())
    options_.env["SLURM_CONF"] = config.slurm_conf.string();
  else if (conf)
    options_.env["SLURM_CONF"] = conf;
  options_.max_output_bytes = 16 * 1024 * 1024;
}

Result<CommandRun> SlurmCli::run(const std::string& program, std::vector<std::string> args) const {
  args.insert(args.begin(), bin_dir_.empty() ? program : (bin_dir_ / program).string());
  auto run = run_command(args, options_);
  if (!run) {
    return make_error(ErrorCode::provision,
                      "slurm: " + run.error().message +
                          (bin_dir_.empty() ? " (runner.slurm.bin_dir names where Slurm's "
                                              "commands are)"
                                            : ""));
  }
  return run;
}

Result<std::string> SlurmCli::output(const std::string& program, std::vector<std::string> args,
                                     ErrorCode code) const {
  auto run = this->run(program, std::move(args));
  if (!run)
    return run.error();
  if (run->exit_code != 0)
    return make_error(code, failure_text(program, *run));
  return std::move(run->out);
}

Result<std::string> SlurmCli::submit(const std::vector<std::string>& options,
                                     const std::filesystem::path& script) const {
  auto args = options;
  args.push_back(script.string());
  auto out = output("sbatch", std::move(args), ErrorCode::provision);
  if (!out)
    return out.error();
  std::string id = out->substr(0, out->find_first_of(";\n"));
  if (id.empty() || id.find_first_not_of("0123456789_") != std::string::npos) {
    return make_error(ErrorCode::provision,
                      "sbatch --parsable printed \"" + one_line(*out, 200) + "\", not a job id");
  }
  return id;
}

Result<std::optional<SlurmJob>> SlurmCli::job(const std::string& id) const {
  auto run = this->run("scontrol", {"show", "job", "-o", id});
  if (!run)
    return run.error();
  if (run->exit_code != 0) {
    if (unknown_job(*run))
      return std::optional<SlurmJob>();
    return make_error(ErrorCode::network, failure_text("scontrol", *run));
  }
  const auto records = parse_scontrol_lines(run->out);
  if (records.empty())
    return std::optional<SlurmJob>();
  auto job = read_slurm_job(records.front());
  if (!job)
    return job.error();
  return std::optional<SlurmJob>(std::move(*job));
}

Result<std::vector<std::string>> SlurmCli::active_jobs(const std::string& name,
                                                       const std::string& comment) const {
  auto out =
      output("squeue", {"--noheader", "--name=" + name, "--format=%i|%k"}, ErrorCode::network);
  if (!out)
    return out.error();
  std::vector<std::string> ids;
  std::size_t pos = 0;
  while (pos < out->size()) {
    auto end = out->find('\n', pos);
    if (end == std::string::npos)
      end = out->size();
    const std::string line = out->substr(pos, end - pos);
    const auto bar = line.find('|');
    if (bar != std::string::npos && line.substr(bar + 1) == comment)
      ids.push_back(line.substr(0, bar));
    pos = end + 1;
  }
  return ids;
}

Result<std::vector<SlurmRecord>> SlurmCli::nodes() const {
  auto out = output("scontrol", {"show", "node", "-o"}, ErrorCode::provision);
  if (!out)
    return out.error();
  return parse_scontrol_lines(*out);
}

Result<std::vector<SlurmRecord>> SlurmCli::partitions() const {
  auto out = output("scontrol", {"show", "partition", "-o"}, ErrorCode::provision);
  if (!out)
    return out.error();
  return parse_scontrol_lines(*out);
}

Status SlurmCli::cancel(const std::string& id) const {
  auto run = this->run("scancel", {id});
  if (!run)
    return run.error();
  if (run->exit_code != 0 && !unknown_job(*run))
    return make_error(ErrorCode::network, failure_text("scancel", *run));
  return {};
}

}  // namespace reverify
