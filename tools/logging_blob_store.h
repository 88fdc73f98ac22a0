// SPDX-License-Identifier: Apache-2.0
// The CLI's -v request log: one line a storage request, on stderr.
#ifndef BLOBTABLE_TOOLS_LOGGING_BLOB_STORE_H_
#define BLOBTABLE_TOOLS_LOGGING_BLOB_STORE_H_

#include <iosfwd>
#include <string>

#include "blobtable/options.h"

namespace blobtable::cli {

// Sets `options` up to log every request to `err`, whole lines one at a
// time (requests go out from several threads at once): an Azure store
// (`location` a connection string) logs each HTTP attempt itself, with
// retries; any other store is wrapped in a BlobStoreWrapper that logs each
// call.
void LogRequests(const std::string& location, StoreOptions& options, std::ostream& err);

}  // namespace blobtable::cli

#endif  // BLOBTABLE_TOOLS_LOGGING_BLOB_STORE_H_
