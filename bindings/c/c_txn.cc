// SPDX-License-Identifier: Apache-2.0
// The C API: transactions, one at a time and retried (include/blobtable/c.h).
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "bindings/c/c_handles.h"

struct blobtable_txn {
  std::shared_ptr<const blobtable::Store> store;
  std::optional<blobtable::Transaction> owned;  // blobtable_txn_begin's
  // The transaction operations go to: `owned`'s, or the one
  // blobtable_run_transaction lends its function; null once committed.
  blobtable::Transaction* txn = nullptr;
  bool lent = false;
  std::vector<blobtable::CommittedWrite> written;
};

namespace blobtable::internal::c_api {
namespace {

// The transaction, if it can still take operations.
blobtable_code Open(blobtable_txn* txn) {
  if (txn == nullptr) return NullArgument("txn");
  if (txn->txn == nullptr) return Invalid("the transaction was committed");
  return BLOBTABLE_OK;
}

blobtable_code Buffer(blobtable_txn* txn, blobtable_table* table, const blobtable_entity* entity,
                      Write how, const char* if_match, size_t if_match_len) {
  std::string_view match;
  if (blobtable_code c = Open(txn); c != BLOBTABLE_OK) return c;
  if (table == nullptr) return NullArgument("table");
  if (entity == nullptr) return NullArgument("entity");
  if (!View(if_match, if_match_len, &match)) return BadString("if_match");
  Transaction& t = *txn->txn;
  const Entity& e = entity->entity;
  switch (how) {
    case Write::kInsert: return Record(t.Insert(table->table, e));
    case Write::kUpsert: return Record(t.Upsert(table->table, e));
    case Write::kUpsertMerge: return Record(t.UpsertMerge(table->table, e));
    case Write::kReplace:
      return Record(match.empty() ? t.Replace(table->table, e) : t.Replace(table->table, e, match));
    case Write::kMerge:
      return Record(match.empty() ? t.Merge(table->table, e) : t.Merge(table->table, e, match));
  }
  return Record(Status::Internal("unknown write"));
}

}  // namespace
}  // namespace blobtable::internal::c_api

using namespace blobtable::internal::c_api;  // NOLINT: the entry points below are C's
using blobtable::Status;
using blobtable::Transaction;

