// digest_from_memory: how fast SHA-256 runs over bytes that come from memory rather than from the
// CPU's caches, with no file system in the way: the ceiling any read path of `reverify hash` can
// reach on this machine (bench/hash_bench.sh prints it next to `openssl speed`'s in-cache limit).
// Hashes a buffer of MiB (default 1024, far larger than the last-level cache; 2 MiB pages where
// the kernel gives them, like a corpus in 2 MiB folios) on 1 thread and on one thread per core,
// each thread its own share, with the same OpenSSL digest reverify uses (core/sha256.hpp); the
// baseline in the same run is a 16 KiB buffer hashed over and over (the size `openssl speed`'s
// row uses): from L1. Prints MB/s a core for both and their ratio, best of 3 runs.
//
// Usage: digest_from_memory [MIB]

#include <sys/mman.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "bench/bench_timing.hpp"
#include "core/sha256.hpp"

using namespace reverify;

namespace {

// Hashes `bytes` of `data` on `threads` threads, each an equal share in one digest; `reuse`
// hashes the first `reuse` bytes again and again instead (the in-cache baseline).
double seconds_to_hash(const char* data, std::size_t bytes, unsigned threads, std::size_t reuse) {
  return bench::best_of(3, [&] {
    std::vector<std::thread> workers;
    for (unsigned t = 0; t < threads; ++t) {
      workers.emplace_back([=] {
        Sha256 digest;
        const std::size_t share = bytes / threads;
        for (std::size_t done = 0; done < share;) {
          const std::size_t step = reuse ? std::min(reuse, share - done) : share - done;
          digest.update(reuse ? data : data + t * share + done, step);
          done += step;
        }
        (void)digest.final_hex();
      });
    }
    for (auto& worker : workers)
      worker.join();
  });
}

}  // namespace

int main(int argc, char** argv) {
  const std::size_t mib = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 1024;
  if (mib == 0) {
    std::fprintf(stderr, "usage: digest_from_memory [MIB]   (MIB: a positive number)\n");
    return 2;
  }
  const std::size_t bytes = mib << 20;
  void* mapped = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (mapped == MAP_FAILED) {
    std::perror("mmap");
    return 1;
  }
  madvise(mapped, bytes, MADV_HUGEPAGE);
  auto* data = static_cast<char*>(mapped);
  for (std::size_t i = 0; i < bytes; ++i)
    data[i] = char(i * 2654435761u >> 24);  // touched, so every page is there before the timing
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  for (unsigned threads : {1u, cores}) {
    const double memory = double(bytes) / seconds_to_hash(data, bytes, threads, 0) / 1e6 / threads;
    const double cached =
        double(bytes) / seconds_to_hash(data, bytes, threads, 16384) / 1e6 / threads;
    std::printf(
        "%u thread%s: from memory %.0f MB/s a core, from a 16 KiB buffer %.0f MB/s a core: "
        "%.2f of it\n",
        threads, threads == 1 ? "" : "s", memory, cached, memory / cached);
    if (cores == 1)
      break;
  }
  munmap(mapped, bytes);
}
