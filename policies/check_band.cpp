#include "policies/check_band.hpp"

#include <string>

namespace reverify {
namespace {

std::optional<double> number(const nlohmann::json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_number())
    return std::nullopt;
  return it->get<double>();
}

}  // namespace

std::optional<CheckBand> band_of(const nlohmann::json& check) {
  if (!check.is_object())
    return std::nullopt;
  if (auto band = check.find("band"); band != check.end() && band->is_object()) {
    auto upper = number(*band, "upper");
    if (!upper)
      return std::nullopt;
    return CheckBand{number(*band, "lower"), *upper};
  }
  const auto tolerance = number(check, "tolerance");
  if (!tolerance)
    return std::nullopt;
  const std::string kind = check.value("kind", "");
  if (kind == "primary" || kind == "segment") {
    const double reference = number(check, "reference").value_or(0.0);
    return CheckBand{reference - *tolerance, reference + *tolerance};
  }
  return CheckBand{std::nullopt, *tolerance};
}

}  // namespace reverify
