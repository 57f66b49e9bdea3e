// reverify's hashes against independent implementations: coreutils for the file manifest of a
// folder, a Python standard-library script for the tensor hash of safetensors files.
#include <doctest/doctest.h>

#include "core/hashing.hpp"
#include "tests/core/hashing_test_support.hpp"

namespace fs = std::filesystem;
using namespace reverify::test;

namespace {
const fs::path kTests = source_dir() / "tests" / "core";

std::string python_root(const fs::path& file, const fs::path& scratch) {
  Ran ran = run_program(
      {"/usr/bin/python3", (kTests / "hash_reference.py").string(), "tensor-hash", file.string()},
      scratch);
  REQUIRE_MESSAGE(ran.exit_code == 0, ran.err);
  return last_line(ran.out);
}

void python_write(const fs::path& file, int seed, const std::string& layout, int pad,
                  const fs::path& scratch) {
  Ran ran =
      run_program({"/usr/bin/python3", (kTests / "hash_reference.py").string(), "write-safetensors",
                   file.string(), std::to_string(seed), layout, std::to_string(pad)},
                  scratch);
  REQUIRE_MESSAGE(ran.exit_code == 0, ran.err);
}
}  // namespace

TEST_CASE("folder root hash equals the one computed with find, sort and sha256sum") {
  TempDir scratch;
  TempDir dir;
  std::uint64_t state = 12345;
  auto next = [&] { return state = state * 6364136223846793005ull + 1442695040888963407ull; };
  const char* names[] = {"a", "B", "a b", "z-1", "z.1", "é", "data", "x_y"};
  for (int i = 0; i < 60; ++i) {
    fs::path path = dir.path;
    for (std::uint64_t depth = next() % 3; depth > 0; --depth)
      path /= names[next() % 8];
    path /= std::string(names[next() % 8]) + std::to_string(i);
    std::string content(next() % (i == 7 ? 3'000'000 : 70'000), '\0');
    for (char& c : content)
      c = static_cast<char>(next() >> 56);
    write_file(path, content);
  }
  fs::create_symlink("a0", dir.path / "link-to-a0");
  write_file(dir.path / "a0", "linked");

  Ran coreutils = run_program({"bash", (kTests / "hash_coreutils.sh").string(), dir.path.string(),
                               (scratch.path / "lines").string()},
                              scratch.path);
  REQUIRE_MESSAGE(coreutils.exit_code == 0, coreutils.err);
  auto manifest = reverify::hash_directory(dir.path);
  REQUIRE(manifest.ok());
  CHECK(manifest->files.size() == 62);
  CHECK(coreutils.out == manifest->text() + manifest->root + "\n");
}

TEST_CASE("tensor hash equals the Python reference on generated safetensors files") {
  TempDir dir;
  for (int seed = 1; seed <= 12; ++seed) {
    CAPTURE(seed);
    const fs::path sorted = dir.path / ("sorted-" + std::to_string(seed) + ".safetensors");
    const fs::path shuffled = dir.path / ("shuffled-" + std::to_string(seed) + ".safetensors");
    python_write(sorted, seed, "sorted", 0, dir.path);
    python_write(shuffled, seed, "shuffled", seed * 5, dir.path);
    CHECK(read_file(sorted) != read_file(shuffled));

    auto ours = reverify::hash_safetensors(sorted);
    REQUIRE_MESSAGE(ours.ok(), ours.error().to_string());
    CHECK(ours->root == python_root(sorted, dir.path));
    // Same tensors, other header order, data layout, padding and __metadata__: same root.
    auto ours_shuffled = reverify::hash_safetensors(shuffled);
    REQUIRE_MESSAGE(ours_shuffled.ok(), ours_shuffled.error().to_string());
    CHECK(ours_shuffled->root == ours->root);
    CHECK(python_root(shuffled, dir.path) == ours->root);
  }
  // Different seeds give different tensors, so the comparison above can fail.
  CHECK(python_root(dir.path / "sorted-1.safetensors", dir.path) !=
        python_root(dir.path / "sorted-2.safetensors", dir.path));
}
