// What a Store shares with its Tables (internal).
#ifndef BLOBTABLE_KV_STORE_CORE_H_
#define BLOBTABLE_KV_STORE_CORE_H_

#include <memory>

#include "blobtable/blob_store.h"
#include "blobtable/options.h"

namespace blobtable::internal {

struct StoreCore {
  std::shared_ptr<BlobStore> blobs;
  StoreOptions options;
  Clock* clock;  // never null
};

}  // namespace blobtable::internal

#endif  // BLOBTABLE_KV_STORE_CORE_H_
