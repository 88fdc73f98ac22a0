// SPDX-License-Identifier: Apache-2.0
// The local backend: a BlobStore in a directory, on LMDB.
//
// Every call is one LMDB transaction, so each is atomic and durable on return
// (LMDB's default sync), and writers are serialized across threads and
// processes by LMDB's writer lock. Lease expiry uses absolute wall-clock
// times from the injected Clock, so every process sees the same expiry.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <functional>

#include "blobtable/blob_store.h"
#include "storage/local/lmdb_env.h"
#include "util/digest.h"
#include "util/macros.h"
#include "util/random.h"
#include "storage/in_place.h"
#include "storage/local/local_files.h"
#include "storage/local/store_files.h"
#include "storage/local/blob_record.h"
#include "storage/conditions.h"
#include "storage/lease_rules.h"
#include "storage/storage_errors.h"
#include "util/stored_format.h"

namespace blobtable::internal {
namespace {

constexpr size_t kMaxLocalBlobBytes = 256u << 20;  // a policy: entities need 1 MiB

int64_t ToMs(TimePoint t) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch()).count();
}
TimePoint FromSeconds(int64_t s) { return TimePoint(std::chrono::seconds(s)); }

Status NotFound(std::string_view name) {
  return StorageError(404, "BlobNotFound", "the blob '" + std::string(name) + "' does not exist");
}

Status MigrateBuckets(LmdbEnv& env, MDB_dbi blobs, MDB_dbi meta, const std::string& container);

class LocalBlobStore final : public BlobStore, public InPlaceReader, public LocalFiles {
 public:
  LmdbEnv& lmdb() const override { return *env_; }
  LocalBlobStore(std::shared_ptr<LmdbEnv> env, MDB_dbi meta, std::string container,
                 bool create_container, Clock* clock)
      : env_(std::move(env)),
        meta_(meta),
        container_(std::move(container)),
        create_container_(create_container),
        clock_(clock),
        boot_tag_(lease::BootTagOf(clock->BootId())) {}
  ~LocalBlobStore() override {
    if (have_databases_) {
      env_->ReleaseDatabase(kContainerDbPrefix + container_);
      env_->ReleaseDatabase(kDataDbPrefix + container_);
    }
    env_->ReleaseDatabase(kMetaDb);
  }

  // The container's databases, opened (and made, if `create` and they do
  // not exist) before the first read or write that needs them, which begins
  // its transaction after (LMDB's transactions see only the handles opened
  // before they began). A container nobody wrote to is made by its first
  // write: a read of it finds nothing and writes nothing (one made by a
  // read under a mistyped or damaged name was then checked clean: the
  // review of issue 57). NotFound if it does not exist and `create` is
  // false.
  Status Databases(bool create) {
    if (have_databases_.load(std::memory_order_acquire)) return Status::OK();
    std::lock_guard<std::mutex> lock(databases_mu_);
    if (have_databases_.load(std::memory_order_relaxed)) return Status::OK();
    const std::string names[2] = {kContainerDbPrefix + container_, kDataDbPrefix + container_};
    auto blobs = env_->Database(names[0], /*create=*/false);
    if (blobs.status().IsNotFound() && create && !create_container_)
      return Status::NotFound("the local store " + env_->directory() + " holds no container '" +
                              container_ + "', and this store makes none (create_if_missing off)");
    if (blobs.status().IsNotFound() && create) blobs = env_->Database(names[0], /*create=*/true);
    if (!blobs.ok()) return blobs.status();
    auto data = env_->Database(names[1], create);
    Status s = data.status();
    if (s.ok()) s = MigrateBuckets(*env_, *blobs, meta_, container_);
    if (!s.ok()) {
      env_->ReleaseDatabase(names[0]);
      if (data.ok()) env_->ReleaseDatabase(names[1]);
      return s;
    }
    blobs_ = *blobs;
    data_ = *data;
    have_databases_.store(true, std::memory_order_release);
    return Status::OK();
  }
  // True if the container has no databases (nobody wrote to it): a read
  // finds nothing.
  Result<bool> NoContainer() {
    Status s = Databases(/*create=*/false);
    if (s.IsNotFound()) return true;
    BT_RETURN_IF_ERROR(s);
    return false;
  }

  // No deadline or fallback applies, here or in the lease actions: nothing
  // here is further away than a cache.
  Result<GetResult> Get(std::string_view name, const ReadOptions& o) override {
    return Read(name, o.conditions, /*with_data=*/true);
  }
  Result<GetResult> Head(std::string_view name, const AccessConditions& c) override {
    return Read(name, c, /*with_data=*/false);
  }

  Result<WriteResult> Put(std::string_view name, std::string_view data,
                          const PutOptions& o) override {
    BT_RETURN_IF_ERROR(CheckPut(data, o.metadata));
    BT_ASSIGN_OR_RETURN(bool none, NoContainer());
    if (none) {  // made by this put if it succeeds (Write validates the name otherwise)
      BT_RETURN_IF_ERROR(ValidateBlobName(name));
      lease::LeaseRecord lease;
      BT_RETURN_IF_ERROR(PutAllowed(std::nullopt, o.conditions, o.lease_id, LeaseMs(), lease));
      BT_RETURN_IF_ERROR(Databases(/*create=*/true));
    }
    WriteResult out;
    const OnDamage damage = Unconditional(o.conditions, o.lease_id) ? kReplace : kFail;
    BT_RETURN_IF_ERROR(
        Write(name, damage, PutStep(data, o.conditions, o.lease_id, o.metadata, &out)));
    return out;
  }

