#pragma once
// How the hashers get a file's bytes (docs/benchmarks.md "How hashing reads files"): through a
// read-only mapping, or with pread() into a buffer of one of a few sizes. Which is fastest depends
// on the machine (what a page fault, the copy and a system call cost; the L2 size) and on how the
// bytes sit in the page cache (a 2 MiB folio is mapped by one fault; 4 KiB pages take a fault per
// 64 KiB of fault-around), so no constant is right everywhere. The hashers cut each file into
// windows, sort each window into a `PageLayout`, and a `PathChooser` picks its path from the CPU
// time each path took per byte on the windows of that layout hashed so far in this process: an
// epsilon-greedy bandit that tries every path on the first windows of each layout, then takes the
// cheapest, trying the others again on one window in kExploreEvery so that it follows when the load
// or the data change.

#include <array>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <mutex>

#include "core/enum_names.hpp"

namespace reverify {

// How a window of a file sits in the page cache, as far as hashing it costs.
enum class PageLayout {
  short_range,  // a whole range under kShortRange: fixed costs (a mapping's set-up) dominate
  small_pages,  // mapped by fault-around, 64 KiB a fault: 4 KiB pages or small folios
  huge_pages,   // 2 MiB folios, each mapped by one fault
};
template <>
struct EnumNames<PageLayout> {
  static constexpr EnumName<PageLayout> table[] = {{PageLayout::short_range, "short_range"},
                                                   {PageLayout::small_pages, "small_pages"},
                                                   {PageLayout::huge_pages, "huge_pages"}};
};
inline constexpr std::size_t kPageLayouts = std::size(EnumNames<PageLayout>::table);

enum class ReadPath { map, read_64k, read_256k, read_1m };
template <>
struct EnumNames<ReadPath> {
  static constexpr EnumName<ReadPath> table[] = {{ReadPath::map, "map"},
                                                 {ReadPath::read_64k, "read_64k"},
                                                 {ReadPath::read_256k, "read_256k"},
                                                 {ReadPath::read_1m, "read_1m"}};
};
inline constexpr std::size_t kReadPaths = std::size(EnumNames<ReadPath>::table);
// The buffer a read path fills per pread(); 0 for map.
std::size_t read_buffer_bytes(ReadPath path);

// Ranges shorter than this are one window of their own layout, short_range.
inline constexpr std::uint64_t kShortRange = 256 * 1024;

class PathChooser {
 public:
  static constexpr unsigned kFirstTries = 2;     // windows per path before the first comparison
  static constexpr unsigned kExploreEvery = 32;  // then one window in this many tries another path
  // Older windows weigh kDecay less for every kDecayBytes hashed since through the same path, so
  // an estimate follows the last few dozen MiB whether they came in large windows or small files.
  static constexpr double kDecay = 0.75;
  static constexpr double kDecayBytes = 8 * 1024 * 1024;

  // The path for the next window of `layout`.
  ReadPath choose(PageLayout layout);
  // What hashing `bytes` of a `layout` window through `path` cost in CPU time (this thread's).
  void record(PageLayout layout, ReadPath path, std::uint64_t bytes, std::uint64_t cpu_ns);

  struct Estimate {
    unsigned windows = 0;    // measured so far
    double ns_per_byte = 0;  // decayed mean, weighted by bytes; 0 before any window
  };
  Estimate estimate(PageLayout layout, ReadPath path) const;

  // The one the hashers of this process share.
  static PathChooser& shared();

 private:
  struct Tally {
    unsigned windows = 0;
    double ns = 0, bytes = 0;  // decayed sums
  };
  struct LayoutState {
    std::array<Tally, kReadPaths> paths{};
    std::uint64_t choices = 0;
    std::size_t next_explored = 0;
  };
  mutable std::mutex mutex_;
  std::array<LayoutState, kPageLayouts> layouts_{};
};

}  // namespace reverify
