// SPDX-License-Identifier: Apache-2.0
// Opening an Azure Blob Storage backend from a connection string. Where the
// Azure backend lives depends on the build: a shared libblobtable loads it
// on first use from a module beside itself (storage/azure_module.cc), so that
// a program that only opens embedded stores never loads the HTTP stack
// (libcurl, OpenSSL's TLS, cpprest, pugixml: about 7 ms of every CLI call);
// a static library, and the test library, have it linked in
// (storage/azure/linked_backend.cc).
#ifndef BLOBTABLE_STORAGE_AZURE_BACKEND_H_
#define BLOBTABLE_STORAGE_AZURE_BACKEND_H_

#include <memory>
#include <string_view>

#include "blobtable/blob_store.h"
#include "storage/open_blob_store.h"

namespace blobtable::internal {

// The Azure store `connection_string` names. Failures: those of
// OpenAzureBlobStore, InvalidArgument for a bad connection string or
// transport, and IOError if the backend's module cannot be loaded (a
// broken install: the message names the file and says why).
Result<std::shared_ptr<BlobStore>> OpenAzureBackend(std::string_view connection_string,
                                                    const BackendOptions& options);

// The backend's one entry point, by this name in the module (C linkage, so
// that dlsym finds it by name). Versioned: a module of another build has
// another file name and is never loaded.
extern "C" [[gnu::visibility("default")]] void blobtable_open_azure_v1(
    std::string_view connection_string, const BackendOptions* options,
    Result<std::shared_ptr<BlobStore>>* store);

}  // namespace blobtable::internal

#endif  // BLOBTABLE_STORAGE_AZURE_BACKEND_H_
