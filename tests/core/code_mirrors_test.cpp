// code_mirrors with git's insteadOf semantics: prefix match, longest prefix wins, the rest of the
// URL carried over.
#include <doctest/doctest.h>

#include "core/code_mirrors.hpp"

using reverify::CodeMirrors;
using reverify::mirrored_url;

TEST_CASE("a matching prefix is replaced and the rest of the URL kept") {
  const CodeMirrors mirrors{{"https://git.example/vision/", "/srv/mirrors/vision/"}};
  CHECK(mirrored_url("https://git.example/vision/digits-trainer.git", mirrors) ==
        "/srv/mirrors/vision/digits-trainer.git");
  CHECK_FALSE(mirrored_url("https://git.example/audio/x.git", mirrors));
  CHECK_FALSE(mirrored_url("https://git.example/vision", mirrors));  // shorter than the prefix
}

TEST_CASE("an exact URL maps to a folder; the longest matching prefix wins") {
  const CodeMirrors mirrors{{"https://git.example/", "https://mirror.internal/"},
                            {"https://git.example/vision/digits-trainer.git", "/tmp/trainer"},
                            {"https://git.example/vision/", "/srv/vision/"}};
  CHECK(mirrored_url("https://git.example/vision/digits-trainer.git", mirrors) == "/tmp/trainer");
  CHECK(mirrored_url("https://git.example/vision/other.git", mirrors) == "/srv/vision/other.git");
  CHECK(mirrored_url("https://git.example/nlp/bert.git", mirrors) ==
        "https://mirror.internal/nlp/bert.git");
}

TEST_CASE("no mirrors, an empty prefix and a non-matching URL leave the URL alone") {
  CHECK_FALSE(mirrored_url("https://git.example/a.git", {}));
  CHECK_FALSE(mirrored_url("https://git.example/a.git", {{"", "/everything/"}}));
  CHECK_FALSE(mirrored_url("git@git.example:vision/a.git", {{"https://git.example/", "/m/"}}));
}
