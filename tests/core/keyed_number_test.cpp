// "CHECK=NUMBER" as capture --detect and --floor take it: split at the last '=', so that every
// check name a verdict prints (scopes and thresholds hold '=' themselves) can be keyed.

#include <doctest/doctest.h>

#include <string>

#include "core/keyed_number.hpp"

using reverify::parse_keyed_number;

TEST_CASE("every check family's name is a key, '=' in its scope or threshold included") {
  // One name per family a verdict prints: the primary by its metric's name and by its check's,
  // segments (capture --help's example among them), distribution statistics, steps, the
  // same-seed note, the job's cross-check, and every parity check with and without a scope.
  for (const std::string name : {"accuracy",
                                 "primary:accuracy",
                                 "primary:ndcg@k",
                                 "segment:digit=8:accuracy",
                                 "segment:market=de:ndcg@k",
                                 "segment:region=west:roc_auc",
                                 "distribution:psi",
                                 "distribution:flip_rate",
                                 "psi",
                                 "steps:loss",
                                 "same-seed:predictions",
                                 "job:metric-agrees",
                                 "parity:argmax",
                                 "parity:argmax:segment:lang=de",
                                 "parity:class=3",
                                 "parity:threshold=0.5",
                                 "parity:threshold=0.5:class=1",
                                 "parity:threshold=0.5:segment:region=west",
                                 "parity:top-k-set",
                                 "parity:top-k-order:segment:market=de",
                                 "parity:tau-distance:segment:market=us"}) {
    for (const std::string number : {"0.125", "1e-3", "2"}) {
      CAPTURE(name);
      CAPTURE(number);
      const auto keyed = parse_keyed_number(name + "=" + number);
      REQUIRE(keyed.has_value());
      CHECK(keyed->key == name);
      CHECK(keyed->value == std::stod(number));
    }
  }
}

TEST_CASE("anything but KEY=NUMBER is refused") {
  for (const std::string item :
       {"accuracy", "=0.1", "accuracy=", "accuracy=abc", "accuracy=0.1x", "accuracy= 0.1",
        "accuracy=inf", "accuracy=nan", "accuracy=1e999", "segment:market=de:ndcg@k",
        "parity:threshold=0.5:segment:region=west"}) {
    CAPTURE(item);
    CHECK_FALSE(parse_keyed_number(item).has_value());
  }
}
