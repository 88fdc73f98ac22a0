#include "blobtable/store.h"

#include <array>
#include <fstream>

#include "kv/blob_naming.h"
#include "kv/store_core.h"
#include "remote/azure_blob_store.h"
#include "remote/azure_config.h"
#include "txn/recovery.h"

#include <algorithm>

namespace blobtable {

bool IsConnectionString(std::string_view location) {
  return location.substr(0, 5) != "file:" && NamesAConnectionStringKey(location);
}

namespace {

Result<std::shared_ptr<BlobStore>> OpenAzure(std::string_view connection_string,
                                             const StoreOptions& options) {
  auto config = ParseConnectionString(connection_string);
  if (!config.ok()) return config.status();
  AzureStoreOptions o;
  o.config = std::move(*config);
  o.container = options.container;
  if (!options.http_transport.empty()) o.config.transport = options.http_transport;
  if (!options.ca_file.empty()) o.config.ca_file = options.ca_file;
  TransportOptions t;
  t.ca_file = o.config.ca_file;
  // Both transports read it only when a TLS connection is made: say so now,
  // once, rather than as a failure to connect (retried as Unavailable).
  if (!t.ca_file.empty() && !std::ifstream(t.ca_file).good())
    return Status::InvalidArgument("CaFile '" + t.ca_file + "' cannot be read");
  if (o.config.transport == "curl") o.transport = MakeCurlTransport(t);
  else if (o.config.transport == "cpprest") o.transport = MakeCpprestTransport(t);
  else return Status::InvalidArgument("unknown HTTP transport '" + o.config.transport +
                                      "' (curl or cpprest)");
  o.retry.max_attempts = std::max(1, options.max_attempts);
  o.retry.initial_delay = options.retry_initial_delay;
  o.retry.max_delay = options.retry_max_delay;
  o.retry.max_total = options.retry_max_total;
  o.request_timeout = options.request_timeout;
  o.request_log = options.request_log;
  o.clock = options.clock;
  return OpenAzureBlobStore(std::move(o));
}

}  // namespace

Result<std::unique_ptr<Store>> Store::Open(std::string_view location,
                                           const StoreOptions& options) {
  if (location.empty()) return Status::InvalidArgument("store location is empty");
  Result<std::shared_ptr<BlobStore>> blobs = Status::Internal("unset");
  if (IsConnectionString(location)) {
    blobs = OpenAzure(location, options);
  } else if (location.substr(0, 5) != "file:" &&
             location.find(';') != std::string_view::npos &&
             location.find('=') != std::string_view::npos) {
    // Never make a directory named after a mistyped connection string (it
    // may hold an account key).
    return Status::InvalidArgument(
        "store location looks like a connection string (Key=Value;...) but names no key "
        "blobtable knows (UseDevelopmentStorage, AccountName, AccountKey, BlobEndpoint, ...); "
        "for a directory whose name holds ';' and '=', write file:DIRECTORY");
  } else {
    std::string dir(location.substr(0, 5) == "file:" ? location.substr(5) : location);
    blobs = OpenLocalBlobStore(dir, options);
  }
  if (!blobs.ok()) return blobs.status();
  std::shared_ptr<BlobStore> backend = std::move(*blobs);
  if (options.wrap_blob_store) backend = options.wrap_blob_store(std::move(backend));
  return FromBlobStore(std::move(backend), options);
}

std::unique_ptr<Store> Store::FromBlobStore(std::shared_ptr<BlobStore> blobs,
                                            const StoreOptions& options) {
  auto core = std::make_shared<internal::StoreCore>();
  core->blobs = std::move(blobs);
  core->options = options;
  core->clock = options.clock != nullptr ? options.clock : Clock::Real();
  return std::unique_ptr<Store>(new Store(std::move(core)));
}

Result<Table> Store::OpenTable(std::string_view name) const {
  Status s = naming::ValidateTableName(name);
  if (!s.ok()) return s;
  return Table(core_, std::string(name));
}

std::unique_ptr<Transaction> Store::Begin(const TransactionOptions& options) const {
  return std::unique_ptr<Transaction>(new Transaction(core_, options));
}

Result<int> Store::Recover() const {
  return RecoverAbandoned(core_->Resolver());
}

BlobStore& Store::blob_store() const { return *core_->blobs; }
const StoreOptions& Store::options() const { return core_->options; }

}  // namespace blobtable
