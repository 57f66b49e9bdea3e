// Distribution statistics against reference values from scipy/numpy (vectors/make_vectors.py).
#include <doctest/doctest.h>

#include <cmath>
#include <cstdlib>
#include <fstream>

#include <nlohmann/json.hpp>

#include "policies/stats.hpp"
#include "tests/support/files.hpp"

using namespace reverify;

namespace {

struct Array {
  std::vector<double> values;
  std::size_t cols = 1;
  bool two_d = false;
};

Array flatten(const nlohmann::json& j) {
  Array a;
  for (const auto& row : j) {
    if (row.is_array()) {
      a.two_d = true;
      a.cols = row.size();
      for (const auto& v : row)
        a.values.push_back(v.get<double>());
    } else {
      a.values.push_back(row.get<double>());
    }
  }
  return a;
}

void check_relative(const char* what, double actual, double expected) {
  INFO(what << ": actual " << actual << ", expected " << expected);
  CHECK(std::abs(actual - expected) <= 1e-9 * std::abs(expected) + 1e-15);
}

nlohmann::json load_vectors() {
  const std::string text =
      test::read_file(test::source_dir() / "tests/policies/vectors/vectors.json");
  REQUIRE_FALSE(text.empty());
  return nlohmann::json::parse(text);
}

}  // namespace

TEST_CASE("statistics match scipy/numpy reference vectors") {
  const auto vectors = load_vectors();
  REQUIRE(vectors["cases"].size() >= 20);
  CHECK(vectors["psi_smoothing"].get<double>() == stats::kPsiSmoothing);
  for (const auto& c : vectors["cases"]) {
    CAPTURE(c["name"].get<std::string>());
    const auto original = flatten(c["original"]);
    const auto rebuilt = flatten(c["rebuilt"]);
    for (unsigned threads : {1u, 2u}) {
      const auto got = stats::compare(original.values, rebuilt.values, original.cols, rebuilt.cols,
                                      original.two_d && rebuilt.two_d,
                                      vectors["threshold"].get<double>(), threads);
      CHECK(std::abs(got.ks - c["ks"].get<double>()) <= 1e-12);
      check_relative("wasserstein", got.wasserstein, c["wasserstein"].get<double>());
      check_relative("psi", got.psi, c["psi"].get<double>());
      for (std::size_t k = 0; k < stats::kQuantileLevels.size(); ++k) {
        check_relative("quantile original", got.quantiles_original[k],
                       c["quantiles_original"][k].get<double>());
        check_relative("quantile rebuilt", got.quantiles_rebuilt[k],
                       c["quantiles_rebuilt"][k].get<double>());
      }
      REQUIRE(got.paired.has_value() == c.contains("paired"));
      if (got.paired) {
        check_relative("max_abs_diff", got.paired->max_abs_diff,
                       c["paired"]["max_abs_diff"].get<double>());
        check_relative("mean_abs_diff", got.paired->mean_abs_diff,
                       c["paired"]["mean_abs_diff"].get<double>());
        check_relative("flip_rate", got.paired->flip_rate, c["paired"]["flip_rate"].get<double>());
      }
    }
  }
}