  Status Delete(std::string_view name, const WriteOptions& o) override {
    const OnDamage damage = Unconditional(o.conditions, o.lease_id) ? kRemove : kFail;
    return Write(name, damage, DeleteStep(name, o.conditions, o.lease_id));
  }

  // One LMDB write transaction: every step's mutation in order, committed
  // together, or the transaction dropped at the first that fails.
  BatchResult CommitBatch(const std::vector<BatchOp>& ops) override {
    BatchResult out;
    out.failed = ops.size();
    for (const BatchOp& op : ops) {
      out.status = ValidateBlobName(op.blob);
      if (out.status.ok() && op.kind == BatchOp::Kind::kPut)
        out.status = CheckPut(op.data, op.metadata);
      if (!out.status.ok()) return out;
    }
    auto none = NoContainer();
    out.status = none.status();
    if (out.status.ok() && *none) {
      out.status = WouldFailWithoutAContainer(ops);
      if (out.status.ok()) out.status = Databases(/*create=*/true);
    }
    if (!out.status.ok()) return out;
    out.status = WithWriteTxn([&](MDB_txn* txn) -> Status {
      out.writes.assign(ops.size(), WriteResult{});
      for (size_t i = 0; i < ops.size(); ++i) {
        Status s = Mutate(txn, ops[i].blob, DamageFor(ops[i]), StepFor(ops[i], &out.writes[i]));
        if (!s.ok()) {
          out.failed = i;
          return s;
        }
      }
      return Status::OK();
    });
    if (!out.status.ok()) out.writes.clear();
    return out;
  }

  Result<WriteResult> SetMetadata(std::string_view name, const Metadata& metadata,
                                  const WriteOptions& o) override {
    BT_RETURN_IF_ERROR(ValidateMetadata(metadata));
    WriteResult out;
    BT_RETURN_IF_ERROR(
        Write(name, kFail, [&](std::optional<BlobRecord>& rec, Stamp& stamp) -> Status {
          if (!rec) return NotFound(name);
          BT_RETURN_IF_ERROR(lease::CheckWrite(rec->lease, o.lease_id, stamp.lease_ms));
          BT_RETURN_IF_ERROR(CheckConditions(o.conditions, rec, /*is_put=*/false));
          rec->metadata = metadata;
          BT_RETURN_IF_ERROR(stamp.Apply(*rec));
          out = {rec->etag, FromSeconds(rec->last_modified_s)};
          return Status::OK();
        }));
    return out;
  }

  Result<ListPage> List(const ListOptions& o) override;
  Status ReadInPlace(std::string_view name, InPlaceData data_check, BlobVisitor visit) override;
  Result<std::string> ListInPlace(const ListOptions& o, InPlaceData data_check,
                                  BlobVisitor visit) override;

  Result<LeaseResult> AcquireLease(std::string_view name, int duration, std::string_view proposed,
                                   const LeaseOptions& o) override {
    BT_RETURN_IF_ERROR(lease::ValidateDuration(duration));
    BT_RETURN_IF_ERROR(lease::ValidateProposedId(proposed));
    std::string new_id = NewGuid();
    return LeaseAction(name, o.conditions, [&](lease::LeaseRecord& l, int64_t now, LeaseResult& r) {
      BT_RETURN_IF_ERROR(lease::Acquire(l, duration, proposed, new_id, now));
      r.lease_id = l.id;
      return Status::OK();
    });
  }
  Result<LeaseResult> RenewLease(std::string_view name, std::string_view id,
                                 const LeaseOptions& o) override {
    return LeaseAction(name, o.conditions, [&](lease::LeaseRecord& l, int64_t now, LeaseResult& r) {
      BT_RETURN_IF_ERROR(lease::Renew(l, id, now));
      r.lease_id = l.id;
      return Status::OK();
    });
  }
  Result<LeaseResult> ChangeLease(std::string_view name, std::string_view id,
                                  std::string_view proposed, const LeaseOptions& o) override {
    BT_RETURN_IF_ERROR(lease::ValidateProposedId(proposed));
    if (proposed.empty())
      return StorageError(400, "MissingRequiredHeader", "change lease needs a proposed lease id");
    return LeaseAction(name, o.conditions, [&](lease::LeaseRecord& l, int64_t now, LeaseResult& r) {
      BT_RETURN_IF_ERROR(lease::Change(l, id, proposed, now));
      r.lease_id = l.id;
      return Status::OK();
    });
  }
  Result<LeaseResult> ReleaseLease(std::string_view name, std::string_view id,
                                   const LeaseOptions& o) override {
    return LeaseAction(name, o.conditions, [&](lease::LeaseRecord& l, int64_t now, LeaseResult&) {
      return lease::Release(l, id, now);
    });
  }
  Result<LeaseResult> BreakLease(std::string_view name, std::optional<int> period,
                                 const LeaseOptions& o) override {
    BT_RETURN_IF_ERROR(lease::ValidateBreakPeriod(period));
    return LeaseAction(name, o.conditions, [&](lease::LeaseRecord& l, int64_t now, LeaseResult& r) {
      return lease::Break(l, period, now, &r.lease_time_seconds);
    });
  }

