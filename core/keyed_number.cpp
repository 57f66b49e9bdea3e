#include "core/keyed_number.hpp"

#include <cctype>
#include <cmath>
#include <cstdlib>

namespace reverify {

std::optional<KeyedNumber> parse_keyed_number(std::string_view item) {
  const auto eq = item.rfind('=');
  if (eq == std::string_view::npos || eq == 0 || eq + 1 == item.size())
    return std::nullopt;
  const std::string number(item.substr(eq + 1));
  // strtod skips leading white space, which "accuracy= 0.1" should not be allowed to hide.
  if (std::isspace(static_cast<unsigned char>(number.front())))
    return std::nullopt;
  char* end = nullptr;
  const double value = std::strtod(number.c_str(), &end);
  if (end != number.c_str() + number.size() || !std::isfinite(value))
    return std::nullopt;
  return KeyedNumber{std::string(item.substr(0, eq)), value};
}

}  // namespace reverify
