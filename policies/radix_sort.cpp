#include "policies/radix_sort.hpp"

#include <algorithm>
#include <atomic>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <new>
#include <thread>
#include <utility>
#include <vector>

#include <sys/mman.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace reverify::stats {
namespace {

using Key = std::uint64_t;
constexpr Key kSignBit = Key{1} << 63;

// Figures below: 10M doubles, one thread, on the 2-core EPYC VM this was tuned on (512 KiB L2
// per core; std::sort takes 1.1-1.2 s there).
//
// Only the first split scatters across the whole array; the buckets it leaves are sorted in
// cache. It merges the bins of a 16-bit window (just under the highest bit that differs) into at
// most 2048 buckets of similar size: the top bits of exponent-heavy keys (probabilities,
// normals) are too skewed for a plain digit, and more buckets mean more write streams, which
// thrash the TLB.
constexpr unsigned kWindowBits = 16;
constexpr std::size_t kTopBuckets = 2048;
// A leaf (its keys, its two key buffers and its counts) stays in L2.
constexpr std::size_t kLeafMax = std::size_t{1} << 14;
// A leaf sorts on the top 2 x 11 bits of what differs in it, then by insertion.
constexpr unsigned kLeafDigit = 11;
// Leaves this small go straight to insertion sort.
constexpr std::size_t kSmall = 16;
// Bigger nodes split on up to 11 bits into buckets of about half a leaf.
constexpr unsigned kNodeBits = 11;

// Order-preserving map from IEEE-754 doubles to unsigned integers.
Key to_key(double v) {
  const auto u = std::bit_cast<Key>(v);
  return (u & kSignBit) ? ~u : (u | kSignBit);
}
double from_key(Key k) {
  return std::bit_cast<double>((k & kSignBit) ? (k & ~kSignBit) : ~k);
}

// Values are held either as doubles (the input, the output, a split's scratch) or as keys (a
// leaf's workspace, the room a crowded bucket splits into).
Key load(const double* p) {
  return to_key(*p);
}
Key load(const Key* p) {
  return *p;
}
void store(double* p, Key k) {
  *p = from_key(k);
}
void store(Key* p, Key k) {
  *p = k;
}

unsigned top_bit(Key x) {
  return static_cast<unsigned>(std::bit_width(x));
}

// The bits in which some keys of src[0, n) differ (n >= 1).
template <class S>
Key differing_bits(const S* src, std::size_t n) {
  const Key first = load(src);
  Key diff = 0;
  for (std::size_t i = 0; i < n; ++i)
    diff |= load(src + i) ^ first;
  return diff;
}

void insertion_sort(Key* a, std::size_t n) {
  for (std::size_t i = 1; i < n; ++i) {
    const Key k = a[i];
    std::size_t j = i;
    for (; j > 0 && a[j - 1] > k; --j)
      a[j] = a[j - 1];
    a[j] = k;
  }
}

struct Workspace {
  std::unique_ptr<Key[]> temp = std::make_unique_for_overwrite<Key[]>(kLeafMax);
  std::unique_ptr<Key[]> aux = std::make_unique_for_overwrite<Key[]>(kLeafMax);
  std::vector<std::uint32_t> end = std::vector<std::uint32_t>(std::size_t{2} << kLeafDigit);
};

// Writes the nearly sorted keys t[0, n) to out as doubles, inserting the few out of place; false
// (out then unspecified) when that would take more than about 8 moves a key.
bool insert_nearly_sorted(const Key* t, double* out, std::size_t n) {
  Key last = t[0];
  out[0] = from_key(last);
  std::size_t budget = 8 * n;
  for (std::size_t i = 1; i < n; ++i) {
    const Key k = t[i];
    if (k >= last) [[likely]] {
      out[i] = from_key(k);
      last = k;
      continue;
    }
    std::size_t j = i;
    for (; j > 0 && to_key(out[j - 1]) > k; --j)
      out[j] = out[j - 1];
    out[j] = from_key(k);
    if ((budget -= std::min(budget, i - j)) == 0)
      return false;
  }
  return true;
}

// Sorts src[0, n) (1 <= n <= kLeafMax, only the low `bits` bits differ) into out, in cache: two
// LSD passes on the top 2 x kLeafDigit bits of what differs (the leaf's own highest differing
// bit, found while counting), after which keys out of order share those 22 bits, rare enough
// for insertion without the mispredicted branch of every other key that one wide MSD digit left.
// Keys clustered below 22 bits make insertion expensive: past a budget, std::sort takes over.
// src is read whole before out is written, so out may be src.
template <class S>
void sort_leaf(const S* src, double* out, std::size_t n, unsigned bits, Workspace& ws) {
  Key* const t = ws.temp.get();
  Key* const aux = ws.aux.get();
  if (n <= kSmall) {
    for (std::size_t i = 0; i < n; ++i)
      t[i] = load(src + i);
    insertion_sort(t, n);
    for (std::size_t i = 0; i < n; ++i)
      out[i] = from_key(t[i]);
    return;
  }
  std::uint32_t* const high = ws.end.data();
  std::uint32_t* const low = high + (std::size_t{1} << kLeafDigit);
  unsigned high_width = 0, low_width = 0, high_shift = 0, low_shift = 0;
  for (;;) {
    high_width = std::min(kLeafDigit, bits);
    high_shift = bits - high_width;
    low_width = std::min(kLeafDigit, high_shift);
    low_shift = high_shift - low_width;
    std::fill(high, high + (std::size_t{2} << kLeafDigit), 0);
    const Key first = load(src), high_mask = (Key{1} << high_width) - 1,
              low_mask = (Key{1} << low_width) - 1;
    Key diff = 0;
    for (std::size_t i = 0; i < n; ++i) {
      const Key k = load(src + i);
      diff |= k ^ first;
      ++high[(k >> high_shift) & high_mask];
      ++low[(k >> low_shift) & low_mask];
    }
    if (top_bit(diff) >= bits)
      break;
    bits = top_bit(diff);
    if (bits == 0) {
      for (std::size_t i = 0; i < n; ++i)
        out[i] = from_key(load(src + i));
      return;
    }
  }
  const Key high_mask = (Key{1} << high_width) - 1, low_mask = (Key{1} << low_width) - 1;
  std::uint32_t sum_high = 0, sum_low = 0;
  for (std::size_t b = 0; b < (std::size_t{1} << kLeafDigit); ++b) {
    sum_high += std::exchange(high[b], sum_high);
    sum_low += std::exchange(low[b], sum_low);
  }
  Key* sorted = t;
  if (low_width > 0) {
    for (std::size_t i = 0; i < n; ++i) {
      const Key k = load(src + i);
      t[low[(k >> low_shift) & low_mask]++] = k;
    }
    for (std::size_t i = 0; i < n; ++i) {
      const Key k = t[i];
      aux[high[(k >> high_shift) & high_mask]++] = k;
    }
    sorted = aux;
  } else {
    for (std::size_t i = 0; i < n; ++i) {
      const Key k = load(src + i);
      t[high[(k >> high_shift) & high_mask]++] = k;
    }
  }
  if (!insert_nearly_sorted(sorted, out, n)) {
    std::sort(sorted, sorted + n);
    for (std::size_t i = 0; i < n; ++i)
      out[i] = from_key(sorted[i]);
  }
}

// Sorts src[0, n) (n >= 1, only the low `bits` bits differ) into out; dst[0, n) is free. Each of
// src and dst holds doubles or keys; one of them is out.
template <class S, class D>
void sort_node(S* src, D* dst, double* out, std::size_t n, unsigned bits, Workspace& ws) {
  if (n <= kLeafMax) {
    sort_leaf(src, out, n, bits, ws);
    return;
  }
  bits = top_bit(differing_bits(src, n));
  if (bits == 0) {
    for (std::size_t i = 0; i < n; ++i)
      store(out + i, load(src + i));
    return;
  }
  const unsigned width = std::min({bits, kNodeBits, top_bit((n - 1) / (kLeafMax / 2))});
  const unsigned shift = bits - width;
  const Key mask = (Key{1} << width) - 1;
  std::vector<std::size_t> end(std::size_t{1} << width);
  for (std::size_t i = 0; i < n; ++i)
    ++end[(load(src + i) >> shift) & mask];
  std::size_t sum = 0;
  for (auto& e : end)
    sum += std::exchange(e, sum);
  for (std::size_t i = 0; i < n; ++i) {
    const Key k = load(src + i);
    store(dst + end[(k >> shift) & mask]++, k);
  }
  std::size_t begin = 0;
  for (const std::size_t e : end) {
    if (e > begin)
      sort_node(dst + begin, src + begin, out + begin, e - begin, shift, ws);
    begin = e;
  }
}

// Writes values to the next free slot of their bucket through one buffered cache line per
// bucket; full lines go out with non-temporal stores, which skip reading the destination line
// first (first split: 75 -> 45 ms).
class LineWriter {
 public:
  // dst must be 64-byte aligned; start[b] is bucket b's first slot.
  LineWriter(double* dst, std::span<const std::size_t> start)
      : dst_(dst), start_(start.begin(), start.end()), next_(start_), lines_(start.size()) {}

