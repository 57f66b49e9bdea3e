#include "core/file_manifest_walk.hpp"

#include <algorithm>

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

class Walker {
 public:
  explicit Walker(fs::path root) : root_(std::move(root)) {}

  Status walk(const fs::path& dir, const std::string& prefix) {
    std::error_code ec;
    fs::directory_iterator it(dir, ec);
    std::vector<fs::path> entries;
    for (const fs::directory_iterator end; !ec && it != end; it.increment(ec))
      entries.push_back(it->path());
    if (ec)
      return io_error(prefix.empty() ? "." : prefix, "cannot list folder", ec);
    // Visit in name order so that, of several bad entries, the same one is always reported.
    std::sort(entries.begin(), entries.end());
    for (const fs::path& entry : entries) {
      Status status = visit(entry, prefix);
      if (!status)
        return status;
    }
    return Status::success();
  }

  std::vector<ListedFile> take() && { return std::move(files_); }

 private:
  Status visit(const fs::path& path, const std::string& prefix) {
    const std::string name = path.filename().string();
    const std::string relative = prefix.empty() ? name : prefix + "/" + name;
    if (relative.find('\n') != std::string::npos) {
      return not_hashable(relative,
                          "path holds a newline, which the file manifest's line format "
                          "cannot represent");
    }
    std::error_code ec;
    const fs::file_status status = fs::symlink_status(path, ec);
    if (ec)
      return io_error(relative, "cannot stat", ec);
    switch (status.type()) {
      case fs::file_type::directory:
        return walk(path, relative);
      case fs::file_type::regular:
        return add(path, relative);
      case fs::file_type::symlink:
        return follow(path, relative);
      default:
        return not_hashable(relative, std::string("is ") + special_kind(status.type()));
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
  // std::string compares like memcmp (unsigned bytes): the bytewise order DESIGN asks for.
  std::sort(files.begin(), files.end(), [](const ListedFile& a, const ListedFile& b) {
    return a.relative_path < b.relative_path;
  });
  return files;
}

}  // namespace reverify
