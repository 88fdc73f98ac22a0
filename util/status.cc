#include "blobtable/status.h"

#include "blobtable/blob_store.h"

#include <cstdio>
#include <cstdlib>

namespace blobtable {

std::string_view CodeName(Code code) {
  switch (code) {
    case Code::kOk: return "OK";
    case Code::kNotFound: return "NotFound";
    case Code::kConflict: return "Conflict";
    case Code::kBusy: return "Busy";
    case Code::kLockTimeout: return "LockTimeout";
    case Code::kLeaseLost: return "LeaseLost";
    case Code::kUnavailable: return "Unavailable";
    case Code::kInvalidArgument: return "InvalidArgument";
    case Code::kCorruption: return "Corruption";
    case Code::kIOError: return "IOError";
    case Code::kInternal: return "Internal";
    case Code::kOutcomeUnknown: return "OutcomeUnknown";
  }
  return "Unknown";
}

bool Status::IsRetryable() const {
  switch (code_) {
    case Code::kConflict:
    case Code::kBusy:
    case Code::kLockTimeout:
    case Code::kLeaseLost:
    case Code::kUnavailable:
      return true;
    default:
      return false;
  }
}

std::string Status::ToString() const {
  if (ok()) return "OK";
  std::string out(CodeName(code_));
  out += ": ";
  out += message_;
  if (!storage_code_.empty() || http_status_ != 0) {
    out += " [";
    out += storage_code_;
    if (http_status_ != 0) {
      if (!storage_code_.empty()) out += ", ";
      out += "HTTP " + std::to_string(http_status_);
    }
    out += "]";
  }
  return out;
}

Status Status::WithContext(std::string_view context) const {
  if (ok()) return *this;
  Status s = *this;
  s.message_ = std::string(context) + ": " + message_;
  return s;
}

std::string_view LeaseStateName(LeaseState s) {
  switch (s) {
    case LeaseState::kAvailable: return "available";
    case LeaseState::kLeased: return "leased";
    case LeaseState::kExpired: return "expired";
    case LeaseState::kBreaking: return "breaking";
    case LeaseState::kBroken: return "broken";
  }
  return "unknown";
}

void DieOnValueOfError(const Status& status) {
  std::fprintf(stderr, "blobtable: Result::value() on an error: %s\n", status.ToString().c_str());
  std::abort();
}

}  // namespace blobtable
