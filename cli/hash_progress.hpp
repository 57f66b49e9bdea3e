#pragma once
// The progress line of `reverify hash` on a terminal: files, bytes and MB/s, redrawn in place on
// stderr at most ten times a second and erased at the end. Disabled (no output at all) when stderr
// is not a terminal, so logs and pipes stay clean.

#include <chrono>
#include <cstdio>

#include "cli/status_line.hpp"
#include "core/hashing.hpp"

namespace reverify::cli {

class HashProgressLine {
 public:
  explicit HashProgressLine(std::FILE* out);
  HashProgressLine(const HashProgressLine&) = delete;
  HashProgressLine& operator=(const HashProgressLine&) = delete;

  ProgressFn callback();  // empty when disabled

 private:
  void draw(const HashProgress& progress);

  StatusLine line_;  // erased when this goes
  bool drawn_ = false;
  std::chrono::steady_clock::time_point start_, last_draw_;
};

}  // namespace reverify::cli
