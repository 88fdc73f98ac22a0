// SPDX-License-Identifier: Apache-2.0
// The Azure backend linked in (a static library, the test library, the
// module itself): OpenAzureBackend calls it directly.
#include "storage/azure_backend.h"

namespace blobtable::internal {

Result<std::shared_ptr<BlobStore>> OpenAzureBackend(std::string_view connection_string,
                                                    const BackendOptions& options) {
  Result<std::shared_ptr<BlobStore>> store = Status::Internal("not opened");
  blobtable_open_azure_v1(connection_string, &options, &store);
  return store;
}

}  // namespace blobtable::internal
