// SPDX-License-Identifier: Apache-2.0
// Changing a table's index definitions, and waiting out the writers that
// followed them before (internal; kv/index_admin.cc, kv/drop_table.cc).
#ifndef BLOBTABLE_KV_INDEX_DEFINITIONS_H_
#define BLOBTABLE_KV_INDEX_DEFINITIONS_H_

#include <functional>
#include <string>

#include "blobtable/status.h"
#include "kv/store_core.h"
#include "model/index_schema.h"

namespace blobtable::internal {

// Changes the stored definitions of `table` with `change` (which may fail
// to stop), at the version read: read again and retried on a race, and on
// a write whose answer was lost (Unavailable, OutcomeUnknown): every
// `change` is idempotent, so applying it again to what is stored, whether
// the lost write took effect or not, is right. The new copy's ETag into
// *etag if not null.
Status ChangeSchema(const StoreCore& core, const std::string& table,
                    const std::function<Status(TableSchema&)>& change, std::string* etag = nullptr);

// Waits until no write can still commit following definitions read before
// now: nothing where every commit checks them in its own batch (the local
// store: txn/definitions_check.h), else the grace, past every commit point
// that checked their age before its request (Azure, the lease coordinator).
void WaitOutEarlierWriters(const StoreCore& core);

}  // namespace blobtable::internal

#endif  // BLOBTABLE_KV_INDEX_DEFINITIONS_H_
