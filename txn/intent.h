// SPDX-License-Identifier: Apache-2.0
// An entity blob while a transaction of protocol 2 is writing it: its body
// is an intent holding both versions, so that anyone who meets it can hand
// out the right one once the transaction's record says how it ended.
//
// Stored as msgpack: ["bt.intent", 1, txn_id, lock_blob, prev_exists,
// prev_etag, prev_body(bin), next_exists, next_body(bin), reads_only,
// prev_same] (the last two since 2026-11-25; absent: false, ""), with metadata
// kPrewriteMetadata = txn id (so a HEAD or a listing sees it without the
// body) and no inline copy (a listing must read and resolve it).
#ifndef BLOBTABLE_TXN_INTENT_H_
#define BLOBTABLE_TXN_INTENT_H_

#include <string>
#include <string_view>

#include "blobtable/blob_store.h"

namespace blobtable::internal {

struct EntityIntent {
  std::string txn_id;
  // The partition lock stripe its coordinator holds (finite lease, renewed)
  // while the transaction is undecided: free means the coordinator is gone
  // (txn/lock_stripes.h, invariant L2).
  std::string lock;
  bool prev_exists = false;
  std::string prev_etag;  // the version the intent replaced ("" if none)
  std::string prev_body;
  bool next_exists = false;  // false: the transaction deletes it, or only
                             // needs it absent
  std::string next_body;
  // The transaction only reads the entity (or checks it): the intent fences
  // it (a writer must settle the transaction first) and changes nothing.
  // Its version is the previous one whatever the record says.
  bool reads_only = false;
  // The handles the previous version carried (kSameAsMetadata), if known:
  // undoing the intent, or finishing one that only reads, keeps them.
  std::string prev_same;
};

std::string EncodeIntent(const EntityIntent& intent);
// Corruption (naming `blob`) if `body` is not an intent.
Result<EntityIntent> DecodeIntent(std::string_view body, std::string_view blob);

// The transaction whose intent `p` holds (kPrewriteMetadata); "" if none.
std::string PrewritingTransaction(const BlobProperties& p);

}  // namespace blobtable::internal

#endif  // BLOBTABLE_TXN_INTENT_H_
