#include "policies/job_trace.hpp"

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <map>
#include <set>

#include "core/text.hpp"

namespace reverify {
namespace {

namespace fs = std::filesystem;

// Calls whose first string argument is a path the job opened, looked at or ran.
const std::set<std::string, std::less<>> kPathCalls = {
    "open",       "openat",     "openat2",  "creat",     "stat",      "lstat",
    "newfstatat", "fstatat64",  "statx",    "access",    "faccessat", "faccessat2",
    "readlink",   "readlinkat", "execve",   "execveat",  "mkdir",     "mkdirat",
    "chdir",      "rename",     "renameat", "renameat2", "link",      "linkat",
    "symlink",    "symlinkat",  "statfs",   "truncate",  "getxattr",  "lgetxattr"};

// Looking at a path (a stat, an access check) reads no content: a folder above an allowed path may
// be looked at (a job makes its output folder's parents).
bool looks_only(std::string_view call) {
  return call.find("stat") != std::string_view::npos ||
         call.find("access") != std::string_view::npos ||
         call.find("readlink") != std::string_view::npos ||
         call.find("xattr") != std::string_view::npos;
}

const std::vector<std::string> kSystemPrefixes = {"/usr", "/lib",  "/lib32",  "/lib64", "/libx32",
                                                  "/bin", "/sbin", "/etc",    "/proc",  "/sys",
                                                  "/dev", "/run",  "/var/run"};

// strace's C-style escapes: \" \\ \n \t \r \v \f, \ooo, \xHH.
std::string unescape(std::string_view text) {
  std::string out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '\\' || i + 1 >= text.size()) {
      out += text[i];
      continue;
    }
    const char c = text[++i];
    const std::map<char, char> simple = {
        {'n', '\n'}, {'t', '\t'}, {'r', '\r'}, {'v', '\v'}, {'f', '\f'}};
    if (auto s = simple.find(c); s != simple.end()) {
      out += s->second;
    } else if (unsigned value = 0;
               c == 'x' && i + 2 < text.size() &&
               std::from_chars(text.data() + i + 1, text.data() + i + 3, value, 16).ptr ==
                   text.data() + i + 3) {
      out += static_cast<char>(value);
      i += 2;
    } else if (c >= '0' && c <= '7') {
      std::size_t n = 0;
      int value = 0;
      for (; n < 3 && i + n < text.size() && text[i + n] >= '0' && text[i + n] <= '7'; ++n)
        value = value * 8 + (text[i + n] - '0');
      out += static_cast<char>(value);
      i += n - 1;
    } else {
      out += c;
    }
  }
  return out;
}

// The first double-quoted string in `args`, unescaped; nullopt when there is none.
std::optional<std::string> first_string(std::string_view args) {
  const auto open = args.find('"');
  if (open == std::string_view::npos)
    return std::nullopt;
  for (std::size_t i = open + 1; i < args.size(); ++i) {
    if (args[i] == '\\')
      ++i;
    else if (args[i] == '"')
      return unescape(args.substr(open + 1, i - open - 1));
  }
  return std::nullopt;
}

// The value after `key=` up to the next ',' or '}' (quotes and a call's parentheses removed).
std::string field_after(std::string_view args, std::string_view key) {
  const auto at = args.find(key);
  if (at == std::string_view::npos)
    return {};
  std::string_view rest = args.substr(at + key.size());
  if (auto quoted = first_string(rest); quoted && rest.find('"') < rest.find_first_of(",}"))
    return *quoted;
  rest = rest.substr(0, rest.find_first_of(",}"));
  const auto paren = rest.find('(');
  if (paren != std::string_view::npos)
    rest = rest.substr(paren + 1, rest.find(')') - paren - 1);
  return std::string(rest);
}

struct Call {
  std::string pid, name, args;
  bool ok = false;
};

