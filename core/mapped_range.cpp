#include "core/mapped_range.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <csetjmp>
#include <csignal>
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

void on_sigbus(int, siginfo_t* info, void*) {
  ActiveVisit* visit = active_visit;
  const auto* address = static_cast<const char*>(info->si_addr);
  if (visit != nullptr && address >= visit->begin && address < visit->end)
    siglongjmp(visit->resume, 1);
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
