// SPDX-License-Identifier: Apache-2.0
// What a Store shares with its Tables, scans and watches (internal): the
// transaction layer's context (txn/txn_context.h) plus what only the façade
// uses: every option as given, and listings the cache may answer.
#ifndef BLOBTABLE_KV_STORE_CORE_H_
#define BLOBTABLE_KV_STORE_CORE_H_

#include <condition_variable>
#include <iostream>
#include <memory>
#include <mutex>
#include <set>
#include <string>

#include "blobtable/options.h"
#include "kv/op_metrics.h"
#include "storage/open_blob_store.h"
#include "txn/txn_context.h"

namespace blobtable::internal {

// Tells the user something went wrong that no call returned
// (StoreOptions::warn, else standard error).
inline void WarnUser(const StoreOptions& options, const std::string& message) {
  if (options.warn)
    options.warn(message);
  else
    std::cerr << message << std::endl;
}

// What opening the backend takes from `options`.
inline BackendOptions BackendOptionsOf(const StoreOptions& options,
                                       std::shared_ptr<MetricsRegistry> metrics = nullptr) {
  return BackendOptions{options.container,  options.create_if_missing,
                        options.clock,      options.request_log,
                        options.local,      options.azure,
                        std::move(metrics), options.tracer};
}

// The index drops a store runs in the background, by index table name:
// one at a time each (kv/index_admin.cc).
struct IndexDrops {
  std::mutex mu;
  std::condition_variable done;
  std::set<std::string> running;
};

struct StoreCore : TxnContext {
  StoreOptions options;
  // Shared with the copies a background drop runs on (always set).
  std::shared_ptr<IndexDrops> index_drops = std::make_shared<IndexDrops>();
  // The table API's calls and the coordination primitives counted (always
  // set by Store).
  std::shared_ptr<OpMetrics> ops;
  std::shared_ptr<CoordMetrics> coord;

  // Lists entity blobs as `policy` allows: through the cache when the store
  // has one (it may answer from its copies, stale), else from storage.
  Result<CachedList> ListEntityBlobs(const ListOptions& list, const ReadPolicy& policy) const {
    if (cache) return cache->ListCached(list, policy);
    auto page = blobs->List(list);
    if (!page.ok()) return page.status();
    return CachedList{*std::move(page), false};
  }

  void Warn(const std::string& message) const { WarnUser(options, message); }
};

// An administrative call (CreateIndex, DropIndex, CheckIndex, DropTable,
// Count, DeleteWhere): traced and logged if slow as `call`, not among the
// table API's counted calls; the queries and writes it makes are its part,
// not calls of their own (their commits are spans under it).
template <typename Fn>
auto AdminCall(const StoreCore* core, std::string_view call, std::string_view table, Fn&& fn) {
  if (core == nullptr) return fn();
  return Observed(core->observing.get(), *core->clock, call, table, [&] {
    InternalWork inside;
    return fn();
  });
}

// Where a query counts the rows it reads: null for a Table no store opened,
// and in the library's own work (an index build's, a count's walk).
inline Counter* RowsScannedCounter(const StoreCore* core) {
  return core != nullptr && core->ops && CurrentCall().counted ? &core->ops->rows_scanned()
                                                               : nullptr;
}

// Metered (kv/op_metrics.h) with the store's counters and clock, and
// observed (traced, logged if slow: util/call_observer.h) as a call on
// `table`; only `fn` for a Table that no store opened.
template <typename Fn>
auto MeteredCall(const StoreCore* core, OpKind op, std::string_view table, Fn&& fn) {
  if (core == nullptr) return fn();
  if (core->observing) [[unlikely]]
    return Observed(core->observing.get(), *core->clock, OpName(op), table, [&] {
      return Metered(core->ops.get(), core->clock, op, fn);
    });  // depth 0 still
  return Metered(core->ops.get(), core->clock, op, std::forward<Fn>(fn));
}

}  // namespace blobtable::internal

#endif  // BLOBTABLE_KV_STORE_CORE_H_
