#pragma once
// The coordinates a service fixture wrote for the tests (tests/services/*_up.sh): the KEY=VALUE
// lines of $REVERIFY_SERVICES_DIR/<name>.env.

#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>

namespace reverify::test {

// Fails the test case, naming the fixture, when the file is not there.
inline std::map<std::string, std::string> services_env(const std::string& name) {
  const char* dir = std::getenv("REVERIFY_SERVICES_DIR");
  REQUIRE_MESSAGE(dir != nullptr,
                  ("run through ctest: the " + name + " fixture provides the services"));
  std::ifstream in(std::filesystem::path(dir) / (name + ".env"));
  REQUIRE_MESSAGE(in.good(), ("no " + name + ".env: the " + name + " fixture (services_" + name +
                              "_up) did not run"));
  std::map<std::string, std::string> env;
  std::string line;
  while (std::getline(in, line)) {
    const auto eq = line.find('=');
    if (eq != std::string::npos)
      env[line.substr(0, eq)] = line.substr(eq + 1);
  }
  return env;
}

}  // namespace reverify::test
