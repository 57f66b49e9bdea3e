#pragma once
// The sort under every distribution statistic (stats.hpp): pure, no I/O.

#include <cstddef>
#include <cstdlib>
#include <memory>
#include <span>

namespace reverify::stats {

// Ascending sort of doubles by MSD radix sort on their order-preserving bit patterns
// (-0.0 sorts before +0.0). REQUIRES: no NaN. `threads` > 1 splits the first pass and shares
// out the buckets.
void radix_sort(std::span<double> values, unsigned threads = 1);

// The same sort of `in` written to `out` (same size; `in` is only read, by the first pass, so a
// sorted copy costs no extra pass over the data). `out` may be `in` itself.
void radix_sort(std::span<const double> in, std::span<double> out, unsigned threads = 1);

// Uninitialised storage for `n` doubles (a sort's output), on 2 MiB pages when that large: the
// first touch of 80 MB takes ~70 ms on 4 KiB pages and ~14 ms on 2 MiB ones.
struct FreeDeleter {
  void operator()(void* p) const { std::free(p); }
};
using SortBuffer = std::unique_ptr<double[], FreeDeleter>;
SortBuffer allocate_sort_buffer(std::size_t n);

}  // namespace reverify::stats
