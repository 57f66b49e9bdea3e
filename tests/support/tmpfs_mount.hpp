#pragma once
// A small file system for a test to fill: a tmpfs of a given size mounted at a folder (created
// when missing), unmounted lazily when the test ends. Needs root (the integration suites run as
// root).
#include <cstdlib>
#include <filesystem>
#include <string>

#include <doctest/doctest.h>

namespace reverify::test {

struct TmpfsMount {
  std::filesystem::path path;
  // `size` as mount(8) takes it: "8m", "32m".
  TmpfsMount(const std::filesystem::path& where, const std::string& size) : path(where) {
    std::filesystem::create_directories(path);
    const std::string mount = "mount -t tmpfs -o size=" + size + " tmpfs '" + path.string() + "'";
    REQUIRE_MESSAGE(std::system(mount.c_str()) == 0, mount << " (the tests run as root)");
  }
  ~TmpfsMount() { (void)std::system(("umount -l '" + path.string() + "'").c_str()); }
  TmpfsMount(const TmpfsMount&) = delete;
  TmpfsMount& operator=(const TmpfsMount&) = delete;
};

}  // namespace reverify::test
