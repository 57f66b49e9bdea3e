#pragma once
// What a job touched outside the rebuild contract, read from an strace log (`strace -f -e
// trace=%file,%network`, written by `reverify check-job`'s traced run). Pure: the log's text in,
// the accesses and a finding out.
//
// Why a trace and not a sandbox: a sandbox that hides a path makes the job fail, or worse take
// another branch silently (`if cache.exists()`), and names nothing; the trace names the path the
// job read and the address it connected to, which is what the author needs to fix it.
//
// A read outside the contract is a successful open, stat or exec of a path that is not under:
// the contract's paths (REVERIFY_DATA, REVERIFY_EVAL, REVERIFY_CONFIG, REVERIFY_SEEDS,
// REVERIFY_OUT), the job's checkout, the system's folders (/usr, /lib*, /bin, /sbin, /etc, /proc,
// /sys, /dev, /run, /var/run) or a path the job created itself (an open with O_CREAT, a mkdir),
// nor a prefix the caller allows. A path the job made fresh (mkdir, O_EXCL, a rename's target) is
// its own for the whole run (several processes' lines need not come in order); one it opened with
// O_CREAT alone, from then on (it may have read it before). A read of a path that did not exist is
// a probe, listed but not judged (interpreters probe many). A connect() or sendto() to an AF_INET
// or AF_INET6 address is network use, and so is an AF_UNIX socket (a local database is an input
// too) unless it lies in a folder the job made (its own processes talking) or is the name service
// cache's (/run/nscd, /var/run/nscd).
// Relative paths resolve against the job's working directory, following its chdir() calls.

#include <string>
#include <string_view>
#include <vector>

#include "policies/job_check.hpp"

namespace reverify {

struct TracedAccess {
  std::string syscall;   // "openat", "newfstatat", "execve", ...
  std::string path;      // absolute, lexically normal
  bool ok = false;       // the call succeeded
  bool creates = false;  // O_CREAT, creat: the job's own file from then on
  bool fresh = false;    // mkdir, O_EXCL, rename or link: did not exist before, the job's all along
};

struct TracedConnect {
  std::string family;   // "AF_INET", "AF_INET6", "AF_UNIX"
  std::string address;  // "93.184.216.34:80", "/run/nscd/socket"
  bool ok = false;
};

struct JobTrace {
  std::vector<TracedAccess> files;
  std::vector<TracedConnect> connects;
};

// Reads an strace -f log (lines "PID syscall(args) = result", "<unfinished ...>" joined with its
// "<... resumed>"); lines it does not recognise are skipped.
JobTrace parse_strace(std::string_view log, const std::string& working_dir);

struct TraceScope {
  std::vector<std::string> contract;  // the contract's paths
  std::string checkout;               // the job's working directory (its code)
  std::vector<std::string> allowed;   // more allowed prefixes (--allow-read)
};

// The "inputs" finding: pass, or a failure (hidden_input) naming the paths read outside the
// scope (the first 10, then a count) and every network address.
JobFinding judge_trace(const JobTrace& trace, const TraceScope& scope);

}  // namespace reverify