  std::string Location() const override { return "local:" + env_->directory(); }
  const std::string& container() const override { return container_; }
  BlobStoreTraits traits() const override {
    return {.in_process = true, .atomic_batch = true, .list_data = true};
  }

 private:
  struct Stamp;
  // A mutation of one blob's record inside a write transaction (Mutate).
  using Step = std::function<Status(std::optional<BlobRecord>&, Stamp&)>;
  // What a write does to a damaged record (see Mutate).
  enum OnDamage { kFail, kReplace, kRemove };
  static bool Unconditional(const AccessConditions& c, std::string_view lease_id) {
    return !HasConditions(c) && lease_id.empty();
  }

  static Status CheckPut(std::string_view data, const Metadata& metadata) {
    if (data.size() > kMaxLocalBlobBytes)
      return StorageError(413, "RequestBodyTooLarge", "the local store keeps blobs up to 256 MiB");
    return ValidateMetadata(metadata);
  }

  // Whether a put may replace `rec` (or make the blob, if empty). The
  // lease is checked before the conditions, as Azure does (a leased blob
  // answers LeaseIdMissing even to If-None-Match "*").
  // `lease` becomes the blob's lease as the check left it (one that ran
  // out, expired).
  static Status PutAllowed(const std::optional<BlobRecord>& rec, const AccessConditions& c,
                           std::string_view lease_id, int64_t lease_ms, lease::LeaseRecord& lease) {
    lease = rec ? rec->lease : lease::LeaseRecord{};
    BT_RETURN_IF_ERROR(lease::CheckWrite(lease, lease_id, lease_ms));
    return CheckConditions(c, rec, /*is_put=*/true);
  }

  // A write into a container that does not exist yet: what it answers if
  // it would fail there (every blob absent), so that a refused write makes
  // no container. OK if it would succeed: the container is then made.
  Status WouldFailWithoutAContainer(const std::vector<BatchOp>& ops) {
    Stamp none{this, nullptr, 0, LeaseMs()};  // the steps below never write
    for (const BatchOp& op : ops) {
      std::optional<BlobRecord> absent;
      lease::LeaseRecord lease;
      Status s = op.kind == BatchOp::Kind::kPut
                     ? PutAllowed(absent, op.conditions, "", none.lease_ms, lease)
                     : StepFor(op, nullptr)(absent, none);
      if (!s.ok()) return s;
    }
    return Status::OK();
  }

  // The steps keep references: what they name must outlive them.
  static Step PutStep(std::string_view data, const AccessConditions& c, std::string_view lease_id,
                      const Metadata& metadata, WriteResult* out) {
    return [data, &c, lease_id, &metadata, out](std::optional<BlobRecord>& rec,
                                                Stamp& stamp) -> Status {
      lease::LeaseRecord lease;
      BT_RETURN_IF_ERROR(PutAllowed(rec, c, lease_id, stamp.lease_ms, lease));
      if (!rec) rec.emplace();
      rec->lease = lease;
      rec->metadata = metadata;
      BT_RETURN_IF_ERROR(stamp.Apply(*rec));
      BT_RETURN_IF_ERROR(stamp.WriteData(*rec, data));
      *out = {rec->etag, FromSeconds(rec->last_modified_s)};
      return Status::OK();
    };
  }

  static Step DeleteStep(std::string_view name, const AccessConditions& c,
                         std::string_view lease_id) {
    return [name, &c, lease_id](std::optional<BlobRecord>& rec, Stamp& stamp) -> Status {
      if (!rec) return NotFound(name);
      BT_RETURN_IF_ERROR(lease::CheckWrite(rec->lease, lease_id, stamp.lease_ms));
      BT_RETURN_IF_ERROR(CheckConditions(c, rec, /*is_put=*/false));
      BT_RETURN_IF_ERROR(stamp.DeleteData(*rec));
      rec.reset();
      return Status::OK();
    };
  }

  // A batch's check: the conditions of a delete, or (If-None-Match "*")
  // that the blob is absent; it changes nothing.
  static Step CheckStep(std::string_view name, const AccessConditions& c) {
    return [name, &c](std::optional<BlobRecord>& rec, Stamp&) -> Status {
      if (c.if_none_match == kAnyETag) {
        if (!rec) return Status::OK();
        return StorageError(409, "BlobAlreadyExists",
                            "the blob '" + std::string(name) + "' exists");
      }
      if (!rec) return NotFound(name);
      return CheckConditions(c, rec, /*is_put=*/false);
    };
  }

  // A batch step presents no lease id.
  static Step StepFor(const BatchOp& op, WriteResult* out) {
    switch (op.kind) {
      case BatchOp::Kind::kPut: return PutStep(op.data, op.conditions, "", op.metadata, out);
      case BatchOp::Kind::kDelete: return DeleteStep(op.blob, op.conditions, "");
      case BatchOp::Kind::kCheck: return CheckStep(op.blob, op.conditions);
    }
    return nullptr;
  }

