// SPDX-License-Identifier: Apache-2.0
// Reading and writing one entity blob outside a transaction, as the commit
// protocol requires (docs/protocol.md): a reader meets a transaction's
// intent and takes the version committed now, without waiting; a writer
// waits out (or settles) whatever transaction holds the entity, tells a
// failed condition from a race, and follows a version rewritten under a new
// ETag (its handles). The table façade (kv/table.cc) validates, names,
// encodes and adds context; everything between it and storage is here.
//
// Errors carry no entity context (the caller adds it): NotFound "not
// found"; Conflict "already exists", "ETag X no longer matches (now Y)" or
// "gave up after N attempts"; Busy after StoreOptions::busy_timeout; the
// storage's own errors as they are; Corruption for a damaged blob or
// record, or for a mark of the first commit protocol (txn/txn_record.h).
#ifndef BLOBTABLE_TXN_ENTITY_ACCESS_H_
#define BLOBTABLE_TXN_ENTITY_ACCESS_H_

#include <functional>
#include <string>
#include <string_view>

#include "blobtable/blob_store.h"
#include "blobtable/entity.h"
#include "blobtable/entity_view.h"
#include "txn/txn_context.h"
#include "util/function_ref.h"

namespace blobtable::internal {

class UnindexedWrite;  // txn/definitions_check.h

// The version of an entity a reader gets.
struct VisibleVersion {
  std::string body;  // the encoded entity
  // A handle for conditions, and the other handles of the same version (its
  // kSameAsMetadata list; docs/protocol.md, H1), for a transaction's intent
  // to keep.
  std::string etag;
  std::string handles;
  bool stale = false;  // answered by the cache with storage out of reach
};

// Reads entity blob `blob` as `policy` allows (TxnContext::ReadEntityBlob;
// `listed_etag`: what a listing just showed). An intent on it is viewed as
// the version committed now (a decided one is left to the store's finisher
// to rewrite plain); never waits. NotFound if the entity does not exist.
Result<VisibleVersion> ReadVisible(const TxnContext& core, const std::string& blob,
                                   const ReadPolicy& policy, std::string_view listed_etag = {});

// The entity `v` holds (`blob`'s, keys `pk`, `rk`), with its ETag, and its
// other handles into `handles` if not null. Corruption if it does not
// decode or holds another entity's keys.
Result<Entity> DecodeVisible(VisibleVersion v, const std::string& blob, std::string_view pk,
                             std::string_view rk, std::string* handles);

// ReadVisible and DecodeVisible in one: the entity `blob` (keys `pk`, `rk`)
// holds as `policy` allows. A blob with no transaction's mark on it is
// decoded straight from the backend's page where it reads in place
// (TxnContext::in_place). Errors as theirs.
Result<Entity> ReadVisibleEntity(const TxnContext& core, const std::string& blob,
                                 std::string_view pk, std::string_view rk, const ReadPolicy& policy,
                                 std::string_view listed_etag = {});

// ReadVisibleEntity's entity handed to `visit` as a view: one with no
// transaction's mark is decoded where the backend holds it (no Entity, no
// copy of a value) when it reads in place; any other is read as
// ReadVisibleEntity reads it and handed over as a view of that entity.
// OK once `visit` has seen it; else ReadVisibleEntity's error (then `visit`
// was not called).
Status VisitVisibleEntity(const TxnContext& core, const std::string& blob, std::string_view pk,
                          std::string_view rk, const ReadPolicy& policy,
                          FunctionRef<void(const EntityView&)> visit);

// "table T, entity (PartitionKey 'pk', RowKey 'rk')", each key cut at 64
// bytes: the context every entity error carries.
std::string EntityContext(std::string_view table, std::string_view pk, std::string_view rk);

// How a write treats the version it replaces.
enum class WriteMode : int {
  kInsert,       // none may exist
  kReplace,      // the version `if_match` names ("*": any existing one)
  kMerge,        // the same, its properties merged into that version's
  kUpsert,       // whatever exists, or none
  kUpsertMerge,  // the same, merged into what exists
};

// Makes the body to write: from `current` (the version merged into, for
// the merge modes when one exists) or alone (null).
using MakeBody = std::function<Result<std::string>(const VisibleVersion* current)>;

// Writes entity blob `blob` in `mode` (`if_match`: an ETag or "*", for
// kReplace and kMerge only). Waits while a transaction or another client
// holds the entity (settling a transaction whose coordinator is gone), up
// to busy_timeout; retries a race (up to max_merge_attempts). Returns the
// ETag of the version written. With `unindexed` (a write to a table with no
// maintained index: txn/definitions_check.h), every request that may write
// goes through it, and its refusal (the table has an index now) ends the
// write with that error, nothing written.
Result<std::string> WriteEntity(const TxnContext& core, const std::string& blob, WriteMode mode,
                                std::string_view if_match, const MakeBody& make,
                                UnindexedWrite* unindexed = nullptr);

// Deletes entity blob `blob` at the version `if_match` names ("*": any).
// Waits and retries as WriteEntity does, `unindexed` as there. A blob whose
// stored record is damaged is deleted when asked for any version (that is
// its repair).
Status DeleteEntity(const TxnContext& core, const std::string& blob, std::string_view if_match,
                    UnindexedWrite* unindexed = nullptr);

}  // namespace blobtable::internal

#endif  // BLOBTABLE_TXN_ENTITY_ACCESS_H_
