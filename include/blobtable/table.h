// Table: insert, replace, merge, upsert, delete, get and query entities of
// one table. Obtain one from Store::OpenTable. A Table is a cheap handle
// (copy it freely) and is thread-safe: calls may run from many threads and
// processes at once; each call is atomic on its entity.
//
// Failures, by Code:
//   InvalidArgument  bad table name, key, property, size, or ETag argument
//   NotFound         the entity does not exist (Get, Replace, Merge, Delete)
//   Conflict         Insert of an existing entity; an ETag that no longer
//                    matches (re-read and retry)
//   Busy             the entity is leased by a transaction in progress
//   Corruption       the stored blob is not a valid entity (names the blob)
//   Unavailable/IOError  the storage backend failed
#ifndef BLOBTABLE_TABLE_H_
#define BLOBTABLE_TABLE_H_

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "blobtable/export.h"
#include "blobtable/blob_store.h"
#include "blobtable/entity.h"
#include "blobtable/options.h"
#include "blobtable/status.h"

namespace blobtable {

namespace internal {
struct StoreCore;
}

struct QueryOptions {
  // Only this partition; unset: the whole table, in (PartitionKey, RowKey) order.
  std::optional<std::string> partition_key;
  // RowKey range, both ends inclusive, byte-wise ordinal order of UTF-8.
  std::optional<std::string> row_key_from;
  std::optional<std::string> row_key_to;
  // Most entities in one page: 1..1000 (Azure Tables' page limit).
  int top = 1000;
  // From the previous page's QueryPage::continuation; empty for the first.
  std::string continuation;
  // How rows may be answered from the local cache; unset: the store's
  // StoreOptions::read_policy.
  std::optional<ReadPolicy> policy;
  // Only rows matching this Azure Tables $filter (README "Filters"), e.g.
  // "PartitionKey eq 'p' and Price ge 10.0"; empty: every row. Malformed:
  // InvalidArgument naming the position. PartitionKey eq and RowKey bounds
  // in its top-level `and` narrow the listing like the fields above; other
  // conditions are checked on each row, from the copy its listing carries
  // where there is one (no GET for a row that does not match). With a
  // filter a page holds the matches of one listing, as in Azure: it may hold
  // fewer than `top` rows, even none, while `continuation` says more follow.
  std::string filter;
  // Only these properties in each row ($select); PartitionKey, RowKey,
  // Timestamp and the ETag always come. Empty: every property.
  std::vector<std::string> select;
};

struct QueryPage {
  std::vector<Entity> entities;  // in (PartitionKey, RowKey) order
  // Non-empty when more entities match: pass it back in QueryOptions.
  std::string continuation;
  // Some rows, or the listing itself, came from the cache unvalidated
  // (offline, or storage unreachable): rows may be missing or old.
  bool stale = false;
};

class BLOBTABLE_EXPORT Table {
 public:
  const std::string& name() const { return name_; }

  // The entity with its ETag and Timestamp, read by the store's
  // StoreOptions::read_policy, or by `policy` (Entity::stale() says whether
  // it came from the cache unvalidated).
  Result<Entity> Get(std::string_view partition_key, std::string_view row_key) const;
  Result<Entity> Get(std::string_view partition_key, std::string_view row_key,
                     const ReadPolicy& policy) const;

  // Each write returns the entity as stored, with its new ETag and Timestamp.
  // Insert fails Conflict if the entity exists.
  Result<Entity> Insert(const Entity& entity) const;
  // Replaces all properties. `if_match` is the ETag the caller last saw, or
  // "*" for any version. NotFound if missing; Conflict on an ETag mismatch.
  Result<Entity> Replace(const Entity& entity, std::string_view if_match) const;
  // Sets the given properties, keeping the others. Same conditions as Replace.
  Result<Entity> Merge(const Entity& entity, std::string_view if_match) const;
  // Insert or replace, unconditionally.
  Result<Entity> Upsert(const Entity& entity) const;
  // Insert or merge, unconditionally.
  Result<Entity> UpsertMerge(const Entity& entity) const;
  // `if_match` as for Replace.
  Status Delete(std::string_view partition_key, std::string_view row_key,
                std::string_view if_match) const;

  // One page of entities in key order.
  Result<QueryPage> Query(const QueryOptions& options) const;

  // Where an entity and its partition's lock live (see README "Blob naming").
  Result<std::string> EntityBlobName(std::string_view partition_key,
                                     std::string_view row_key) const;
  Result<std::string> LockBlobName(std::string_view partition_key) const;

 private:
  friend class Store;
  Table(std::shared_ptr<const internal::StoreCore> core, std::string name)
      : core_(std::move(core)), name_(std::move(name)) {}

  Result<Entity> Write(const Entity& entity, std::string_view if_match, bool merge,
                       bool create_if_missing) const;
  Result<Entity> Read(std::string_view pk, std::string_view rk, const ReadOptions& read) const;

  std::shared_ptr<const internal::StoreCore> core_;
  std::string name_;
};

}  // namespace blobtable

#endif  // BLOBTABLE_TABLE_H_
