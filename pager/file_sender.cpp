#include "pager/file_sender.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>

namespace reverify {
namespace {

// One write() of the whole line on an O_APPEND descriptor, then fsync: the line is either all
// there or absent after a crash, and concurrent writers never interleave inside a line.
std::string append_line(const std::string& path, const std::string& line) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0640);
  if (fd < 0)
    return "cannot open \"" + path + "\": " + std::strerror(errno);
  std::string error;
  const ssize_t written = ::write(fd, line.data(), line.size());
  if (written != static_cast<ssize_t>(line.size())) {
    error = "cannot append to \"" + path +
            "\": " + (written < 0 ? std::strerror(errno) : "short write");
  } else if (::fsync(fd) != 0) {
    error = "cannot fsync \"" + path + "\": " + std::strerror(errno);
  }
  ::close(fd);
  return error;
}

std::string identity_of(const std::string& page_key, const std::string& dedup_key,
                        const std::string& action, const std::string& created_at) {
  return page_key + '\n' + dedup_key + '\n' + action + '\n' + created_at;
}

}  // namespace

FileNotifier::FileNotifier(SenderConfig config) : config_(std::move(config)) {}

bool FileNotifier::load_written_ids() {
  std::ifstream in(config_.path);
  if (!in)
    return true;  // no file yet: nothing written
  std::string line;
  while (std::getline(in, line)) {
    const auto j = nlohmann::json::parse(line, nullptr, false);
    if (!j.is_object() || j.value("sender", "") != config_.name)
      continue;
    written_.insert(identity_of(j.value("page_key", ""), j.value("dedup_key", ""),
                                j.value("action", ""), j.value("created_at", "")));
  }
  return !in.bad();
}

DeliveryResult FileNotifier::deliver(const PageEvent& event, int /*attempt*/) {
  const std::string what = "file " + config_.name + " (" + config_.path + ")";
  std::lock_guard lock(mutex_);
  if (!loaded_) {
    if (!load_written_ids())
      return {false, false, what + ": cannot read the existing lines"};
    loaded_ = true;
  }
  const std::string key =
      identity_of(page_key(event), event.dedup_key, to_string(event.action), event.created_at);
  if (event.id != 0 && written_.contains(key))
    return {true, false, what + ": already written"};
  nlohmann::json line = to_json(event);
  line["sender"] = config_.name;
  line["severity"] = severity_of(config_.severity, event.cls);
  if (auto error = append_line(config_.path, line.dump() + "\n"); !error.empty()) {
    return {false, false, what + ": " + error};
  }
  if (event.id != 0)
    written_.insert(key);
  return {true, false, what + ": appended"};
}

}  // namespace reverify
