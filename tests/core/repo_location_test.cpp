// repo_location: where a manifest's code.repo is on this machine, for the process runner's clone
// and the preflight's lockfile check. Paths resolve against the manifest like its other URIs; URLs
// and scp-like addresses stay as they are, by git's rule (a ':' before any '/').
#include <doctest/doctest.h>

#include "core/uri.hpp"

using reverify::repo_location;

namespace {
const char* const kManifest = "/reg/m/v/manifest.json";
}

TEST_CASE("a relative code.repo resolves against the manifest's folder") {
  CHECK(repo_location("../trainer", kManifest) == "/reg/m/trainer");
  CHECK(repo_location("trainer.git", kManifest) == "/reg/m/v/trainer.git");
  CHECK(repo_location("./a/../b", kManifest) == "/reg/m/v/b");
  CHECK(repo_location("../trainer", "file:///reg/m/v/manifest.json") == "/reg/m/trainer");
  // Against a manifest fetched over http, the repository is beside it on that server.
  CHECK(repo_location("../trainer.git", "https://h/m/v/manifest.json") ==
        "https://h/m/trainer.git");
}

TEST_CASE("absolute paths and file:// are paths; URLs and scp-like addresses stay as they are") {
  CHECK(repo_location("/srv/git/trainer", kManifest) == "/srv/git/trainer");
  CHECK(repo_location("file:///srv/git/trainer%20x.git", kManifest) == "/srv/git/trainer x.git");
  for (const char* url :
       {"https://git.example/vision/t.git", "ssh://git@h:2222/v/t.git", "git://h/t.git",
        "git@github.com:org/t.git", "github.com:org/t.git", "host:t.git"}) {
    CAPTURE(url);
    CHECK(repo_location(url, kManifest) == url);
  }
}

TEST_CASE("a path with '@' or a ':' after a '/' is still a path, as git reads it") {
  CHECK(repo_location("../models@2/trainer", kManifest) == "/reg/m/models@2/trainer");
  CHECK(repo_location("./a:b", kManifest) == "/reg/m/v/a:b");
  CHECK(repo_location("/srv/team@x/t", kManifest) == "/srv/team@x/t");
}
