#include "core/mapped_range.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <cstring>

#include <csetjmp>
#include <csignal>
#include <cstdint>
#include <mutex>
#include <utility>

namespace reverify {
namespace {

// What a thread inside `visit` leaves for the signal handler: where to jump, and which
// addresses are its to recover from.
struct ActiveVisit {
  sigjmp_buf resume;
  const char* begin;
  const char* end;
};

thread_local ActiveVisit* active_visit = nullptr;
struct sigaction previous_sigbus_action;

// The MappedFiles alive, for the handler: lock-free atomics only, as a signal handler may read
// them. A slot is taken by setting `end` from null, published by setting `begin`.
struct FatalRange {
  std::atomic<const char*> begin{nullptr}, end{nullptr};
  std::array<char, 512> message{};
  std::size_t message_size = 0;
};
constexpr int kFatalRanges = 16;
std::array<FatalRange, kFatalRanges> fatal_ranges;

void exit_if_in_fatal_range(const char* address) {
  for (FatalRange& range : fatal_ranges) {
    const char* begin = range.begin.load();
    if (begin != nullptr && address >= begin && address < range.end.load()) {
      (void)!::write(STDERR_FILENO, range.message.data(), range.message_size);
      ::_exit(2);
    }
  }
}

void on_sigbus(int, siginfo_t* info, void*) {
  ActiveVisit* visit = active_visit;
  const auto* address = static_cast<const char*>(info->si_addr);
  if (visit != nullptr && address >= visit->begin && address < visit->end)
    siglongjmp(visit->resume, 1);
  exit_if_in_fatal_range(address);
  // Not a fault of ours: put the previous disposition back; returning re-runs the faulting
  // instruction, which faults again into that disposition (by default, a core dump).
  sigaction(SIGBUS, &previous_sigbus_action, nullptr);
}

void install_sigbus_handler_once() {
  static std::once_flag installed;
  std::call_once(installed, [] {
    struct sigaction action {};
    action.sa_sigaction = on_sigbus;
    action.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigemptyset(&action.sa_mask);
    sigaction(SIGBUS, &action, &previous_sigbus_action);
  });
}

// Registers [base, base + size) with the fault guard; -1 when every slot is taken (the mapping
// then has the default disposition: a core dump).
int guard_fatal_range(const void* base, std::size_t size, const std::string& message) {
  install_sigbus_handler_once();
  for (int slot = 0; slot < kFatalRanges; ++slot) {
    FatalRange& range = fatal_ranges[static_cast<std::size_t>(slot)];
    const char* free = nullptr;
    const auto* begin = static_cast<const char*>(base);
    if (!range.end.compare_exchange_strong(free, begin + size))
      continue;
    range.message_size = std::min(message.size(), range.message.size());
    std::copy_n(message.data(), range.message_size, range.message.data());
    range.begin.store(begin);
    return slot;
  }
  return -1;
}

void unguard_fatal_range(int slot) {
  if (slot < 0)
    return;
  FatalRange& range = fatal_ranges[static_cast<std::size_t>(slot)];
  range.begin.store(nullptr);
  range.end.store(nullptr);
}

}  // namespace

std::optional<MappedRange> MappedRange::map(int fd, std::uint64_t offset, std::size_t length) {
  if (length == 0)
    return std::nullopt;
  const auto page = static_cast<std::uint64_t>(sysconf(_SC_PAGESIZE));
  const std::uint64_t map_offset = offset / page * page;
  const auto skip = static_cast<std::size_t>(offset - map_offset);
  void* base =
      mmap(nullptr, skip + length, PROT_READ, MAP_SHARED, fd, static_cast<off_t>(map_offset));
  if (base == MAP_FAILED)
    return std::nullopt;
  // Read-ahead in large steps and drop pages behind us; advisory, so a failure is moot.
  (void)madvise(base, skip + length, MADV_SEQUENTIAL);
  install_sigbus_handler_once();
  return MappedRange(base, skip + length, skip, length);
}

MappedRange::MappedRange(MappedRange&& other) noexcept
    : base_(std::exchange(other.base_, nullptr)),
      mapped_(other.mapped_),
      skip_(other.skip_),
      length_(other.length_) {}

MappedRange::~MappedRange() {
  if (base_ != nullptr)
    munmap(base_, mapped_);
}

void MappedRange::release(const char* begin, const char* end) const {
  const auto page = static_cast<std::uintptr_t>(sysconf(_SC_PAGESIZE));
  const auto first = (reinterpret_cast<std::uintptr_t>(begin) + page - 1) / page * page;
  const auto last = reinterpret_cast<std::uintptr_t>(end) / page * page;
  // Advisory: a failure leaves the pages mapped until the destructor unmaps them.
  if (last > first)
    (void)madvise(reinterpret_cast<void*>(first), last - first, MADV_DONTNEED);
}

Result<MappedFile> MappedFile::map(const std::filesystem::path& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return make_error(ErrorCode::io, path.string() + ": cannot open: " + std::strerror(errno));
  struct stat info {};
  const bool regular = ::fstat(fd, &info) == 0 && S_ISREG(info.st_mode);
  const auto size = static_cast<std::size_t>(info.st_size);
  void* base = nullptr;
  if (regular && size > 0) {
    // Populated: the whole file is about to be read, and one call maps it faster than faults.
    base = mmap(nullptr, size, PROT_READ, MAP_SHARED | MAP_POPULATE, fd, 0);
  }
  const int error = errno;
  ::close(fd);
  if (!regular)
    return make_error(ErrorCode::io, path.string() + ": not a regular file");
  if (base == MAP_FAILED)
    return make_error(ErrorCode::io, path.string() + ": cannot map: " + std::strerror(error));
  const int guard =
      base == nullptr
          ? -1
          : guard_fatal_range(base, size,
                              path.string() + ": the file shrank while it was being read\n");
  return MappedFile(base, size, guard);
}

MappedFile::MappedFile(MappedFile&& other) noexcept
    : base_(std::exchange(other.base_, nullptr)),
      size_(std::exchange(other.size_, 0)),
      guard_(std::exchange(other.guard_, -1)) {}

MappedFile::~MappedFile() {
  unguard_fatal_range(guard_);
  if (base_ != nullptr)
    munmap(base_, size_);
}

bool MappedRange::visit(const std::function<void(const char*, std::size_t)>& read) const {
  const char* data = static_cast<const char*>(base_) + skip_;
  ActiveVisit visit{{}, static_cast<const char*>(base_), static_cast<const char*>(base_) + mapped_};
  // savemask = 1: the handler runs with SIGBUS blocked, and the jump must unblock it again.
  if (sigsetjmp(visit.resume, 1) != 0) {
    active_visit = nullptr;
    return false;
  }
  active_visit = &visit;
  read(data, length_);
  active_visit = nullptr;
  return true;
}

}  // namespace reverify
