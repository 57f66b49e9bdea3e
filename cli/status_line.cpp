#include "cli/status_line.hpp"

#include <sys/ioctl.h>
#include <unistd.h>

namespace reverify::cli {
namespace {

std::size_t terminal_width(std::FILE* out) {
  winsize size{};
  if (::ioctl(::fileno(out), TIOCGWINSZ, &size) == 0 && size.ws_col > 1)
    return size.ws_col - 1;  // the last column would wrap on some terminals
  return 79;
}

}  // namespace

StatusLine::StatusLine(std::FILE* out) : out_(out), enabled_(::isatty(::fileno(out)) == 1) {}

StatusLine::~StatusLine() {
  std::lock_guard lock(mutex_);
  if (enabled_ && !text_.empty()) {
    std::fputs("\r\033[K", out_);
    std::fflush(out_);
  }
}

void StatusLine::draw(const std::string& text) {
  if (!enabled_)
    return;
  std::lock_guard lock(mutex_);
  text_ = text;
  draw_locked();
}

void StatusLine::print(const std::string& line) {
  std::lock_guard lock(mutex_);
  if (enabled_)
    std::fputs("\r\033[K", out_);
  std::fputs(line.c_str(), out_);
  std::fputc('\n', out_);
  if (enabled_)
    draw_locked();
  std::fflush(out_);
}

void StatusLine::draw_locked() {
  std::string shown = text_;
  for (char& c : shown) {
    if (c == '\t' || c == '\r' || c == '\n')
      c = ' ';  // one line, whatever the job printed
  }
  const std::size_t width = terminal_width(out_);
  if (shown.size() > width) {
    shown.resize(width);
    // Never end on half a UTF-8 character: drop continuation bytes, then their lead byte.
    while (!shown.empty() && (static_cast<unsigned char>(shown.back()) & 0xC0) == 0x80)
      shown.pop_back();
    if (!shown.empty() && static_cast<unsigned char>(shown.back()) >= 0xC0)
      shown.pop_back();
  }
  std::fputs("\r\033[K", out_);
  std::fputs(shown.c_str(), out_);
  std::fflush(out_);
}

}  // namespace reverify::cli
