// SPDX-License-Identifier: Apache-2.0
// The C API's handles and the helpers every entry point shares
// (include/blobtable/c.h). Built on the public C++ API only.
//
// Every entry point runs its body through Call(): no exception crosses into
// C (a C++ exception there is undefined behaviour), and the calling
// thread's last result is set, OK or the failure.
#ifndef BLOBTABLE_BINDINGS_C_C_HANDLES_H_
#define BLOBTABLE_BINDINGS_C_C_HANDLES_H_

#include <memory>
#include <new>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "blobtable/c.h"
#include "blobtable/counter.h"
#include "blobtable/lock.h"
#include "blobtable/queue.h"
#include "blobtable/store.h"

struct blobtable_options {
  blobtable::StoreOptions options;
};
// Shared: every handle made from a store keeps it open (c.h's ownership
// rule), so freeing them in any order never leaves one pointing at a
// destroyed Store.
struct blobtable_store {
  std::shared_ptr<const blobtable::Store> store;
};
struct blobtable_table {
  std::shared_ptr<const blobtable::Store> store;
  blobtable::Table table;
};
struct blobtable_entity {
  blobtable::Entity entity;
};
struct blobtable_strings {
  std::vector<std::string> items;
};

namespace blobtable::internal::c_api {

// Records `status` as the thread's last result and returns its code.
blobtable_code Record(const Status& status);
inline blobtable_code Ok() { return Record(Status::OK()); }
// The Status of a caller's function (blobtable_update_fn, blobtable_txn_fn)
// that returned `code`: its thread's last failure if that has this code (a
// call of this API that failed inside it), else one naming `who`.
Status CallbackStatus(int code, const char* who);
inline blobtable_code Invalid(std::string message) {
  return Record(Status::InvalidArgument(std::move(message)));
}

// Runs `body` (returning a blobtable_code), turning an exception into a
// failure: out of memory, or anything the C++ library threw.
template <typename Body>
blobtable_code Call(Body&& body) noexcept {
  try {
    return body();
  } catch (const std::bad_alloc&) {
    return Record(Status::Internal("out of memory"));
  } catch (const std::exception& e) {
    return Record(Status::Internal(std::string("unexpected exception: ") + e.what()));
  } catch (...) {
    return Record(Status::Internal("unexpected exception"));
  }
}

// (pointer, length) as a view: NULL is allowed only with length 0.
inline bool View(const char* p, size_t len, std::string_view* out) {
  if (p == nullptr && len != 0) return false;
  *out = p == nullptr ? std::string_view() : std::string_view(p, len);
  return true;
}

// Checks the arguments every call names: each pointer not NULL, each
// (pointer, length) string well formed. `what` names the first bad one.
inline blobtable_code NullArgument(const char* what) {
  return Invalid(std::string(what) + " is NULL");
}
inline blobtable_code BadString(const char* what) {
  return Invalid(std::string(what) + " is NULL with a non-zero length");
}

// The keys (pk, rk) as views, or the failure naming the bad one.
inline blobtable_code Keys(const char* pk, size_t pk_len, const char* rk, size_t rk_len,
                           std::string_view* p, std::string_view* r) {
  if (!View(pk, pk_len, p)) return BadString("pk");
  if (!View(rk, rk_len, r)) return BadString("rk");
  return BLOBTABLE_OK;
}

// A string handed back: its pointer (NUL-terminated) and length.
inline const char* Out(const std::string& s, size_t* len) {
  if (len != nullptr) *len = s.size();
  return s.c_str();
}

// Which C++ write a C write is (tables' and transactions').
enum class Write { kInsert, kReplace, kMerge, kUpsert, kUpsertMerge };

// The result of a write, as the caller's entity: keys and properties as
// they were, the ETag and Timestamp it was stored with.
inline void TakeStored(blobtable_entity* entity, Entity stored) {
  entity->entity.set_etag(stored.etag());
  entity->entity.set_timestamp(stored.timestamp());
  entity->entity.set_stale(false);
}

// A new entity handle holding `e` (Call() reports out of memory).
inline blobtable_entity* NewEntity(Entity e) { return new blobtable_entity{std::move(e)}; }

}  // namespace blobtable::internal::c_api

#endif  // BLOBTABLE_BINDINGS_C_C_HANDLES_H_
