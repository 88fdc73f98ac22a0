// SPDX-License-Identifier: Apache-2.0
// Status and Result<T>: how every blobtable call reports success or failure.
//
// Codes are chosen by what the caller should do next, not by where the error
// came from. Errors that came from a storage service also carry the service's
// own error code (e.g. Azure's "LeaseIdMissing") and HTTP status, so that
// callers that need finer detail can have it without parsing messages.
//
// Thread-safety: Status and Result are plain values; copy them freely.
#ifndef BLOBTABLE_STATUS_H_
#define BLOBTABLE_STATUS_H_

#include <cassert>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "blobtable/export.h"

namespace blobtable {

enum class Code : int {
  kOk = 0,
  // The entity, blob or table does not exist. Retrying will not help.
  kNotFound,
  // An ETag condition failed or the item already exists: re-read and retry.
  kConflict,
  // The item is leased or reserved by someone else right now; retry later.
  kBusy,
  // A lock could not be acquired within the configured lock timeout.
  kLockTimeout,
  // The caller's own lease expired, was broken or was taken over: whatever it
  // was doing under that lease must be abandoned.
  kLeaseLost,
  // The storage service could not be reached or failed transiently;
  // retryable. A read, a lease action, a conditional write or a
  // transaction that says so did not take effect; an unconditional write
  // (Table::Upsert, Table::Delete with "*", a blob Put or Delete with no
  // condition and no lease) may have been applied, and calling it again is
  // harmless (docs/api.md#errors).
  kUnavailable,
  // The request itself is invalid (bad key, too large, bad argument), or
  // the store's settings are: storage refused the credentials (HTTP 401 or
  // 403, http_status() says which), or no store answers at the endpoint
  // (storage_code() kStoreNotFound). Retrying will not help.
  kInvalidArgument,
  // Stored data could not be decoded. Never retried automatically.
  kCorruption,
  // A local I/O or database failure (disk full, permissions).
  kIOError,
  // An internal invariant failed: a bug in blobtable.
  kInternal,
  // A write (a transaction's commit) may or may not have taken effect, and
  // blobtable could not find out which. Do not retry blindly: read what it
  // wrote (or run `Store::Recover`) to settle it, then decide.
  kOutcomeUnknown,
};

// The storage_code() of an answer from an endpoint that is not a store: it
// is not Azure Storage (a 404 without x-ms-request-id), or Azure Storage
// has no such account there (a 404 that is neither BlobNotFound nor
// ContainerNotFound). Code kInvalidArgument: never "not found", which a
// caller reads as an empty store (docs/api.md#errors).
inline constexpr char kStoreNotFound[] = "StoreNotFound";

// "NotFound", "Conflict", ... (stable; used in messages and the CLI).
BLOBTABLE_EXPORT std::string_view CodeName(Code code);

// The outcome of a call: OK, or a Code with a message (and, for an answer
// from storage, its error code and HTTP status). OK is a null pointer: a
// Status is one pointer wide and costs nothing to make or pass when all is
// well; an error holds its details on the heap. Copyable and movable; not
// synchronised (like std::string).
class [[nodiscard]] BLOBTABLE_EXPORT Status {
 public:
  Status() = default;  // OK
  // Inline: an OK status (the common case, on every row a read hands over)
  // is copied, dropped or overwritten without a call.
  Status(const Status& other) : state_(other.state_ ? Copy(other.state_) : nullptr) {}
  Status& operator=(const Status& other) {
    if (this != &other) {
      State* copy = other.state_ ? Copy(other.state_) : nullptr;
      if (state_ != nullptr) Destroy(state_);
      state_ = copy;
    }
    return *this;
  }
  Status(Status&& other) noexcept : state_(other.state_) { other.state_ = nullptr; }
  Status& operator=(Status&& other) noexcept {
    if (this != &other) {
      if (state_ != nullptr) Destroy(state_);
      state_ = other.state_;
      other.state_ = nullptr;
    }
    return *this;
  }
  ~Status() {
    if (state_ != nullptr) Destroy(state_);
  }

  static Status OK() { return Status(); }
  static Status NotFound(std::string msg) { return Status(Code::kNotFound, std::move(msg)); }
  static Status Conflict(std::string msg) { return Status(Code::kConflict, std::move(msg)); }
  static Status Busy(std::string msg) { return Status(Code::kBusy, std::move(msg)); }
  static Status LockTimeout(std::string msg) { return Status(Code::kLockTimeout, std::move(msg)); }
  static Status LeaseLost(std::string msg) { return Status(Code::kLeaseLost, std::move(msg)); }
  static Status Unavailable(std::string msg) { return Status(Code::kUnavailable, std::move(msg)); }
  static Status InvalidArgument(std::string msg) {
    return Status(Code::kInvalidArgument, std::move(msg));
  }
  static Status Corruption(std::string msg) { return Status(Code::kCorruption, std::move(msg)); }
  static Status IOError(std::string msg) { return Status(Code::kIOError, std::move(msg)); }
  static Status Internal(std::string msg) { return Status(Code::kInternal, std::move(msg)); }
  static Status OutcomeUnknown(std::string msg) {
    return Status(Code::kOutcomeUnknown, std::move(msg));
  }

