// SPDX-License-Identifier: Apache-2.0
#include "tests/backend.h"

#include <unistd.h>

#include <atomic>

#include "kv/store_core.h"
#include "storage/open_blob_store.h"
#include "tests/azurite.h"
#include "tests/test_util.h"
#include "testing/hooks.h"

namespace blobtable::testing {

std::string Backend::location() const {
  if (!azurite()) {
    static TempDir* dir = new TempDir;  // kept until the program exits
    return dir->path();
  }
  Azurite* a = Azurite::Get();
  return a == nullptr ? "" : a->ConnectionString(transport);
}

Backend Backend::With(const std::string& suffix, Wrap outer) const {
  Backend b = *this;
  b.name += "_" + suffix;
  b.wrap = [inner = wrap, outer = std::move(outer)](std::shared_ptr<BlobStore> s) {
    return outer(inner ? inner(std::move(s)) : std::move(s));
  };
  return b;
}

Backend LocalBackend() { return Backend{"Local", "", nullptr}; }
Backend LocalAtomicBackend() {
  Backend b = LocalBackend();
  b.name = "Local_Atomic";
  b.atomic = true;
  return b;
}
Backend AzuriteBackend(const std::string& transport) {
  return Backend{"Azurite_" + transport, transport, nullptr};
}
Backend CachedAzuriteBackend(const std::string& transport) {
  Backend b = AzuriteBackend(transport);
  b.name += "_Cached";
  b.cache = true;
  return b;
}

std::vector<Backend> AzuriteBackendPerTransport(std::vector<Backend> also) {
  std::vector<Backend> backends;
  for (const std::string& transport : HttpTransportNames())
    backends.push_back(AzuriteBackend(transport));
  backends.insert(backends.end(), also.begin(), also.end());
  return backends;
}

std::string FreshContainer(std::string_view prefix) {
  static std::atomic<int> n{0};
  return std::string(prefix) + "-" + std::to_string(getpid()) + "-" + std::to_string(++n);
}

Result<std::shared_ptr<BlobStore>> OpenBackendBlobStore(const Backend& backend,
                                                        StoreOptions options) {
  std::string location = backend.location();
  if (location.empty()) return Status::Unavailable("backend " + backend.name + " is not running");
  if (options.container.empty()) options.container = FreshContainer("blobs");
  auto store = OpenBlobStore(location, internal::BackendOptionsOf(options));
  if (!store.ok() || !backend.wrap) return store;
  return backend.wrap(std::move(*store));
}

Result<std::unique_ptr<Store>> OpenBackendStore(const Backend& backend, StoreOptions options) {
  std::string location = backend.location();
  if (location.empty()) return Status::Unavailable("backend " + backend.name + " is not running");
  if (options.container.empty()) options.container = FreshContainer("store");
  options.cache.enabled = backend.cache;
  options = internal::WithAtomicCommits(
      options, internal::HooksOf(options).atomic_commits && backend.atomic);
  if (backend.cache) {
    static TempDir* dir = new TempDir;  // kept until the program exits
    options.cache.directory = dir->path() + "/cache";
  }
  if (backend.wrap) {
    options.wrap_blob_store = [inner = backend.wrap, outer = std::move(options.wrap_blob_store)](
                                  std::shared_ptr<BlobStore> s) {
      s = inner(std::move(s));
      return outer ? outer(std::move(s)) : s;
    };
  }
  return Store::Open(location, options);
}

}  // namespace blobtable::testing
