#pragma once
// The sort under every distribution statistic (stats.hpp): pure, no I/O.

#include <span>

namespace reverify::stats {

// Ascending sort of doubles by MSD radix sort on their order-preserving bit patterns
// (-0.0 sorts before +0.0). REQUIRES: no NaN. `threads` > 1 splits the first pass and shares
// out the buckets.
void radix_sort(std::span<double> values, unsigned threads = 1);

}  // namespace reverify::stats
