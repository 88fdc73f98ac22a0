// SPDX-License-Identifier: Apache-2.0
#include "txn/txn_context.h"

#include "util/macros.h"

namespace blobtable::internal {

Result<CachedGet> TxnContext::ReadEntityBlob(const std::string& blob, const ReadPolicy& policy,
                                             std::string_view listed_etag) const {
  if (cache) return cache->Read(blob, CachedReadOptions{policy, std::string(listed_etag), {}});
  if (policy.mode == ReadPolicy::Mode::kOffline && !blobs->traits().in_process)
    return Status::FromStorage(Code::kNotFound, 404, "BlobNotFound",
                               "blob '" + blob + "': an offline read, and this store has no cache");
  BT_ASSIGN_OR_RETURN(GetResult got, blobs->Get(blob, ReadOptions{}));
  return CachedGet{std::move(got), false};
}

}  // namespace blobtable::internal
