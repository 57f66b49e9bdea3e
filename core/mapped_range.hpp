#pragma once
// Read-only mappings of files, for reading them in place without copying them out of the page
// cache: MappedRange (a byte range of an open file, read on one thread: hashing) and MappedFile
// (a whole file, read by any thread: `reverify compare`'s predictions).
//
// A mapping has one hazard a read does not: if the file shrinks while it is mapped, touching a
// page past the new end raises SIGBUS. MappedRange::visit catches exactly that fault (on this
// thread, inside this mapping) and reports it as a value. No thread can be resumed like that in
// general, so a fault inside a MappedFile ends the process with a message (see there). Every
// other SIGBUS keeps its previous disposition.

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <span>
#include <string>

#include "core/result.hpp"

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

  // Unmaps the pages wholly inside [begin, end) of the range (the file's pages stay cached), so
  // that what a window cost to map and unmap is paid while it is measured, not at the end.
  void release(const char* begin, const char* end) const;

 private:
  MappedRange(void* base, std::size_t mapped, std::size_t skip, std::size_t length)
      : base_(base), mapped_(mapped), skip_(skip), length_(length) {}

  void* base_;
  std::size_t mapped_;  // bytes mapped, from a page boundary
  std::size_t skip_;    // bytes from the page boundary to the range's first byte
  std::size_t length_;
};

// A whole regular file, mapped read-only and populated (its pages mapped at once) for reading in
// place by any thread while this lives. If the file shrinks meanwhile, a read past its new end
// writes "<what>: the file shrank while it was being read" to stderr and ends the process with
// exit status 2 (it cannot go on, and a core dump would say less): for short-lived commands.
class MappedFile {
 public:
  // Errors (io) name the path: it cannot be opened, is not a regular file, cannot be mapped.
  static Result<MappedFile> map(const std::filesystem::path& path);

  MappedFile(MappedFile&& other) noexcept;
  MappedFile& operator=(MappedFile&&) = delete;
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  ~MappedFile();

  std::span<const std::byte> bytes() const { return {static_cast<const std::byte*>(base_), size_}; }

 private:
  MappedFile(void* base, std::size_t size, int guard) : base_(base), size_(size), guard_(guard) {}

  void* base_;
  std::size_t size_;
  int guard_;  // its slot in the fault guard's table, -1 when none
};

}  // namespace reverify
