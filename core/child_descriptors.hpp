#pragma once
// A Boost.Process initializer for the children the daemon starts (git checkouts, helper
// programs): only stdin, stdout and stderr survive the child's execve. Asio and libcurl open
// descriptors without close-on-exec, so a child inherited the daemon's listening socket: a git
// checkout still running when the daemon was killed kept its port, and the restart failed with
// "Address already in use" (tests/daemon/faults_itest.cpp). close_range is async-signal-safe, as
// everything between fork and execve of a multi-threaded process must be.

#include <unistd.h>

#include <boost/process/extend.hpp>

namespace reverify {

struct only_standard_descriptors : boost::process::extend::handler {
  template <class Executor>
  void on_exec_setup(Executor&) const {
    ::close_range(3, ~0U, CLOSE_RANGE_CLOEXEC);
  }
};

}  // namespace reverify
