#pragma once
// Content hashes reverify computes itself (it never trusts a hash a job reports):
// - sha256 of a file;
// - the file manifest of a folder and its root hash (docs/design.md, "Manifest v1");
// - the tensor hash of a safetensors file (docs/design.md, "Manifest v1").
// All of these are blocking: call them off the event loop.

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/result.hpp"

namespace reverify {

enum class ReadPath;  // core/hashing_paths.hpp

struct HashProgress {
  std::uint64_t files_done = 0, files_total = 0;
  std::uint64_t bytes_done = 0, bytes_total = 0;
};
using ProgressFn =
    std::function<void(const HashProgress&)>;  // called from worker threads, serialised

struct HashOptions {
  unsigned threads = 0;  // 0 = every core this process may run on (usable_cores())
  ProgressFn progress;   // optional
  // How file bytes are got: by default chosen window by window by measurement
  // (core/hashing_paths.hpp); set, that one path for every window (tests, benchmarks).
  std::optional<ReadPath> read_path;
};

// Lowercase hex. `read_path` as in HashOptions.
Result<std::string> sha256_file(const std::filesystem::path& path,
                                std::optional<ReadPath> read_path = std::nullopt);
std::string sha256_hex(std::string_view bytes);

struct FileEntry {
  std::string relative_path;  // '/'-separated, relative to the folder
  std::uint64_t size = 0;
  std::string sha256;  // lowercase hex
};

struct FileManifest {
  std::vector<FileEntry> files;  // sorted bytewise by relative_path
  std::string root;              // sha256 of text()
  std::uint64_t total_bytes = 0;
  std::string text() const;  // "<sha256>  <size>  <path>\n" per file
  // The same files as coreutils `sha256sum` prints them ("<sha256>  <path>\n"; a path holding a
  // backslash is escaped and its line starts with '\\', as sha256sum does), so that
  // `cd DIR && sha256sum -c FILE` checks the folder. Carries no sizes and no root hash.
  std::string sha256sum_text() const;
};

// Symlinks that leave the folder and special files (fifo, socket, device) are errors naming the
// path.
Result<FileManifest> hash_directory(const std::filesystem::path& dir,
                                    const HashOptions& options = {});
Result<FileManifest> parse_file_manifest(const std::string& text);

struct FileManifestDiff {
  std::vector<std::string> added, removed, changed;
  bool empty() const { return added.empty() && removed.empty() && changed.empty(); }
};
FileManifestDiff diff_file_manifests(const FileManifest& expected, const FileManifest& actual);

struct TensorDigest {
  std::string name;
  std::string dtype;
  std::vector<std::uint64_t> shape;
  std::string sha256;
};

struct TensorHash {
  std::vector<TensorDigest> tensors;  // sorted by name
  std::string root;
  std::uint64_t total_bytes = 0;
  // "<name>\t<dtype>\t<dims joined by ,>\t<sha256>\n" per tensor; root is its sha256.
  std::string text() const;
};

// Strict header validation; each violation an error naming the tensor and the rule.
Result<TensorHash> hash_safetensors(const std::filesystem::path& file,
                                    const HashOptions& options = {});

}  // namespace reverify
