// Finishing or undoing transactions whose coordinator is gone.
//
// A transaction is abandoned when nobody holds its record's lease. Whoever
// meets its marks (a lock blob naming it, a reservation, a leased entity)
// takes the record's lease and, under it, rolls a committed transaction
// forward (replay rule: an entity already stamped with its id is done; one
// still at the ETag it recorded gets the write; anything else was written by
// someone later and is left alone) or undoes a pending one (reservations
// deleted, leases released), then clears its lock marks and deletes the
// record. Every step is idempotent, so a resolver that dies is followed by
// another.
#ifndef BLOBTABLE_TXN_RECOVERY_H_
#define BLOBTABLE_TXN_RECOVERY_H_

#include <string>
#include <string_view>

#include "blobtable/blob_store.h"

namespace blobtable {

// Resolves transaction `txn_id`. OK when it is resolved or already gone;
// Busy when its coordinator (or another resolver) still holds its record.
Status ResolveTransaction(BlobStore& blobs, std::string_view txn_id, int lease_seconds);

// Resolves the transaction named by a lock blob's metadata, if any. OK when
// there is none (or it was resolved); Busy when it is alive.
Status ResolvePartitionLock(BlobStore& blobs, std::string_view lock_blob, int lease_seconds);

// Removes a transaction's mark (reservation or intent) from `blob` under a
// lease `lease_id`, conditional on the version `seen`: a reservation is
// deleted, an intent mark dropped. Anything changed since is left alone.
Status ClearMark(BlobStore& blobs, std::string_view blob, const BlobProperties& seen,
                 const std::string& txn_id, const std::string& lease_id, int lease_seconds);

// Removes a mark left on `blob` by a transaction whose record is gone (a
// coordinator that stalled past its takeover). Busy if the record exists.
Status ClearOrphanMark(BlobStore& blobs, std::string_view blob, int lease_seconds);

// Resolves every abandoned transaction in the container; returns how many.
Result<int> RecoverAbandoned(BlobStore& blobs, int lease_seconds);

}  // namespace blobtable

#endif  // BLOBTABLE_TXN_RECOVERY_H_