extern "C" {

blobtable_code blobtable_txn_begin(blobtable_store* store, blobtable_txn** out) {
  return Call([&] {
    if (out == nullptr) return NullArgument("out");
    *out = nullptr;
    if (store == nullptr) return NullArgument("store");
    auto txn = store->store->Begin();
    if (!txn.ok()) return Record(txn.status());
    auto* handle = new blobtable_txn{store->store, std::move(*txn), nullptr, false, {}};
    handle->txn = &*handle->owned;
    *out = handle;
    return Ok();
  });
}

void blobtable_txn_free(blobtable_txn* txn) { delete txn; }  // ~Transaction aborts

blobtable_code blobtable_txn_get(blobtable_txn* txn, blobtable_table* table, const char* pk,
                                 size_t pk_len, const char* rk, size_t rk_len,
                                 blobtable_entity** out) {
  return Call([&] {
    std::string_view p, r;
    if (out == nullptr) return NullArgument("out");
    *out = nullptr;
    if (blobtable_code c = Open(txn); c != BLOBTABLE_OK) return c;
    if (table == nullptr) return NullArgument("table");
    if (blobtable_code c = Keys(pk, pk_len, rk, rk_len, &p, &r); c != BLOBTABLE_OK) return c;
    auto entity = txn->txn->Get(table->table, p, r);
    if (!entity.ok()) return Record(entity.status());
    *out = NewEntity(std::move(*entity));
    return Ok();
  });
}

blobtable_code blobtable_txn_insert(blobtable_txn* txn, blobtable_table* table,
                                    const blobtable_entity* entity) {
  return Call([&] { return Buffer(txn, table, entity, Write::kInsert, nullptr, 0); });
}
blobtable_code blobtable_txn_replace(blobtable_txn* txn, blobtable_table* table,
                                     const blobtable_entity* entity, const char* if_match,
                                     size_t if_match_len) {
  return Call([&] { return Buffer(txn, table, entity, Write::kReplace, if_match, if_match_len); });
}
blobtable_code blobtable_txn_merge(blobtable_txn* txn, blobtable_table* table,
                                   const blobtable_entity* entity, const char* if_match,
                                   size_t if_match_len) {
  return Call([&] { return Buffer(txn, table, entity, Write::kMerge, if_match, if_match_len); });
}
blobtable_code blobtable_txn_upsert(blobtable_txn* txn, blobtable_table* table,
                                    const blobtable_entity* entity) {
  return Call([&] { return Buffer(txn, table, entity, Write::kUpsert, nullptr, 0); });
}
blobtable_code blobtable_txn_upsert_merge(blobtable_txn* txn, blobtable_table* table,
                                          const blobtable_entity* entity) {
  return Call([&] { return Buffer(txn, table, entity, Write::kUpsertMerge, nullptr, 0); });
}

blobtable_code blobtable_txn_delete(blobtable_txn* txn, blobtable_table* table, const char* pk,
                                    size_t pk_len, const char* rk, size_t rk_len,
                                    const char* if_match, size_t if_match_len) {
  return Call([&] {
    std::string_view p, r, match;
    if (blobtable_code c = Open(txn); c != BLOBTABLE_OK) return c;
    if (table == nullptr) return NullArgument("table");
    if (blobtable_code c = Keys(pk, pk_len, rk, rk_len, &p, &r); c != BLOBTABLE_OK) return c;
    if (!View(if_match, if_match_len, &match)) return BadString("if_match");
    if (match.empty()) return Invalid("if_match is empty: an ETag, or \"*\" for any version");
    return Record(txn->txn->Delete(table->table, p, r, match));
  });
}

blobtable_code blobtable_txn_check(blobtable_txn* txn, blobtable_table* table, const char* pk,
                                   size_t pk_len, const char* rk, size_t rk_len, const char* etag,
                                   size_t etag_len) {
  return Call([&] {
    std::string_view p, r, e;
    if (blobtable_code c = Open(txn); c != BLOBTABLE_OK) return c;
    if (table == nullptr) return NullArgument("table");
    if (blobtable_code c = Keys(pk, pk_len, rk, rk_len, &p, &r); c != BLOBTABLE_OK) return c;
    if (!View(etag, etag_len, &e)) return BadString("etag");
    return Record(txn->txn->Check(table->table, p, r, e));
  });
}

blobtable_code blobtable_txn_commit(blobtable_txn* txn) {
  return Call([&] {
    if (blobtable_code c = Open(txn); c != BLOBTABLE_OK) return c;
    if (txn->lent) return Invalid("blobtable_run_transaction commits the transaction it lends");
    auto written = txn->txn->Commit();
    // Committed or failed, the transaction takes nothing more (as in C++).
    txn->txn = nullptr;
    if (!written.ok()) return Record(written.status());
    txn->written = std::move(*written);
    return Ok();
  });
}

size_t blobtable_txn_written_count(const blobtable_txn* txn) {
  return txn == nullptr ? 0 : txn->written.size();
}

blobtable_code blobtable_txn_written(const blobtable_txn* txn, size_t i, const char** table,
                                     size_t* table_len, const char** pk, size_t* pk_len,
                                     const char** rk, size_t* rk_len, const char** etag,
                                     size_t* etag_len) {
  return Call([&] {
    if (txn == nullptr) return NullArgument("txn");
    if (i >= txn->written.size())
      return Invalid("write " + std::to_string(i) + " of " + std::to_string(txn->written.size()));
    const blobtable::CommittedWrite& w = txn->written[i];
    if (table != nullptr) *table = Out(w.table, table_len);
    if (pk != nullptr) *pk = Out(w.partition_key, pk_len);
    if (rk != nullptr) *rk = Out(w.row_key, rk_len);
    if (etag != nullptr) *etag = Out(w.etag, etag_len);
    return Ok();
  });
}

blobtable_code blobtable_run_transaction(blobtable_store* store, blobtable_txn_fn fn, void* arg,
                                         int max_attempts, int* attempts,
                                         blobtable_txn** committed) {
  return Call([&] {
    if (committed != nullptr) *committed = nullptr;
    if (store == nullptr) return NullArgument("store");
    if (fn == nullptr) return NullArgument("fn");
    blobtable::RetryPolicy policy;
    if (max_attempts != 0) policy.max_attempts = max_attempts;
    auto run = [&](Transaction& t) {
      // The caller's function works on the attempt's transaction through a
      // handle lent for the call; RunTransaction commits it.
      blobtable_txn lent{store->store, std::nullopt, &t, true, {}};
      return CallbackStatus(fn(&lent, arg), "the transaction function");
    };
    auto written =
        store->store->RunTransaction(blobtable::Store::TransactionFn(run), policy, {}, attempts);
    if (!written.ok()) return Record(written.status());
    if (committed != nullptr)
      *committed =
          new blobtable_txn{store->store, std::nullopt, nullptr, false, std::move(*written)};
    return Ok();
  });
}

}  // extern "C"
