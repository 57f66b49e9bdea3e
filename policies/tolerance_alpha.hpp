#pragma once
// How a verification's false-page rate is spent (DESIGN, "Verdict" -> tolerance: "spend alpha
// where it matters"). Pure.
//
// The rate is split over the families of checks that have a band in this verification, in
// proportion to their shares (the primary metric first), then evenly over the checks of a
// family (Bonferroni). A family with no banded check gives its share to the others, so the
// checks that do decide always spend the whole rate and no more:
//   alpha(check in F) = false_page_rate * share(F) / sum(share of present families) / m(F).
// By the union bound an honest rebuild pages with probability at most false_page_rate when
// every band holds its own alpha.

#include <cstddef>
#include <map>
#include <string>

#include "core/enum_names.hpp"

namespace reverify {

enum class CheckFamily { primary, segments, distribution, steps };
template <>
struct EnumNames<CheckFamily> {
  static constexpr EnumName<CheckFamily> table[] = {
      {CheckFamily::primary, "primary"},
      {CheckFamily::segments, "segments"},
      {CheckFamily::distribution, "distribution"},
      {CheckFamily::steps, "steps"},
  };
};

struct AlphaShares {
  double primary = 0.5;
  double segments = 0.25;
  double distribution = 0.25;
  double steps = 0.25;  // only steps mode has a deciding steps check: it then gets everything

  double of(CheckFamily family) const;
};

class AlphaSplit {
 public:
  // banded: family -> number of checks in it that have a band (families absent or 0: none).
  AlphaSplit(double false_page_rate, const AlphaShares& shares,
             const std::map<CheckFamily, std::size_t>& banded);

  double family(CheckFamily family) const;  // 0 when the family has no banded check
  double per_check(CheckFamily family) const;

 private:
  std::map<CheckFamily, double> family_;
  std::map<CheckFamily, std::size_t> banded_;
};

}  // namespace reverify
