// Errors as values. Every fallible Accord call returns a Status or a Result<T>; the OK
// path is a null pointer, so success never allocates (the submit path relies on this).
// The kinds are the seed's: Busy, DeviceLost, Cancelled, Execution, Invalid, Unsupported.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <source_location>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

namespace accord {

enum class ErrorKind : std::uint8_t {
  Busy,         // a bound or a conflicting lease; retry later, nothing changed
  DeviceLost,   // the allocation or graph is poisoned after a native failure
  Cancelled,    // the submission was cancelled before it finished
  Execution,    // a region failed while executing; the source error is in the message
  Invalid,      // the request is malformed (bad range, contract mismatch, ...)
  Unsupported,  // the placement, device or operation is not available here
  Internal,     // a broken invariant inside Accord (a bug, never a client's fault)
};

// Returns the seed's name of `kind` ("Busy", "DeviceLost", ...).
std::string_view to_string(ErrorKind kind) noexcept;

// The error carried by a failed Status: its kind, a message naming the object at
// fault, and where in Accord's source it was raised.
struct Error {
  ErrorKind kind;
  std::string message;
  std::source_location where;
};

class [[nodiscard]] Status {
 public:
  Status() noexcept = default;  // OK
  Status(const Status& other) : rep_(other.rep_ ? std::make_unique<Error>(*other.rep_) : nullptr) {}
  Status& operator=(const Status& other) {
    if (this != &other) rep_ = other.rep_ ? std::make_unique<Error>(*other.rep_) : nullptr;
    return *this;
  }
  Status(Status&&) noexcept = default;
  Status& operator=(Status&&) noexcept = default;

  static Status error(ErrorKind kind, std::string message,
                      std::source_location where = std::source_location::current());

  bool ok() const noexcept { return rep_ == nullptr; }
  explicit operator bool() const noexcept { return ok(); }
  // Kind of a failed status. Precondition: !ok().
  ErrorKind kind() const noexcept { return rep_->kind; }
  // Empty for OK.
  std::string_view message() const noexcept { return rep_ ? std::string_view(rep_->message) : std::string_view(); }
  const Error* error() const noexcept { return rep_.get(); }

  // Prefixes the message with `context` ("graph node 4 binding 1: ..."). No-op on OK.
  Status&& annotate(std::string_view context) &&;
  // "Busy: message" or "OK".
  std::string to_string() const;

 private:
  std::unique_ptr<Error> rep_;
};

// Shorthands that read like the seed's constructors.
Status busy_error(std::string message, std::source_location w = std::source_location::current());
Status device_lost_error(std::string message, std::source_location w = std::source_location::current());
Status cancelled_error(std::string message = "submission was cancelled",
                       std::source_location w = std::source_location::current());
Status execution_error(std::string message, std::source_location w = std::source_location::current());
Status invalid_error(std::string message, std::source_location w = std::source_location::current());
Status unsupported_error(std::string message, std::source_location w = std::source_location::current());
Status internal_error(std::string message, std::source_location w = std::source_location::current());

// A value or the Status that explains its absence (g++ 12 has no std::expected).
template <class T>
class [[nodiscard]] Result {
 public:
  Result(T value) : value_(std::move(value)) {}  // NOLINT: implicit like expected
  Result(Status status) : status_(std::move(status)) {  // NOLINT
    if (status_.ok()) status_ = internal_error("Result constructed from an OK status");
  }

  bool ok() const noexcept { return status_.ok(); }
  explicit operator bool() const noexcept { return ok(); }
  const Status& status() const& noexcept { return status_; }
  Status&& status() && noexcept { return std::move(status_); }

  // Precondition: ok().
  T& value() & { return *value_; }
  const T& value() const& { return *value_; }
  T&& value() && { return std::move(*value_); }
  T* operator->() { return &*value_; }
  const T* operator->() const { return &*value_; }
  T& operator*() & { return *value_; }
  const T& operator*() const& { return *value_; }

 private:
  Status status_;
  std::optional<T> value_;
};

}  // namespace accord

#define ACCORD_DETAIL_CONCAT_INNER(a, b) a##b
#define ACCORD_DETAIL_CONCAT(a, b) ACCORD_DETAIL_CONCAT_INNER(a, b)

// Returns the Status of `expr` from the enclosing function when it is an error.
#define ACCORD_RETURN_IF_ERROR(expr)                                  \
  do {                                                                \
    if (::accord::Status accord_status_ = (expr); !accord_status_.ok()) \
      return accord_status_;                                          \
  } while (false)

#define ACCORD_DETAIL_ASSIGN_OR_RETURN(tmp, lhs, expr) \
  auto tmp = (expr);                                  \
  if (!tmp.ok()) return std::move(tmp).status();      \
  lhs = std::move(tmp).value()

// Unwraps a Result<T> into `lhs`, or returns its Status.
#define ACCORD_ASSIGN_OR_RETURN(lhs, expr) \
  ACCORD_DETAIL_ASSIGN_OR_RETURN(ACCORD_DETAIL_CONCAT(accord_result_, __LINE__), lhs, expr)