// "PID name(args) = result" -> Call; unfinished calls wait in `pending` for their resumption.
std::optional<Call> read_call(std::string_view line, std::map<std::string, std::string>& pending) {
  const auto space = line.find(' ');
  if (space == std::string_view::npos)
    return std::nullopt;
  const std::string pid(line.substr(0, space));
  const auto start = line.find_first_not_of(' ', space);  // strace pads the pid: "6062  execve("
  if (start == std::string_view::npos)
    return std::nullopt;
  std::string body(line.substr(start));
  if (const auto cut = body.find(" <unfinished ...>"); cut != std::string::npos) {
    pending[pid] = body.substr(0, cut);
    return std::nullopt;
  }
  if (body.rfind("<... ", 0) == 0) {
    const auto resumed = body.find(" resumed>");
    auto it = pending.find(pid);
    if (resumed == std::string::npos || it == pending.end())
      return std::nullopt;
    body = it->second + body.substr(resumed + 9);
    pending.erase(it);
  }
  // strace pads a short call's result to a column: "unlink(\"/tmp/x\")        = 0".
  const auto paren = body.find('(');
  const auto equals = body.rfind(" = ");
  if (paren == std::string::npos || equals == std::string::npos || equals < paren)
    return std::nullopt;
  const auto close = body.find_last_not_of(' ', equals);
  if (close == std::string::npos || close < paren || body[close] != ')')
    return std::nullopt;
  Call call{pid, body.substr(0, paren), body.substr(paren + 1, close - paren - 1), false};
  const std::string result = body.substr(equals + 3);
  call.ok = !result.empty() && result[0] != '-' && result[0] != '?';
  return call;
}

bool fresh(const Call& call) {
  return call.name.find("mkdir") == 0 || call.name.find("link") != std::string::npos ||
         call.name.find("rename") == 0 || call.args.find("O_EXCL") != std::string::npos;
}

bool creates(const Call& call) {
  return fresh(call) || call.name == "creat" || call.args.find("O_CREAT") != std::string::npos;
}

// The path a call names, absolute; for rename/link the target (the second string) counts too.
std::vector<std::string> call_paths(const Call& call, const fs::path& cwd) {
  std::vector<std::string> paths;
  std::string_view rest = call.args;
  const bool relative_to_fd = call.name.size() > 2 &&
                              call.name.substr(call.name.size() - 2) == "at" &&
                              call.args.rfind("AT_FDCWD", 0) != 0;
  for (int n = 0; n < 2; ++n) {
    auto path = first_string(rest);
    if (!path || path->empty())
      break;
    if (fs::path(*path).is_absolute() || !relative_to_fd)
      paths.push_back((cwd / *path).lexically_normal().string());
    rest = rest.substr(rest.find('"') + 1);
    rest = rest.substr(rest.find('"') + 1);
    if (call.name.find("rename") != 0 && call.name.find("link") == std::string::npos)
      break;
  }
  return paths;
}

bool under(const std::string& path, const std::string& prefix) {
  if (prefix.empty())
    return false;
  const std::string p =
      prefix.back() == '/' && prefix.size() > 1 ? prefix.substr(0, prefix.size() - 1) : prefix;
  return path == p || (path.size() > p.size() && path.compare(0, p.size(), p) == 0 &&
                       (p == "/" || path[p.size()] == '/'));
}

bool under_any(const std::string& path, const std::set<std::string>& prefixes) {
  return std::any_of(prefixes.begin(), prefixes.end(),
                     [&](const std::string& p) { return under(path, p); });
}

// "a, b, c" for at most ten, then how many more.
std::string first_ten(const std::set<std::string>& items) {
  std::vector<std::string> named(items.begin(), items.end());
  if (named.size() > 10) {
    const auto more = named.size() - 10;
    named.resize(10);
    named.push_back(std::to_string(more) + " more");
  }
  return joined(named);
}

}  // namespace

