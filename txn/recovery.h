// SPDX-License-Identifier: Apache-2.0
// Settling what transactions left behind: an intent met on an entity, a
// committed record whose intents are not all rewritten yet, old aborted
// records (Store::Recover). Protocol 2 only (docs/protocol.md): every step
// is conditional on the version it read, so whoever meets a leftover may
// settle it and nobody takes a lease to do so. What the first protocol left
// (txn/txn_record.h) is refused with a message.
#ifndef BLOBTABLE_TXN_RECOVERY_H_
#define BLOBTABLE_TXN_RECOVERY_H_

#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "blobtable/blob_store.h"

namespace blobtable::internal {

class Finisher;
class Rewrites;

// What resolution needs: the store, the clock, the length of the leases a
// transaction takes (15..60), and up to what size a write it applies
// carries an inline copy of its body (model/inline_body.h).
struct ResolveContext {
  BlobStore& blobs;
  Clock& clock;
  int lease_seconds;
  size_t inline_body_max = 0;
  // Partition locks the caller itself holds (a committing transaction): an
  // intent whose lock is among them has lost its coordinator.
  const std::set<std::string>* own_locks = nullptr;
  // The caller's own transaction, before its commit point: an intent of its
  // own that it meets again (one it failed to undo) it undoes without a
  // decision, as its coordinator may.
  std::string own_txn = {};
  // Where a finishing job says what it did: each intent's rewrite (a commit
  // on the same rows then holds it), and each blob settled (a commit waiting
  // for this store's own finishing goes on). Null when not a finishing job.
  Rewrites* rewrites = nullptr;
  Finisher* finisher = nullptr;
};

// The transaction holding `p`: its intent's (kPrewriteMetadata) or, to be
// refused by ResolveBlob, a first-protocol mark's; "" if none.
std::string MarkingTransaction(const BlobProperties& p);
// True if a read of a blob with `metadata` (viewed where it is stored:
// storage/in_place.h) must go the protocol's way (ReadVisible): it holds an
// intent, or a first-protocol mark, which that read refuses.
bool HasMark(const std::vector<std::pair<std::string_view, std::string_view>>& metadata);

// Finishes the writes of a committed record (`seen` is the record blob's
// properties) still held as intents, then deletes the record. An aborted
// record is left alone (RecoverAbandoned removes it once nothing of it is left).
struct TxnRecord;
Status FinishRecord(const ResolveContext& ctx, const TxnRecord& rec, const BlobProperties& seen);

// Settles whatever transaction holds `blob` as `seen` shows it: an intent
// (SettleIntent), or a stamp on a blob still leased under that transaction's
// id (an intent rewritten plain whose lease was not let go: released, at
// the version seen). OK when done (read the blob again) or when `seen`
// shows no transaction; Busy while the transaction is alive; Corruption for
// a first-protocol mark.
Status ResolveBlob(const ResolveContext& ctx, std::string_view blob, const BlobProperties& seen);

// Settles the transaction of every record: a committed one finished and
// removed; a pending one whose coordinator is gone (no stripe it names
// leased, no intent of it held under a leased stripe) decided aborted; the
// intents an aborted one names undone, and the record removed once none is
// left and no stripe it names is leased. No clock is read. With
// `scan_everything`, every intent in the container too; and the markers of
// a release before pending records. Returns how many transactions it
// settled. Transactions
// still at work go to `in_flight` (if not null), with the entity blobs
// holding their intents. Damaged records and markers: see Store::Recover
// (`discard_damaged` deletes them). A first-protocol record or mark stops it
// with Corruption saying so.
struct InFlightTxn {
  std::string txn_id;
  std::vector<std::string> blobs;  // the entity blobs holding its intents
};
Result<int> RecoverAbandoned(const ResolveContext& ctx, bool discard_damaged = false,
                             bool scan_everything = false,
                             std::vector<InFlightTxn>* in_flight = nullptr);

}  // namespace blobtable::internal

#endif  // BLOBTABLE_TXN_RECOVERY_H_
