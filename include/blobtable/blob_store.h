// SPDX-License-Identifier: Apache-2.0
// BlobStore: the storage interface every backend implements (local LMDB
// directory, Azure Blob REST). One BlobStore addresses one container.
//
// Semantics are Azure Blob Storage's (see docs/backends.md#blobstore-semantics):
// every failure carries the Code the caller should act on, plus the Azure
// error code (Status::storage_code()) and HTTP status (Status::http_status())
// that Azure would have answered, so that the same test suite runs against
// every backend.
//
// Common failures, for every call:
//   InvalidArgument  bad blob name [400 InvalidResourceName]: empty, over
//                    1,024 characters, not UTF-8, an empty, "." or ".."
//                    segment, a trailing '.', a control character, U+FFFE
//                    or U+FFFF; bad metadata [400 InvalidMetadata]: a name
//                    not a C# identifier, a value not printable ASCII or
//                    with a leading or trailing space, over 8 KiB in all;
//                    bad argument (lease duration, break period)      [400]
//   Unavailable      the backend could not be reached (retryable)
//   IOError          a local database or disk failure
// Condition failures (AccessConditions), for every call that takes them:
//   Conflict/412 ConditionNotMet    If-Match, If-Unmodified-Since failed,
//                                   or (writes) If-None-Match/If-Modified-Since
//   Conflict/409 BlobAlreadyExists  Put with If-None-Match "*" on a blob that exists
// Lease failures of writes (Put, Delete, SetMetadata), all HTTP 412:
//   Busy      LeaseIdMissing                   blob is leased, no lease id given
//   LeaseLost LeaseIdMismatchWithBlobOperation blob is leased under another id
//   LeaseLost LeaseNotPresentWithBlobOperation a lease id given, blob has no lease
//   LeaseLost LeaseLost                        a lease id given, lease expired/broken
//
// Thread-safety: implementations are safe to call from several threads at
// once. Ownership: results are returned by value; nothing is retained.
#ifndef BLOBTABLE_BLOB_STORE_H_
#define BLOBTABLE_BLOB_STORE_H_

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "blobtable/export.h"
#include "blobtable/clock.h"
#include "blobtable/storage_options.h"
#include "blobtable/status.h"

namespace blobtable {

// User metadata (x-ms-meta-*). Names follow C# identifier rules and compare
// case-insensitively in Azure; blobtable writes lowercase names only.
using Metadata = std::map<std::string, std::string>;

// ETag value meaning "any existing blob" in If-Match / If-None-Match.
inline constexpr std::string_view kAnyETag = "*";
// Lease duration meaning "never expires" (Azure's -1).
inline constexpr int kInfiniteLease = -1;
// Azure's limit on blob names, in characters.
inline constexpr size_t kMaxBlobNameChars = 1024;

enum class LeaseState { kAvailable, kLeased, kExpired, kBreaking, kBroken };
enum class LeaseStatus { kUnlocked, kLocked };
enum class LeaseDurationType { kNone, kFixed, kInfinite };

BLOBTABLE_EXPORT std::string_view LeaseStateName(LeaseState s);  // "available", "leased", ...

// Conditional-request headers. An unset field is not checked. For reads,
// they combine as Azure does: If-Match && If-Unmodified-Since &&
// (If-None-Match || If-Modified-Since); a failing If-None-Match or
// If-Modified-Since on a read is a normal "not modified" answer (HTTP 304);
// If-None-Match "*" on a read is InvalidArgument/400 UnsatisfiableCondition.
// Times compare at one-second resolution, as the HTTP headers carry them.
struct AccessConditions {
  std::optional<std::string> if_match;       // an ETag or "*"
  std::optional<std::string> if_none_match;  // an ETag or "*"
  std::optional<TimePoint> if_modified_since;
  std::optional<TimePoint> if_unmodified_since;
};

// How one lease action is made. Converts from AccessConditions, so
// RenewLease(name, id, conditions) reads as before.
struct LeaseOptions {
  LeaseOptions() = default;
  LeaseOptions(AccessConditions c) : conditions(std::move(c)) {}  // NOLINT: implicit on purpose

