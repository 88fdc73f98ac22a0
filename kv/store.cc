#include "blobtable/store.h"

#include <array>

#include "kv/blob_naming.h"
#include "kv/store_core.h"

namespace blobtable {

bool IsConnectionString(std::string_view location) {
  static constexpr std::array<std::string_view, 7> kKeys = {
      "UseDevelopmentStorage=", "DefaultEndpointsProtocol=", "AccountName=", "AccountKey=",
      "BlobEndpoint=",          "SharedAccessSignature=",    "EndpointSuffix="};
  for (std::string_view key : kKeys)
    if (location.substr(0, key.size()) == key || location.find(";" + std::string(key)) !=
                                                      std::string_view::npos)
      return true;
  return false;
}

Result<std::unique_ptr<Store>> Store::Open(std::string_view location,
                                           const StoreOptions& options) {
  if (location.empty()) return Status::InvalidArgument("store location is empty");
  if (IsConnectionString(location))
    return Status::InvalidArgument(
        "this build of blobtable has no Azure Blob backend yet; use a directory for the "
        "embedded store");
  std::string dir(location.substr(0, 5) == "file:" ? location.substr(5) : location);
  auto blobs = OpenLocalBlobStore(dir, options);
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

BlobStore& Store::blob_store() const { return *core_->blobs; }
const StoreOptions& Store::options() const { return core_->options; }

}  // namespace blobtable
