// Finishing or undoing transactions whose coordinator is gone.
//
// A transaction is abandoned when nobody holds its record's lease. Whoever
// meets one of its marks (a lock blob naming it, an intent mark or a
// reservation on an entity, an entity it stamped but never released) takes
// the record's lease and, under it, rolls a committed transaction forward
// (replay rule: an entity already stamped with its id is done; one still at
// the ETag it recorded gets the write; anything else was written by someone
// later and is left alone) or marks a pending one aborted and undoes it
// (reservations deleted, intent marks dropped, each only at the version
// read), then clears its lock marks and deletes the record. Every step is
// idempotent, so a resolver that dies is followed by another; a resolver
// renews the record's lease while it works.
//
// Marked entities are held under an infinite lease whose id is the
// transaction's id, so nobody writes them until the outcome is decided, and
// whoever finds a mark whose record is gone (the transaction was decided and
// its coordinator stalled, or a clean-up step failed) can remove it.
#ifndef BLOBTABLE_TXN_RECOVERY_H_
#define BLOBTABLE_TXN_RECOVERY_H_

#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "blobtable/blob_store.h"

namespace blobtable {

// What resolution needs: the store, the clock for renewing the record lease,
// the length of the leases a resolver takes (15..60), and up to what size a
// write it applies carries an inline copy of its body (remote/inline_body.h).
struct ResolveContext {
  BlobStore& blobs;
  Clock& clock;
  int lease_seconds;
  size_t inline_body_max = 0;
  // Partition locks the caller itself holds (a committing transaction): a
  // protocol-2 intent whose lock is among them has lost its coordinator.
  const std::set<std::string>* own_locks = nullptr;
};

// The transaction whose intent mark or reservation `p` carries; "" if none.
std::string MarkingTransaction(const BlobProperties& p);

// Resolves transaction `txn_id`. OK when it is resolved or already gone;
// Busy when its coordinator (or another resolver) still holds its record.
Status ResolveTransaction(const ResolveContext& ctx, std::string_view txn_id);

// Protocol 2: finishes the writes of a committed record (`seen` is the
// record blob's properties) still held as intents, then deletes the record.
// An aborted record is left alone (RecoverAbandoned removes old ones).
struct TxnRecord;
Status FinishRecord(const ResolveContext& ctx, const TxnRecord& rec, const BlobProperties& seen);

// Resolves the transaction named by a lock blob's metadata, if any. OK when
// there is none (or it was resolved); Busy when it is alive.
Status ResolvePartitionLock(const ResolveContext& ctx, std::string_view lock_blob);

// Settles whatever transaction holds `blob` as `seen` shows it: a mark or
// reservation, or a stamp on a blob still leased. Resolves that transaction,
// then removes what it left on the blob if its record is gone. OK when done
// (read the blob again), Busy while the transaction is alive; OK at once if
// `seen` shows no transaction.
Status ResolveBlob(const ResolveContext& ctx, std::string_view blob, const BlobProperties& seen);

// Removes a transaction's mark (reservation or intent) from `blob` under a
// lease `lease_id`, conditional on the version `seen`: a reservation is
// deleted, an intent mark dropped, a lease of `lease_id` released. Anything
// changed since is left alone.
Status ClearMark(BlobStore& blobs, std::string_view blob, const BlobProperties& seen,
                 const std::string& txn_id, const std::string& lease_id, int lease_seconds);

// Resolves every abandoned transaction in the container; returns how many.
// Damaged records: see Store::Recover.
// Protocol 2: first every intent in the container is settled (its
// transaction finished, undone, or decided aborted once its leases ran
// out); transactions still at work go to `in_flight` (if not null), with
// the entities they hold (none for a protocol-1 record still leased). Committed records left behind are finished and removed; aborted
// ones once an hour old.
struct InFlightTxn {
  std::string txn_id;
  std::vector<std::string> blobs;  // the entity blobs holding its intents
};
Result<int> RecoverAbandoned(const ResolveContext& ctx, bool discard_damaged = false,
                             std::vector<InFlightTxn>* in_flight = nullptr);

}  // namespace blobtable

#endif  // BLOBTABLE_TXN_RECOVERY_H_
