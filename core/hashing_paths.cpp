#include "core/hashing_paths.hpp"

#include <algorithm>
#include <cmath>

namespace reverify {
std::size_t read_buffer_bytes(ReadPath path) {
  switch (path) {
    case ReadPath::map:
      return 0;
    case ReadPath::read_64k:
      return 64 * 1024;
    case ReadPath::read_256k:
      return 256 * 1024;
    case ReadPath::read_1m:
      return 1024 * 1024;
  }
  return 0;
}

ReadPath PathChooser::choose(PageLayout layout) {
  std::lock_guard lock(mutex_);
  LayoutState& state = layouts_[static_cast<std::size_t>(layout)];
  const std::uint64_t choice = state.choices++;
  // First every path gets its tries, in turn.
  std::size_t least = 0;
  for (std::size_t p = 1; p < kReadPaths; ++p)
    if (state.paths[p].windows < state.paths[least].windows)
      least = p;
  if (state.paths[least].windows < kFirstTries)
    return static_cast<ReadPath>(least);
  std::size_t best = 0;
  for (std::size_t p = 1; p < kReadPaths; ++p) {
    const Tally& a = state.paths[p];
    const Tally& b = state.paths[best];
    if (a.ns * b.bytes < b.ns * a.bytes)  // a.ns / a.bytes < b.ns / b.bytes, bytes > 0
      best = p;
  }
  if (choice % kExploreEvery != kExploreEvery - 1)
    return static_cast<ReadPath>(best);
  // Exploring: the other paths in turn.
  state.next_explored = (state.next_explored + 1) % kReadPaths;
  if (state.next_explored == best)
    state.next_explored = (state.next_explored + 1) % kReadPaths;
  return static_cast<ReadPath>(state.next_explored);
}

void PathChooser::record(PageLayout layout, ReadPath path, std::uint64_t bytes,
                         std::uint64_t cpu_ns) {
  if (bytes == 0)
    return;
  std::lock_guard lock(mutex_);
  Tally& tally = layouts_[static_cast<std::size_t>(layout)].paths[static_cast<std::size_t>(path)];
  ++tally.windows;
  const double weight = std::pow(kDecay, static_cast<double>(bytes) / kDecayBytes);
  tally.ns = tally.ns * weight + static_cast<double>(cpu_ns);
  tally.bytes = tally.bytes * weight + static_cast<double>(bytes);
}

PathChooser::Estimate PathChooser::estimate(PageLayout layout, ReadPath path) const {
  std::lock_guard lock(mutex_);
  const Tally& tally =
      layouts_[static_cast<std::size_t>(layout)].paths[static_cast<std::size_t>(path)];
  return {tally.windows, tally.bytes > 0 ? tally.ns / tally.bytes : 0};
}

PathChooser& PathChooser::shared() {
  static PathChooser chooser;
  return chooser;
}

}  // namespace reverify