  AccessConditions conditions;
  // Answer by then, as ReadOptions::deadline: no attempt starts after it
  // and an attempt's timeout is cut to fit (Unavailable when it runs out;
  // the Azure backend, the local one answers at once). A holder renewing
  // or giving back a lease sets it to the lease's end by its own monotonic
  // clock, so that nobody waits on such a request past the lease.
  std::optional<SteadyTime> deadline;
};

struct BlobProperties {
  std::string etag;         // opaque, quoted: "\"0x...\""; compare byte for byte
  TimePoint last_modified;  // whole seconds
  uint64_t content_length = 0;
  // The MD5 of the body in base64, as Azure reports it (Content-MD5: the
  // service computes it for every blob uploaded whole; a blob assembled from
  // blocks may have none). Empty when not known.
  std::string content_md5;
  Metadata metadata;
  LeaseState lease_state = LeaseState::kAvailable;
  LeaseStatus lease_status = LeaseStatus::kUnlocked;
  LeaseDurationType lease_duration = LeaseDurationType::kNone;
};

// How one Get is made. Converts from AccessConditions, so Get(name,
// conditions) reads as before.
struct ReadOptions {
  ReadOptions() = default;
  ReadOptions(AccessConditions c) : conditions(std::move(c)) {}  // NOLINT: implicit on purpose

  AccessConditions conditions;
  // Answer by then: the Azure backend stops retrying and shortens its
  // request timeout to fit (Unavailable when it runs out). Unset: the
  // store's own retry budget alone.
  std::optional<SteadyTime> deadline;
  // The caller has an answer of its own should storage be out of reach (a
  // cached copy, say): a connection storage refuses ends the read at once,
  // Unavailable, instead of being retried.
  bool has_fallback = false;
};

struct GetResult {
  // True when a read condition answered 304: `data` is empty and
  // `properties` holds only etag and last_modified.
  bool not_modified = false;
  BlobProperties properties;
  std::string data;  // empty for Head
};

struct WriteOptions {
  AccessConditions conditions;
  // The lease id to present; required while the blob is leased. A Delete
  // presenting one is conditional on the lease: after an attempt whose
  // answer was lost, a retry that finds the blob gone cannot tell who
  // deleted it (OutcomeUnknown, never a guessed OK). (A Put or SetMetadata
  // with a lease id alone is not: re-sending it writes the same.)
  std::string lease_id;
  // Answer by then, as ReadOptions::deadline: no attempt starts after it
  // and an attempt's timeout is cut to fit (the Azure backend). A write
  // that relies on a lease sets it to the lease's end by the holder's own
  // monotonic clock, so that no request of it outlives the lease.
  std::optional<SteadyTime> deadline;
};

struct PutOptions : WriteOptions {
  Metadata metadata;  // replaces the blob's metadata
};

struct WriteResult {
  std::string etag;
  TimePoint last_modified;
};

struct ListOptions {
  std::string prefix;
  // Continue after a previous page: that page's next_marker. Opaque.
  std::string marker;
  // Start at the first name >= start_from (Azure's startFrom); empty: at the
  // start of the prefix. Combines with marker (both must pass).
  std::string start_from;
  int max_results = 5000;  // 1..5000
  // As ReadOptions::deadline and has_fallback (the Azure backend honours
  // them).
  std::optional<SteadyTime> deadline;
  bool has_fallback = false;
  // Fill BlobItem::data with each blob's body, read in the same snapshot as
  // the listing: honoured where traits().list_data (the local backend, where
  // it saves a read transaction a row); others ignore it.
  bool include_data = false;
};

struct BlobItem {
  std::string name;
  BlobProperties properties;        // metadata included
  std::optional<std::string> data;  // with ListOptions::include_data, where honoured
};

struct ListPage {
  std::vector<BlobItem> items;  // in byte-wise name order
  std::string next_marker;      // empty when the listing is complete
};

// A listing that goes on for more pages than this is taken as broken (a
// service handing out new markers forever) rather than followed: at 5,000
// names a page, half a billion names.
inline constexpr int kMaxListPages = 100'000;

// Moves `list` on to the page after `page`: false when the listing is done.
// Corruption once it has gone on for more than kMaxListPages pages.
inline Result<bool> NextListPage(ListOptions& list, const ListPage& page, int* pages) {
  if (page.next_marker.empty()) return false;
  if (++*pages >= kMaxListPages)
    return Status::Corruption("listing '" + list.prefix + "' did not end after " +
                              std::to_string(kMaxListPages) + " pages");
  list.marker = page.next_marker;
  return true;
}

struct LeaseResult {
  std::string lease_id;  // the lease now held (empty after release and break)
  std::string etag;
  TimePoint last_modified;
  // Break only: seconds until the lease is broken and a new one can be acquired.
  int lease_time_seconds = 0;
};

// What a backend is like, for the layers above that adapt to it.
struct BlobStoreTraits {
  // Its calls run inside this process (the local backend) rather than cost
  // a round trip: a cache, inline body copies or concurrent reads would
  // only add work there.
  bool in_process = false;
  // It implements BlobStore::CommitBatch (the local backend: one LMDB write
  // transaction), so transactions need no leases there.
  bool atomic_batch = false;
  // It honours ListOptions::include_data.
  bool list_data = false;
};

// One step of an atomic batch (BlobStore::CommitBatch).
struct BatchOp {
  enum class Kind {
    kPut,     // as Put(blob, data, {conditions, metadata})
    kDelete,  // as Delete(blob, {conditions})
    kCheck,   // writes nothing; the conditions must hold as for a Delete
              // (If-Match on a missing blob: NotFound), except that
              // If-None-Match "*" asks that the blob be absent (Conflict
              // 409 BlobAlreadyExists if not); leases do not matter
  };
  Kind kind = Kind::kPut;
  std::string blob;
  AccessConditions conditions;
  std::string data;   // kPut
  Metadata metadata;  // kPut
};

// What CommitBatch did.
struct BatchResult {
  // OK: every step was applied, in order, as one atomic change. Otherwise
  // none was, and `failed` names the step whose existence, lease or
  // conditions failed, with the status that step alone would have met (no
  // lease id is presented: a leased blob is Busy/LeaseIdMissing for a put
  // or delete); `failed` is ops.size() for a failure of the whole batch
  // (IOError, InvalidArgument for a bad name or metadata, or NotSupported).
  Status status;
  size_t failed = 0;
  // On success, one per step: the new ETag and time of a put; empty for a
  // delete or check.
  std::vector<WriteResult> writes;
};

class BLOBTABLE_EXPORT BlobStore {
 public:
  virtual ~BlobStore() = default;

