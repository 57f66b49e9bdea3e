#include "verify/store_marker.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>

namespace reverify {
namespace {

namespace fs = std::filesystem;

Status fsync_path(const fs::path& path, int flags) {
  const int fd = ::open(path.c_str(), flags | O_CLOEXEC);
  if (fd < 0 || ::fsync(fd) != 0) {
    const int error = errno;
    if (fd >= 0)
      ::close(fd);
    return make_error(ErrorCode::io, "cannot sync " + path.string() + ": " + std::strerror(error));
  }
  ::close(fd);
  return Status::success();
}

}  // namespace

fs::path store_marker_path(const fs::path& state_dir) {
  return state_dir / "reverify.store-id";
}

std::optional<StoreMarker> read_store_marker(const fs::path& state_dir) {
  std::ifstream in(store_marker_path(state_dir));
  if (!in)
    return std::nullopt;
  StoreMarker marker;
  in >> marker.store_id;
  std::string key;
  std::int64_t value = 0;
  while (in >> key >> value) {
    if (key == "verifications")
      marker.handed_out.verification = value;
    else if (key == "pages")
      marker.handed_out.page = value;
  }
  return marker;
}

Status write_store_marker(const fs::path& state_dir, const StoreMarker& marker) {
  const fs::path path = store_marker_path(state_dir);
  const fs::path partial = path.string() + ".partial";
  {
    std::ofstream out(partial, std::ios::trunc);
    out << marker.store_id << "\nverifications " << marker.handed_out.verification << "\npages "
        << marker.handed_out.page << "\n";
    out.flush();
    if (!out)
      return make_error(ErrorCode::io, "cannot write " + partial.string());
  }
  if (auto s = fsync_path(partial, O_RDONLY); !s.ok())
    return s;
  std::error_code ec;
  fs::rename(partial, path, ec);
  if (ec)
    return make_error(ErrorCode::io, "cannot write " + path.string() + ": " + ec.message());
  return fsync_path(state_dir, O_RDONLY | O_DIRECTORY);
}

}  // namespace reverify
