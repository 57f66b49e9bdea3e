#include "policies/tolerance_alpha.hpp"

namespace reverify {

double AlphaShares::of(CheckFamily family) const {
  switch (family) {
    case CheckFamily::primary:
      return primary;
    case CheckFamily::segments:
      return segments;
    case CheckFamily::distribution:
      return distribution;
    case CheckFamily::steps:
      return steps;
  }
  return 0;
}

AlphaSplit::AlphaSplit(double false_page_rate, const AlphaShares& shares,
                       const std::map<CheckFamily, std::size_t>& banded)
    : banded_(banded) {
  double total = 0;
  for (const auto& [family, count] : banded)
    total += count > 0 ? shares.of(family) : 0;
  for (const auto& [family, count] : banded) {
    if (count > 0 && total > 0)
      family_[family] = false_page_rate * shares.of(family) / total;
  }
}

double AlphaSplit::family(CheckFamily family) const {
  auto it = family_.find(family);
  return it == family_.end() ? 0 : it->second;
}

double AlphaSplit::per_check(CheckFamily family) const {
  auto it = banded_.find(family);
  const std::size_t m = it == banded_.end() ? 0 : it->second;
  return m == 0 ? 0 : this->family(family) / static_cast<double>(m);
}

}  // namespace reverify