  void write(std::size_t bucket, double value) {
    const std::size_t i = next_[bucket]++;
    Line& line = lines_[bucket];
    line.values[i % 8] = value;
    if (i % 8 != 7)
      return;
    const std::size_t first = i - 7;
    if (first < start_[bucket]) {  // the line starts in another bucket's slots
      for (std::size_t j = start_[bucket]; j <= i; ++j)
        dst_[j] = line.values[j % 8];
      return;
    }
#if defined(__SSE2__)
    for (std::size_t j = 0; j < 8; j += 2)
      _mm_stream_pd(dst_ + first + j, _mm_load_pd(line.values + j));
#else
    std::copy(line.values, line.values + 8, dst_ + first);
#endif
  }

  // Writes the partly filled lines.
  void flush() {
#if defined(__SSE2__)
    _mm_sfence();
#endif
    for (std::size_t b = 0; b < lines_.size(); ++b)
      for (std::size_t j = std::max(next_[b] / 8 * 8, start_[b]); j < next_[b]; ++j)
        dst_[j] = lines_[b].values[j % 8];
  }

 private:
  struct alignas(64) Line {
    double values[8];
  };
  double* dst_;
  std::vector<std::size_t> start_, next_;
  std::vector<Line> lines_;
};

// The first split's passes over a slice [begin, end) of the input. (Bounds and the like are
// passed by value: Key is std::size_t, so a store of either could alias a captured one.)
Key slice_diff(const double* v, std::size_t begin, std::size_t end) {
  return differing_bits(v + begin, end - begin) | (load(v + begin) ^ load(v));
}
void slice_histogram(const double* v, std::size_t begin, std::size_t end, unsigned shift, Key mask,
                     std::size_t* hist) {
  for (std::size_t i = begin; i < end; ++i)
    ++hist[(load(v + i) >> shift) & mask];
}
void slice_scatter(const double* v, std::size_t begin, std::size_t end, unsigned shift, Key mask,
                   const std::uint16_t* bucket_of, LineWriter& out) {
  for (std::size_t i = begin; i < end; ++i)
    out.write(bucket_of[(load(v + i) >> shift) & mask], v[i]);
  out.flush();
}

// Runs fn(t) for t in [0, threads), t = 0 on this thread.
template <class Fn>
void on_threads(unsigned threads, Fn fn) {
  std::vector<std::thread> workers;
  for (unsigned t = 1; t < threads; ++t)
    workers.emplace_back(fn, t);
  fn(0u);
  for (auto& w : workers)
    w.join();
}

// Uninitialised storage for n values of T, 2 MiB aligned and advised onto huge pages when big
// (THP is often in "madvise" mode).
template <class T>
std::unique_ptr<T[], FreeDeleter> allocate_huge(std::size_t n) {
  constexpr std::size_t kHugePage = std::size_t{2} << 20;
  const std::size_t bytes = std::max<std::size_t>(n, 1) * sizeof(T);
  const std::size_t align = bytes >= kHugePage ? kHugePage : 64;
  auto* p = static_cast<T*>(std::aligned_alloc(align, (bytes + align - 1) / align * align));
  if (p == nullptr)
    throw std::bad_alloc();
#ifdef MADV_HUGEPAGE
  if (align == kHugePage)
    madvise(p, (bytes + align - 1) / align * align, MADV_HUGEPAGE);
#endif
  return std::unique_ptr<T[], FreeDeleter>(p);
}

// The top split's buckets: consecutive bins of the histogram merged into runs of at most a
// target count of keys.
struct Buckets {
  std::vector<std::uint16_t> of_bin;  // the bucket of each bin
  std::vector<unsigned> bits;         // only the low bits[b] bits differ in bucket b
  std::vector<std::size_t> begin;     // bucket b is [begin[b], begin[b + 1]) of the output
  std::size_t count() const { return bits.size(); }
};

// Consecutive bins merge into buckets of at most `target` keys unless a bin alone holds more.
// Two neighbouring buckets hold more than `target` keys, so there are under kTopBuckets.
Buckets merge_bins(const std::vector<std::vector<std::size_t>>& hist, unsigned shift,
                   std::size_t n) {
  const std::size_t bins = hist.front().size();
  const std::size_t target = std::max((2 * n + kTopBuckets - 2) / (kTopBuckets - 1), kLeafMax / 2);
  Buckets buckets;
  buckets.of_bin.resize(bins);
  buckets.begin = {0};
  std::size_t fill = 0, first_bin = 0;
  for (std::size_t bin = 0; bin < bins; ++bin) {
    std::size_t count = 0;
    for (const auto& h : hist)
      count += h[bin];
    if (count > 0 && fill > 0 && fill + count > target) {
      buckets.bits.push_back(shift + top_bit(first_bin ^ (bin - 1)));
      buckets.begin.push_back(buckets.begin.back() + fill);
      fill = 0;
      first_bin = bin;
    }
    fill += count;
    buckets.of_bin[bin] = static_cast<std::uint16_t>(buckets.bits.size());
  }
  buckets.bits.push_back(shift + top_bit(first_bin ^ (bins - 1)));
  buckets.begin.push_back(n);
  return buckets;
}

// Where each part's slice starts in every bucket: each part scatters to its own range of each.
std::vector<std::vector<std::size_t>> scatter_starts(
    const std::vector<std::vector<std::size_t>>& hist, const Buckets& buckets) {
  const std::size_t parts = hist.size();
  std::vector<std::vector<std::size_t>> start(parts, std::vector<std::size_t>(buckets.count()));
  for (std::size_t p = 0; p < parts; ++p)
    for (std::size_t bin = 0; bin < hist[p].size(); ++bin)
      start[p][buckets.of_bin[bin]] += hist[p][bin];
  for (std::size_t b = 0; b < buckets.count(); ++b) {
    std::size_t at = buckets.begin[b];
    for (std::size_t p = 0; p < parts; ++p)
      at += std::exchange(start[p][b], at);
  }
  return start;
}

}  // namespace

