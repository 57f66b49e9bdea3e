#include <doctest/doctest.h>

#include <climits>

#include "policies/backoff.hpp"

using namespace reverify;
using std::chrono::seconds;

TEST_CASE("capped backoff doubles from the initial delay up to the cap") {
  const struct {
    int initial, cap, attempt, expected;
  } cases[] = {
      {30, 3600, 1, 30},      {30, 3600, 2, 60},   {30, 3600, 3, 120},   {30, 3600, 7, 1920},
      {30, 3600, 8, 3600},    {30, 3600, 9, 3600}, {600, 86400, 1, 600}, {600, 86400, 5, 9600},
      {600, 86400, 9, 86400}, {10, 5, 1, 5},       {0, 60, 4, 0},        {30, 3600, 0, 30},
  };
  for (const auto& c : cases) {
    CAPTURE(c.initial);
    CAPTURE(c.cap);
    CAPTURE(c.attempt);
    CHECK(capped_backoff(seconds(c.initial), seconds(c.cap), c.attempt) == seconds(c.expected));
  }
}

TEST_CASE("a huge attempt number stays at the cap without overflowing") {
  CHECK(capped_backoff(seconds(1), seconds(86400), INT_MAX) == seconds(86400));
  CHECK(capped_backoff(seconds(0), seconds(86400), INT_MAX) == seconds(0));
}
