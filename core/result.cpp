#include "core/result.hpp"

namespace reverify {

std::string Error::to_string() const {
  return std::string(reverify::to_string(code)) + ": " + message;
}

}  // namespace reverify
