#include "runners/job_log.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>

#include "runners/log_tail.hpp"

namespace reverify {
namespace {

constexpr std::size_t kCountWidth = 20;  // digits of a uint64, padded with spaces

// The marker line for a cap, with a blank count field; its size never changes, so the count is
// updated in place.
std::string marker_template(std::uint64_t cap_bytes) {
  return std::string(kJobLogMarkerPrefix) + "this file keeps the first " +
         std::to_string(job_log_head_bytes(cap_bytes)) + " bytes and the latest output, under " +
         std::to_string(cap_bytes) +
         " bytes in all; bytes dropped so far: " + std::string(kCountWidth, ' ') + "\n";
}

std::size_t count_offset(std::uint64_t cap_bytes) {
  return marker_template(cap_bytes).size() - 1 - kCountWidth;
}

// pwrite of the whole buffer; gives up on an error (a full disk): the log is best effort, the job
// must not block on it. Returns the errno of the failure, 0 when all was written.
int pwrite_all(int fd, const char* data, std::size_t size, std::uint64_t offset) {
  while (size > 0) {
    const ssize_t n = ::pwrite(fd, data, size, static_cast<off_t>(offset));
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0)
      return errno;
    if (n == 0)
      return EIO;
    data += n;
    size -= static_cast<std::size_t>(n);
    offset += static_cast<std::uint64_t>(n);
  }
  return 0;
}

std::size_t pread_some(int fd, char* data, std::size_t size, std::uint64_t offset) {
  std::size_t done = 0;
  while (done < size) {
    const ssize_t n = ::pread(fd, data + done, size - done, static_cast<off_t>(offset + done));
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      break;
    done += static_cast<std::size_t>(n);
  }
  return done;
}

std::optional<std::uint64_t> read_count(int fd, std::uint64_t cap_bytes) {
  const std::string expected = marker_template(cap_bytes);
  const std::uint64_t at = job_log_head_bytes(cap_bytes);
  std::string found(expected.size(), '\0');
  if (pread_some(fd, found.data(), found.size(), at) != found.size())
    return std::nullopt;
  const std::size_t digits = count_offset(cap_bytes);
  if (found.compare(0, digits, expected, 0, digits) != 0)
    return std::nullopt;
  std::uint64_t count = 0;
  std::size_t i = digits;
  for (; i < digits + kCountWidth && found[i] >= '0' && found[i] <= '9'; ++i)
    count = count * 10 + static_cast<std::uint64_t>(found[i] - '0');
  if (i == digits)
    return std::nullopt;
  return count;
}

struct Fd {
  int fd;
  ~Fd() {
    if (fd >= 0)
      ::close(fd);
  }
};

}  // namespace

CappedLogWriter::CappedLogWriter(int fd, std::uint64_t cap_bytes)
    : fd_(fd),
      cap_(cap_bytes),
      head_(job_log_head_bytes(cap_bytes)),
      ring_(std::make_unique<char[]>(kJobTailBytes)) {
  const std::string marker = marker_template(cap_bytes);
  if (cap_bytes < kMinJobLogCapBytes || marker.size() > marker_.size())
    throw std::invalid_argument("job.log cap of " + std::to_string(cap_bytes) + " bytes");
  std::memcpy(marker_.data(), marker.data(), marker.size());
  marker_size_ = marker.size();
  count_at_ = count_offset(cap_bytes);
}

void CappedLogWriter::write(const char* data, std::size_t size) {
  remember(data, size);
  if (size_ + size <= cap_)
    return append(data, size);
  if (!cut_ && size_ < head_) {  // the head is filled first, whatever comes after it
    const std::size_t into_head = static_cast<std::size_t>(head_ - size_);
    append(data, into_head);
    data += into_head;
    size -= into_head;
  }
  cut(data, size);
}

void CappedLogWriter::remember(const char* data, std::size_t size) {
  if (size >= kJobTailBytes) {
    std::memcpy(ring_.get(), data + size - kJobTailBytes, kJobTailBytes);
    ring_next_ = 0;
    ring_full_ = true;
    return;
  }
  const std::size_t first = std::min(size, kJobTailBytes - ring_next_);
  std::memcpy(ring_.get() + ring_next_, data, first);
  std::memcpy(ring_.get(), data + first, size - first);
  if (ring_next_ + size >= kJobTailBytes)
    ring_full_ = true;
  ring_next_ = (ring_next_ + size) % kJobTailBytes;
}

void CappedLogWriter::check(int error) {
  if (error != 0 && write_errno_ == 0) {
    write_errno_ = error;
    written_before_error_ = size_;
  }
}

std::size_t CappedLogWriter::save_tail(int fd) const {
  if (!ring_full_)
    return pwrite_all(fd, ring_.get(), ring_next_, 0) == 0 ? ring_next_ : 0;
  const std::size_t older = kJobTailBytes - ring_next_;
  if (pwrite_all(fd, ring_.get() + ring_next_, older, 0) != 0 ||
      pwrite_all(fd, ring_.get(), ring_next_, older) != 0)
    return 0;
  return kJobTailBytes;
}

void CappedLogWriter::append(const char* data, std::size_t size) {
  check(pwrite_all(fd_, data, size, size_));
  size_ += size;
}

