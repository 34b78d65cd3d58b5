#pragma once
// Result<T>: a value or an Error, shaped like std::expected (not in g++ 12's libstdc++ for C++20).
// Used for everything that can fail in-process; grpc::Status only at the RPC edge.

#include <string>
#include <string_view>
#include <utility>
#include <variant>

namespace sparktrace {

enum class ErrorCode {
  kInvalidArgument,  // bad flag, bad config value, malformed input
  kNotFound,
  kIo,               // file system or socket error
  kUnavailable,      // a peer cannot be reached
  kInternal,
};

std::string_view ErrorCodeName(ErrorCode code);

struct Error {
  ErrorCode code = ErrorCode::kInternal;
  std::string message;

  // "invalid_argument: --listen: missing port"
  std::string ToString() const;
};

inline Error InvalidArgument(std::string message) {
  return Error{ErrorCode::kInvalidArgument, std::move(message)};
}

template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : state_(std::move(value)) {}          // NOLINT(google-explicit-constructor)
  Result(Error error) : state_(std::move(error)) {}      // NOLINT(google-explicit-constructor)

  bool ok() const { return std::holds_alternative<T>(state_); }
  explicit operator bool() const { return ok(); }

  const T& value() const& { return std::get<T>(state_); }
  T& value() & { return std::get<T>(state_); }
  T&& value() && { return std::get<T>(std::move(state_)); }
  const Error& error() const { return std::get<Error>(state_); }

  const T& operator*() const& { return value(); }
  T& operator*() & { return value(); }
  const T* operator->() const { return &value(); }
  T* operator->() { return &value(); }

 private:
  std::variant<T, Error> state_;
};

// Result<void>: success or an Error.
template <>
class [[nodiscard]] Result<void> {
 public:
  Result() = default;
  Result(Error error) : error_(std::move(error)), ok_(false) {}  // NOLINT(google-explicit-constructor)

  bool ok() const { return ok_; }
  explicit operator bool() const { return ok_; }
  const Error& error() const { return error_; }

 private:
  Error error_;
  bool ok_ = true;
};

}  // namespace sparktrace
