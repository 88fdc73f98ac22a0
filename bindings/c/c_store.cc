// SPDX-License-Identifier: Apache-2.0
// The C API: the thread's last result, versions, string lists, options and
// opening a store (include/blobtable/c.h).
#include <string>

#include "bindings/c/c_handles.h"

namespace blobtable::internal::c_api {
namespace {

// The calling thread's last result (c.h: "Errors").
struct LastResult {
  blobtable_code code = BLOBTABLE_OK;
  Status status;        // the failure itself (OK after a success)
  std::string message;  // status.ToString()
  std::string storage_code;
  int http_status = 0;
};
thread_local LastResult t_last;

constexpr int kCodes = static_cast<int>(Code::kOutcomeUnknown) + 1;
static_assert(BLOBTABLE_OUTCOME_UNKNOWN == static_cast<int>(Code::kOutcomeUnknown) &&
                  BLOBTABLE_NOT_FOUND == static_cast<int>(Code::kNotFound) &&
                  BLOBTABLE_INVALID_ARGUMENT == static_cast<int>(Code::kInvalidArgument),
              "blobtable_code mirrors blobtable::Code");

// The number blobtable_version() returns, set by the build.
#ifndef BLOBTABLE_VERSION
#error "BLOBTABLE_VERSION is defined by the build (bindings/c/CMakeLists.txt)"
#endif

}  // namespace

blobtable_code Record(const Status& status) {
  LastResult& last = t_last;
  if (status.ok()) {
    last.code = BLOBTABLE_OK;
    last.status = Status::OK();
    last.message.clear();
    last.storage_code.clear();
    last.http_status = 0;
    return BLOBTABLE_OK;
  }
  last.code = static_cast<blobtable_code>(static_cast<int>(status.code()));
  try {
    last.status = status;
    last.message = status.ToString();
    last.storage_code = status.storage_code();
  } catch (const std::bad_alloc&) {
    last.status = Status::OK();
    last.message.clear();  // the code still tells what happened
    last.storage_code.clear();
  }
  last.http_status = status.http_status();
  return last.code;
}

Status CallbackStatus(int code, const char* who) {
  if (code == BLOBTABLE_OK) return Status::OK();
  const LastResult& last = t_last;
  if (last.code == code && !last.status.ok()) return last.status;  // an API call failed in it
  if (code < 0 || code >= kCodes)
    return Status::InvalidArgument(std::string(who) + " returned " + std::to_string(code) +
                                   ", which is no blobtable_code");
  auto as_code = static_cast<Code>(code);
  return Status::FromStorage(as_code, 0, "",
                             std::string(who) + " returned " + std::string(CodeName(as_code)));
}

}  // namespace blobtable::internal::c_api

using namespace blobtable::internal::c_api;  // NOLINT: the entry points below are C's
using blobtable::Status;

