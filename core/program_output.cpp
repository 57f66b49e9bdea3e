#include "core/program_output.hpp"

#include <sys/wait.h>

#include <boost/process.hpp>
#include <istream>
#include <thread>

#include "core/child_descriptors.hpp"

namespace reverify {

namespace bp = boost::process;

namespace {

constexpr std::size_t kStderrKeptBytes = 64 * 1024;

// Reads a pipe to its end, keeping at most `cap` bytes (the rest is drained, so the child never
// blocks on a full pipe); false when more than `cap` came.
bool read_all(bp::ipstream& in, std::string& text, std::size_t cap) {
  char buffer[65536];
  bool within = true;
  while (in.read(buffer, sizeof buffer) || in.gcount() > 0) {
    const auto n = static_cast<std::size_t>(in.gcount());
    if (text.size() + n > cap) {
      text.append(buffer, std::min(n, cap - text.size()));
      within = false;
      continue;
    }
    text.append(buffer, n);
  }
  return within;
}

}  // namespace

Result<CommandRun> run_command(const std::vector<std::string>& argv,
                               const CommandOptions& options) {
  if (argv.empty())
    return make_error(ErrorCode::invalid_argument, "run_command: empty argv");
  boost::filesystem::path program = argv[0];
  if (argv[0].find('/') == std::string::npos)
    program = bp::search_path(argv[0]);
  if (program.empty())
    return make_error(ErrorCode::not_found, argv[0] + ": not found on PATH");
  std::vector<std::string> args(argv.begin() + 1, argv.end());
  bp::environment env =
      options.inherit_env ? bp::environment(boost::this_process::environment()) : bp::environment();
  for (const auto& [name, value] : options.env)
    env[name] = value;
  const std::string cwd =
      options.cwd ? options.cwd->string() : boost::filesystem::current_path().string();
  std::error_code ec;
  bp::ipstream out, err;
  bp::child child(program, bp::args(args), bp::env(env), bp::std_out > out, bp::std_err > err,
                  bp::std_in < bp::null, bp::start_dir(cwd), only_standard_descriptors{}, ec);
  if (ec)
    return make_error(ErrorCode::io, argv[0] + ": cannot start: " + ec.message());
  CommandRun run;
  std::thread err_reader([&] { read_all(err, run.err, kStderrKeptBytes); });
  const bool within = read_all(out, run.out, options.max_output_bytes);
  err_reader.join();
  child.wait(ec);
  if (!within) {
    return make_error(ErrorCode::io, argv[0] + ": printed more than " +
                                         std::to_string(options.max_output_bytes) + " bytes");
  }
  if (!ec) {
    const int status = child.native_exit_code();
    run.exit_code = WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status);
  }
  return run;
}

Result<std::string> command_output(const std::vector<std::string>& argv,
                                   const CommandOptions& options) {
  auto run = run_command(argv, options);
  if (!run)
    return run.error();
  if (run->exit_code != 0) {
    return make_error(ErrorCode::io, argv[0] + " " + (argv.size() > 1 ? argv[1] : "") +
                                         ": exited with status " + std::to_string(run->exit_code));
  }
  return std::move(run->out);
}

}  // namespace reverify