// Keeps at most half of the tail room (so the next cut is that far away): the newest output of
// the file's tail followed by `data`, drops the rest, and counts what it dropped.
void CappedLogWriter::cut(const char* data, std::size_t size) {
  const std::uint64_t tail_start = head_ + marker_size_;
  const std::uint64_t keep = (cap_ - tail_start) / 2;
  const std::uint64_t from_data = std::min<std::uint64_t>(size, keep);
  // Only bytes behind the marker's place are kept, so writing the marker first destroys nothing
  // that survives (and a reader that sees no marker after reading saw no rewritten bytes).
  const std::uint64_t in_tail = size_ > tail_start ? size_ - tail_start : 0;
  const std::uint64_t from_file = std::min(in_tail, keep - from_data);
  const std::uint64_t behind_head = size_ > head_ ? size_ - head_ : 0;
  const std::uint64_t output_behind_head = cut_ ? behind_head - marker_size_ : behind_head;
  dropped_ += output_behind_head - from_file + (size - from_data);
  write_marker();
  move_down(size_ - from_file, tail_start, from_file);
  check(pwrite_all(fd_, data + (size - from_data), static_cast<std::size_t>(from_data),
                   tail_start + from_file));
  size_ = tail_start + from_file + from_data;
  while (::ftruncate(fd_, static_cast<off_t>(size_)) < 0 && errno == EINTR) {
  }
  cut_ = true;
}

void CappedLogWriter::write_marker() {
  char digits[kCountWidth];
  std::size_t n = 0;
  std::uint64_t value = dropped_;
  do {
    digits[n++] = static_cast<char>('0' + value % 10);
    value /= 10;
  } while (value > 0);
  for (std::size_t i = 0; i < kCountWidth; ++i)
    marker_[count_at_ + i] = i < n ? digits[n - 1 - i] : ' ';
  check(pwrite_all(fd_, marker_.data(), marker_size_, head_));
}

// REQUIRES: from >= to (copying forward in chunks never overwrites bytes still to be read).
void CappedLogWriter::move_down(std::uint64_t from, std::uint64_t to, std::uint64_t size) {
  char buffer[16 * 1024];
  for (std::uint64_t done = 0; done < size;) {
    const std::size_t chunk =
        static_cast<std::size_t>(std::min<std::uint64_t>(sizeof buffer, size - done));
    const std::size_t got = pread_some(fd_, buffer, chunk, from + done);
    if (got == 0)
      return;
    check(pwrite_all(fd_, buffer, got, to + done));
    done += got;
  }
}

std::string job_log_tail(const std::filesystem::path& path, std::uint64_t cap_bytes,
                         std::size_t tail_cap) {
  LogTail tail(tail_cap);
  Fd in{::open(path.c_str(), O_RDONLY | O_CLOEXEC)};
  struct stat st {};
  if (in.fd < 0 || ::fstat(in.fd, &st) != 0)
    return tail.text();
  const auto size = static_cast<std::uint64_t>(st.st_size);
  const std::uint64_t kept = std::min<std::uint64_t>(size, tail_cap);
  std::uint64_t not_shown = size - kept;
  if (cap_bytes > 0) {
    const std::uint64_t marker_end =
        job_log_head_bytes(cap_bytes) + marker_template(cap_bytes).size();
    // The marker line itself is not output; what it counts is.
    if (const auto dropped = read_count(in.fd, cap_bytes); dropped && marker_end <= not_shown)
      not_shown = not_shown - marker_template(cap_bytes).size() + *dropped;
  }
  std::string end(static_cast<std::size_t>(kept), '\0');
  end.resize(pread_some(in.fd, end.data(), end.size(), size - kept));
  tail.skip(not_shown);
  tail.append(end);
  return tail.text();
}

LogFollower::LogFollower(std::filesystem::path file, std::uint64_t cap_bytes)
    : file_(std::move(file)), cap_(cap_bytes) {}

LogFollower::~LogFollower() {
  if (fd_ >= 0)
    ::close(fd_);
}

void LogFollower::drain(const LogSink& sink) {
  if (stopped_)
    return;
  if (fd_ < 0 && (fd_ = ::open(file_.c_str(), O_RDONLY | O_CLOEXEC)) < 0)
    return;
  std::string chunk(64 * 1024, '\0');
  for (;;) {
    const std::size_t got = pread_some(fd_, chunk.data(), chunk.size(), offset_);
    if (got == 0)
      return;
    std::size_t usable = got;
    // The writer puts the marker in place before it rewrites anything: no marker after this
    // read means the bytes read are the job's output as it wrote them.
    const std::uint64_t head = job_log_head_bytes(cap_);
    if (cap_ > 0 && offset_ + got > head && read_count(fd_, cap_)) {
      usable = offset_ < head ? static_cast<std::size_t>(head - offset_) : 0;
      stopped_ = true;
    }
    if (sink && usable > 0)
      sink(std::string_view(chunk.data(), usable));
    offset_ += usable;
    if (stopped_) {
      if (sink) {
        sink(
            "\n[reverify] job.log reached its cap and is cut from here on: the live log stops; "
            "the job's latest output is in its log tail\n");
      }
      return;
    }
  }
}

}  // namespace reverify
