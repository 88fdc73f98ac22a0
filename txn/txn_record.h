// SPDX-License-Identifier: Apache-2.0
// The transaction record blob "x/<txn id>": what the transaction may hold,
// and how it ended. The coordinator creates it pending in its first round
// (If-None-Match "*"), naming every entity it may place an intent on and the
// lock stripes it holds; its commit point rewrites it committed, If-Match
// the pending version. Whoever decides the transaction aborted rewrites a
// pending record aborted If-Match that version, or creates an aborted one
// (If-None-Match "*") where there is none yet. So a decision is final
// without any clock: once the pending version is gone, the commit point's
// condition can never hold again, even after the aborted record is deleted
// (ETags never come back). docs/protocol.md, invariants X1 and A2.
//
// Format 3, msgpack: ["bt.txn", 3, txn_id, state, [[blob, intent_etag], ...],
// [lock stripe, ...], met]. Format 2 (committed or aborted only, no stripes,
// no met: an aborted record's first write was the entity met) is read for
// the records a release before it left. Format 1 was the first protocol's
// record: meeting one is refused (Corruption saying so), as are that
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

enum class TxnState { kCommitted = 1, kAborted = 2, kPending = 3 };

struct TxnWrite {
  std::string blob;         // an entity blob
  std::string intent_etag;  // the ETag of the intent placed on it ("" while pending)
};

struct TxnRecord {
  std::string txn_id;
  TxnState state = TxnState::kAborted;
  // Pending: every entity the transaction may place an intent on.
  // Committed: every intent it committed, by ETag: an intent of the
  // transaction not named here (an earlier attempt on the blob) is not
  // committed (invariant X1). Aborted: as the pending record was, or, made
  // by a decider where there was none, the intent it met.
  std::vector<TxnWrite> writes;
  // The lock stripes its coordinator holds while at work (invariant L2):
  // Recover judges a transaction that holds no intent by them.
  std::vector<std::string> locks;
  // Aborted by a writer that met this entity's intent not yet leased and
  // went first: the coordinator reports Conflict on it. "" otherwise.
  std::string met;
};

// The record says the intent `etag` on `blob` is committed: committed, and
// naming that intent.
bool CommitsIntent(const TxnRecord& record, std::string_view blob, std::string_view etag);

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
std::string MarkerBlobName(std::string_view txn_id);
std::string EncodeMarker(const TxnMarker& marker);  // as those releases wrote it
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
