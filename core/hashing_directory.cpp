// hash_directory: list the folder, then hash its files in parallel, largest first.
#include <algorithm>
#include <numeric>

#include "core/file_manifest_walk.hpp"
#include "core/hashing.hpp"
#include "core/hashing_io.hpp"
#include "core/hashing_pool.hpp"
#include "core/sha256.hpp"

namespace reverify {

Result<FileManifest> hash_directory(const std::filesystem::path& dir, const HashOptions& options) {
  auto listed = list_folder_files(dir);
  if (!listed)
    return listed.error();
  const std::vector<ListedFile>& files = *listed;

  // Largest first, so the last file to start is a small one and every core stays busy to the end.
  std::vector<std::size_t> order(files.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return files[a].size > files[b].size; });
  std::uint64_t listed_bytes = 0;
  for (const ListedFile& file : files)
    listed_bytes += file.size;

  ProgressTracker progress(options.progress, files.size(), listed_bytes);
  BytesFn on_bytes;
  if (progress.enabled())
    on_bytes = [&](std::uint64_t bytes) { progress.add_bytes(bytes); };

  FileManifest manifest;
  manifest.files.resize(files.size());
  Status status = run_parallel(files.size(), options.threads, [&](std::size_t k) -> Status {
    const ListedFile& file = files[order[k]];
    auto fd = open_readonly(file.path);
    if (!fd)
      return fd.error();
    auto digest = sha256_fd_range(fd->get(), 0, kToEndOfFile, file.relative_path, on_bytes,
                                  options.read_path);
    if (!digest)
      return digest.error();
    manifest.files[order[k]] =
        FileEntry{file.relative_path, digest->bytes, std::move(digest->sha256)};
    progress.file_done();
    return Status::success();
  });
  if (!status)
    return status.error();
  for (const FileEntry& file : manifest.files)
    manifest.total_bytes += file.size;
  manifest.root = sha256_hex(manifest.text());
  return manifest;
}

}  // namespace reverify
