// The capped on-disk job log (runners/job_log.hpp): the file never passes its cap, keeps its head
// and the latest output, and says how much was cut between them; its readers.
#include <doctest/doctest.h>
#include <fcntl.h>
#include <unistd.h>

#include "runners/job_log.hpp"
#include "tests/support/files.hpp"
#include "tests/support/temp_dir.hpp"

using namespace reverify;

namespace {

constexpr std::uint64_t kCap = kMinJobLogCapBytes;

// Numbered lines, so any reordering or duplication shows.
std::string output_lines(int first, int count) {
  std::string out;
  char line[32];
  for (int i = first; i < first + count; ++i) {
    std::snprintf(line, sizeof line, "output line %08d\n", i);
    out += line;
  }
  return out;
}

struct LogFile {
  test::TempDir dir;
  std::filesystem::path path = dir.path / "job.log";
  int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC, 0600);
  ~LogFile() { ::close(fd); }
};

}  // namespace

TEST_CASE("a job log under its cap is the output, byte for byte") {
  LogFile f;
  CappedLogWriter writer(f.fd, kCap);
  const std::string output = output_lines(0, 1000);  // 21,000 bytes
  writer.write(output.data(), output.size());
  CHECK(test::read_file(f.path) == output);
  CHECK(job_log_tail(f.path, kCap, 1 << 20) == output);
}

TEST_CASE("a flood keeps the head, the latest output and a marker counting the cut") {
  // Chunk sizes from one byte to more than the whole cap: a write larger than the cap included.
  for (std::size_t chunk :
       {std::size_t{1}, std::size_t{4096}, std::size_t{50'000}, std::size_t{3 * kCap}}) {
    CAPTURE(chunk);
    LogFile f;
    CappedLogWriter writer(f.fd, kCap);
    const std::string output = output_lines(0, 40'000);  // 840,000 bytes: 12x the cap
    for (std::size_t at = 0; at < output.size(); at += chunk) {
      const auto piece = std::string_view(output).substr(at, chunk);
      writer.write(piece.data(), piece.size());
      if (at % 8192 < chunk)  // often, not after every byte
        REQUIRE(std::filesystem::file_size(f.path) <= kCap);
    }
    const std::string log = test::read_file(f.path);
    const std::uint64_t head = job_log_head_bytes(kCap);
    CHECK(log.substr(0, head) == output.substr(0, head));
    const auto marker = log.find(kJobLogMarkerPrefix);
    REQUIRE(marker == head);
    const auto marker_end = log.find('\n', marker + 1) + 1;
    const std::string tail = log.substr(marker_end);
    CHECK(!tail.empty());
    CHECK(output.ends_with(tail));  // the latest output, in order, nothing invented
    // The count is exact: head + dropped + tail = everything the job wrote.
    const auto count_at = log.rfind(": ", marker_end) + 2;
    const std::uint64_t dropped = std::stoull(log.substr(count_at, marker_end - count_at));
    CHECK(head + dropped + tail.size() == output.size());
    // The finished log's tail reader counts the bytes cut on disk too.
    const std::string text = job_log_tail(f.path, kCap, 1000);
    CHECK(text.ends_with(output.substr(output.size() - 1000)));
    CHECK(text.find("the first " + std::to_string(output.size() - 1000) + " bytes were dropped") !=
          std::string::npos);
  }
}

TEST_CASE("the live stream follows the log to its first cut and then says it stops") {
  LogFile f;
  CappedLogWriter writer(f.fd, kCap);
  LogFollower follower(f.path, kCap);
  std::string streamed;
  const LogSink sink = [&](std::string_view chunk) { streamed.append(chunk); };
  const std::string early = output_lines(0, 100);
  writer.write(early.data(), early.size());
  follower.drain(sink);
  CHECK(streamed == early);
  const std::string flood = output_lines(100, 20'000);
  writer.write(flood.data(), flood.size());
  follower.drain(sink);
  const std::string all = early + flood;
  const std::uint64_t head = job_log_head_bytes(kCap);
  CHECK(streamed.substr(0, head) == all.substr(0, head));
  CHECK(streamed.find("the live log stops") != std::string::npos);
  const std::string after = streamed;
  const std::string more = output_lines(20'100, 10);
  writer.write(more.data(), more.size());
  follower.drain(sink);
  CHECK(streamed == after);  // nothing from the rewritten part reaches the stream
}

TEST_CASE("a cap below the minimum is refused") {
  LogFile f;
  CHECK_THROWS_AS(CappedLogWriter(f.fd, kMinJobLogCapBytes - 1), std::invalid_argument);
}
