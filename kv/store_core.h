// SPDX-License-Identifier: Apache-2.0
// What a Store shares with its Tables, scans and watches (internal): the
// transaction layer's context (txn/txn_context.h) plus what only the façade
// uses, the cache and every option as given.
#ifndef BLOBTABLE_KV_STORE_CORE_H_
#define BLOBTABLE_KV_STORE_CORE_H_

#include <iostream>
#include <memory>
#include <string>

#include "blobtable/options.h"
#include "cache/blob_cache.h"
#include "txn/txn_context.h"

namespace blobtable::internal {

// Tells the user something went wrong that no call returned
// (StoreOptions::warn, else standard error).
inline void WarnUser(const StoreOptions& options, const std::string& message) {
  if (options.warn)
    options.warn(message);
  else
    std::cerr << message << std::endl;
}

struct StoreCore : TxnContext {
  std::shared_ptr<BlobCache> cache;  // null: reads go to storage
  StoreOptions options;

  void Warn(const std::string& message) const { WarnUser(options, message); }
};

}  // namespace blobtable::internal

#endif  // BLOBTABLE_KV_STORE_CORE_H_
