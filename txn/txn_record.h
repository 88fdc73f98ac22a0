// The transaction record blob "x/<txn id>": the coordinator's fence (it holds
// the record's lease) and the commit point (its state turns to committed,
// written under that lease, carrying every write to apply).
//
// Format 1 (the first protocol; still resolved where found): the record is
// created pending and leased first, stored as msgpack ["bt.txn", 1, txn_id,
// lease_id, state, [lock blobs], [entity blobs], [[blob, op, body(bin),
// seen_etag], ...]].
// Format 2 (protocol 2): created once, committed by the coordinator's
// commit point or aborted by a resolver, both with If-None-Match "*":
// ["bt.txn", 2, txn_id, state, [[blob, intent_etag], ...]] (the intents
// carry the bodies).
#ifndef BLOBTABLE_TXN_TXN_RECORD_H_
#define BLOBTABLE_TXN_TXN_RECORD_H_

#include <string>
#include <string_view>
#include <vector>

#include "blobtable/status.h"
#include "util/stored_format.h"

namespace blobtable {

// Metadata with which a transaction marks blobs (values are its txn id):
// (kReservationMetadata, "btres", marks a reservation: see kv/blob_naming.h.)


enum class TxnState { kPending = 0, kCommitted = 1, kAborted = 2 };

struct TxnWrite {
  enum Op { kPut = 0, kDelete = 1 };
  std::string blob;
  Op op = kPut;
  std::string body;       // kPut: the encoded entity
  std::string seen_etag;  // the entity's ETag when the coordinator leased it
                          // (format 2: the ETag of its intent)
};

struct TxnRecord {
  int format = 1;
  std::string txn_id;
  std::string lease_id;  // every lease of this transaction uses this id
  TxnState state = TxnState::kPending;
  std::vector<std::string> locks;     // lock blobs, in the order taken
  std::vector<std::string> entities;  // every entity blob it may lease or reserve
  std::vector<TxnWrite> writes;       // set when committed
};

std::string RecordBlobName(std::string_view txn_id);
std::string EncodeRecord(const TxnRecord& record);
Result<TxnRecord> DecodeRecord(std::string_view body, std::string_view blob_name);

}  // namespace blobtable

#endif  // BLOBTABLE_TXN_TXN_RECORD_H_
