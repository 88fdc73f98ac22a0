// SPDX-License-Identifier: Apache-2.0
// The Azure backend's entry point (storage/azure_backend.h): a connection
// string and the store's options to an AzureBlobStore with its transport.
#include <algorithm>
#include <fstream>

#include "storage/azure/azure_blob_store.h"
#include "storage/azure/azure_config.h"
#include "storage/azure_backend.h"

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
  o.metrics = options.metrics;
  o.tracer = options.tracer;
  // A shared library of its own: its requests belong to the calls of the
  // library that opened it (a null source: the same module).
  if (options.call_source != &ThisModulesCall) call_source.store(options.call_source);
  return OpenAzureBlobStore(std::move(o));
}

}  // namespace

extern "C" void blobtable_open_azure_v1(std::string_view connection_string,
                                        const BackendOptions* options,
                                        Result<std::shared_ptr<BlobStore>>* store) {
  *store = OpenAzure(connection_string, *options);
}

}  // namespace blobtable::internal