JobTrace parse_strace(std::string_view log, const std::string& working_dir) {
  JobTrace trace;
  std::map<std::string, std::string> pending;
  fs::path cwd = working_dir;
  std::size_t start = 0;
  while (start < log.size()) {
    auto end = log.find('\n', start);
    if (end == std::string_view::npos)
      end = log.size();
    const auto call = read_call(log.substr(start, end - start), pending);
    start = end + 1;
    if (!call)
      continue;
    if (call->name == "connect" || call->name == "sendto" || call->name == "sendmsg") {
      const std::string family = field_after(call->args, "sa_family=");
      if (family == "AF_INET" || family == "AF_INET6") {
        const auto pton = call->args.find("inet_pton(AF_INET6, ");
        const std::string address =
            family == "AF_INET"
                ? field_after(call->args, "inet_addr")
                : first_string(std::string_view(call->args)
                                   .substr(pton == std::string::npos ? call->args.size() : pton))
                      .value_or("?");
        const std::string port =
            field_after(call->args, family == "AF_INET" ? "sin_port=" : "sin6_port=");
        trace.connects.push_back({family, address + ":" + port, call->ok});
      } else if (family == "AF_UNIX") {
        trace.connects.push_back({family, field_after(call->args, "sun_path="), call->ok});
      }
      continue;
    }
    if (!kPathCalls.contains(call->name))
      continue;
    for (const auto& path : call_paths(*call, cwd)) {
      trace.files.push_back(
          {call->name, path, call->ok, call->ok && creates(*call), call->ok && fresh(*call)});
      if (call->name == "chdir" && call->ok)
        cwd = path;
    }
  }
  return trace;
}

JobFinding judge_trace(const JobTrace& trace, const TraceScope& scope) {
  std::vector<std::string> allowed = scope.contract;
  allowed.push_back(scope.checkout);
  allowed.insert(allowed.end(), scope.allowed.begin(), scope.allowed.end());
  allowed.insert(allowed.end(), kSystemPrefixes.begin(), kSystemPrefixes.end());
  std::set<std::string> own, outside, probes;
  for (const auto& access : trace.files) {
    if (access.fresh)
      own.insert(access.path);
  }
  for (const auto& access : trace.files) {
    const auto& path = access.path;
    const bool inside = std::any_of(allowed.begin(), allowed.end(),
                                    [&](const std::string& p) { return under(path, p); });
    const bool above = looks_only(access.syscall) &&
                       std::any_of(allowed.begin(), allowed.end(),
                                   [&](const std::string& p) { return under(p, path); });
    if (access.creates)
      own.insert(path);
    if (inside || above || under_any(path, own))
      continue;
    (access.ok ? outside : probes).insert(path);
  }
  std::set<std::string> network;
  for (const auto& c : trace.connects) {
    const bool local =
        c.family == "AF_UNIX" && (under_any(c.address, own) || under(c.address, "/run/nscd") ||
                                  under(c.address, "/var/run/nscd"));
    if (!local)
      network.insert(c.family + " " + c.address + (c.ok ? "" : " (refused or unreachable here)"));
  }
  if (outside.empty() && network.empty()) {
    JobFinding f{"inputs",
                 FindingStatus::pass,
                 "no file read outside the contract's paths, the checkout and the system's "
                 "folders, no network (" +
                     std::to_string(trace.files.size()) + " file accesses traced)",
                 JobFailure::none,
                 {},
                 {}};
    std::size_t listed = 0;
    for (const auto& p : probes) {
      if (listed++ == 5)
        break;
      f.details.push_back("looked for, absent here: " + p);
    }
    return f;
  }
  std::string summary;
  if (!outside.empty())
    summary =
        "the job read " + std::to_string(outside.size()) +
        " path(s) outside REVERIFY_DATA, REVERIFY_EVAL and its checkout: " + first_ten(outside);
  if (!network.empty())
    summary +=
        std::string(summary.empty() ? "" : "; ") + "it used the network: " + first_ten(network);
  JobFinding f{"inputs",
               FindingStatus::fail,
               summary +
                   ". No hash covers what it read there, and a runner gives it neither "
                   "those files nor a network: a rebuild trains on something else or fails",
               JobFailure::hidden_input,
               "read every input through the contract: put it in the dataset snapshot "
               "(REVERIFY_DATA) or the config (REVERIFY_CONFIG); if it must come from elsewhere, "
               "snapshot it and record it in the manifest",
               {}};
  return f;
}

}  // namespace reverify
