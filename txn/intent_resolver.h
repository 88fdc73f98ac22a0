// SPDX-License-Identifier: Apache-2.0
// Meeting a protocol-2 transaction's intent (txn/intent.h) on an entity.
//
// The transaction's record decides: committed -> the intent's new version,
// aborted -> its previous one. With no record the transaction is undecided:
// a reader takes the previous version and never waits; a writer waits while
// the coordinator is alive (the entity and its partition lock are leased)
// and otherwise decides "abort" by creating the record aborted
// (If-None-Match "*", which also fences a coordinator that stalled past its
// leases: its commit point is the same creation). Every rewrite of an intent
// is conditional on the intent's ETag, so it is idempotent and never
// overwrites a later write.
#ifndef BLOBTABLE_TXN_INTENT_RESOLVER_H_
#define BLOBTABLE_TXN_INTENT_RESOLVER_H_

#include <optional>
#include <string>
#include <string_view>

#include "blobtable/blob_store.h"
#include "txn/intent.h"
#include "txn/recovery.h"
#include "txn/txn_record.h"

namespace blobtable::internal {

enum class Outcome { kUndecided, kCommitted, kAborted };

// What transaction `txn_id`'s record says (Corruption if it is damaged):
// no record, or a pending one, is kUndecided. The record itself into
// `read`, and its ETag into `etag`, if given and there is one.
Result<Outcome> OutcomeOf(BlobStore& blobs, std::string_view txn_id, TxnRecord* read = nullptr,
                          std::string* etag = nullptr);
// What `outcome`, read from `record`, makes of the intent `etag` on `blob`:
// committed only if the record names that intent (invariant X1: another
// intent of the transaction on that blob was an earlier attempt, aborted).
Outcome OutcomeOfIntent(Outcome outcome, const TxnRecord& record, std::string_view blob,
                        std::string_view etag);

// Decides an undecided transaction aborted: rewrites its pending record
// aborted (If-Match the pending version, the one its commit point needs),
// or creates it aborted where there is none (If-None-Match "*", which its
// coordinator's pending create then meets). Returns the outcome that stands
// (committed if its commit point got there first), or kUndecided if a
// record was there and is gone: the transaction was decided and finished
// meanwhile, so what the caller read of its intents is stale. `met`: the
// intent a writer met before it was leased (the writer going first), named
// in the aborted record so that the transaction reports Conflict on it;
// `met_lock`: the stripe that intent names, kept in a record created here
// (Recover deletes an aborted record only once no stripe it names is leased).
Result<Outcome> DecideAbort(BlobStore& blobs, std::string_view txn_id,
                            const TxnWrite* met = nullptr, std::string_view met_lock = "");

// The version of an entity a reader gets from a blob that holds an intent
// (`seen`, read with its body): committed as of the read.
struct IntentView {
  bool exists = false;
  std::string body;
  // A handle for conditions: the intent's ETag for its new version, the
  // replaced version's ETag for the previous one (kSameAsMetadata keeps
  // both valid once the intent is rewritten plain).
  std::string etag;
  // The other handles of that version: the previous version's (the intent
  // carries them); none for a new version.
  std::string handles;
  // The record decided it (whoever has time may rewrite the blob plain:
  // FinishDecided), and how.
  bool decided = false;
  bool committed = false;
};
// nullopt: the blob moved on while it was looked at (read it again).
// Never waits. Corruption if the intent or its record is damaged.
Result<std::optional<IntentView>> ViewIntent(BlobStore& blobs, std::string_view blob,
                                             const GetResult& seen);
// The previous version, without asking the record (for a stale cached copy).
Result<IntentView> PreviousVersion(std::string_view blob, const GetResult& seen);

// An entity's version as a writer plans on it: storage's answer now, an
// intent on it seen as the version its record makes committed. Never waits.
struct CommittedVersion {
  bool exists = false;
  std::string etag;     // the handle to write If-Match
  std::string handles;  // the other handles of that version (kSameAsMetadata)
  std::string body;     // its stored body
};
// Busy if the blob kept changing while it was looked at (100 tries);
// errors of the reads, Corruption for a damaged intent or record.
Result<CommittedVersion> LookCommitted(BlobStore& blobs, std::string_view blob);

// Who settles: a writer about to write the entity decides an intent not yet
// leased aborted at once, through its record, without waiting for its
// coordinator (the writer goes first), then undoes it; recovery leaves it
// alone while its coordinator may be at work.
enum class SettleAs { kWriter, kRecovery };

// Makes `blob` plain (finishing or undoing the intent it holds, read again
// now) so that the caller can try again. OK when done or when there is
// nothing to do; Busy while its transaction is undecided and alive.
Status SettleIntent(const ResolveContext& ctx, std::string_view blob, const BlobProperties& seen,
                    SettleAs as = SettleAs::kWriter);

// Rewrites the intent a reader saw (`seen`, whose transaction ViewIntent
// found decided: `committed` or aborted) as that outcome gives. Acts on
// that intent at that version only (invariant C1): OK if the blob moved on
// since, whatever it holds now (another transaction's intent, placed after
// this one was finished, is not this caller's to judge).
Status FinishDecided(const ResolveContext& ctx, std::string_view blob, const GetResult& seen,
                     bool committed);

// Rewrites the intent `intent` (held by `blob` at `etag`) as the version the
// outcome gives, then lets go of the transaction's lease on it. OK also when
// the blob is no longer that intent (someone finished it, or wrote later).
// `release` false leaves the lease (the caller releases it in its own round).
// Presents the transaction's lease id where the blob is leased (callers act
// on a decided outcome, or are the transaction itself) unless
// `may_use_txn_lease` is false: Busy then if it is leased.
Status FinishIntent(const ResolveContext& ctx, std::string_view blob, const EntityIntent& intent,
                    const BlobProperties& seen, bool committed, bool release = true,
                    bool may_use_txn_lease = true);

// True if `p` carries kSameAsMetadata naming `etag`: it is the version a
// condition on `etag` meant.
bool SameVersion(const BlobProperties& p, std::string_view etag);
// The value of metadata `name` on a blob, "" when it has none.
std::string MetadataOf(const BlobProperties& p, const char* name);
// The handles `p` continues (its kSameAsMetadata, a list); "" if none.
std::string SameAsOf(const BlobProperties& p);
// True if handle list `same_as` (kSameAsMetadata's form) names `etag`.
bool NamesVersion(std::string_view same_as, std::string_view etag);
// The handle list of a rewrite that continues the version at `etag`, which
// carried the list `same_as`: `etag` first, the newest of the rest after
// it (at most kMaxHandles in all).
std::string ContinuedHandles(std::string_view etag, std::string_view same_as);
inline constexpr int kMaxHandles = 4;

}  // namespace blobtable::internal

#endif  // BLOBTABLE_TXN_INTENT_RESOLVER_H_
