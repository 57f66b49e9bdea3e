#pragma once
// The process runner's on-disk job log (job.log in the scratch folder), capped at cap_bytes.
//
// The job's stdout and stderr reach the file through a pipe that its supervisor drains
// (process_spawn.hpp), so a job that floods its output cannot fill the disk. Layout:
//   [head: the first head_bytes(cap) bytes, never rewritten]
//   [the TRUNCATED marker line, once output went past the cap]
//   [the tail: the latest output, at most cap - head - marker bytes]
// Output is appended until the file would pass the cap; then the marker is written after the
// head (over output that is dropped anyway), the newest half of the tail room is kept, and the
// marker's count of dropped bytes is updated in place. So the file never passes the cap, always
// holds how the job started and what it printed last, and says how much was cut between them.
//
// Readers: LogFollower streams the file while the job runs (up to the first cut: the live stream
// stops there and says so), job_log_tail() reads its end once the job ended.
//
// The writer also keeps the latest kJobTailBytes of output in memory and the first write the
// kernel refused: a job that fills the disk its log is on still leaves its last words, which the
// supervisor saves into space reserved before the job started (process_spawn.hpp).

#include <sys/types.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "runners/runner.hpp"

namespace reverify {

// Output kept in memory by the writer, for a log the disk refused.
inline constexpr std::size_t kJobTailBytes = 64 * 1024;

// Smallest cap accepted (runner.process.job_log_cap_bytes): room for a head, the marker and a tail.
inline constexpr std::uint64_t kMinJobLogCapBytes = 64 * 1024;

// The head keeps a quarter of the cap: how the job started (arguments, versions, first errors).
constexpr std::uint64_t job_log_head_bytes(std::uint64_t cap_bytes) {
  return cap_bytes / 4;
}

// The marker line's fixed prefix; the dropped byte count follows it.
inline constexpr std::string_view kJobLogMarkerPrefix = "\n[reverify] job.log TRUNCATED here: ";

// Appends to an open job.log keeping the layout above. Built before fork(); write() and
// save_tail() use only async-signal-safe system calls and no allocation, so the supervisor can
// run them in the child of a multi-threaded daemon.
class CappedLogWriter {
 public:
  // REQUIRES: fd open for reading and writing (pread for the tail move), not O_APPEND, empty;
  // cap_bytes >= kMinJobLogCapBytes.
  CappedLogWriter(int fd, std::uint64_t cap_bytes);
  void write(const char* data, std::size_t size);

  // The errno of the first write to the file that failed (ENOSPC ...), 0 when none did.
  int write_errno() const { return write_errno_; }
  // Bytes of output the file held when that write failed.
  std::uint64_t written_before_error() const { return written_before_error_; }
  // Writes the latest output kept in memory (at most kJobTailBytes, oldest first) at the start
  // of `fd`; returns the bytes written.
  std::size_t save_tail(int fd) const;

 private:
  void remember(const char* data, std::size_t size);
  void check(int error);
  void append(const char* data, std::size_t size);
  void cut(const char* data, std::size_t size);
  void write_marker();
  void move_down(std::uint64_t from, std::uint64_t to, std::uint64_t size);

  int fd_;
  std::uint64_t cap_;
  std::uint64_t head_;
  std::uint64_t size_ = 0;     // of the file
  std::uint64_t dropped_ = 0;  // output bytes no longer in the file
  bool cut_ = false;
  std::array<char, 192> marker_{};  // the marker line, its count patched in place
  std::size_t marker_size_ = 0;
  std::size_t count_at_ = 0;      // where the count's digits start in marker_
  std::unique_ptr<char[]> ring_;  // kJobTailBytes, the latest output
  std::size_t ring_next_ = 0;     // where the next byte goes
  bool ring_full_ = false;
  int write_errno_ = 0;
  std::uint64_t written_before_error_ = 0;
};

// The end of a finished job's log: its last tail_cap bytes, behind a TRUNCATED line counting
// every byte of output not shown (those cut on disk included) when anything was left out.
std::string job_log_tail(const std::filesystem::path& path, std::uint64_t cap_bytes,
                         std::size_t tail_cap);

// Streams what the job appends to job.log while it runs, to the first cut: a cut rewrites the
// file behind the reader, so the stream ends there with a line saying so (job_log_tail() still
// has the end). cap_bytes 0 = a log without cap (a job started before the cap existed).
class LogFollower {
 public:
  LogFollower(std::filesystem::path file, std::uint64_t cap_bytes);
  ~LogFollower();
  LogFollower(const LogFollower&) = delete;
  LogFollower& operator=(const LogFollower&) = delete;
  void drain(const LogSink& sink);

 private:
  std::filesystem::path file_;
  std::uint64_t cap_ = 0;  // 0 = no cap
  int fd_ = -1;
  std::uint64_t offset_ = 0;
  bool stopped_ = false;
};

}  // namespace reverify
