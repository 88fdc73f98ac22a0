// SPDX-License-Identifier: Apache-2.0
// The table façade: validates keys and entities, names their blobs, encodes
// them and puts the entity in every error. Reading and writing a blob as the
// commit protocol requires is txn/entity_access's: each entity is one blob,
// and every conditional operation maps onto one conditional blob request
// (merges are a read then a conditional write, retried on a race).
#include "blobtable/table.h"

#include <algorithm>
#include <optional>

#include "model/blob_naming.h"
#include "model/entity_codec.h"
#include "model/key_rules.h"
#include "util/macros.h"
#include "util/parallel.h"
#include "util/thread_spare.h"
#include "txn/definitions_check.h"
#include "txn/entity_access.h"
#include "txn/index_upkeep.h"
#include "kv/store_core.h"

namespace blobtable {
namespace {

using internal::EntityContext;

Status ValidateIfMatch(std::string_view if_match) {
  if (if_match.empty())
    return Status::InvalidArgument("an ETag to match (or \"*\" for any version) is required");
  return Status::OK();
}

// The blob of entity (pk, rk) of `table`, into `out`, its keys checked:
// byte by byte only if the encoding pass met a byte ValidateKey must judge,
// or the name came out too long (a key's own fault is named first). A key
// over the limit is refused before any name is built (it would be three
// bytes of name a byte, kept in the thread's spare).
Status EntityBlobNameInto(std::string_view table, std::string_view pk, std::string_view rk,
                          std::string& out) {
  const bool key_too_long = pk.size() > kMaxKeyBytes || rk.size() > kMaxKeyBytes;
  const Result<bool> plain = key_too_long
                                 ? Result<bool>(false)
                                 : internal::naming::WriteEntityBlobName(table, pk, rk, out);
  if (!plain.ok() || !*plain) {  // then ValidateKey refuses a key too long
    BT_RETURN_IF_ERROR(ValidateKey(pk, "PartitionKey"));
    BT_RETURN_IF_ERROR(ValidateKey(rk, "RowKey"));
  }
  return plain.status();
}

// A read's blob name is built in its thread's spare string.
struct ReadNameTag;
using ReadName = internal::ThreadSpare<std::string, ReadNameTag>;

}  // namespace

Status Table::Usable() const {
  if (core_ == nullptr)
    return Status::InvalidArgument(
        "an empty Table handle (default-constructed or moved from); "
        "assign one from Store::OpenTable");
  return Status::OK();
}

Result<std::string> Table::EntityBlobName(std::string_view pk, std::string_view rk) const {
  BT_RETURN_IF_ERROR(Usable());
  std::string name;
  BT_RETURN_IF_ERROR(EntityBlobNameInto(name_, pk, rk, name));
  return name;
}

Result<std::string> Table::LockBlobName(std::string_view pk) const {
  BT_RETURN_IF_ERROR(Usable());
  BT_RETURN_IF_ERROR(ValidateKey(pk, "PartitionKey"));
  return internal::naming::LockBlobName(name_, pk);
}

// A Transaction member, defined here where a StoreCore is known to be a
// TxnContext (the transaction layer below does not see kv/).
const internal::TxnContext* Transaction::StoreOf(const Table& table) { return table.core_.get(); }

Result<Entity> Table::Get(std::string_view pk, std::string_view rk) const {
  BT_RETURN_IF_ERROR(Usable());
  return Get(pk, rk, core_->options.cache.read_policy);
}

std::vector<Result<Entity>> Table::GetMany(
    const std::vector<std::pair<std::string, std::string>>& keys) const {
  return GetMany(keys, core_ ? core_->options.cache.read_policy : ReadPolicy());
}

std::vector<Result<Entity>> Table::GetMany(
    const std::vector<std::pair<std::string, std::string>>& keys, const ReadPolicy& policy) const {
  std::vector<Result<Entity>> out(keys.size(), Status::Internal("not read"));
  const Status usable = Usable();
  if (!usable.ok()) {
    std::fill(out.begin(), out.end(), usable);
    return out;
  }
  internal::ParallelFor(keys.size(), static_cast<size_t>(core_->parallel_reads),
                        [&](size_t i) { out[i] = Get(keys[i].first, keys[i].second, policy); });
  return out;
}

Result<Entity> Table::Get(std::string_view pk, std::string_view rk,
                          const ReadPolicy& policy) const {
  return Read(pk, rk, policy, "");
}

Result<Entity> Table::Read(std::string_view pk, std::string_view rk, const ReadPolicy& policy,
                           std::string_view listed_etag) const {
  return internal::MeteredCall(core_.get(), internal::OpKind::kGet, name_, [&]() -> Result<Entity> {
    ReadName name;
    Status named = Usable();
    if (named.ok()) named = EntityBlobNameInto(name_, pk, rk, *name);
    // One Result, returned by name on every path: an Entity moved costs a
    // get as much as a quarter of its decode.
    Result<Entity> e = named.ok()
                           ? internal::ReadVisibleEntity(*core_, *name, pk, rk, policy, listed_etag)
                           : Result<Entity>(std::move(named));
    if (!e.ok()) e = e.status().WithContext(EntityContext(name_, pk, rk));  // named on errors only
    return e;
  });
}

Status Table::GetView(std::string_view pk, std::string_view rk, const EntityVisitor& visit) const {
  BT_RETURN_IF_ERROR(Usable());
  return GetView(pk, rk, core_->options.cache.read_policy, visit);
}

Status Table::GetView(std::string_view pk, std::string_view rk, const ReadPolicy& policy,
                      const EntityVisitor& visit) const {
  return internal::MeteredCall(core_.get(), internal::OpKind::kGet, name_, [&]() -> Status {
    BT_RETURN_IF_ERROR(Usable());
    if (!visit) return Status::InvalidArgument("table " + name_ + ", get: no visitor function");
    ReadName name;
    Status named = EntityBlobNameInto(name_, pk, rk, *name);
    if (!named.ok()) return named.WithContext(EntityContext(name_, pk, rk));
    std::optional<Status> visited;  // the visitor's answer goes back as it is, without context
    Status read =
        internal::VisitVisibleEntity(*core_, *name, pk, rk, policy, [&](const EntityView& view) {
          internal::UserCode user;  // its calls are the user's own
          visited = visit(view);
        });
    if (!read.ok()) return read.WithContext(EntityContext(name_, pk, rk));
    return visited ? *std::move(visited) : Status::Internal("get: the visitor was not called");
  });
}

Result<Entity> Table::Insert(const Entity& entity) const {
  return Write(entity, "", internal::WriteMode::kInsert);
}

Result<Entity> Table::Replace(const Entity& entity, std::string_view if_match) const {
  BT_RETURN_IF_ERROR(ValidateIfMatch(if_match));
  return Write(entity, if_match, internal::WriteMode::kReplace);
}

Result<Entity> Table::Merge(const Entity& entity, std::string_view if_match) const {
  BT_RETURN_IF_ERROR(ValidateIfMatch(if_match));
  return Write(entity, if_match, internal::WriteMode::kMerge);
}

Result<Entity> Table::Replace(const Entity& entity) const {
  auto etag = internal::OwnETag(entity, "Replace(entity)");
  if (!etag.ok())
    return etag.status().WithContext(
        EntityContext(name_, entity.partition_key(), entity.row_key()));
  return Replace(entity, *etag);
}

Result<Entity> Table::Merge(const Entity& entity) const {
  auto etag = internal::OwnETag(entity, "Merge(entity)");
  if (!etag.ok())
    return etag.status().WithContext(
        EntityContext(name_, entity.partition_key(), entity.row_key()));
  return Merge(entity, *etag);
}

Result<Entity> Table::Upsert(const Entity& entity) const {
  return Write(entity, kAnyETag, internal::WriteMode::kUpsert);
}

Result<Entity> Table::UpsertMerge(const Entity& entity) const {
  return Write(entity, kAnyETag, internal::WriteMode::kUpsertMerge);
}

namespace {

internal::OpKind OpOf(internal::WriteMode mode) {
  switch (mode) {
    case internal::WriteMode::kInsert: return internal::OpKind::kInsert;
    case internal::WriteMode::kReplace: return internal::OpKind::kReplace;
    case internal::WriteMode::kMerge: return internal::OpKind::kMerge;
    case internal::WriteMode::kUpsert: return internal::OpKind::kUpsert;
    case internal::WriteMode::kUpsertMerge: return internal::OpKind::kUpsertMerge;
  }
  return internal::OpKind::kUpsert;
}

}  // namespace

Result<Entity> Table::Write(const Entity& entity, std::string_view if_match,
                            internal::WriteMode mode) const {
  return internal::MeteredCall(core_.get(), OpOf(mode), name_, [&]() -> Result<Entity> {
    BT_RETURN_IF_ERROR(Usable());
    const std::string_view pk = entity.partition_key(), rk = entity.row_key();
    const std::string ctx = EntityContext(name_, pk, rk);
    Status valid = ValidateEntity(entity);
    if (!valid.ok()) return valid.WithContext(ctx);
    auto name = EntityBlobName(pk, rk);
    if (!name.ok()) return name.status().WithContext(ctx);
    auto schema = core_->schemas->Current(*core_, name_);
    if (!schema.ok()) return schema.status().WithContext(ctx);
    if (schema->schema->Maintained()) return WriteIndexed(entity, if_match, mode);
    internal::UnindexedWrite unindexed(*core_, name_, *schema);  // until an index appears
    Entity stored;
    auto make = [&](const internal::VisibleVersion* current) -> Result<std::string> {
      stored = entity;
      if (current != nullptr) {  // merged into the version it replaces
        BT_ASSIGN_OR_RETURN(stored, internal::DecodeVisible(*current, *name, pk, rk, nullptr));
        for (const auto& [prop, value] : entity.properties()) stored.Set(prop, value);
        // The union may break a rule neither part did (more than 252 properties).
        Status merged_ok = ValidateEntity(stored);
        if (!merged_ok.ok()) return merged_ok.WithContext("after merging");
      }
      stored.set_timestamp(std::chrono::time_point_cast<Ticks>(core_->clock->Now()));
      return internal::EncodeEntity(stored);
    };
    auto etag = internal::WriteEntity(*core_, *name, mode, if_match, make, &unindexed);
    if (unindexed.indexed()) return WriteIndexed(entity, if_match, mode);
    if (!etag.ok()) return etag.status().WithContext(ctx);
    stored.set_etag(*etag);
    return stored;
  });
}

Status Table::Delete(std::string_view pk, std::string_view rk, std::string_view if_match) const {
  return internal::MeteredCall(core_.get(), internal::OpKind::kDelete, name_, [&]() -> Status {
    BT_RETURN_IF_ERROR(Usable());
    const std::string ctx = EntityContext(name_, pk, rk);
    BT_RETURN_IF_ERROR(ValidateIfMatch(if_match));
    auto name = EntityBlobName(pk, rk);
    if (!name.ok()) return name.status().WithContext(ctx);
    auto schema = core_->schemas->Current(*core_, name_);
    if (!schema.ok()) return schema.status().WithContext(ctx);
    if (schema->schema->Maintained()) return DeleteIndexed(pk, rk, if_match);
    internal::UnindexedWrite unindexed(*core_, name_, *schema);
    Status deleted = internal::DeleteEntity(*core_, *name, if_match, &unindexed);
    if (unindexed.indexed()) return DeleteIndexed(pk, rk, if_match);
    return deleted.WithContext(ctx);
  });
}

}  // namespace blobtable
