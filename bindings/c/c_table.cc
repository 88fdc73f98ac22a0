// SPDX-License-Identifier: Apache-2.0
// The C API: tables, their entity operations, read-modify-write and the
// index definitions (include/blobtable/c.h).
#include <string>
#include <utility>
#include <vector>

#include "bindings/c/c_handles.h"

namespace blobtable::internal::c_api {
namespace {

blobtable_code DoWrite(blobtable_table* table, blobtable_entity* entity, Write how,
                       const char* if_match, size_t if_match_len) {
  std::string_view match;
  if (table == nullptr) return NullArgument("table");
  if (entity == nullptr) return NullArgument("entity");
  if (!View(if_match, if_match_len, &match)) return BadString("if_match");
  const Table& t = table->table;
  const Entity& e = entity->entity;
  Result<Entity> stored = Status::Internal("unreachable");
  switch (how) {
    case Write::kInsert: stored = t.Insert(e); break;
    case Write::kUpsert: stored = t.Upsert(e); break;
    case Write::kUpsertMerge: stored = t.UpsertMerge(e); break;
    case Write::kReplace: stored = match.empty() ? t.Replace(e) : t.Replace(e, match); break;
    case Write::kMerge: stored = match.empty() ? t.Merge(e) : t.Merge(e, match); break;
  }
  if (!stored.ok()) return Record(stored.status());
  TakeStored(entity, std::move(*stored));
  return Ok();
}

}  // namespace
}  // namespace blobtable::internal::c_api

using namespace blobtable::internal::c_api;  // NOLINT: the entry points below are C's
using blobtable::Entity;
using blobtable::Status;

extern "C" {

blobtable_code blobtable_table_open(blobtable_store* store, const char* name, size_t len,
                                    blobtable_table** out) {
  return Call([&] {
    std::string_view n;
    if (out == nullptr) return NullArgument("out");
    *out = nullptr;
    if (store == nullptr) return NullArgument("store");
    if (!View(name, len, &n)) return BadString("name");
    auto table = store->store->OpenTable(n);
    if (!table.ok()) return Record(table.status());
    *out = new blobtable_table{store->store, std::move(*table)};
    return Ok();
  });
}

void blobtable_table_close(blobtable_table* table) { delete table; }

blobtable_code blobtable_get(blobtable_table* table, const char* pk, size_t pk_len, const char* rk,
                             size_t rk_len, blobtable_entity** out) {
  return Call([&] {
    std::string_view p, r;
    if (out == nullptr) return NullArgument("out");
    *out = nullptr;
    if (table == nullptr) return NullArgument("table");
    if (blobtable_code c = Keys(pk, pk_len, rk, rk_len, &p, &r); c != BLOBTABLE_OK) return c;
    auto entity = table->table.Get(p, r);
    if (!entity.ok()) return Record(entity.status());
    *out = NewEntity(std::move(*entity));
    return Ok();
  });
}

blobtable_code blobtable_insert(blobtable_table* table, blobtable_entity* entity) {
  return Call([&] { return DoWrite(table, entity, Write::kInsert, nullptr, 0); });
}
blobtable_code blobtable_replace(blobtable_table* table, blobtable_entity* entity,
                                 const char* if_match, size_t if_match_len) {
  return Call([&] { return DoWrite(table, entity, Write::kReplace, if_match, if_match_len); });
}
blobtable_code blobtable_merge(blobtable_table* table, blobtable_entity* entity,
                               const char* if_match, size_t if_match_len) {
  return Call([&] { return DoWrite(table, entity, Write::kMerge, if_match, if_match_len); });
}
blobtable_code blobtable_upsert(blobtable_table* table, blobtable_entity* entity) {
  return Call([&] { return DoWrite(table, entity, Write::kUpsert, nullptr, 0); });
}
blobtable_code blobtable_upsert_merge(blobtable_table* table, blobtable_entity* entity) {
  return Call([&] { return DoWrite(table, entity, Write::kUpsertMerge, nullptr, 0); });
}

blobtable_code blobtable_delete(blobtable_table* table, const char* pk, size_t pk_len,
                                const char* rk, size_t rk_len, const char* if_match,
                                size_t if_match_len) {
  return Call([&] {
    std::string_view p, r, match;
    if (table == nullptr) return NullArgument("table");
    if (blobtable_code c = Keys(pk, pk_len, rk, rk_len, &p, &r); c != BLOBTABLE_OK) return c;
    if (!View(if_match, if_match_len, &match)) return BadString("if_match");
    if (match.empty()) return Invalid("if_match is empty: an ETag, or \"*\" for any version");
    return Record(table->table.Delete(p, r, match));
  });
}

blobtable_code blobtable_update(blobtable_table* table, const char* pk, size_t pk_len,
                                const char* rk, size_t rk_len, blobtable_update_fn fn, void* arg,
                                int max_attempts, blobtable_entity** out) {
  return Call([&] {
    std::string_view p, r;
    if (out != nullptr) *out = nullptr;
    if (table == nullptr) return NullArgument("table");
    if (fn == nullptr) return NullArgument("fn");
    if (blobtable_code c = Keys(pk, pk_len, rk, rk_len, &p, &r); c != BLOBTABLE_OK) return c;
    blobtable::RetryPolicy policy;
    if (max_attempts != 0) policy.max_attempts = max_attempts;
    auto apply = [&](Entity& e, bool exists) {
      // The caller's function sees the entity through a handle of its own
      // for the call, then the entity goes back where Update keeps it.
      blobtable_entity handle{std::move(e)};
      int code = fn(&handle, exists ? 1 : 0, arg);
      e = std::move(handle.entity);
      return CallbackStatus(code, "the update function");
    };
    auto written = table->table.Update(p, r, blobtable::UpdateFn(apply), policy);
    if (!written.ok()) return Record(written.status());
    if (out != nullptr) *out = NewEntity(std::move(*written));
    return Ok();
  });
}

blobtable_code blobtable_create_index(blobtable_store* store, const char* table, size_t table_len,
                                      const char* name, size_t name_len,
                                      const char* const* properties, const size_t* property_lens,
                                      size_t count, int unique) {
  return Call([&] {
    std::string_view t, n;
    if (store == nullptr) return NullArgument("store");
    if (!View(table, table_len, &t)) return BadString("table");
    if (!View(name, name_len, &n)) return BadString("name");
    // Checked before the arrays are read: `count` says how long they are.
    if (count == 0 || count > blobtable::kMaxIndexedProperties)
      return Invalid("an index orders by 1 to " + std::to_string(blobtable::kMaxIndexedProperties) +
                     " properties, not " + std::to_string(count));
    if (properties == nullptr || property_lens == nullptr) return NullArgument("properties");
    blobtable::IndexSpec spec;
    spec.name = std::string(n);
    spec.unique = unique != 0;
    for (size_t i = 0; i < count; ++i) {
      std::string_view property;
      if (!View(properties[i], property_lens[i], &property)) return BadString("properties[i]");
      spec.properties.emplace_back(property);
    }
    return Record(store->store->CreateIndex(t, spec));
  });
}

blobtable_code blobtable_drop_index(blobtable_store* store, const char* table, size_t table_len,
                                    const char* name, size_t name_len, int wait) {
  return Call([&] {
    std::string_view t, n;
    if (store == nullptr) return NullArgument("store");
    if (!View(table, table_len, &t)) return BadString("table");
    if (!View(name, name_len, &n)) return BadString("name");
    blobtable::DropIndexOptions options;
    options.wait = wait != 0;
    return Record(store->store->DropIndex(t, n, options));
  });
}

}  // extern "C"
