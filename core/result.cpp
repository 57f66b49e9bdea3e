#include "core/result.hpp"

namespace reverify {

const char* to_string(ErrorCode code) {
  switch (code) {
    case ErrorCode::invalid_argument:
      return "invalid-argument";
    case ErrorCode::not_found:
      return "not-found";
    case ErrorCode::io:
      return "io";
    case ErrorCode::parse:
      return "parse";
    case ErrorCode::manifest_invalid:
      return "manifest-invalid";
    case ErrorCode::input_drift:
      return "input-drift";
    case ErrorCode::provision:
      return "provision";
    case ErrorCode::job:
      return "job";
    case ErrorCode::runner_lost:
      return "runner-lost";
    case ErrorCode::network:
      return "network";
    case ErrorCode::timeout:
      return "timeout";
    case ErrorCode::cancelled:
      return "cancelled";
    case ErrorCode::conflict:
      return "conflict";
    case ErrorCode::unauthorized:
      return "unauthorized";
  }
  return "unknown";
}

std::string Error::to_string() const {
  return std::string(reverify::to_string(code)) + ": " + message;
}

}  // namespace reverify
