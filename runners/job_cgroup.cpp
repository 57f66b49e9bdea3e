#include "runners/job_cgroup.hpp"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <optional>
#include <random>
#include <sstream>
#include <thread>

namespace reverify {
namespace {

namespace fs = std::filesystem;

std::vector<std::string> split(const std::string& text, char separator) {
  std::vector<std::string> parts;
  std::istringstream in(text);
  for (std::string part; std::getline(in, part, separator);)
    parts.push_back(part);
  return parts;
}

bool has_word(const std::string& list, const std::string& word, char separator) {
  const auto words = split(list, separator);
  return std::find(words.begin(), words.end(), word) != words.end();
}

std::string read_text(const fs::path& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// Writes `text` to a cgroup control file in one write(2); errno on failure, 0 on success.
int write_control(const fs::path& path, const std::string& text) {
  FILE* file = std::fopen(path.c_str(), "we");
  if (!file)
    return errno;
  const bool written = std::fputs(text.c_str(), file) >= 0;
  const int write_errno = errno;
  const bool closed = std::fclose(file) == 0;  // the write reaches the kernel here
  if (!written)
    return write_errno ? write_errno : EIO;
  return closed ? 0 : errno;
}

// "key value" lines (pids.events, memory.events, memory.oom_control).
std::uint64_t counter(const fs::path& file, const std::string& key) {
  std::ifstream in(file);
  std::string name;
  std::uint64_t value = 0;
  while (in >> name >> value) {
    if (name == key)
      return value;
  }
  return 0;
}

std::uint64_t number_in(const fs::path& file) {
  std::ifstream in(file);
  std::uint64_t value = 0;
  in >> value;
  return value;
}

// The hierarchies this process can make cgroups in, below its own cgroup of each.
struct CgroupHost {
  std::optional<fs::path> unified;  // v2: our own cgroup's folder
  bool unified_pids = false;        // enabled for the children of `unified`
  bool unified_memory = false;
  std::optional<fs::path> v1_pids;    // our own cgroup's folder in the v1 pids hierarchy
  std::optional<fs::path> v1_memory;  // ... in the v1 memory hierarchy
  std::string notes;                  // what is missing, and why
};

struct Mount {
  fs::path root;   // the part of the hierarchy the mount shows (field 4)
  fs::path point;  // where it is mounted (field 5)
};

// Our own cgroup's folder under a mount: the path /proc/self/cgroup names, relative to what the
// mount shows. nullopt when it is outside (a mount of another part of the hierarchy).
std::optional<fs::path> own_folder(const Mount& mount, const std::string& cgroup_path) {
  const fs::path own = fs::path(cgroup_path).lexically_relative(mount.root);
  if (own.empty() || *own.begin() == "..")
    return std::nullopt;
  return (mount.point / own).lexically_normal();
}

// Enables `controller` for the children of the v2 folder `dir` when it is available there.
bool enable_for_children(const fs::path& dir, const std::string& controller) {
  if (has_word(read_text(dir / "cgroup.subtree_control"), controller, ' '))
    return true;
  std::string available = read_text(dir / "cgroup.controllers");
  available.erase(std::remove(available.begin(), available.end(), '\n'), available.end());
  if (!has_word(available, controller, ' '))
    return false;
  // EBUSY when the folder holds processes itself (cgroup v2's no-internal-process rule).
  return write_control(dir / "cgroup.subtree_control", "+" + controller) == 0;
}

bool writable(const fs::path& dir) {
  return ::access(dir.c_str(), W_OK) == 0;
}

CgroupHost detect() {
  CgroupHost host;
  std::optional<Mount> unified, pids, memory;
  std::ifstream mountinfo("/proc/self/mountinfo");
  for (std::string line; std::getline(mountinfo, line);) {
    const auto dash = line.find(" - ");
    if (dash == std::string::npos)
      continue;
    const auto fields = split(line.substr(0, dash), ' ');
    const auto after = split(line.substr(dash + 3), ' ');
    if (fields.size() < 5 || after.size() < 3)
      continue;
    const Mount mount{fields[3], fields[4]};
    if (after[0] == "cgroup2" && !unified)
      unified = mount;
    if (after[0] == "cgroup" && has_word(after[2], "pids", ',') && !pids)
      pids = mount;
    if (after[0] == "cgroup" && has_word(after[2], "memory", ',') && !memory)
      memory = mount;
  }
  std::ifstream self("/proc/self/cgroup");
  for (std::string line; std::getline(self, line);) {
    const auto first = line.find(':');
    const auto second = line.find(':', first + 1);
    if (first == std::string::npos || second == std::string::npos)
      continue;
    const std::string controllers = line.substr(first + 1, second - first - 1);
    const std::string path = line.substr(second + 1);
    if (line.compare(0, first, "0") == 0 && controllers.empty() && unified) {
      if (auto dir = own_folder(*unified, path); dir && writable(*dir))
        host.unified = dir;
    } else if (has_word(controllers, "pids", ',') && pids) {
      if (auto dir = own_folder(*pids, path); dir && writable(*dir))
        host.v1_pids = dir;
    } else if (has_word(controllers, "memory", ',') && memory) {
      if (auto dir = own_folder(*memory, path); dir && writable(*dir))
        host.v1_memory = dir;
    }
  }
  if (host.unified) {
    host.unified_pids = enable_for_children(*host.unified, "pids");
    host.unified_memory = enable_for_children(*host.unified, "memory");
  }
  std::vector<std::string> missing;
  if (!host.unified && !host.v1_pids && !host.v1_memory)
    missing.push_back("no cgroup hierarchy this process may write to");
  if (!host.unified_pids && !host.v1_pids)
    missing.push_back("no pids controller (the job's pids are not bounded by a cgroup)");
  if (!host.unified_memory && !host.v1_memory)
    missing.push_back("no memory controller (the job's memory is not bounded by a cgroup)");
  for (const auto& m : missing)
    host.notes += (host.notes.empty() ? "" : "; ") + m;
  return host;
}

const CgroupHost& host() {
  static const CgroupHost detected = detect();
  return detected;
}

std::string random_suffix() {
  std::random_device random;
  char text[9];
  std::snprintf(text, sizeof text, "%08x", static_cast<unsigned>(random()));
  return text;
}

// Sets the limits a folder counts; the file that refused, with why, on failure.
Status set_limits(const CgroupDir& dir, const CgroupLimits& limits) {
  std::vector<std::pair<std::string, std::string>> writes;
  if (dir.pids && limits.max_pids > 0)
    writes.emplace_back("pids.max", std::to_string(limits.max_pids));
  if (dir.memory && limits.memory_bytes > 0) {
    const std::string bytes = std::to_string(limits.memory_bytes);
    if (dir.version == 2) {
      writes.emplace_back("memory.max", bytes);
      if (fs::exists(dir.path / "memory.swap.max"))
        writes.emplace_back("memory.swap.max", "0");
    } else {
      writes.emplace_back("memory.limit_in_bytes", bytes);
      // Memory plus swap no larger than memory: no swap (set after the memory limit, never below).
      if (fs::exists(dir.path / "memory.memsw.limit_in_bytes"))
        writes.emplace_back("memory.memsw.limit_in_bytes", bytes);
    }
  }
  for (const auto& [file, value] : writes) {
    if (int error = write_control(dir.path / file, value); error != 0) {
      return make_error(ErrorCode::provision, (dir.path / file).string() + ": cannot set " + value +
                                                  ": " + std::strerror(error));
    }
  }
  return {};
}

std::vector<pid_t> pids_in(const fs::path& procs) {
  std::vector<pid_t> pids;
  std::ifstream in(procs);
  for (pid_t pid = 0; in >> pid;)
    pids.push_back(pid);
  return pids;
}

}  // namespace

Result<JobCgroup> JobCgroup::create(const std::string& name, const CgroupLimits& limits) {
  const CgroupHost& offered = host();
  const std::string folder = "reverify-" + name + "-" + random_suffix();
  std::vector<CgroupDir> dirs;
  if (offered.unified)
    dirs.push_back({*offered.unified / folder, 2, offered.unified_pids, offered.unified_memory});
  if (offered.v1_pids && !offered.unified_pids)
    dirs.push_back({*offered.v1_pids / folder, 1, true, false});
  if (offered.v1_memory && !offered.unified_memory)
    dirs.push_back({*offered.v1_memory / folder, 1, false, true});
  JobCgroup made;
  for (const auto& dir : dirs) {
    std::error_code ec;
    if (!fs::create_directory(dir.path, ec)) {
      made.remove();
      return make_error(ErrorCode::provision, dir.path.string() +
                                                  ": cannot create the job's cgroup: " +
                                                  (ec ? ec.message() : "it already exists"));
    }
    made.dirs_.push_back(dir);
    if (auto set = set_limits(dir, limits); !set) {
      made.remove();
      return set.error();
    }
  }
  return made;
}

std::string JobCgroup::host_notes() {
  return host().notes;
}

bool JobCgroup::counts_pids() const {
  return std::any_of(dirs_.begin(), dirs_.end(), [](const CgroupDir& d) { return d.pids; });
}

bool JobCgroup::counts_memory() const {
  return std::any_of(dirs_.begin(), dirs_.end(), [](const CgroupDir& d) { return d.memory; });
}

fs::path JobCgroup::v2_dir() const {
  for (const auto& dir : dirs_) {
    if (dir.version == 2)
      return dir.path;
  }
  return {};
}

std::vector<fs::path> JobCgroup::v1_dirs() const {
  std::vector<fs::path> v1;
  for (const auto& dir : dirs_) {
    if (dir.version == 1)
      v1.push_back(dir.path);
  }
  return v1;
}

std::vector<pid_t> JobCgroup::members() const {
  return dirs_.empty() ? std::vector<pid_t>() : pids_in(dirs_.front().path / "cgroup.procs");
}

bool JobCgroup::kill() const {
  const fs::path path = v2_dir();
  return !path.empty() && fs::exists(path / "cgroup.kill") &&
         write_control(path / "cgroup.kill", "1") == 0;
}

CgroupEvents JobCgroup::events() const {
  CgroupEvents events;
  for (const auto& dir : dirs_) {
    if (dir.pids)
      events.forks_refused = counter(dir.path / "pids.events", "max");
    if (!dir.memory)
      continue;
    if (dir.version == 2) {
      events.memory_limit_ooms = counter(dir.path / "memory.events", "oom");
      events.oom_kills = counter(dir.path / "memory.events", "oom_kill");
    } else {
      // v1 counts no OOM of the limit's own (and recent kernels no longer keep memory.failcnt):
      // an OOM kill after the job's peak usage reached its limit is the limit's; one below it
      // (or without a limit: the file then holds a near-2^63 "unlimited") is the host's.
      events.oom_kills = counter(dir.path / "memory.oom_control", "oom_kill");
      const std::uint64_t limit = number_in(dir.path / "memory.limit_in_bytes");
      const std::uint64_t peak = std::max(number_in(dir.path / "memory.max_usage_in_bytes"),
                                          number_in(dir.path / "memory.memsw.max_usage_in_bytes"));
      if (events.oom_kills > 0 && limit > 0 && peak >= limit - limit / 64)
        events.memory_limit_ooms = events.oom_kills;
    }
  }
  return events;
}

void JobCgroup::remove() const {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(1);
  for (const auto& dir : dirs_) {
    // EBUSY while the last members are still exiting.
    while (::rmdir(dir.path.c_str()) != 0 && errno == EBUSY &&
           std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  }
}

nlohmann::json JobCgroup::to_json() const {
  nlohmann::json dirs = nlohmann::json::array();
  for (const auto& dir : dirs_) {
    dirs.push_back({{"path", dir.path.string()},
                    {"version", dir.version},
                    {"pids", dir.pids},
                    {"memory", dir.memory}});
  }
  return dirs;
}

JobCgroup JobCgroup::from_json(const nlohmann::json& dirs) {
  JobCgroup cgroup;
  if (!dirs.is_array())
    return cgroup;
  for (const auto& dir : dirs) {
    if (!dir.is_object() || !dir.contains("path") || !dir["path"].is_string())
      continue;
    cgroup.dirs_.push_back({dir["path"].get<std::string>(), dir.value("version", 2),
                            dir.value("pids", false), dir.value("memory", false)});
  }
  return cgroup;
}

}  // namespace reverify