extern "C" {

const char* blobtable_errmsg(size_t* len) { return Out(t_last.message, len); }
blobtable_code blobtable_errcode(void) { return t_last.code; }
int blobtable_err_http_status(void) { return t_last.http_status; }
const char* blobtable_err_storage_code(size_t* len) { return Out(t_last.storage_code, len); }

const char* blobtable_code_name(int code) {
  if (code < 0 || code >= kCodes) return "Unknown";
  // CodeName's views are of static strings, NUL-terminated.
  return blobtable::CodeName(static_cast<blobtable::Code>(code)).data();
}

int blobtable_code_retryable(int code) {
  if (code <= 0 || code >= kCodes) return 0;
  Status s = Status::FromStorage(static_cast<blobtable::Code>(code), 0, "", "");
  return s.IsRetryable() ? 1 : 0;
}

const char* blobtable_version(void) { return BLOBTABLE_VERSION; }

size_t blobtable_strings_count(const blobtable_strings* list) {
  return list == nullptr ? 0 : list->items.size();
}
const char* blobtable_strings_get(const blobtable_strings* list, size_t i, size_t* len) {
  if (list == nullptr || i >= list->items.size()) {
    if (len != nullptr) *len = 0;
    return nullptr;
  }
  return Out(list->items[i], len);
}
void blobtable_strings_free(blobtable_strings* list) { delete list; }

blobtable_options* blobtable_options_create(void) { return new (std::nothrow) blobtable_options{}; }
void blobtable_options_free(blobtable_options* options) { delete options; }

blobtable_code blobtable_options_set_container(blobtable_options* options, const char* name,
                                               size_t len) {
  return Call([&] {
    std::string_view v;
    if (options == nullptr) return NullArgument("options");
    if (!View(name, len, &v)) return BadString("name");
    options->options.container = std::string(v);
    return Ok();
  });
}

blobtable_code blobtable_options_set_create_if_missing(blobtable_options* options, int create) {
  return Call([&] {
    if (options == nullptr) return NullArgument("options");
    options->options.create_if_missing = create != 0;
    return Ok();
  });
}

blobtable_code blobtable_options_set_cache_enabled(blobtable_options* options, int enabled) {
  return Call([&] {
    if (options == nullptr) return NullArgument("options");
    options->options.cache.enabled = enabled != 0;
    return Ok();
  });
}

blobtable_code blobtable_options_set_cache_directory(blobtable_options* options, const char* dir,
                                                     size_t len) {
  return Call([&] {
    std::string_view v;
    if (options == nullptr) return NullArgument("options");
    if (!View(dir, len, &v)) return BadString("dir");
    options->options.cache.directory = std::string(v);
    return Ok();
  });
}

blobtable_code blobtable_options_set_read_policy(blobtable_options* options, int mode,
                                                 int64_t max_stale_ms) {
  return Call([&] {
    using Policy = blobtable::ReadPolicy;
    if (options == nullptr) return NullArgument("options");
    Policy policy;
    switch (mode) {
      case BLOBTABLE_READ_FRESH: policy = Policy::Fresh(); break;
      case BLOBTABLE_READ_OFFLINE: policy = Policy::Offline(); break;
      case BLOBTABLE_READ_MAX_STALE:
        if (max_stale_ms < 0 || max_stale_ms > blobtable::kMaxDuration.count())
          return Invalid("max_stale_ms " + std::to_string(max_stale_ms) +
                         " is outside 0..10 years");
        policy = Policy::MaxStale(std::chrono::milliseconds(max_stale_ms));
        break;
      default: return Invalid("read mode " + std::to_string(mode) + " is unknown");
    }
    options->options.cache.read_policy = policy;
    return Ok();
  });
}

blobtable_code blobtable_options_set_request_timeout_ms(blobtable_options* options, int64_t ms) {
  return Call([&] {
    if (options == nullptr) return NullArgument("options");
    if (ms <= 0 || ms > blobtable::kMaxDuration.count())
      return Invalid("request timeout " + std::to_string(ms) + " ms is outside 1 ms..10 years");
    options->options.azure.request_timeout = std::chrono::milliseconds(ms);
    return Ok();
  });
}

blobtable_code blobtable_options_set_txn_lease_seconds(blobtable_options* options, int seconds) {
  return Call([&] {
    if (options == nullptr) return NullArgument("options");
    if (seconds < 15 || seconds > 60)
      return Invalid("transaction lease " + std::to_string(seconds) + " s is outside 15..60");
    options->options.txn_lease_seconds = seconds;
    return Ok();
  });
}

blobtable_code blobtable_open(const char* location, size_t len, const blobtable_options* options,
                              blobtable_store** out) {
  return Call([&] {
    std::string_view where;
    if (out == nullptr) return NullArgument("out");
    *out = nullptr;
    if (!View(location, len, &where)) return BadString("location");
    blobtable::StoreOptions defaults;
    auto store = blobtable::Store::Open(where, options ? options->options : defaults);
    if (!store.ok()) return Record(store.status());
    *out = new blobtable_store{std::shared_ptr<const blobtable::Store>(std::move(*store))};
    return Ok();
  });
}

void blobtable_close(blobtable_store* store) { delete store; }

blobtable_code blobtable_list_tables(blobtable_store* store, blobtable_strings** out) {
  return Call([&] {
    if (out == nullptr) return NullArgument("out");
    *out = nullptr;
    if (store == nullptr) return NullArgument("store");
    auto tables = store->store->ListTables();
    if (!tables.ok()) return Record(tables.status());
    *out = new blobtable_strings{std::move(*tables)};
    return Ok();
  });
}

blobtable_code blobtable_recover(blobtable_store* store, int* resolved) {
  return Call([&] {
    if (store == nullptr) return NullArgument("store");
    auto n = store->store->Recover();
    if (!n.ok()) return Record(n.status());
    if (resolved != nullptr) *resolved = *n;
    return Ok();
  });
}

}  // extern "C"
