// SPDX-License-Identifier: Apache-2.0
// The backends every suite runs on, described once: the local store (a
// directory, the fake clock), and Azurite with each HTTP transport (a
// connection string, the server's own time). A suite takes a Backend as its
// parameter and opens its stores through OpenBackendBlobStore or
// OpenBackendStore; wrappers (a cache, fault injection) stack onto a backend
// with With(), and the suites run unchanged on the result.
#ifndef BLOBTABLE_TESTS_BACKEND_H_
#define BLOBTABLE_TESTS_BACKEND_H_

#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "blobtable/blob_store.h"
#include "blobtable/options.h"
#include "blobtable/store.h"

namespace blobtable::testing {

struct Backend {
  using Wrap = std::function<std::shared_ptr<BlobStore>(std::shared_ptr<BlobStore>)>;

  // The test-name suffix: Local, Azurite_curl, Azurite_cpprest (+ "_" and
  // the name of each wrapper stacked with With()).
  std::string name;
  // Azurite's HTTP transport ("curl" or "cpprest"); empty for the local store.
  std::string transport;
  // Wrappers stacked onto the backend's blob store, innermost first; the
  // suite's own wrapper (StoreOptions::wrap_blob_store) goes outside them.
  Wrap wrap;
  // Stores read through the local cache (one directory for the program);
  // off otherwise, so that plain backends count only storage requests.
  bool cache = false;
  // Transactions commit as one atomic batch (TestingHooks::atomic_commits:
  // the local store's own way); off: through the lease coordinator, whose
  // protocol the suites test on the local store with the fake clock (and a
  // store opened with atomic_commits off uses it on any backend).
  bool atomic = false;

  bool azurite() const { return !transport.empty(); }
  // The local store runs on the suite's fake clock; a server keeps its own
  // time, so tests that move time skip there.
  bool fake_clock() const { return !azurite(); }
  // Where its stores live: one directory for the whole test program (each
  // store in its own container), or Azurite's connection string (Azurite is
  // started on first use; if it cannot start, the test fails and this is
  // empty).
  std::string location() const;
  // This backend with `wrap` stacked on top, named name + "_" + suffix.
  Backend With(const std::string& suffix, Wrap outer) const;
};

Backend LocalBackend();
// The local store committing transactions as one LMDB write transaction:
// Local_Atomic.
Backend LocalAtomicBackend();
Backend AzuriteBackend(const std::string& transport);
// Azurite read through the local cache: Azurite_<transport>_Cached.
Backend CachedAzuriteBackend(const std::string& transport);
// Azurite with each HTTP transport this build has (HttpTransportNames()),
// then `also`.
std::vector<Backend> AzuriteBackendPerTransport(std::vector<Backend> also = {});

// A container name this process has not used before: prefix-<pid>-<n>.
std::string FreshContainer(std::string_view prefix);

// The backend's blob store in options.container (a fresh one if empty),
// with the backend's wrappers applied.
Result<std::shared_ptr<BlobStore>> OpenBackendBlobStore(const Backend& backend,
                                                        StoreOptions options);
// A Store on the backend in options.container (a fresh one if empty), with
// the backend's wrappers inside options.wrap_blob_store, and its cache.
Result<std::unique_ptr<Store>> OpenBackendStore(const Backend& backend, StoreOptions options);

inline std::string PrintBackend(const ::testing::TestParamInfo<Backend>& info) {
  return info.param.name;
}
// How GoogleTest prints the parameter in its messages: the name, not bytes.
inline void PrintTo(const Backend& b, std::ostream* os) { *os << b.name; }

}  // namespace blobtable::testing

#endif  // BLOBTABLE_TESTS_BACKEND_H_
