#include "cli/hash_progress.hpp"

#include <unistd.h>

namespace reverify::cli {
namespace {
constexpr auto kRedrawEvery = std::chrono::milliseconds(100);
constexpr double kMB = 1e6;
}  // namespace

HashProgressLine::HashProgressLine(std::FILE* out)
    : out_(out), enabled_(::isatty(::fileno(out)) == 1), start_(std::chrono::steady_clock::now()) {}

HashProgressLine::~HashProgressLine() {
  if (drawn_) {
    std::fputs("\r\033[K", out_);
    std::fflush(out_);
  }
}

ProgressFn HashProgressLine::callback() {
  if (!enabled_)
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
  std::fprintf(out_, "\r\033[Khashing: %llu/%llu files, %.1f/%.1f MB, %.0f MB/s",
               static_cast<unsigned long long>(progress.files_done),
               static_cast<unsigned long long>(progress.files_total),
               static_cast<double>(progress.bytes_done) / kMB,
               static_cast<double>(progress.bytes_total) / kMB, rate);
  std::fflush(out_);
}

}  // namespace reverify::cli
