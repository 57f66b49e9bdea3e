#pragma once
// Prediction sets as the policies tests write them: one score per record, or rows of `cols`
// scores (core/predictions.hpp).

#include <cstddef>
#include <utility>
#include <vector>

#include "core/predictions.hpp"

namespace reverify::test {

inline Predictions one_d(std::vector<double> values) {
  Predictions p;
  p.rows = values.size();
  p.values = std::move(values);
  return p;
}

// REQUIRES: values.size() is a multiple of cols.
inline Predictions two_d(std::size_t cols, std::vector<double> values) {
  Predictions p;
  p.rows = values.size() / cols;
  p.cols = cols;
  p.two_d = true;
  p.values = std::move(values);
  return p;
}

}  // namespace reverify::test
