// SPDX-License-Identifier: Apache-2.0
// One entry to the backends: a location names either a directory (the local
// LMDB store) or an Azure Storage connection string, decided by the
// connection-string parser's own rules (IsConnectionString, store.h).
#ifndef BLOBTABLE_STORAGE_OPEN_BLOB_STORE_H_
#define BLOBTABLE_STORAGE_OPEN_BLOB_STORE_H_

#include <memory>
#include <string_view>

#include "blobtable/blob_store.h"
#include "blobtable/options.h"

namespace blobtable {

// Opens the backend `location` names (see Store::Open for the rules and
// failures). The wrapper in options.wrap_blob_store is not applied here.
Result<std::shared_ptr<BlobStore>> OpenBlobStore(std::string_view location,
                                                 const StoreOptions& options);

}  // namespace blobtable

#endif  // BLOBTABLE_STORAGE_OPEN_BLOB_STORE_H_
