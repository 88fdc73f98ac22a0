#include "blobtable/store.h"

#include "model/blob_naming.h"
#include "remote/open_blob_store.h"
#include "txn/recovery.h"
#include "txn/store_core.h"

namespace blobtable {

Result<std::unique_ptr<Store>> Store::Open(std::string_view location,
                                           const StoreOptions& options) {
  auto blobs = OpenBlobStore(location, options);
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