  // Reads a blob with its properties. NotFound/404 BlobNotFound if missing.
  // A failing If-None-Match / If-Modified-Since gives OK with not_modified.
  // Unavailable when options.deadline passes first.
  virtual Result<GetResult> Get(std::string_view name, const ReadOptions& options) = 0;
  // Get without the content.
  virtual Result<GetResult> Head(std::string_view name, const AccessConditions& conditions) = 0;

  // Creates or replaces a block blob with `data` and `options.metadata`.
  // A lease held on the blob is kept.
  virtual Result<WriteResult> Put(std::string_view name, std::string_view data,
                                  const PutOptions& options) = 0;

  // Deletes a blob and its lease. NotFound/404 BlobNotFound if missing.
  virtual Status Delete(std::string_view name, const WriteOptions& options) = 0;

  // Lists blobs whose names start with options.prefix, in name order, with
  // metadata and lease state.
  virtual Result<ListPage> List(const ListOptions& options) = 0;

  // Replaces the metadata. NotFound/404 BlobNotFound if missing.
  virtual Result<WriteResult> SetMetadata(std::string_view name, const Metadata& metadata,
                                          const WriteOptions& options) = 0;

  // The five lease actions. All fail NotFound/404 BlobNotFound on a missing
  // blob. Conflicts with the lease state are HTTP 409:
  //   Busy      LeaseAlreadyPresent, LeaseIsBreakingAndCannotBeAcquired
  //   LeaseLost LeaseIdMismatchWithLeaseOperation, LeaseNotPresentWithLeaseOperation,
  //             LeaseIsBrokenAndCannotBeRenewed, LeaseIsBreakingAndCannotBeChanged
  // `duration_seconds` is 15..60 or kInfiniteLease; `proposed_id` may be
  // empty (the store picks a GUID). Acquiring with the id already held
  // succeeds and restarts the lease with the new duration.
  virtual Result<LeaseResult> AcquireLease(std::string_view name, int duration_seconds,
                                           std::string_view proposed_id,
                                           const LeaseOptions& options) = 0;
  virtual Result<LeaseResult> RenewLease(std::string_view name, std::string_view lease_id,
                                         const LeaseOptions& options) = 0;
  virtual Result<LeaseResult> ChangeLease(std::string_view name, std::string_view lease_id,
                                          std::string_view proposed_id,
                                          const LeaseOptions& options) = 0;
  virtual Result<LeaseResult> ReleaseLease(std::string_view name, std::string_view lease_id,
                                           const LeaseOptions& options) = 0;
  // `break_period_seconds` 0..60; unset breaks a finite lease when it would
  // have expired and an infinite one at once.
  virtual Result<LeaseResult> BreakLease(std::string_view name,
                                         std::optional<int> break_period_seconds,
                                         const LeaseOptions& options) = 0;

  // Applies `ops` as one atomic step, or none of them (BatchResult). Steps
  // name distinct blobs. Backends whose traits() say atomic_batch implement
  // it; the default answers InvalidArgument and applies nothing.
  virtual BatchResult CommitBatch(const std::vector<BatchOp>& ops);

