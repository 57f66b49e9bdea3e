#pragma once
// A read-only mapping of a byte range of an open file, for hashing large files without copying
// them out of the page cache (with the large folios a read from disk leaves there, that is the
// whole difference between ~1.2 and ~1.4 GB/s a core here).
//
// A mapping has one hazard a read does not: if the file shrinks while it is mapped, touching a
// page past the new end raises SIGBUS. `visit` catches exactly that fault (on this thread, inside
// this mapping) and reports it as a value; every other SIGBUS keeps its previous disposition.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>

namespace reverify {

class MappedRange {
 public:
  // Maps [offset, offset + length) of `fd`; nullopt when the file cannot be mapped (a pipe, a
  // file system without mmap): callers fall back to reads.
  static std::optional<MappedRange> map(int fd, std::uint64_t offset, std::size_t length);

  MappedRange(MappedRange&& other) noexcept;
  MappedRange& operator=(MappedRange&&) = delete;
  MappedRange(const MappedRange&) = delete;
  MappedRange& operator=(const MappedRange&) = delete;
  ~MappedRange();

  // Calls `read(data, length)` and returns true, or returns false if reading the mapping faulted
  // because the file no longer covers it. `read` must own nothing that needs destroying when it
  // is abandoned midway (it is left with siglongjmp), and must not touch other mappings.
  bool visit(const std::function<void(const char* data, std::size_t length)>& read) const;

 private:
  MappedRange(void* base, std::size_t mapped, std::size_t skip, std::size_t length)
      : base_(base), mapped_(mapped), skip_(skip), length_(length) {}

  void* base_;
  std::size_t mapped_;  // bytes mapped, from a page boundary
  std::size_t skip_;    // bytes from the page boundary to the range's first byte
  std::size_t length_;
};

}  // namespace reverify
