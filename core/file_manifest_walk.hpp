#pragma once
// Lists the files a folder's file manifest covers (docs/design.md, "Manifest v1"), before hashing.
// Choices, beyond docs/design.md:
// - a symlink inside the folder to a regular file inside the folder is followed: the target's
//   content is hashed under the link's own path (what `find -L` + `sha256sum` would list);
// - a symlink to a folder is an error, even inside: following it could loop or list files twice,
//   and not following it would silently drop content from the hash;
// - dangling symlinks, symlinks leaving the folder, fifos, sockets and devices are errors;
// - a path holding a newline is an error (it would break the line format);
// - empty folders contribute nothing (the manifest lists files only).

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "core/result.hpp"

namespace reverify {

struct ListedFile {
  std::string relative_path;   // '/'-separated
  std::filesystem::path path;  // to open (may be a symlink inside the folder)
  std::uint64_t size = 0;      // at listing time; used to schedule and report progress
};

// Sorted bytewise by relative_path. Errors name the offending path and what was expected.
Result<std::vector<ListedFile>> list_folder_files(const std::filesystem::path& dir);

}  // namespace reverify
