#include "cli/hash_progress.hpp"

#include <cstdio>

namespace reverify::cli {
namespace {
constexpr auto kRedrawEvery = std::chrono::milliseconds(100);
constexpr double kMB = 1e6;
}  // namespace

HashProgressLine::HashProgressLine(std::FILE* out)
    : line_(out), start_(std::chrono::steady_clock::now()) {}

ProgressFn HashProgressLine::callback() {
  if (!line_.enabled())
    return {};
  return [this](const HashProgress& progress) { draw(progress); };
}

void HashProgressLine::draw(const HashProgress& progress) {
  const auto now = std::chrono::steady_clock::now();
  if (drawn_ && now - last_draw_ < kRedrawEvery)
    return;
  last_draw_ = now;
  drawn_ = true;
  const double seconds = std::chrono::duration<double>(now - start_).count();
  const double rate = seconds > 0 ? static_cast<double>(progress.bytes_done) / kMB / seconds : 0;
  char text[160];
  std::snprintf(text, sizeof text, "hashing: %llu/%llu files, %.1f/%.1f MB, %.0f MB/s",
                static_cast<unsigned long long>(progress.files_done),
                static_cast<unsigned long long>(progress.files_total),
                static_cast<double>(progress.bytes_done) / kMB,
                static_cast<double>(progress.bytes_total) / kMB, rate);
  line_.draw(text);
}

}  // namespace reverify::cli
