// hash_safetensors: validate the header, hash each tensor's bytes on its own (in parallel, largest
// first), then hash the sorted "<name>\t<dtype>\t<dims>\t<sha256>\n" lines (docs/design.md).
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <numeric>

#include "core/hashing.hpp"
#include "core/hashing_io.hpp"
#include "core/hashing_pool.hpp"
#include "core/safetensors_header.hpp"
#include "core/sha256.hpp"

namespace reverify {
namespace {

constexpr std::uint64_t kLengthPrefix = 8;

Result<std::string> read_string(int fd, std::uint64_t offset, std::uint64_t length,
                                const std::string& what) {
  std::string bytes(length, '\0');
  if (Status read = read_exact(fd, offset, bytes.data(), bytes.size(), what); !read)
    return read.error();
  return bytes;
}

}  // namespace

Result<TensorHash> hash_safetensors(const std::filesystem::path& file, const HashOptions& options) {
  const std::string what = file.string();
  auto fd = open_readonly(file);
  if (!fd)
    return fd.error();
  struct stat info {};
  if (::fstat(fd->get(), &info) != 0)
    return make_error(ErrorCode::io, what + ": " + std::strerror(errno));
  if (!S_ISREG(info.st_mode))
    return make_error(ErrorCode::invalid_argument, what + ": not a regular file");
  const auto file_size = static_cast<std::uint64_t>(info.st_size);
  if (file_size < kLengthPrefix) {
    return make_error(ErrorCode::parse,
                      what + ": " + std::to_string(file_size) +
                          " bytes, too short for the 8-byte safetensors header length");
  }
  auto prefix = read_string(fd->get(), 0, kLengthPrefix, what);
  if (!prefix)
    return prefix.error();
  std::uint64_t header_length = 0;
  for (int i = 7; i >= 0; --i)
    header_length = (header_length << 8) | static_cast<unsigned char>((*prefix)[i]);
  if (header_length > kSafetensorsMaxHeader) {
    return make_error(ErrorCode::parse, what + ": safetensors header length " +
                                            std::to_string(header_length) +
                                            " exceeds the limit of " +
                                            std::to_string(kSafetensorsMaxHeader) + " bytes");
  }
  if (header_length > file_size - kLengthPrefix) {
    return make_error(ErrorCode::parse,
                      what + ": safetensors header length " + std::to_string(header_length) +
                          " runs past the end of the " + std::to_string(file_size) + "-byte file");
  }
  auto header = read_string(fd->get(), kLengthPrefix, header_length, what);
  if (!header)
    return header.error();
  const std::uint64_t data_start = kLengthPrefix + header_length;
  auto tensors = parse_safetensors_header(*header, file_size - data_start);
  if (!tensors)
    return make_error(tensors.error().code, what + ": " + tensors.error().message);

  const std::vector<SafetensorsTensor>& specs = *tensors;
  std::vector<std::size_t> order(specs.size());
  std::iota(order.begin(), order.end(), 0);
  auto length = [&](std::size_t i) { return specs[i].end - specs[i].begin; };
  std::stable_sort(order.begin(), order.end(),
                   [&](auto a, auto b) { return length(a) > length(b); });

  TensorHash result;
  result.total_bytes = file_size - data_start;
  ProgressTracker progress(options.progress, specs.size(), result.total_bytes);
  BytesFn on_bytes;
  if (progress.enabled())
    on_bytes = [&](std::uint64_t bytes) { progress.add_bytes(bytes); };
  result.tensors.resize(specs.size());
  Status status = run_parallel(specs.size(), options.threads, [&](std::size_t k) -> Status {
    const SafetensorsTensor& t = specs[order[k]];
    auto digest =
        sha256_fd_range(fd->get(), data_start + t.begin, t.end - t.begin,
                        what + ": tensor \"" + t.name + "\"", on_bytes, options.read_path);
    if (!digest)
      return digest.error();
    result.tensors[order[k]] = TensorDigest{t.name, t.dtype, t.shape, std::move(digest->sha256)};
    progress.file_done();
    return Status::success();
  });
  if (!status)
    return status.error();

  result.root = sha256_hex(result.text());
  return result;
}

std::string TensorHash::text() const {
  std::string lines;
  for (const TensorDigest& t : tensors) {
    lines += t.name + '\t' + t.dtype + '\t' + join_dims(t.shape) + '\t' + t.sha256 + '\n';
  }
  return lines;
}

}  // namespace reverify
