// SPDX-License-Identifier: Apache-2.0
#include "blobtable/store.h"

#include <algorithm>
#include <iostream>

#include "cache/caching_blob_store.h"
#include "testing/hooks.h"

#include "model/blob_naming.h"
#include "model/index_naming.h"
#include "storage/local/local_files.h"
#include "storage/open_blob_store.h"
#include "txn/recovery.h"
#include "kv/retry_loop.h"
#include "kv/store_core.h"
#include "cache/cache_metrics.h"
#include "util/metric_catalog.h"
#include "txn/index_upkeep.h"
#include "txn/txn_buffer.h"
#include "util/macros.h"
#include "util/random.h"

namespace blobtable {

namespace {

// The cache an Azure store reads through (null: none, or none could be
// opened: the store works without it, after one warning).
std::shared_ptr<internal::BlobCache> OpenCache(std::string_view location,
                                               const StoreOptions& options) {
  if (!options.cache.enabled || !IsConnectionString(location)) return nullptr;
  std::string dir =
      options.cache.directory.empty() ? DefaultCacheDirectory() : options.cache.directory;
  auto warn = [options](const std::string& m) { internal::WarnUser(options, m); };
  auto cache = internal::BlobCache::Open(
      dir, options.cache.max_bytes, options.clock != nullptr ? options.clock : Clock::Real(), warn);
  if (!cache.ok()) {
    warn("blobtable: reading without the local cache: " + cache.status().ToString());
    return nullptr;
  }
  return *cache;
}

// The background finishing's backlog and lag (Store::Metrics).
void CountFinishing(internal::MetricsRegistry& metrics,
                    const std::shared_ptr<internal::Finisher>& finisher) {
  finisher->CountLagIn(&metrics.AddHistogram(internal::metric::kTxnFinishingLagSeconds));
  // Weak: the registry may outlive the store (a backend holds it too).
  std::weak_ptr<internal::Finisher> weak = finisher;
  metrics.AddReader(internal::metric::kTxnFinishingBacklog, {}, [weak] {
    auto f = weak.lock();
    return f ? static_cast<double>(f->backlog().jobs) : 0.0;
  });
}

// The tracer and the slow-call log, or null for a store with neither.
std::shared_ptr<const internal::Observing> ObservingOf(const StoreOptions& options) {
  if (!options.tracer && !options.slow_calls.threshold) return nullptr;
  auto observing = std::make_shared<internal::Observing>();
  observing->tracer = options.tracer;
  if (options.slow_calls.threshold) {
    observing->slow_threshold = options.slow_calls.threshold;
    observing->slow_log = options.slow_calls.sink;
    if (!observing->slow_log)
      observing->slow_log = [options](const std::string& line) {
        internal::WarnUser(options, line);
      };
  }
  return observing;
}

}  // namespace

Result<std::unique_ptr<Store>> Store::Open(std::string_view location, const StoreOptions& options) {
  // A NUL would end the path where the system reads it: the store (or
  // cache) would be made somewhere else than the caller named.
  if (location.find('\0') != std::string_view::npos)
    return Status::InvalidArgument("the location holds a NUL byte");
  if (options.cache.directory.find('\0') != std::string::npos)
    return Status::InvalidArgument("the cache directory holds a NUL byte");
  // Each is added to a clock's time in nanoseconds: bounded, that cannot overflow.
  if (options.azure.request_timeout > kMaxDuration)
    return Status::InvalidArgument("AzureOptions::request_timeout is above 10 years");
  if (options.cache.read_policy.max_stale > kMaxDuration)
    return Status::InvalidArgument("the read policy's max_stale is above 10 years");
  auto metrics = std::make_shared<internal::MetricsRegistry>();
  auto blobs = internal::OpenBlobStore(location, internal::BackendOptionsOf(options, metrics));
  if (!blobs.ok()) return blobs.status();
  std::shared_ptr<BlobStore> backend = std::move(*blobs);
  const bool batches = backend->traits().atomic_batch;
  if (options.wrap_blob_store) {
    backend = options.wrap_blob_store(std::move(backend));
    if (backend == nullptr)
      return Status::InvalidArgument("StoreOptions::wrap_blob_store returned no store");
  }
  if (std::shared_ptr<internal::BlobCache> cache = OpenCache(location, options)) {
    internal::CachingOptions c;
    c.clock = options.clock;
    c.stale_if_error_deadline = options.cache.stale_if_error_deadline;
    c.unreachable_interval = options.cache.unreachable_interval;
    c.cacheable = internal::naming::IsEntityBlobName;
    backend = std::make_shared<internal::CachingBlobStore>(std::move(backend), std::move(cache),
                                                           std::move(c));
  }
  std::unique_ptr<Store> store = Make(std::move(backend), options, std::move(metrics));
  // Every store of a local directory commits in batches, each checking the
  // index definitions it followed: an index is created or dropped there
  // without the grace (docs/indexes.md#building-online), which a store
  // committing through the lease coordinator beside them needs. Judged on
  // the traits the store read, the ones it commits by.
  if (batches && !store->core_->atomic_batch)
    return Status::InvalidArgument(
        "StoreOptions::wrap_blob_store returned a store that hides the local store's atomic "
        "batches (traits().atomic_batch): derive the wrapper from BlobStoreWrapper, or forward "
        "traits() and CommitBatch");
  return store;
}

std::unique_ptr<Store> Store::FromBlobStore(std::shared_ptr<BlobStore> blobs,
                                            const StoreOptions& options) {
  return Make(std::move(blobs), options, std::make_shared<internal::MetricsRegistry>());
}

std::unique_ptr<Store> Store::Make(std::shared_ptr<BlobStore> blobs, const StoreOptions& options,
                                   std::shared_ptr<internal::MetricsRegistry> metrics) {
  auto core = std::make_shared<internal::StoreCore>();
  core->blobs = std::move(blobs);
  // A stack topped by the cache (Open's, or a test's): entity reads go
  // through its read entry point.
  core->cache = std::dynamic_pointer_cast<internal::CachingBlobStore>(core->blobs);
  core->in_place = dynamic_cast<internal::InPlaceReader*>(core->blobs.get());
  core->options = options;
  core->clock = options.clock != nullptr ? options.clock : Clock::Real();
  core->txn_lease_seconds = options.txn_lease_seconds;
  core->busy_timeout = options.busy_timeout;
  core->max_merge_attempts = options.max_merge_attempts;
  const internal::TestingHooks hooks = internal::HooksOf(options);
  core->atomic_commits = hooks.atomic_commits;

  // Read once: how the store commits and reads must not change under it.
  const BlobStoreTraits traits = core->blobs->traits();
  core->atomic_batch = traits.atomic_batch;
  const bool in_process = traits.in_process;
  core->inline_body_max = in_process ? 0 : options.inline_body_max_bytes;
  core->parallel_reads = in_process ? 1 : std::max(1, options.max_parallel_reads);
  if (options.finish_in_background) core->finisher = std::make_shared<internal::Finisher>();
  core->rewrites = std::make_shared<internal::Rewrites>();
  core->schemas = std::make_shared<internal::SchemaCache>(
      internal::SchemaTimes::DividedBy(hooks.index_time_divisor));
  unsigned first_stripe = options.short_lived ? 0 : static_cast<unsigned>(internal::RandomU64());
  if (hooks.first_lock_stripe >= 0) first_stripe = static_cast<unsigned>(hooks.first_lock_stripe);
  core->lock_stripes = std::make_shared<internal::LockStripes>(first_stripe);
  core->metrics = std::move(metrics);
  core->ops = std::make_shared<internal::OpMetrics>(*core->metrics);
  core->coord = std::make_shared<internal::CoordMetrics>(*core->metrics);
  core->txn_metrics = std::make_shared<internal::TxnMetrics>(*core->metrics);
  core->observing = ObservingOf(options);
  core->commits_in_flight = std::make_shared<internal::CommitsInFlight>();
  if (core->finisher) CountFinishing(*core->metrics, core->finisher);
  if (core->cache) internal::CountCache(*core->metrics, core->cache->shared_cache());
  if (dynamic_cast<internal::LocalFiles*>(core->blobs.get()) != nullptr)
    internal::CountLocalFiles(*core->metrics, core->blobs);
  return std::unique_ptr<Store>(new Store(std::move(core)));
}

Status ValidateTableName(std::string_view name) {
  return internal::naming::ValidateTableName(name);
}

Result<Table> Store::OpenTable(std::string_view name) const {
  Status s = internal::naming::ValidateTableName(name);
  if (!s.ok()) return s;
  return Table(core_, std::string(name));
}

Result<Transaction> Store::Begin(const TransactionOptions& options) const {
  BT_RETURN_IF_ERROR(internal::ValidateOptions(options));
  return Transaction(core_, options);
}

Result<std::vector<CommittedWrite>> Store::RunTransaction(const TransactionFn& fn,
                                                          const RetryPolicy& policy,
                                                          const TransactionOptions& options,
                                                          int* attempts) const {
  if (attempts != nullptr) *attempts = 0;
  BT_RETURN_IF_ERROR(ValidateRetryPolicy(policy));
  BT_RETURN_IF_ERROR(internal::ValidateOptions(options));
  if (!fn) return Status::InvalidArgument("Store::RunTransaction needs a function");
  return internal::WithRetries(
      *core_->clock, policy, attempts, [&](bool* final) -> Result<std::vector<CommittedWrite>> {
        Transaction txn(core_, options);
        Status built = fn(txn);
        if (!built.ok()) {
          txn.Abort();
          return built;
        }
        auto committed = txn.Commit();
        // An insert of what exists: no retry helps.
        *final = committed.status().storage_code() == internal::kEntityAlreadyExists;
        return committed;
      });
}

Result<std::vector<std::string>> Store::ListTables() const {
  // One name a listing, then on past that table's blobs: a table costs one
  // listing however many entities it holds.
  std::vector<std::string> tables;
  ListOptions list;
  list.prefix = internal::naming::AllTablesPrefix();
  list.max_results = 1;
  for (int pages = 0;;) {
    auto page = core_->blobs->List(list);
    if (!page.ok()) return page.status().WithContext("listing tables");
    if (page->items.empty()) {
      auto next = NextListPage(list, *page, &pages);  // an empty page may still go on
      if (!next.ok()) return next.status().WithContext("listing tables");
      if (!*next) break;
      continue;
    }
    auto table = internal::naming::TableOf(page->items.front().name);
    if (!table)
      return Status::Corruption("listing tables: blob '" + page->items.front().name +
                                "' is not a table's");
    // Entity blobs sort before a table's locks: no entity first, none at all.
    if (table->entity && !internal::naming::IsHiddenTable(table->table))
      tables.push_back(table->table);
    list.marker.clear();
    list.start_from = internal::naming::AfterTable(table->table);
    if (++pages >= kMaxListPages) return Status::Corruption("listing tables did not end");
  }
  return tables;
}

Result<int> Store::Recover(bool discard_damaged) const {
  BT_ASSIGN_OR_RETURN(RecoveryReport report, RecoverAndReport(discard_damaged));
  return report.resolved;
}

Result<RecoveryReport> Store::RecoverAndReport(bool discard_damaged) const {
  RecoverOptions o;
  o.discard_damaged = discard_damaged;
  return RecoverAndReport(o);
}

Result<RecoveryReport> Store::RecoverAndReport(const RecoverOptions& options) const {
  std::vector<internal::InFlightTxn> in_flight;
  RecoveryReport report;
  auto resolved = internal::Observed(core_->observing.get(), *core_->clock, "recover", "", [&] {
    return internal::RecoverAbandoned(core_->Resolver(), options.discard_damaged,
                                      options.scan_everything, &in_flight);
  });
  const Code code = resolved.ok() ? Code::kOk : resolved.status().code();
  core_->metrics->AddCounter(internal::metric::kRecoveries, {{"code", std::string(CodeName(code))}})
      .Add();
  if (!resolved.ok()) return resolved.status();
  report.resolved = *resolved;
  core_->metrics->AddCounter(internal::metric::kRecoveredTxns)
      .Add(static_cast<uint64_t>(*resolved));
  for (internal::InFlightTxn& t : in_flight)
    report.in_flight.push_back({std::move(t.txn_id), std::move(t.blobs)});
  return report;
}

void Store::WaitForFinishing() const {
  if (core_->finisher) core_->finisher->Drain();
}

Store::~Store() {
  WaitForFinishing();
  // What MetricsSource reads from now on; the cache and the data file close
  // with the store, not with the last copy of that function.
  core_->metrics->Freeze();
}

BlobStore& Store::blob_store() const { return *core_->blobs; }

Result<CacheStats> Store::cache_stats() const {
  if (!core_->cache) return Status::NotFound("this store reads without a cache");
  return core_->cache->cache().Stats();
}
const StoreOptions& Store::options() const { return core_->options; }

MetricsSnapshot Store::Metrics() const { return core_->metrics->Snapshot(); }

std::function<MetricsSnapshot()> Store::MetricsSource() const {
  return [metrics = core_->metrics] { return metrics->Snapshot(); };
}

internal::CoordMetrics& Store::coord_metrics() const { return *core_->coord; }

}  // namespace blobtable