  static OnDamage DamageFor(const BatchOp& op) {
    if (op.kind == BatchOp::Kind::kCheck || !Unconditional(op.conditions, "")) return kFail;
    return op.kind == BatchOp::Kind::kPut ? kReplace : kRemove;
  }

  // Per-write services: the clock reading and the ETag allocator, both within
  // the write transaction.
  struct Stamp {
    LocalBlobStore* store;
    MDB_txn* txn;
    int64_t now_ms;    // wall clock: last-modified
    int64_t lease_ms;  // the lease clock (lease::LeaseNowMs)
    // Gives `rec` a fresh ETag and the current time as last-modified.
    Status Apply(BlobRecord& rec) {
      BT_ASSIGN_OR_RETURN(uint64_t version, store->NextVersion(txn));
      rec.etag = store->ETagFor(version);
      rec.last_modified_s = now_ms / 1000;
      return Status::OK();
    }
    // Small data goes in the record (blob_record.h); larger in the data
    // database, under an id of its own from the sequence.
    Status WriteData(BlobRecord& rec, std::string_view data) {
      if (data.size() <= kInlineDataBytes) {
        BT_RETURN_IF_ERROR(DeleteData(rec));
        rec.data_id = 0;
        rec.inline_data.emplace(data);
      } else {
        if (rec.data_id == 0) {
          BT_ASSIGN_OR_RETURN(rec.data_id, store->NextSequence(txn));
        }
        rec.inline_data.reset();
        char key[8];
        DataKey(rec.data_id, key);
        MDB_val k{sizeof(key), key}, v = ToVal(data);
        int rc = mdb_put(txn, store->data_, &k, &v, 0);
        if (rc != 0) return LmdbError(rc, "writing blob data");
      }
      rec.data_size = data.size();
      rec.data_crc = Crc32(data);
      rec.data_md5 = Md5Base64(data);
      return Status::OK();
    }
    Status DeleteData(const BlobRecord& rec) {
      if (rec.data_id == 0) return Status::OK();  // inline, or none yet
      char key[8];
      DataKey(rec.data_id, key);
      MDB_val k{sizeof(key), key};
      int rc = mdb_del(txn, store->data_, &k, nullptr);
      if (rc != 0 && rc != MDB_NOTFOUND) return LmdbError(rc, "deleting blob data");
      return Status::OK();
    }
  };

  static Status CheckConditions(const AccessConditions& c, const std::optional<BlobRecord>& rec,
                                bool is_put) {
    if (!rec) return CheckWriteConditions(c, nullptr, is_put);
    BlobVersion version{rec->etag, FromSeconds(rec->last_modified_s)};
    return CheckWriteConditions(c, &version, is_put);
  }

  int64_t NowMs() const { return ToMs(clock_->Now()); }
  // Leases are judged by the boot-tagged monotonic time, never the wall
  // clock (storage/lease_rules.h).
  int64_t LeaseMs() const { return lease::LeaseNowMs(boot_tag_, clock_->SinceBoot()); }

  // Calls `visit` with each record of the page `o` asks for, in name order,
  // in read transaction `txn`; returns the page's next marker.
  Result<std::string> ListRecords(MDB_txn* txn, const ListOptions& o,
                                  FunctionRef<Status(const RecordView&)> visit);

  BlobProperties PropertiesOf(const RecordView& r, int64_t lease_ms) const {
    BlobProperties p;
    p.etag = r.etag;
    p.last_modified = FromSeconds(r.last_modified_s);
    p.content_length = r.data_size;
    p.content_md5 = r.DataMd5();
    for (const auto& [k, v] : r.metadata) p.metadata.emplace_hint(p.metadata.end(), k, v);
    lease::LeaseRecord l = r.Lease();
    lease::Refresh(l, lease_ms);
    p.lease_state = l.state;
    p.lease_status = lease::StatusOf(l);
    p.lease_duration = lease::DurationOf(l);
    return p;
  }

  Result<Bucket> LoadBucket(MDB_txn* txn, std::string_view key) {
    MDB_val k = ToVal(key), v;
    int rc = mdb_get(txn, blobs_, &k, &v);
    if (rc == MDB_NOTFOUND) return Bucket{};
    if (rc != 0) return LmdbError(rc, "reading the local store");
    return DecodeBucket(FromVal(v), key);
  }

  static Bucket::iterator FindEntry(Bucket& bucket, std::string_view name) {
    return std::lower_bound(bucket.begin(), bucket.end(), name,
                            [](const BucketEntry& e, std::string_view n) { return e.name < n; });
  }

  // A number naming a version, for its ETag: LmdbEnv::VersionNumber, else
  // (a transaction of over a million writes) the stored sequence with the
  // top bit set, which no transaction's number has.
  Result<uint64_t> NextVersion(MDB_txn* txn) {
    if (std::optional<uint64_t> n = env_->VersionNumber(txn)) return *n;
    BT_ASSIGN_OR_RETURN(uint64_t seq, NextSequence(txn));
    return seq | (uint64_t{1} << 63);
  }

