#pragma once
// core/: the shared core every layer stands on: Result/Error, the manifest model and parser,
// content hashing, URIs, names, Unix time, the libcurl client, prediction readers, verdict classes
// and verification states, short helper programs. It includes nothing of reverify outside core/.
//
// Expected failures as values (docs/design.md, "Code conventions": leveldb's Status). An Error
// carries a machine-readable code, used to pick a verdict class or an exit status, and a human
// message that names the field, path or resource and what was expected. Exceptions are reserved for
// bugs and broken invariants.

#include <cassert>
#include <optional>
#include <string>
#include <utility>
#include <variant>

#include "core/enum_names.hpp"

namespace reverify {

// Error codes shared across layers. Runner and pipeline errors map onto docs/design.md's verdict
// classes.
enum class ErrorCode {
  invalid_argument,  // bad input from a user, a file or a request
  not_found,         // a file, commit, image, model version that does not exist
  io,                // reading or writing a local file failed
  parse,             // malformed JSON, YAML, npy, safetensors, ...
  manifest_invalid,  // the manifest failed validation -> error:manifest-invalid
  input_drift,       // a recorded input hash no longer matches -> failed:input-drift
  provision,         // no image, no GPU runtime, runner unreachable -> error:provision
  job,               // the training job failed: exit code, timeout, bad result.json -> error:job
  runner_lost,       // the runner lost track of a started job -> error:runner-lost
  infra,             // the platform failed under the job (disk full, read-only) -> error:infra
  network,           // an HTTP peer could not be reached or answered badly
  timeout,           // an operation ran past its deadline
  cancelled,         // cancelled on request (shutdown)
  conflict,          // state does not allow the operation (e.g. already running)
  unauthorized,      // missing or wrong credentials
};

template <>
struct EnumNames<ErrorCode> {
  static constexpr EnumName<ErrorCode> table[] = {
      {ErrorCode::invalid_argument, "invalid-argument"},
      {ErrorCode::not_found, "not-found"},
      {ErrorCode::io, "io"},
      {ErrorCode::parse, "parse"},
      {ErrorCode::manifest_invalid, "manifest-invalid"},
      {ErrorCode::input_drift, "input-drift"},
      {ErrorCode::provision, "provision"},
      {ErrorCode::job, "job"},
      {ErrorCode::runner_lost, "runner-lost"},
      {ErrorCode::infra, "infra"},
      {ErrorCode::network, "network"},
      {ErrorCode::timeout, "timeout"},
      {ErrorCode::cancelled, "cancelled"},
      {ErrorCode::conflict, "conflict"},
      {ErrorCode::unauthorized, "unauthorized"},
  };
};

struct Error {
  ErrorCode code;
  std::string message;

  std::string to_string() const;  // "<code>: <message>"
};

inline Error make_error(ErrorCode code, std::string message) {
  return Error{code, std::move(message)};
}

// Result<T>: a value or an Error. Check ok() before value(); value() on an error is a bug (assert).
template <class T>
class [[nodiscard]] Result {
 public:
  Result(T value) : state_(std::move(value)) {}      // NOLINT: implicit by design
  Result(Error error) : state_(std::move(error)) {}  // NOLINT

  bool ok() const { return std::holds_alternative<T>(state_); }
  explicit operator bool() const { return ok(); }

  T& value() & {
    assert(ok());
    return std::get<T>(state_);
  }
  const T& value() const& {
    assert(ok());
    return std::get<T>(state_);
  }
  T&& value() && {
    assert(ok());
    return std::get<T>(std::move(state_));
  }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

  const Error& error() const {
    assert(!ok());
    return std::get<Error>(state_);
  }

 private:
  std::variant<T, Error> state_;
};

// Status: Result without a value.
class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(Error error) : error_(std::move(error)) {}  // NOLINT: implicit by design
  static Status success() { return Status(); }

  bool ok() const { return !error_.has_value(); }
  explicit operator bool() const { return ok(); }
  const Error& error() const {
    assert(!ok());
    return *error_;
  }

 private:
  std::optional<Error> error_;
};

}  // namespace reverify
