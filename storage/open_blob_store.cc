// SPDX-License-Identifier: Apache-2.0
// Store locations: a directory or a connection string, and the backend each opens.
#include "storage/open_blob_store.h"

#include <sys/stat.h>

#include <algorithm>
#include <fstream>

#include "storage/azure/azure_blob_store.h"
#include "storage/azure/azure_config.h"

namespace blobtable {

bool IsConnectionString(std::string_view location) {
  return location.substr(0, 5) != "file:" && internal::NamesAConnectionStringKey(location);
}

}  // namespace blobtable

namespace blobtable::internal {

namespace {

Result<std::shared_ptr<BlobStore>> OpenAzure(std::string_view connection_string,
                                             const BackendOptions& options) {
  auto config = ParseConnectionString(connection_string);
  if (!config.ok()) return config.status();
  AzureStoreOptions o;
  o.config = std::move(*config);
  o.container = options.container;
  const AzureOptions& azure = options.azure;
  if (!azure.http_transport.empty()) o.config.transport = azure.http_transport;
  if (!azure.ca_file.empty()) o.config.ca_file = azure.ca_file;
  TransportOptions t;
  t.ca_file = o.config.ca_file;
  // Both transports read it only when a TLS connection is made: say so now,
  // once, rather than as a failure to connect (retried as Unavailable).
  if (!t.ca_file.empty() && !std::ifstream(t.ca_file).good())
    return Status::InvalidArgument("CaFile '" + t.ca_file + "' cannot be read");
  if (o.config.transport == "curl") {
    o.transport = MakeCurlTransport(t);
  } else if (o.config.transport == "cpprest") {
    o.transport = MakeCpprestTransport(t);
    if (o.transport == nullptr)
      return Status::InvalidArgument(
          "this blobtable was built without the cpprest HTTP transport "
          "(BLOBTABLE_WITH_CPPREST off); use HttpTransport=curl");
  } else {
    return Status::InvalidArgument("unknown HTTP transport '" + o.config.transport +
                                   "' (curl or cpprest)");
  }
  o.retry = azure.retry;
  o.retry.max_attempts = std::max(1, o.retry.max_attempts);
  o.request_timeout = azure.request_timeout;
  o.request_log = options.request_log;
  o.clock = options.clock;
  o.create_container = options.create_if_missing;
  return OpenAzureBlobStore(std::move(o));
}

}  // namespace

Result<std::shared_ptr<BlobStore>> OpenBlobStore(std::string_view location,
                                                 const BackendOptions& options) {
  if (location.empty()) return Status::InvalidArgument("store location is empty");
  if (IsConnectionString(location)) {
    return OpenAzure(location, options);
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
    if (!options.create_if_missing && stat((dir + "/data.mdb").c_str(), &st) != 0)
      return Status::NotFound("no store at " + dir + " (create_if_missing is off)");
    auto local = OpenLocalBlobStore(dir, options.container, options.local, options.clock);
    if (!local.ok()) return local;
    return LogRequests(*std::move(local), options.request_log, options.clock);  // none: as is
  }
}

}  // namespace blobtable::internal