  // A per-store sequence bumped in the writing transaction: it makes data
  // ids (and ETags where NextVersion says). The 16-byte value keeps its old
  // layout (salt, counter); the stored salt is unused. Bumping it dirties a
  // page of the meta database: only blobs with data apart pay for it.
  Result<uint64_t> NextSequence(MDB_txn* txn) {
    MDB_val k = ToVal(kEtagCounterKey), v;
    char buf[16] = {};
    int rc = mdb_get(txn, meta_, &k, &v);
    if (rc == 0 && v.mv_size == sizeof(buf)) {
      memcpy(buf, v.mv_data, sizeof(buf));
    } else if (rc != MDB_NOTFOUND) {
      return rc == 0 ? Status::Corruption("local store: bad etag counter")
                     : LmdbError(rc, "reading the etag counter");
    }
    uint64_t counter;
    memcpy(&counter, buf + 8, 8);
    ++counter;
    memcpy(buf + 8, &counter, 8);
    MDB_val nv{sizeof(buf), buf};
    if ((rc = mdb_put(txn, meta_, &k, &nv, 0)) != 0)
      return LmdbError(rc, "writing the etag counter");
    return counter;
  }

  // "0x<salt><version>". The version number alone repeats after a backup
  // is restored or a store copied (both lineages count on from the same
  // transaction id), and in another process; the salt, 64 random bits drawn
  // each time the environment is opened, tells those apart, so an ETag
  // never matches again.
  std::string ETagFor(uint64_t seq) const {
    char etag[48];
    snprintf(etag, sizeof(etag), "\"0x%016llX%016llX\"",
             static_cast<unsigned long long>(env_->etag_salt()),
             static_cast<unsigned long long>(seq));
    return etag;
  }

  // Decodes the record in place and copies out only what the answer keeps.
  // The name is validated only when no blob has it: one that exists was
  // validated when it was written.
  Result<GetResult> Read(std::string_view name, const AccessConditions& c, bool with_data) {
    BT_RETURN_IF_ERROR(NoBlobWithoutAContainer(name));
    BT_ASSIGN_OR_RETURN(LmdbTxn txn, LmdbTxn::Begin(*env_, /*read_only=*/true));
    std::optional<Result<GetResult>> out;
    BT_RETURN_IF_ERROR(FindRecord(
        txn.get(), name, [&](const RecordView& r) { out = Answer(txn.get(), r, c, with_data); }));
    return *std::move(out);
  }

  // NotFound for blob `name` (a valid name) if the container does not exist.
  Status NoBlobWithoutAContainer(std::string_view name) {
    BT_ASSIGN_OR_RETURN(bool none, NoContainer());
    if (!none) return Status::OK();
    BT_RETURN_IF_ERROR(ValidateBlobName(name));
    return NotFound(name);
  }

  // Calls `found` with blob `name`'s record, in `txn`. NotFound if there is
  // none (without calling it).
  Status FindRecord(MDB_txn* txn, std::string_view name, RecordSink found) {
    std::string scratch;
    const std::string_view key = BucketKey(name, scratch);
    MDB_val k = ToVal(key), v;
    const int rc = key.empty() ? MDB_NOTFOUND : mdb_get(txn, blobs_, &k, &v);
    if (rc != 0 && rc != MDB_NOTFOUND) {
      BT_RETURN_IF_ERROR(ValidateBlobName(name));
      return LmdbError(rc, "reading the local store");
    }
    bool seen = false;
    if (rc == 0) {
      BT_RETURN_IF_ERROR(VisitBucket(FromVal(v), key, [&](const RecordView& r) {
        if (seen || r.name != name) return;
        seen = true;
        found(r);
      }));
    }
    if (seen) return Status::OK();
    BT_RETURN_IF_ERROR(ValidateBlobName(name));
    return NotFound(name);
  }

  // What a read of record `r` answers under conditions `c`.
  Result<GetResult> Answer(MDB_txn* txn, const RecordView& r, const AccessConditions& c,
                           bool with_data) {
    GetResult out;
    BlobVersion version{r.etag, FromSeconds(r.last_modified_s)};
    BT_RETURN_IF_ERROR(CheckReadConditions(c, version, &out.not_modified));
    if (out.not_modified) {
      out.properties.etag = r.etag;
      out.properties.last_modified = version.last_modified;
      return out;
    }
    out.properties = PropertiesOf(r, LeaseMs());
    if (with_data) {
      BT_ASSIGN_OR_RETURN(std::string_view data, ReadData(txn, data_, r));
      out.data.assign(data);
    }
    return out;
  }

  // Runs `body(txn)` in one write transaction, committed if body succeeds.
  // On a full map, perhaps only because a dead reader pins old pages: free
  // its slot, and if there was one, run it once more.
  template <typename Body>
  Status WithWriteTxn(Body&& body) {
    Status s = WriteTxnOnce(body);
    if (s.storage_code() == kLmdbMapFull && env_->ReclaimStaleReaders() > 0) s = WriteTxnOnce(body);
    return s;
  }

  // Concurrent writers of this process share a commit (group commit).
  template <typename Body>
  Status WriteTxnOnce(Body& body) {
    return env_->Write([&body](MDB_txn* txn) { return body(txn); });
  }

  // Runs `fn(record, stamp)` on blob `name` in one write transaction.
  template <typename Fn>
  Status Write(std::string_view name, OnDamage on_damage, Fn&& fn) {
    BT_RETURN_IF_ERROR(ValidateBlobName(name));
    BT_RETURN_IF_ERROR(NoBlobWithoutAContainer(name));  // Put made it
    return WithWriteTxn([&](MDB_txn* txn) { return Mutate(txn, name, on_damage, fn); });
  }