  // A status that came from a storage service: `storage_code` is the service's
  // error code (Azure's x-ms-error-code, or the local store's equivalent),
  // `http_status` the HTTP status it answered (or would have answered).
  static Status FromStorage(Code code, int http_status, std::string storage_code, std::string msg);

  bool ok() const { return state_ == nullptr; }
  Code code() const;
  // One predicate per code.
  bool IsNotFound() const { return code() == Code::kNotFound; }
  bool IsConflict() const { return code() == Code::kConflict; }
  bool IsBusy() const { return code() == Code::kBusy; }
  bool IsLockTimeout() const { return code() == Code::kLockTimeout; }
  bool IsLeaseLost() const { return code() == Code::kLeaseLost; }
  bool IsUnavailable() const { return code() == Code::kUnavailable; }
  bool IsInvalidArgument() const { return code() == Code::kInvalidArgument; }
  bool IsCorruption() const { return code() == Code::kCorruption; }
  bool IsIOError() const { return code() == Code::kIOError; }
  bool IsInternal() const { return code() == Code::kInternal; }
  bool IsOutcomeUnknown() const { return code() == Code::kOutcomeUnknown; }
  // True if the same call may succeed when tried again: Busy, LockTimeout,
  // Unavailable (later; see kUnavailable for an unconditional write, which
  // may have been applied), Conflict and LeaseLost (after reading again:
  // the ETag or lease it relied on is gone); all but that write did not
  // take effect. False for OK and every other code; in particular
  // OutcomeUnknown, whose write may have taken effect, is never retryable
  // blindly. Table::Update and Store::RunTransaction retry by this (minus
  // Unavailable, which the backend already retried; see RetryPolicy).
  bool IsRetryable() const;

  // Empty for OK.
  const std::string& message() const;
  // The storage service's error code, e.g. "ConditionNotMet"; empty if none.
  const std::string& storage_code() const;
  // The HTTP status of the storage answer (404, 409, 412, ...); 0 if none.
  int http_status() const;

  // "Conflict: <message> [ConditionNotMet, HTTP 412]" or "OK".
  std::string ToString() const;

  // The same status with "<context>: " prepended to the message.
  Status WithContext(std::string_view context) const;

 private:
  struct State;
  Status(Code code, std::string msg);
  static State* Copy(const State* state);
  static void Destroy(State* state);

  State* state_ = nullptr;  // owned; null: OK
};

// Prints "Result::value() on an error: <status>" to stderr and aborts.
[[noreturn]] BLOBTABLE_EXPORT void DieOnValueOfError(const Status& status);

// A value or the Status explaining why there is none.
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : value_(std::move(value)) {}         // NOLINT: implicit by design
  Result(Status status) : status_(std::move(status)) {  // NOLINT
    assert(!status_.ok() && "Result needs a value or a failed Status");
    if (status_.ok()) status_ = Status::Internal("Result built from an OK status without a value");
  }

  bool ok() const { return status_.ok(); }
  const Status& status() const { return status_; }

  // Precondition: ok(). Otherwise the process stops, printing the status
  // (in every build type: reading a value that is not there is a bug).
  T& value() & { return CheckedValue(), *value_; }
  const T& value() const& { return CheckedValue(), *value_; }
  T&& value() && { return CheckedValue(), std::move(*value_); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  // `*std::move(result)` moves the value out (without this overload it bound
  // to the const& one and copied: a local query copied every page it listed).
  T&& operator*() && { return std::move(*this).value(); }

  // The value, or `fallback` on an error (the error is dropped: use it
  // where a default is the right answer to every failure).
  template <typename U>
  T value_or(U&& fallback) const& {
    return ok() ? *value_ : static_cast<T>(std::forward<U>(fallback));
  }
  template <typename U>
  T value_or(U&& fallback) && {
    return ok() ? std::move(*value_) : static_cast<T>(std::forward<U>(fallback));
  }

 private:
  void CheckedValue() const {
    if (!ok()) DieOnValueOfError(status_);
  }
  Status status_;
  std::optional<T> value_;
};

}  // namespace blobtable

#endif  // BLOBTABLE_STATUS_H_