  // Where this store lives, for messages and `blobtable locate`:
  // e.g. "local:/srv/data" or "https://account.blob.core.windows.net".
  virtual std::string Location() const = 0;
  virtual const std::string& container() const = 0;
  // Default: a remote store (every call a round trip).
  // The same for the store's whole life: a Store reads them once.
  virtual BlobStoreTraits traits() const { return {}; }
};

// Forwards every call to a target store; subclass it and override only the
// calls a wrapper changes (fault injection, request counting, logging).
class BLOBTABLE_EXPORT BlobStoreWrapper : public BlobStore {
 public:
  explicit BlobStoreWrapper(std::shared_ptr<BlobStore> target) : target_(std::move(target)) {}

  Result<GetResult> Get(std::string_view name, const ReadOptions& o) override {
    return target_->Get(name, o);
  }
  Result<GetResult> Head(std::string_view name, const AccessConditions& c) override {
    return target_->Head(name, c);
  }
  Result<WriteResult> Put(std::string_view name, std::string_view data,
                          const PutOptions& o) override {
    return target_->Put(name, data, o);
  }
  Status Delete(std::string_view name, const WriteOptions& o) override {
    return target_->Delete(name, o);
  }
  Result<ListPage> List(const ListOptions& o) override { return target_->List(o); }
  Result<WriteResult> SetMetadata(std::string_view name, const Metadata& m,
                                  const WriteOptions& o) override {
    return target_->SetMetadata(name, m, o);
  }
  Result<LeaseResult> AcquireLease(std::string_view name, int duration, std::string_view proposed,
                                   const LeaseOptions& o) override {
    return target_->AcquireLease(name, duration, proposed, o);
  }
  Result<LeaseResult> RenewLease(std::string_view name, std::string_view id,
                                 const LeaseOptions& o) override {
    return target_->RenewLease(name, id, o);
  }
  Result<LeaseResult> ChangeLease(std::string_view name, std::string_view id,
                                  std::string_view proposed, const LeaseOptions& o) override {
    return target_->ChangeLease(name, id, proposed, o);
  }
  Result<LeaseResult> ReleaseLease(std::string_view name, std::string_view id,
                                   const LeaseOptions& o) override {
    return target_->ReleaseLease(name, id, o);
  }
  Result<LeaseResult> BreakLease(std::string_view name, std::optional<int> period,
                                 const LeaseOptions& o) override {
    return target_->BreakLease(name, period, o);
  }
  BatchResult CommitBatch(const std::vector<BatchOp>& ops) override {
    return target_->CommitBatch(ops);
  }
  std::string Location() const override { return target_->Location(); }
  const std::string& container() const override { return target_->container(); }
  BlobStoreTraits traits() const override { return target_->traits(); }

 protected:
  BlobStore& target() { return *target_; }

 private:
  std::shared_ptr<BlobStore> target_;
};

// Opens the local (LMDB) blob store in `directory`, creating the directory
// if missing; `container` is made by its first write (a read of one never
// written finds nothing and changes nothing); `clock` (not owned; null:
// Clock::Real()) times
// its leases. Several stores, threads and processes may use the same
// directory at once. Fails InvalidArgument on a bad container name, IOError
// if the directory cannot be created or opened.
BLOBTABLE_EXPORT Result<std::shared_ptr<BlobStore>> OpenLocalBlobStore(
    const std::string& directory, std::string_view container = kDefaultContainer,
    const LocalOptions& options = {}, Clock* clock = nullptr);

// One damaged blob found by CheckLocalStore.
struct StoreDamage {
  std::string blob;  // its name; for a damaged record of a long name, the name's first 480 bytes
  std::string what;  // "record" (its properties are unreadable) or "data"
  std::string detail;
};

struct CheckReport {
  uint64_t blobs = 0;       // records read (each blob once)
  uint64_t unverified = 0;  // of those, written before checksums: data read, not verified
  std::vector<StoreDamage> damaged;
};

// Walks every record and every blob's data in the local store's
// `container`, verifying checksums; lists what is damaged, and goes
// on past it. A damaged blob is repaired by an unconditional Put or Delete
// of it (Table: Upsert, or Delete with "*"). Fails only if the store cannot
// be opened or read at all (Corruption for damaged files, see Open;
// NotFound for a directory that holds no store, which it never makes).
BLOBTABLE_EXPORT Result<CheckReport> CheckLocalStore(const std::string& directory,
                                                     std::string_view container = kDefaultContainer,
                                                     const LocalOptions& options = {});

}  // namespace blobtable

#endif  // BLOBTABLE_BLOB_STORE_H_