  // Runs `fn(record, stamp)` on blob `name` within `txn`. `record` is empty
  // when the blob does not exist; fn may fill it (create), change it, or
  // reset it (delete). Nothing is written if fn fails (the caller then
  // drops the transaction).
  //
  // A damaged record (Corruption) fails the write, unless `on_damage` says
  // how to repair it: an unconditional Put replaces it, an unconditional
  // Delete removes it. Every bucket holds one blob (blob_record.h), so no
  // other blob goes with it.
  template <typename Fn>
  Status Mutate(MDB_txn* txn, std::string_view name, OnDamage on_damage, Fn&& fn) {
    const std::string key = BucketKey(name);
    Result<Bucket> loaded = LoadBucket(txn, key);
    if (!loaded.ok()) {
      if (!loaded.status().IsCorruption() || on_damage == kFail) return loaded.status();
      loaded = Bucket{};  // replaced, or removed below
      if (on_damage == kRemove) {
        MDB_val k = ToVal(key);
        int rc = mdb_del(txn, blobs_, &k, nullptr);
        if (rc != 0) return LmdbError(rc, "removing damaged blob '" + std::string(name) + "'");
        return Status::OK();
      }
    }
    Bucket& bucket = *loaded;
    auto it = FindEntry(bucket, name);
    bool existed = it != bucket.end() && it->name == name;
    std::optional<BlobRecord> rec;
    if (existed) rec = std::move(it->record);
    Stamp stamp{this, txn, NowMs(), LeaseMs()};
    BT_RETURN_IF_ERROR(fn(rec, stamp));
    if (rec && existed)
      it->record = std::move(*rec);
    else if (rec)
      bucket.insert(it, BucketEntry{std::string(name), std::move(*rec)});
    else if (existed)
      bucket.erase(it);
    MDB_val k = ToVal(key);
    int rc;
    if (bucket.empty()) {
      rc = mdb_del(txn, blobs_, &k, nullptr);
      if (rc == MDB_NOTFOUND) rc = 0;
    } else if (bucket.size() > 1) {  // MigrateBuckets re-keyed every shared one at open
      return Status::Internal("local store: blob '" + std::string(name) + "' shares its bucket");
    } else {
      std::string value = EncodeRecord(bucket.front());
      MDB_val v = ToVal(value);
      rc = mdb_put(txn, blobs_, &k, &v, 0);
    }
    if (rc != 0) return LmdbError(rc, "writing blob '" + std::string(name) + "'");
    return Status::OK();
  }

  template <typename Fn>
  Result<LeaseResult> LeaseAction(std::string_view name, const AccessConditions& c, Fn&& fn) {
    LeaseResult out;
    BT_RETURN_IF_ERROR(
        Write(name, kFail, [&](std::optional<BlobRecord>& rec, Stamp& stamp) -> Status {
          if (!rec) return NotFound(name);
          BT_RETURN_IF_ERROR(CheckConditions(c, rec, /*is_put=*/false));
          BT_RETURN_IF_ERROR(fn(rec->lease, stamp.lease_ms, out));
          // Lease actions change neither the ETag nor last-modified.
          out.etag = rec->etag;
          out.last_modified = FromSeconds(rec->last_modified_s);
          return Status::OK();
        }));
    return out;
  }

  std::shared_ptr<LmdbEnv> env_;
  std::mutex databases_mu_;
  std::atomic<bool> have_databases_{false};
  MDB_dbi blobs_ = 0;  // name buckets, once have_databases_
  MDB_dbi data_ = 0;   // blob data by id, once have_databases_
  MDB_dbi meta_;       // the sequence
  std::string container_;
  const bool create_container_;  // LocalOptions::create_container
  Clock* clock_;
  const int64_t boot_tag_;
};

