// SPDX-License-Identifier: Apache-2.0
// A transaction's intent left on an entity by a coordinator that died before
// its commit point: what readers must read past (the version before it) and
// what admin commands must see as held.
#ifndef BLOBTABLE_TESTS_DEAD_INTENT_H_
#define BLOBTABLE_TESTS_DEAD_INTENT_H_

#include <gtest/gtest.h>

#include <string>

#include "blobtable/table.h"
#include "model/entity_codec.h"
#include "txn/intent.h"
#include "util/stored_format.h"

namespace blobtable::testing {

inline constexpr char kDeadTxnId[] = "0f8fad5b-d9cb-469f-a165-70867728950e";

// Puts on the existing entity (pk, rk) of `table`, in `storage` (the store
// under the table's), the intent of transaction kDeadTxnId that would have
// set its property n to 99.
inline void PlaceDeadIntent(BlobStore& storage, const Table& table, const std::string& pk,
                            const std::string& rk) {
  const std::string blob = *table.EntityBlobName(pk, rk);
  auto cur = storage.Get(blob, {});
  ASSERT_TRUE(cur.ok()) << cur.status().ToString();
  internal::EntityIntent intent;
  intent.txn_id = kDeadTxnId;
  intent.lock = *table.LockBlobName(pk);
  intent.prev_exists = intent.next_exists = true;
  intent.prev_etag = cur->properties.etag;
  intent.prev_body = cur->data;
  intent.next_body = *internal::EncodeEntity(Entity(pk, rk).Set("n", 99));
  PutOptions placed;
  placed.conditions.if_match = cur->properties.etag;
  placed.metadata = {{internal::kPrewriteMetadata, intent.txn_id}};
  ASSERT_TRUE(storage.Put(blob, internal::EncodeIntent(intent), placed).ok());
}

}  // namespace blobtable::testing

#endif  // BLOBTABLE_TESTS_DEAD_INTENT_H_