SortBuffer allocate_sort_buffer(std::size_t n) {
  return allocate_huge<double>(n);
}

void radix_sort(std::span<double> values, unsigned threads) {
  radix_sort(values, values, threads);
}

// MSD radix sort: one split through memory into buckets of about 10K keys, each then sorted in
// cache (sort_leaf). The former LSD sort (6 passes of 11-bit digits, 2048 write streams each)
// took 0.7-1.0 s for 10M doubles on the EPYC VM.
void radix_sort(std::span<const double> in, std::span<double> out, unsigned threads) {
  const std::size_t n = in.size();
  const double* const v = in.data();
  double* const o = out.data();
  const auto copy_in = [&] {
    if (v != o)
      std::copy(in.begin(), in.end(), out.begin());
  };
  if (n < 4096) {
    copy_in();
    std::sort(out.begin(), out.end(), [](double a, double b) { return to_key(a) < to_key(b); });
    return;
  }
  if (n <= kLeafMax) {
    Workspace ws;
    sort_leaf(v, o, n, 64, ws);
    return;
  }
  const unsigned parts = std::max(1u, std::min(threads, 16u));
  const auto part_begin = [&](unsigned p) { return n * p / parts; };

  std::vector<Key> diff(parts);
  on_threads(parts, [&](unsigned p) { diff[p] = slice_diff(v, part_begin(p), part_begin(p + 1)); });
  Key all_diff = 0;
  for (const Key d : diff)
    all_diff |= d;
  const unsigned bits = top_bit(all_diff);
  if (bits == 0) {
    copy_in();
    return;
  }
  const unsigned window = std::min({bits, kWindowBits, top_bit(n)});
  const unsigned shift = bits - window;
  const std::size_t bins = std::size_t{1} << window;
  const Key mask = bins - 1;
  std::vector<std::vector<std::size_t>> hist(parts, std::vector<std::size_t>(bins));
  on_threads(parts, [&](unsigned p) {
    slice_histogram(v, part_begin(p), part_begin(p + 1), shift, mask, hist[p].data());
  });

  const Buckets buckets = merge_bins(hist, shift, n);
  auto start = scatter_starts(hist, buckets);
  // The split goes straight into out when it is not the input (no scratch: on a VM every fresh
  // page can cost a fault of the host's too); each bucket is then sorted in place, in cache.
  const auto scratch = v == o ? allocate_huge<double>(n) : nullptr;
  double* const split = v == o ? scratch.get() : o;
  on_threads(parts, [&](unsigned p) {
    LineWriter out(split, start[p]);
    slice_scatter(v, part_begin(p), part_begin(p + 1), shift, mask, buckets.of_bin.data(), out);
  });

  std::atomic<std::size_t> next{0};
  on_threads(parts, [&](unsigned) {
    Workspace ws;
    for (std::size_t b; (b = next.fetch_add(1, std::memory_order_relaxed)) < buckets.count();) {
      const std::size_t begin = buckets.begin[b], size = buckets.begin[b + 1] - begin;
      const unsigned bits = buckets.bits[b];
      if (split != o) {
        sort_node(split + begin, o + begin, o + begin, size, bits, ws);
      } else if (size <= kLeafMax) {
        sort_leaf(o + begin, o + begin, size, bits, ws);
      } else {  // a crowded bucket: it needs room of its own to split into
        const auto room = allocate_huge<Key>(size);
        sort_node(o + begin, room.get(), o + begin, size, bits, ws);
      }
    }
  });
}

}  // namespace reverify::stats