Result<std::string> LocalBlobStore::ListRecords(MDB_txn* txn, const ListOptions& o,
                                                FunctionRef<Status(const RecordView&)> visit) {
  if (o.max_results < 1 || o.max_results > 5000)
    return StorageError(400, "OutOfRangeQueryParameterValue", "maxresults must be 1..5000");
  MDB_cursor* cursor = nullptr;
  int rc = mdb_cursor_open(txn, blobs_, &cursor);
  if (rc != 0) return LmdbError(rc, "listing the local store");
  std::unique_ptr<MDB_cursor, void (*)(MDB_cursor*)> guard(cursor, mdb_cursor_close);

  // The marker is the last name returned: resume where it belongs.
  const std::string_view prefix_key = SeekKey(o.prefix);
  std::string start(std::max({prefix_key, SeekKey(o.marker), SeekKey(o.start_from)}));
  MDB_val k = ToVal(start), v;
  // LMDB refuses empty keys: an empty start means the first bucket.
  rc = mdb_cursor_get(cursor, &k, &v, start.empty() ? MDB_FIRST : MDB_SET_RANGE);
  int listed = 0;
  std::string_view last;  // the last name visited, in `txn`'s pages
  bool more = false;
  Status failed;
  // Names come in order: once one is past the marker and start_from, every
  // later one is (a row of a query pays no compare for them).
  bool past_start = false;
  auto consider = [&](const RecordView& e) {
    if (more || !failed.ok()) return;
    if (e.name.substr(0, o.prefix.size()) != o.prefix) return;
    if (!past_start) {
      if (!o.marker.empty() && e.name <= o.marker) return;
      if (e.name < o.start_from) return;
      past_start = true;
    }
    if (listed == o.max_results) {
      more = true;
      return;
    }
    failed = visit(e);
    ++listed;
    last = e.name;
  };
  // A group's records, found where they lie (valid in `txn`): their names
  // first, to sort, then each read again in that order.
  struct GroupMember {
    std::string_view name, key, value;
  };
  std::vector<GroupMember> group_members;
  RecordView scratch;
  while (rc == 0 && !more) {
    const std::string_view key = FromVal(k);
    if (key.substr(0, prefix_key.size()) != prefix_key) break;  // past the prefix
    if (!InGroup(key)) {                                        // a bucket: its one record
      BT_RETURN_IF_ERROR(VisitBucket(FromVal(v), key, scratch, consider));
      BT_RETURN_IF_ERROR(failed);
      rc = mdb_cursor_get(cursor, &k, &v, MDB_NEXT);
      continue;
    }
    // A whole group, in digest order: sorted here by name.
    group_members.clear();
    const std::string_view group = key.substr(0, kGroupPrefix);
    do {
      const std::string_view member_key = FromVal(k), member_value = FromVal(v);
      BT_RETURN_IF_ERROR(VisitBucket(member_value, member_key, scratch, [&](const RecordView& r) {
        group_members.push_back({r.name, member_key, member_value});
      }));
      rc = mdb_cursor_get(cursor, &k, &v, MDB_NEXT);
    } while (rc == 0 && InGroup(FromVal(k)) && FromVal(k).substr(0, kGroupPrefix) == group);
    std::sort(group_members.begin(), group_members.end(),
              [](const GroupMember& a, const GroupMember& b) { return a.name < b.name; });
    for (const GroupMember& m : group_members) {
      BT_RETURN_IF_ERROR(VisitBucket(m.value, m.key, scratch, consider));
      BT_RETURN_IF_ERROR(failed);
    }
  }
  if (rc != 0 && rc != MDB_NOTFOUND) return LmdbError(rc, "listing the local store");
  return more ? std::string(last) : std::string();
}

Result<ListPage> LocalBlobStore::List(const ListOptions& o) {
  BT_ASSIGN_OR_RETURN(bool none, NoContainer());
  if (none) return ListPage{};
  BT_ASSIGN_OR_RETURN(LmdbTxn txn, LmdbTxn::Begin(*env_, /*read_only=*/true));
  const int64_t lease_ms = LeaseMs();
  ListPage page;
  auto next = ListRecords(txn.get(), o, [&](const RecordView& e) -> Status {
    BlobItem item{std::string(e.name), PropertiesOf(e, lease_ms), std::nullopt};
    if (o.include_data) {
      BT_ASSIGN_OR_RETURN(std::string_view data, ReadData(txn.get(), data_, e));
      item.data.emplace(data);
    }
    page.items.push_back(std::move(item));
    return Status::OK();
  });
  if (!next.ok()) return next.status();
  page.next_marker = *std::move(next);
  return page;
}

Status LocalBlobStore::ReadInPlace(std::string_view name, InPlaceData data_check,
                                   BlobVisitor visit) {
  BT_RETURN_IF_ERROR(NoBlobWithoutAContainer(name));
  BT_ASSIGN_OR_RETURN(LmdbTxn txn, LmdbTxn::Begin(*env_, /*read_only=*/true));
  Status out;
  BT_RETURN_IF_ERROR(FindRecord(txn.get(), name, [&](const RecordView& r) {
    auto data = ReadData(txn.get(), data_, r, data_check);
    out = data.ok() ? visit(BlobInPlace{r.name, r.etag, &r.metadata, *data}) : data.status();
  }));
  return out;
}

Result<std::string> LocalBlobStore::ListInPlace(const ListOptions& o, InPlaceData data_check,
                                                BlobVisitor visit) {
  BT_ASSIGN_OR_RETURN(bool none, NoContainer());
  if (none) return std::string();
  BT_ASSIGN_OR_RETURN(LmdbTxn txn, LmdbTxn::Begin(*env_, /*read_only=*/true));
  return ListRecords(txn.get(), o, [&](const RecordView& e) -> Status {
    BT_ASSIGN_OR_RETURN(std::string_view data, ReadData(txn.get(), data_, e, data_check));
    return visit(BlobInPlace{e.name, e.etag, &e.metadata, data});
  });
}

using SharedBuckets = std::vector<std::pair<std::string, Bucket>>;

