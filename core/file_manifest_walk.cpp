#include "core/file_manifest_walk.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <memory>
#include <optional>
#include <string_view>

namespace reverify {
namespace fs = std::filesystem;
namespace {

const char* special_kind(fs::file_type type) {
  switch (type) {
    case fs::file_type::fifo:
      return "a fifo";
    case fs::file_type::socket:
      return "a socket";
    case fs::file_type::block:
      return "a block device";
    case fs::file_type::character:
      return "a character device";
    default:
      return "not a regular file";
  }
}

Error not_hashable(const std::string& relative_path, const std::string& what) {
  return make_error(ErrorCode::invalid_argument,
                    relative_path + ": " + what +
                        "; a folder to hash may only hold regular files, " +
                        "folders and symlinks to regular files inside it");
}

bool is_inside(const fs::path& target, const fs::path& root) {
  const fs::path relative = target.lexically_relative(root);
  return !relative.empty() && *relative.begin() != ".." && relative != ".";
}

fs::file_type type_of_mode(mode_t mode) {
  if (S_ISREG(mode))
    return fs::file_type::regular;
  if (S_ISDIR(mode))
    return fs::file_type::directory;
  if (S_ISLNK(mode))
    return fs::file_type::symlink;
  if (S_ISFIFO(mode))
    return fs::file_type::fifo;
  if (S_ISSOCK(mode))
    return fs::file_type::socket;
  if (S_ISBLK(mode))
    return fs::file_type::block;
  if (S_ISCHR(mode))
    return fs::file_type::character;
  return fs::file_type::unknown;
}

// What readdir says the entry is, without a stat; none when the file system does not say.
std::optional<fs::file_type> type_of_dirent(unsigned char type) {
  if (type == DT_UNKNOWN)
    return std::nullopt;
  return type_of_mode(DTTOIF(type));
}

struct DirEntry {
  std::string name;
  std::optional<fs::file_type> type;
};

using DirStream = std::unique_ptr<DIR, int (*)(DIR*)>;

// Lists with readdir and stats relative to the folder (fstatat): one system call per file and no
// walk of the whole path each time, which took most of the listing time of a 2,000-file corpus.
class Walker {
 public:
  explicit Walker(fs::path root) : root_(std::move(root)) {}

  Status walk(const fs::path& dir, const std::string& prefix) {
    DirStream stream(::opendir(dir.c_str()), &::closedir);
    if (!stream)
      return errno_error(prefix.empty() ? "." : prefix, "cannot list folder");
    std::vector<DirEntry> entries;
    errno = 0;
    while (const dirent* entry = ::readdir(stream.get())) {
      const std::string_view name(entry->d_name);
      if (name != "." && name != "..")
        entries.push_back(DirEntry{std::string(name), type_of_dirent(entry->d_type)});
      errno = 0;
    }
    if (errno != 0)
      return errno_error(prefix.empty() ? "." : prefix, "cannot list folder");
    // Visit in name order so that, of several bad entries, the same one is always reported.
    std::sort(entries.begin(), entries.end(),
              [](const DirEntry& a, const DirEntry& b) { return a.name < b.name; });
    for (const DirEntry& entry : entries) {
      Status status = visit(::dirfd(stream.get()), dir, entry, prefix);
      if (!status)
        return status;
    }
    return Status::success();
  }

  std::vector<ListedFile> take() && { return std::move(files_); }

 private:
  Status visit(int dir_fd, const fs::path& dir, const DirEntry& entry, const std::string& prefix) {
    const std::string relative = prefix.empty() ? entry.name : prefix + "/" + entry.name;
    if (relative.find('\n') != std::string::npos) {
      return not_hashable(relative,
                          "path holds a newline, which the file manifest's line format "
                          "cannot represent");
    }
    // A regular file needs its size, so its stat is due anyway; others need one only when
    // readdir did not give the type.
    struct stat info {};
    const bool need_stat = !entry.type || *entry.type == fs::file_type::regular;
    if (need_stat && ::fstatat(dir_fd, entry.name.c_str(), &info, AT_SYMLINK_NOFOLLOW) != 0)
      return errno_error(relative, "cannot stat");
    const fs::file_type type = need_stat ? type_of_mode(info.st_mode) : *entry.type;
    switch (type) {
      case fs::file_type::directory:
        return walk(dir / entry.name, relative);
      case fs::file_type::regular:
        files_.push_back(
            ListedFile{relative, dir / entry.name, static_cast<std::uint64_t>(info.st_size)});
        return Status::success();
      case fs::file_type::symlink:
        return follow(dir / entry.name, relative);
      default:
        return not_hashable(relative, std::string("is ") + special_kind(type));
    }
  }

  Status follow(const fs::path& link, const std::string& relative) {
    std::error_code ec;
    const fs::path target = fs::canonical(link, ec);
    if (ec)
      return not_hashable(relative, "symlink does not resolve (" + ec.message() + ")");
    if (!is_inside(target, root_)) {
      return not_hashable(relative,
                          "symlink leaves the folder (it resolves to " + target.string() + ")");
    }
    const fs::file_status status = fs::status(target, ec);
    if (ec)
      return io_error(relative, "cannot stat symlink target", ec);
    if (status.type() == fs::file_type::directory) {
      return not_hashable(relative, "symlink to a folder (" + target.string() +
                                        ") is not followed, to avoid loops and double counting");
    }
    if (status.type() != fs::file_type::regular) {
      return not_hashable(relative,
                          std::string("symlink target is ") + special_kind(status.type()));
    }
    return add(link, relative);
  }

  Status add(const fs::path& path, const std::string& relative) {
    std::error_code ec;
    const std::uintmax_t size = fs::file_size(path, ec);
    if (ec)
      return io_error(relative, "cannot read size", ec);
    files_.push_back(ListedFile{relative, path, size});
    return Status::success();
  }

  static Error io_error(const std::string& relative, const std::string& what,
                        const std::error_code& ec) {
    return make_error(ErrorCode::io, relative + ": " + what + ": " + ec.message());
  }
  static Error errno_error(const std::string& relative, const std::string& what) {
    return io_error(relative, what, std::error_code(errno, std::generic_category()));
  }

  fs::path root_;
  std::vector<ListedFile> files_;
};

}  // namespace

Result<std::vector<ListedFile>> list_folder_files(const fs::path& dir) {
  std::error_code ec;
  const fs::path root = fs::canonical(dir, ec);
  if (ec) {
    const auto code =
        ec == std::errc::no_such_file_or_directory ? ErrorCode::not_found : ErrorCode::io;
    return make_error(code, dir.string() + ": " + ec.message());
  }
  if (!fs::is_directory(root, ec)) {
    return make_error(ErrorCode::invalid_argument, dir.string() + ": is not a folder");
  }
  Walker walker(root);
  Status status = walker.walk(root, "");
  if (!status)
    return status.error();
  std::vector<ListedFile> files = std::move(walker).take();
  // std::string compares like memcmp (unsigned bytes): the bytewise order docs/design.md asks for.
  std::sort(files.begin(), files.end(), [](const ListedFile& a, const ListedFile& b) {
    return a.relative_path < b.relative_path;
  });
  return files;
}

}  // namespace reverify
