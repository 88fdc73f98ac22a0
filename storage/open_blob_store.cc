// SPDX-License-Identifier: Apache-2.0
// Store locations: a directory or a connection string, and the backend each opens.
#include "storage/open_blob_store.h"

#include <sys/stat.h>

#include "storage/azure/azure_config.h"
#include "storage/azure_backend.h"
#include "storage/local/store_files.h"
#include "util/macros.h"

namespace blobtable {

bool IsConnectionString(std::string_view location) {
  return location.substr(0, 5) != "file:" && internal::NamesAConnectionStringKey(location);
}

}  // namespace blobtable

namespace blobtable::internal {

Result<std::shared_ptr<BlobStore>> OpenBlobStore(std::string_view location,
                                                 const BackendOptions& options) {
  if (location.empty()) return Status::InvalidArgument("store location is empty");
  if (IsConnectionString(location)) {
    return OpenAzureBackend(location, options);
  } else if (location.substr(0, 5) != "file:" && location.find(';') != std::string_view::npos &&
             location.find('=') != std::string_view::npos) {
    // Never make a directory named after a mistyped connection string (it
    // may hold an account key).
    return Status::InvalidArgument(
        "store location looks like a connection string (Key=Value;...) but names no key "
        "blobtable knows (UseDevelopmentStorage, AccountName, AccountKey, BlobEndpoint, ...); "
        "for a directory whose name holds ';' and '=', write file:DIRECTORY");
  } else {
    std::string dir(location.substr(0, 5) == "file:" ? location.substr(5) : location);
    struct stat st;
    BT_RETURN_IF_ERROR(RefuseAFile(dir));
    if (!options.create_if_missing && stat((dir + "/data.mdb").c_str(), &st) != 0)
      return Status::NotFound("no store at " + dir + " (and this open makes none)");
    LocalOptions local_options = options.local;
    local_options.create_container = local_options.create_container && options.create_if_missing;
    auto local = OpenLocalBlobStore(dir, options.container, local_options, options.clock);
    if (!local.ok()) return local;
    return LogRequests(*std::move(local), options.request_log, options.clock);  // none: as is
  }
}

}  // namespace blobtable::internal