// The buckets of the old layout: 480-byte keys holding a longer name.
Result<SharedBuckets> FindSharedBuckets(MDB_txn* txn, MDB_dbi blobs) {
  SharedBuckets shared;
  MDB_cursor* cursor = nullptr;
  int rc = mdb_cursor_open(txn, blobs, &cursor);
  if (rc != 0) return LmdbError(rc, "re-keying the local store");
  std::unique_ptr<MDB_cursor, void (*)(MDB_cursor*)> guard(cursor, mdb_cursor_close);
  MDB_val k, v;
  for (rc = mdb_cursor_get(cursor, &k, &v, MDB_FIRST); rc == 0;
       rc = mdb_cursor_get(cursor, &k, &v, MDB_NEXT)) {
    if (k.mv_size != kBucketPrefix) continue;  // only old shared buckets have 480-byte keys
    auto bucket = DecodeBucket(FromVal(v), FromVal(k));
    if (!bucket.ok()) continue;  // damaged: left for `blobtable check`
    if (bucket->size() == 1 && (*bucket)[0].name.size() == kBucketPrefix) continue;
    shared.emplace_back(std::string(FromVal(k)), std::move(*bucket));
  }
  if (rc != MDB_NOTFOUND) return LmdbError(rc, "re-keying the local store");
  return shared;
}

// Re-keys a container written before every bucket held one blob: names over
// 480 bytes were keyed by their first 480 bytes, many to a bucket (see
// blob_record.h). Once per container, in one write transaction (LMDB
// serializes it with every other process's), recorded in `meta`. A store
// opened read-only is read as it is if it needs none.
Status MigrateBuckets(LmdbEnv& env, MDB_dbi blobs, MDB_dbi meta, const std::string& container) {
  const std::string done_key = kBucketSchemeKeyPrefix + container;
  MDB_val k = ToVal(done_key), v;
  {
    BT_ASSIGN_OR_RETURN(LmdbTxn look, LmdbTxn::Begin(env, /*read_only=*/true));
    if (mdb_get(look.get(), meta, &k, &v) == 0) return Status::OK();
    if (env.read_only()) {
      BT_ASSIGN_OR_RETURN(SharedBuckets shared, FindSharedBuckets(look.get(), blobs));
      if (shared.empty()) return Status::OK();
      return Status::IOError("the local store " + env.directory() +
                             " needs a one-time re-keying of its long names: open it once "
                             "with write access");
    }
  }
  BT_ASSIGN_OR_RETURN(LmdbTxn txn, LmdbTxn::Begin(env, /*read_only=*/false));
  if (mdb_get(txn.get(), meta, &k, &v) == 0) return Status::OK();  // another process did it
  BT_ASSIGN_OR_RETURN(SharedBuckets shared, FindSharedBuckets(txn.get(), blobs));
  int rc;
  for (auto& [old_key, bucket] : shared) {
    MDB_val ok = ToVal(old_key);
    if ((rc = mdb_del(txn.get(), blobs, &ok, nullptr)) != 0)
      return LmdbError(rc, "re-keying the local store");
    for (BucketEntry& e : bucket) {
      const std::string key = BucketKey(e.name);
      const std::string value = EncodeRecord(e);
      MDB_val nk = ToVal(key), nv = ToVal(value);
      if ((rc = mdb_put(txn.get(), blobs, &nk, &nv, 0)) != 0)
        return LmdbError(rc, "re-keying blob '" + e.name + "'");
    }
  }
  MDB_val done = ToVal("2");
  if ((rc = mdb_put(txn.get(), meta, &k, &done, 0)) != 0)
    return LmdbError(rc, "re-keying the local store");
  return txn.Commit();
}

}  // namespace

}  // namespace blobtable::internal

namespace blobtable {

Result<std::shared_ptr<BlobStore>> OpenLocalBlobStore(const std::string& directory,
                                                      std::string_view container_name,
                                                      const LocalOptions& options, Clock* clock) {
  BT_RETURN_IF_ERROR(internal::ValidateContainerName(container_name));
  if (clock == nullptr) clock = Clock::Real();
  // Leases are judged by the time since this boot (invariant K1): a process
  // that cannot tell which boot it is in cannot tell whether another
  // process's lease has run out, and guessing "run out" would hand one lease
  // to two holders.
  if (clock->BootId().empty())
    return Status::Unavailable(
        "the local store judges leases by the machine's boot id, and this process cannot read "
        "it (" +
        std::string(kBootIdPath) +
        ": hidden by a sandbox such as systemd's ProcSubset=pid?). Let it read that file, or "
        "inject a Clock whose BootId() names the boot (StoreOptions::clock)");
  const std::string container(container_name);
  BT_RETURN_IF_ERROR(internal::CheckStoreDirectory(directory));
  BT_ASSIGN_OR_RETURN(std::shared_ptr<internal::LmdbEnv> env,
                      internal::LmdbEnv::Open(directory, options.map_size, options.file_mode,
                                              options.durability == LocalDurability::kRelaxed
                                                  ? internal::LmdbEnv::Sync::kRelaxed
                                                  : internal::LmdbEnv::Sync::kFull));
  // The container's own databases are opened by its first read or write
  // (LocalBlobStore::Databases).
  BT_ASSIGN_OR_RETURN(MDB_dbi meta, env->Database(internal::kMetaDb));
  auto store = std::make_shared<internal::LocalBlobStore>(env, meta, container,
                                                          options.create_container, clock);
  // A container that exists is opened now (its long names re-keyed, if it
  // is an old store's): its errors are the open's.
  Status s = store->Databases(/*create=*/false);
  if (!s.ok() && !s.IsNotFound()) return s;
  return std::shared_ptr<BlobStore>(std::move(store));
}

}  // namespace blobtable
