// SPDX-License-Identifier: Apache-2.0
// The transaction record blob "x/<txn id>": the commit point. Created once,
// with If-None-Match "*": committed by the coordinator's commit point, or
// aborted by whoever decides an undecided transaction (txn/intent_resolver.h);
// whichever creation gets there first stands.
//
// Format 2, msgpack: ["bt.txn", 2, txn_id, state, [[blob, intent_etag], ...]]
// (the intents carry the bodies). Format 1 was the first protocol's record
// (created pending and leased, the bodies inside): no store in use still
// holds one, and meeting one is refused (Corruption saying so), as are that
// protocol's marks on entities (kProtocol1Metadata).
#ifndef BLOBTABLE_TXN_TXN_RECORD_H_
#define BLOBTABLE_TXN_TXN_RECORD_H_

#include <string>
#include <string_view>
#include <vector>

#include "blobtable/blob_store.h"
#include "blobtable/status.h"
#include "util/stored_format.h"

namespace blobtable::internal {

enum class TxnState { kCommitted = 1, kAborted = 2 };

struct TxnWrite {
  std::string blob;         // an entity blob
  std::string intent_etag;  // the ETag of the intent the transaction placed on it
};

struct TxnRecord {
  std::string txn_id;
  TxnState state = TxnState::kAborted;
  // Committed: every intent. Aborted: the intent a writer met before the
  // transaction leased it, when that writer decided it (readers of an
  // aborted record ignore it; the coordinator reports Conflict on it).
  std::vector<TxnWrite> writes;
};

std::string RecordBlobName(std::string_view txn_id);
std::string EncodeRecord(const TxnRecord& record);
// Corruption naming `blob_name` if `body` is not a record of format 2 (one of
// format 1 gets ProtocolOneRefused's message).
Result<TxnRecord> DecodeRecord(std::string_view body, std::string_view blob_name);

// The marker "p/<txn id>" of a transaction in flight: the entity blobs it
// may hold intents on, so that Recover finds a transaction from its marker
// rather than from a listing of every entity (docs/protocol.md, P1). Written
// in the transaction's first round, beside its first intents (again before
// its second round if it waited half an hour); deleted once none of those
// blobs holds its intent (a lease left by a release that failed may remain).
//
// Format 1, msgpack: ["bt.pending", 1, txn_id, [blob, ...]].
struct TxnMarker {
  std::string txn_id;
  std::vector<std::string> blobs;  // entity blobs
};
std::string MarkerBlobName(std::string_view txn_id);
std::string EncodeMarker(const TxnMarker& marker);
// Corruption naming `blob_name` if `body` is not a marker.
Result<TxnMarker> DecodeMarker(std::string_view body, std::string_view blob_name);

// True if `body` is a record of the first protocol (format 1).
bool IsProtocolOneRecord(std::string_view body);

// Protocol 1's leftovers, recognised only to refuse them: OK if `p` (of
// `blob`) carries no mark of the first protocol, else Corruption saying what
// to do. Checked wherever a transaction's mark would be settled.
Status RefuseProtocolOneMark(const BlobProperties& p, std::string_view blob);

}  // namespace blobtable::internal

#endif  // BLOBTABLE_TXN_TXN_RECORD_H_
