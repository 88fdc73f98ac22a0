// SPDX-License-Identifier: Apache-2.0
#include "blobtable/status.h"

#include <cstdio>
#include <cstdlib>

namespace blobtable {

struct Status::State {
  Code code;
  int http_status = 0;
  std::string storage_code;
  std::string message;
};

namespace {
const std::string& Empty() {
  static const std::string* empty = new std::string();
  return *empty;
}
}  // namespace

Status::Status(Code code, std::string msg)
    : state_(code == Code::kOk ? nullptr : new State{code, 0, "", std::move(msg)}) {}
Status::State* Status::Copy(const State* state) { return new State(*state); }
void Status::Destroy(State* state) { delete state; }

Status Status::FromStorage(Code code, int http_status, std::string storage_code, std::string msg) {
  Status s(code, std::move(msg));
  if (s.state_) {
    s.state_->http_status = http_status;
    s.state_->storage_code = std::move(storage_code);
  }
  return s;
}

Code Status::code() const { return state_ ? state_->code : Code::kOk; }
const std::string& Status::message() const { return state_ ? state_->message : Empty(); }
const std::string& Status::storage_code() const { return state_ ? state_->storage_code : Empty(); }
int Status::http_status() const { return state_ ? state_->http_status : 0; }

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
  switch (code()) {
    case Code::kConflict:
    case Code::kBusy:
    case Code::kLockTimeout:
    case Code::kLeaseLost:
    case Code::kUnavailable: return true;
    default: return false;
  }
}

std::string Status::ToString() const {
  if (ok()) return "OK";
  const State& st = *state_;
  std::string out(CodeName(st.code));
  out += ": ";
  out += st.message;
  if (!st.storage_code.empty() || st.http_status != 0) {
    out += " [";
    out += st.storage_code;
    if (st.http_status != 0) {
      if (!st.storage_code.empty()) out += ", ";
      out += "HTTP " + std::to_string(st.http_status);
    }
    out += "]";
  }
  return out;
}

Status Status::WithContext(std::string_view context) const {
  if (ok()) return *this;
  Status s = *this;
  s.state_->message = std::string(context) + ": " + state_->message;
  return s;
}

void DieOnValueOfError(const Status& status) {
  std::fprintf(stderr, "blobtable: Result::value() on an error: %s\n", status.ToString().c_str());
  std::abort();
}

}  // namespace blobtable
