#pragma once
// Wall-clock timing the benchmarks share: seconds since a start, and the best of N runs (the run
// least disturbed by the rest of the machine).

#include <algorithm>
#include <chrono>

namespace reverify::bench {

using Clock = std::chrono::steady_clock;

inline double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

template <class Fn>
double best_of(int runs, Fn fn) {
  double best = 1e300;
  for (int i = 0; i < runs; ++i) {
    const auto start = Clock::now();
    fn();
    best = std::min(best, seconds_since(start));
  }
  return best;
}

}  // namespace reverify::bench
