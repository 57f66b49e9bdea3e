#include "core/program_output.hpp"

#include <boost/process.hpp>
#include <istream>

#include "core/child_descriptors.hpp"

namespace reverify {

namespace bp = boost::process;

Result<std::string> command_output(const std::vector<std::string>& argv,
                                   const CommandOptions& options) {
  if (argv.empty())
    return make_error(ErrorCode::invalid_argument, "command_output: empty argv");
  boost::filesystem::path program = argv[0];
  if (argv[0].find('/') == std::string::npos)
    program = bp::search_path(argv[0]);
  if (program.empty())
    return make_error(ErrorCode::not_found, argv[0] + ": not found on PATH");
  std::vector<std::string> args(argv.begin() + 1, argv.end());
  std::error_code ec;
  bp::ipstream out;
  bp::child child;
  if (options.cwd) {
    child = bp::child(program, bp::args(args), bp::std_out > out, bp::std_err > bp::null,
                      bp::std_in < bp::null, bp::start_dir(options.cwd->string()),
                      only_standard_descriptors{}, ec);
  } else {
    child = bp::child(program, bp::args(args), bp::std_out > out, bp::std_err > bp::null,
                      bp::std_in < bp::null, only_standard_descriptors{}, ec);
  }
  if (ec)
    return make_error(ErrorCode::io, argv[0] + ": cannot start: " + ec.message());
  std::string text;
  char buffer[65536];
  bool too_long = false;
  while (out.read(buffer, sizeof buffer) || out.gcount() > 0) {
    if (text.size() + static_cast<std::size_t>(out.gcount()) > options.max_output_bytes) {
      too_long = true;  // keep draining so the child never blocks on a full pipe
      continue;
    }
    text.append(buffer, static_cast<std::size_t>(out.gcount()));
  }
  child.wait(ec);
  if (too_long) {
    return make_error(ErrorCode::io, argv[0] + ": printed more than " +
                                         std::to_string(options.max_output_bytes) + " bytes");
  }
  if (ec || child.exit_code() != 0) {
    return make_error(ErrorCode::io, argv[0] + " " + (argv.size() > 1 ? argv[1] : "") +
                                         ": exited with status " +
                                         std::to_string(ec ? -1 : child.exit_code()));
  }
  return text;
}

}  // namespace reverify
