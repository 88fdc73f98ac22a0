// SPDX-License-Identifier: Apache-2.0
// The local (LMDB) backend: the conformance suite, plus what only a local
// store has: persistence, several processes, containers, corrupt files.
#include <lmdb.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <thread>
#include <vector>

#include "blobtable/blob_store.h"
#include "blobtable/store.h"
#include "storage/local/lmdb_env.h"
#include "storage/local/blob_record.h"
#include "util/msgpack_util.h"
#include "util/stored_format.h"
#include "tests/blob_store_conformance.h"
#include "testing/counting_blob_store.h"
#include "tests/test_util.h"

namespace blobtable::testing {
namespace {
using namespace internal;

// Expects bucket value `value` (LMDB key "key") refused as Corruption
// naming the key and mentioning `mentions`.
void ExpectCorruptBucket(const std::string& value, const std::string& mentions) {
  auto bucket = DecodeBucket(value, "key");
  ASSERT_EQ(bucket.status().code(), Code::kCorruption) << bucket.status().ToString();
  EXPECT_NE(bucket.status().message().find("'key'"), std::string::npos);
  EXPECT_NE(bucket.status().message().find(mentions), std::string::npos)
      << bucket.status().message();
}

// A format-3 bucket value around msgpack `body`: the tag and its checksum.
std::string Format3Value(const msgpack::sbuffer& body) {
  const std::string payload(body.data(), body.size());
  const uint32_t crc = Crc32(payload);
  std::string value(1, '\xB2');
  for (int i = 0; i < 4; ++i) value += static_cast<char>(crc >> (8 * i));
  return value + payload;
}

// Blobs `bucket` as one format-3 value (several blobs shared a bucket in
// stores written before 2026-11; no writer makes such a value now).
std::string Format3Bucket(const Bucket& bucket) {
  msgpack::sbuffer buf;
  msgpack::packer<msgpack::sbuffer> pk(&buf);
  pk.pack_array(2);
  pk.pack(3);
  pk.pack_array(static_cast<uint32_t>(bucket.size()));
  for (const BucketEntry& e : bucket) {
    const BlobRecord& r = e.record;
    pk.pack_array(2);
    pk.pack(e.name);
    pk.pack_array(13);
    pk.pack(r.etag);
    pk.pack(r.last_modified_s);
    pk.pack(r.metadata);
    pk.pack(static_cast<int>(r.lease.state));
    pk.pack(r.lease.id);
    pk.pack(r.lease.duration_seconds);
    pk.pack(r.lease.expires_ms);
    pk.pack(r.lease.broken_at_ms);
    pk.pack(r.data_id);
    pk.pack(r.data_size);
    if (r.data_crc)
      pk.pack(*r.data_crc);
    else
      pk.pack_nil();
    pk.pack(r.data_md5);
    if (r.inline_data) {
      pk.pack_bin(static_cast<uint32_t>(r.inline_data->size()));
      pk.pack_bin_body(r.inline_data->data(), static_cast<uint32_t>(r.inline_data->size()));
    } else {
      pk.pack_nil();
    }
  }
  return Format3Value(buf);
}

// Also through a pass-through wrapper stacked with Backend::With: a wrapper
// that overrides nothing must keep the whole contract (every call forwarded,
// every answer unchanged).
Backend LocalThroughAWrapper() {
  return LocalBackend().With("Wrapped", [](std::shared_ptr<BlobStore> s) {
    return std::make_shared<CountingBlobStore>(std::move(s));
  });
}

INSTANTIATE_TEST_SUITE_P(Local, BlobStoreConformance,
                         ::testing::Values(LocalBackend(), LocalThroughAWrapper()), PrintBackend);

TEST(LocalBlobStore, DataSurvivesReopen) {
  TempDir dir;
  std::string etag;
  {
    auto store = OpenLocalBlobStore(dir.path());
    ASSERT_TRUE(store.ok());
    auto put = (*store)->Put("k", "persisted", {});
    ASSERT_TRUE(put.ok());
    etag = put->etag;
  }
  auto store = OpenLocalBlobStore(dir.path());
  ASSERT_TRUE(store.ok());
  auto got = (*store)->Get("k", {});
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->data, "persisted");
  EXPECT_EQ(got->properties.etag, etag);
}

// A listing may carry the bodies (ListOptions::include_data), read in its
// snapshot; a query on a local store then reads no row on its own.
TEST(LocalBlobStore, ListsWithTheBodiesWhenAskedAndAQueryReadsNoRowOnItsOwn) {
  TempDir dir;
  auto store = OpenLocalBlobStore(dir.path());
  ASSERT_TRUE(store.ok());
  EXPECT_TRUE((*store)->traits().list_data);
  const std::string big(64 * 1024, 'x');
  for (auto [name, body] : {std::pair{"p/a", std::string("1")}, {"p/b", big}, {"p/c", ""}})
    ASSERT_TRUE((*store)->Put(name, body, {}).ok());
  ListOptions list;
  list.prefix = "p/";
  auto plain = (*store)->List(list);
  ASSERT_TRUE(plain.ok());
  ASSERT_EQ(plain->items.size(), 3u);
  EXPECT_FALSE(plain->items[0].data.has_value());
  list.include_data = true;
  auto full = (*store)->List(list);
  ASSERT_TRUE(full.ok());
  ASSERT_EQ(full->items.size(), 3u);
  EXPECT_EQ(full->items[0].data, std::string("1"));
  EXPECT_EQ(full->items[1].data, big);
  EXPECT_EQ(full->items[2].data, std::string());

  CountingBlobStore* counter = nullptr;
  StoreOptions o;
  o.wrap_blob_store = [&](std::shared_ptr<BlobStore> b) {
    auto c = std::make_shared<CountingBlobStore>(std::move(b));
    counter = c.get();
    return c;
  };
  TempDir tables;
  auto opened = Store::Open(tables.path(), o);
  ASSERT_TRUE(opened.ok());
  auto table = (*opened)->OpenTable("rows");
  ASSERT_TRUE(table.ok());
  for (int i = 0; i < 150; ++i)
    ASSERT_TRUE(table->Insert(Entity("p", "r" + std::to_string(1000 + i)).Set("n", i)).ok());
  counter->Clear();
  QueryOptions q;
  q.partition_key = "p";
  q.top = 100;
  auto page = table->Query(q);
  ASSERT_TRUE(page.ok()) << page.status().ToString();
  ASSERT_EQ(page->entities.size(), 100u);
  EXPECT_EQ(*page->entities[99].FindAs<int32_t>("n"), 99);
  EXPECT_FALSE(page->entities[0].etag().empty());
  EXPECT_EQ(counter->Counts(), (std::map<std::string, int>{{"list", 1}}));
}

TEST(LocalBlobStore, ContainersAreSeparate) {
  TempDir dir;
  auto sa = OpenLocalBlobStore(dir.path(), "alpha");
  auto sb = OpenLocalBlobStore(dir.path(), "beta");
  ASSERT_TRUE(sa.ok() && sb.ok());
  ASSERT_TRUE((*sa)->Put("x", "in alpha", {}).ok());
  EXPECT_TRUE((*sb)->Get("x", {}).status().IsNotFound());
  EXPECT_EQ((*sa)->container(), "alpha");
}

TEST(LocalBlobStore, BadContainerNameIsInvalidArgument) {
  TempDir dir;
  for (const char* name : {"ab", "Upper", "-lead", "trail-", "dou--ble", "has_underscore"}) {
    auto s = OpenLocalBlobStore(dir.path(), name);
    EXPECT_EQ(s.status().code(), Code::kInvalidArgument) << name;
  }
}

// A read checks the name only when no blob has it (a stored name was checked
// when written): a bad name is still InvalidArgument, not NotFound.
TEST(LocalBlobStore, ReadingABadNameIsInvalidArgument) {
  TempDir dir;
  auto store = OpenLocalBlobStore(dir.path(), "box");
  ASSERT_TRUE(store.ok());
  ASSERT_TRUE((*store)->Put("good", "x", {}).ok());
  for (const std::string& name : {std::string(), std::string(1025, 'n'), std::string(".."),
                                  std::string("a/../b"), std::string("bad\xff")}) {
    EXPECT_EQ((*store)->Get(name, {}).status().code(), Code::kInvalidArgument) << name;
    EXPECT_EQ((*store)->Head(name, {}).status().code(), Code::kInvalidArgument) << name;
  }
  EXPECT_TRUE((*store)->Get("good", {}).ok());
  EXPECT_TRUE((*store)->Get("good2", {}).status().IsNotFound());
}

// Whatever the names, a local store writes nothing outside its directory:
// blob names are keys, never paths (and names that could read as paths are
// refused), container names are checked before they name a database.
TEST(LocalBlobStore, NothingIsWrittenOutsideItsDirectory) {
  TempDir parent;
  const std::string dir = parent.path() + "/store";
  auto store = OpenLocalBlobStore(dir, "box");
  ASSERT_TRUE(store.ok());
  for (const char* name : {"../escape", "a/../../escape", "/etc/passwd", "..", "x/./y"})
    EXPECT_EQ((*store)->Put(name, "x", {}).status().code(), Code::kInvalidArgument) << name;
  for (const char* name : {"t/a/e/-~2E~2E/-r", "x%2F..%2Fy", "dir\\..\\up", "~"})
    EXPECT_TRUE((*store)->Put(name, "x", {}).ok()) << name;
  for (const char* container : {"../up", "a/b", "..", "C"}) {
    EXPECT_EQ(OpenLocalBlobStore(dir, container).status().code(), Code::kInvalidArgument)
        << container;
  }
  std::vector<std::string> beside;
  for (const auto& e : std::filesystem::directory_iterator(parent.path()))
    beside.push_back(e.path().filename().string());
  EXPECT_EQ(beside, std::vector<std::string>{"store"});
  std::vector<std::string> inside;
  for (const auto& e : std::filesystem::directory_iterator(dir))
    inside.push_back(e.path().filename().string());
  std::sort(inside.begin(), inside.end());
  EXPECT_EQ(inside, (std::vector<std::string>{"blobtable.store", "data.mdb", "lock.mdb"}));
}

TEST(LocalBlobStore, UnwritableDirectoryIsIOError) {
  auto s = OpenLocalBlobStore("/proc/blobtable-cannot-exist");
  EXPECT_EQ(s.status().code(), Code::kIOError) << s.status().ToString();
}

TEST(LocalBlobStore, CorruptRecordIsCorruptionNamingTheBlob) {
  TempDir dir;
  auto store = OpenLocalBlobStore(dir.path());
  ASSERT_TRUE(store.ok());
  ASSERT_TRUE((*store)->Put("victim", "x", {}).ok());
  {
    // Overwrite the stored bucket with garbage behind the store's back.
    auto env = LmdbEnv::Open(dir.path(), StoreOptions{}.local.map_size);
    ASSERT_TRUE(env.ok());
    auto dbi = (*env)->Database("container:blobtable");
    ASSERT_TRUE(dbi.ok());
    auto txn = LmdbTxn::Begin(**env, false);
    ASSERT_TRUE(txn.ok());
    MDB_val k = ToVal("victim"), v = ToVal("\xc1garbage");
    ASSERT_EQ(mdb_put(txn->get(), *dbi, &k, &v, 0), 0);
    ASSERT_TRUE(txn->Commit().ok());
  }
  auto got = (*store)->Get("victim", {});
  EXPECT_EQ(got.status().code(), Code::kCorruption);
  EXPECT_NE(got.status().message().find("victim"), std::string::npos);
  EXPECT_EQ((*store)->List({}).status().code(), Code::kCorruption);
}

TEST(LocalBlobStore, LongNamesSharingAPrefixGetABucketEachAndKeepTheirOrder) {
  // Names longer than LMDB keys allow, all sharing their first 490 bytes (a
  // partition under a long PartitionKey): each has a bucket of its own, and
  // listing still gives exact name order, across pages.
  // The cost, measured by hand until the benchmarks exist: insert and get
  // 3,000 entities under a 10-byte and a 470-byte PartitionKey through
  // Store::Open(dir)->OpenTable("orders"), timing each loop (docs/backends.md#the-local-backend).
  TempDir dir;
  auto store = OpenLocalBlobStore(dir.path());
  ASSERT_TRUE(store.ok());
  const std::string prefix(kBucketPrefix + 10, 'p');
  std::vector<std::string> names;
  for (int i = 0; i < 60; ++i) names.push_back(prefix + std::to_string(1000 + (i * 37) % 60));
  for (const std::string& n : names) ASSERT_TRUE((*store)->Put(n, "d" + n.substr(490), {}).ok());
  ASSERT_TRUE((*store)->Put(prefix.substr(0, 460), "short", {}).ok());  // in the group's range
  std::sort(names.begin(), names.end());
  names.insert(names.begin(), prefix.substr(0, 460));
  std::vector<std::string> listed;
  ListOptions list;
  list.max_results = 7;
  for (;;) {
    auto page = (*store)->List(list);
    ASSERT_TRUE(page.ok()) << page.status().ToString();
    for (const BlobItem& item : page->items) listed.push_back(item.name);
    if (page->next_marker.empty()) break;
    list.marker = page->next_marker;
  }
  EXPECT_EQ(listed, names);
  list = {};
  list.start_from = names[30];
  list.max_results = 2;
  auto from = (*store)->List(list);
  ASSERT_TRUE(from.ok());
  EXPECT_EQ(from->items[0].name, names[30]);

  auto env = LmdbEnv::Open(dir.path(), StoreOptions{}.local.map_size);
  auto dbi = (*env)->Database("container:blobtable");
  auto txn = LmdbTxn::Begin(**env, true);
  for (const std::string& n : names) {
    const std::string key = BucketKey(n);
    MDB_val k = ToVal(key), v;
    ASSERT_EQ(mdb_get(txn->get(), *dbi, &k, &v), 0);
    auto bucket = DecodeBucket(FromVal(v), key);
    ASSERT_TRUE(bucket.ok()) << bucket.status().ToString();
    EXPECT_EQ(bucket->size(), 1u) << "one blob a bucket";
  }
}

// A store written before every bucket held one blob (long names shared a
// bucket keyed by their first 480 bytes) is re-keyed when opened.
TEST(LocalBlobStore, AStoreWithSharedBucketsIsReKeyedOnOpen) {
  TempDir dir;
  const std::string prefix(kBucketPrefix + 10, 'p');
  const std::vector<std::string> names = {prefix + "a", prefix + "b", prefix.substr(0, 480)};
  {
    auto store = OpenLocalBlobStore(dir.path());
    ASSERT_TRUE(store.ok());
    for (const std::string& n : names) ASSERT_TRUE((*store)->Put(n, "data of " + n, {}).ok());
  }
  {
    // Rewrite it into the old layout: one bucket under the first 480 bytes.
    auto env = LmdbEnv::Open(dir.path(), StoreOptions{}.local.map_size);
    auto dbi = (*env)->Database("container:blobtable");
    auto meta = (*env)->Database("meta");
    auto txn = LmdbTxn::Begin(**env, false);
    Bucket shared;
    for (const std::string& n : names) {
      const std::string key = BucketKey(n);
      MDB_val k = ToVal(key), v;
      ASSERT_EQ(mdb_get(txn->get(), *dbi, &k, &v), 0);
      auto bucket = DecodeBucket(FromVal(v), key);
      ASSERT_TRUE(bucket.ok());
      shared.push_back((*bucket)[0]);
      ASSERT_EQ(mdb_del(txn->get(), *dbi, &k, nullptr), 0);
    }
    std::sort(shared.begin(), shared.end(),
              [](const BucketEntry& a, const BucketEntry& b) { return a.name < b.name; });
    const std::string old_key = prefix.substr(0, kBucketPrefix), value = Format3Bucket(shared);
    MDB_val k = ToVal(old_key), v = ToVal(value);
    ASSERT_EQ(mdb_put(txn->get(), *dbi, &k, &v, 0), 0);
    MDB_val done = ToVal("bucket-scheme:blobtable");
    ASSERT_EQ(mdb_del(txn->get(), *meta, &done, nullptr), 0);
    ASSERT_TRUE(txn->Commit().ok());
  }
  auto store = OpenLocalBlobStore(dir.path());
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  for (const std::string& n : names) {
    auto got = (*store)->Get(n, {});
    ASSERT_TRUE(got.ok()) << got.status().ToString();
    EXPECT_EQ(got->data, "data of " + n);
  }
  auto listed = (*store)->List({});
  ASSERT_TRUE(listed.ok());
  std::vector<std::string> sorted = names;
  std::sort(sorted.begin(), sorted.end());
  ASSERT_EQ(listed->items.size(), 3u);
  for (size_t i = 0; i < sorted.size(); ++i) EXPECT_EQ(listed->items[i].name, sorted[i]);
}

TEST(LocalBlobStore, ThreadsOpeningAndClosingOneDirectoryStayConsistent) {
  // Stores come and go on several threads; each open must share or wait for
  // the process's one LMDB environment, never make a second one.
  TempDir dir;
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < 50; ++i) {
        auto store = OpenLocalBlobStore(dir.path());
        if (!store.ok()) {
          ++failures;
          continue;
        }
        std::string name = "t" + std::to_string(t);
        if (!(*store)->Put(name, std::to_string(i), {}).ok()) ++failures;
        auto got = (*store)->Get(name, {});
        if (!got.ok() || got->data != std::to_string(i)) ++failures;
      }
    });
  for (auto& th : threads) th.join();
  EXPECT_EQ(failures.load(), 0);
}

// Several processes on one directory: leases and ETags hold across them, and
// lease expiry is the same wall-clock instant for all (shared fake clock).
TEST(LocalBlobStore, LeasesHoldAcrossProcessesAndExpireForAll) {
  TempDir dir;
  FakeClock clock;
  {
    auto store = OpenLocalBlobStore(dir.path(), kDefaultContainer, {}, &clock);
    ASSERT_TRUE(store.ok());
    ASSERT_TRUE((*store)->Put("lock", "", {}).ok());
  }
  // Child 1 takes a 15 s lease and exits.
  pid_t holder = ForkChild([&] {
    auto store = OpenLocalBlobStore(dir.path(), kDefaultContainer, {}, &clock);
    if (!store.ok()) return 2;
    return (*store)->AcquireLease("lock", 15, "", {}).ok() ? 0 : 3;
  });
  ASSERT_EQ(WaitChild(holder), 0);
  // Child 2 cannot take it while it lasts...
  auto try_acquire = [&] {
    return WaitChild(ForkChild([&] {
      auto store = OpenLocalBlobStore(dir.path(), kDefaultContainer, {}, &clock);
      if (!store.ok()) return 2;
      auto acq = (*store)->AcquireLease("lock", 15, "", {});
      if (acq.ok()) return 0;
      return acq.status().storage_code() == "LeaseAlreadyPresent" ? 10 : 3;
    }));
  };
  EXPECT_EQ(try_acquire(), 10);
  clock.Advance(std::chrono::seconds(14));
  EXPECT_EQ(try_acquire(), 10);
  // ...and can once it expires.
  clock.Advance(std::chrono::seconds(1));
  EXPECT_EQ(try_acquire(), 0);
}

TEST(LocalBlobStore, ConcurrentProcessesIncrementWithoutLoss) {
  TempDir dir;
  {
    auto store = OpenLocalBlobStore(dir.path());
    ASSERT_TRUE(store.ok());
    ASSERT_TRUE((*store)->Put("n", "0", {}).ok());
  }
  constexpr int kProcs = 4, kEach = 50;
  std::vector<pid_t> pids;
  for (int p = 0; p < kProcs; ++p) {
    pids.push_back(ForkChild([&] {
      auto store = OpenLocalBlobStore(dir.path());
      if (!store.ok()) return 2;
      for (int i = 0; i < kEach; ++i) {
        for (;;) {
          auto got = (*store)->Get("n", {});
          if (!got.ok()) return 3;
          PutOptions put;
          put.conditions.if_match = got->properties.etag;
          auto r = (*store)->Put("n", std::to_string(std::stoi(got->data) + 1), put);
          if (r.ok()) break;
          if (!r.status().IsConflict()) return 4;
        }
      }
      return 0;
    }));
  }
  for (pid_t pid : pids) EXPECT_EQ(WaitChild(pid), 0);
  auto store = OpenLocalBlobStore(dir.path());
  ASSERT_TRUE(store.ok());
  EXPECT_EQ((*store)->Get("n", {})->data, std::to_string(kProcs * kEach));
}
}  // namespace
}  // namespace blobtable::testing

namespace blobtable::testing {
namespace {
using namespace internal;

// Runs `read(txn, dbi)` in a read-only transaction on database `db` of the
// local store in `dir`, opened beside it.
template <typename Read>
void ReadDatabase(const std::string& dir, const std::string& db, Read read) {
  auto env = LmdbEnv::Open(dir, StoreOptions{}.local.map_size);
  ASSERT_TRUE(env.ok());
  auto dbi = (*env)->Database(db);
  ASSERT_TRUE(dbi.ok());
  {
    auto txn = LmdbTxn::Begin(**env, /*read_only=*/true);
    ASSERT_TRUE(txn.ok());
    read(txn->get(), *dbi);
  }
  (*env)->ReleaseDatabase(db);
}

// The values in `db` (the data database: how many blobs keep data apart).
size_t CountValues(const std::string& dir, const std::string& db) {
  MDB_stat stat{};
  ReadDatabase(dir, db, [&](MDB_txn* txn, MDB_dbi dbi) { mdb_stat(txn, dbi, &stat); });
  return stat.ms_entries;
}

// Small data lives in its record, larger apart; a blob that grows or shrinks
// across the line moves, leaving nothing behind.
TEST(LocalBlobStore, SmallDataLivesInItsRecordAndMovesWhenItGrowsOrShrinks) {
  TempDir dir;
  auto store = OpenLocalBlobStore(dir.path());
  ASSERT_TRUE(store.ok());
  const std::string small(kInlineDataBytes, 's'), large(kInlineDataBytes + 1, 'L');
  ASSERT_TRUE((*store)->Put("b", small, {}).ok());
  EXPECT_EQ(CountValues(dir.path(), "data:blobtable"), 0u);
  ASSERT_TRUE((*store)->Put("b", large, {}).ok());
  EXPECT_EQ((*store)->Get("b", {})->data, large);
  EXPECT_EQ(CountValues(dir.path(), "data:blobtable"), 1u);
  ASSERT_TRUE((*store)->Put("b", small, {}).ok());
  EXPECT_EQ((*store)->Get("b", {})->data, small);
  EXPECT_EQ((*store)->Get("b", {})->properties.content_length, small.size());
  EXPECT_EQ(CountValues(dir.path(), "data:blobtable"), 0u) << "the large data was left behind";
  ListOptions list;
  list.include_data = true;
  auto page = (*store)->List(list);
  ASSERT_TRUE(page.ok());
  ASSERT_EQ(page->items.size(), 1u);
  EXPECT_EQ(page->items[0].data, small);
  ASSERT_TRUE((*store)->Put("b", large, {}).ok());
  ASSERT_TRUE((*store)->Delete("b", {}).ok());
  EXPECT_EQ(CountValues(dir.path(), "data:blobtable"), 0u);
}

// A record written in format 2 (data always apart) is read as it is; its
// next write moves small data into the record and frees the old value.
// A container nobody wrote to is made by its first write: reads of it (a
// mistyped or damaged name) find nothing and leave the file as it was, so
// `check` goes on saying there is no such container (the review of issue
// 57: a read made an empty one, which check then passed).
TEST(LocalBlobStore, AContainerIsMadeByItsFirstWriteNeverByARead) {
  TempDir dir;
  {
    auto store = OpenLocalBlobStore(dir.path());
    ASSERT_TRUE(store.ok());
    ASSERT_TRUE((*store)->Put("a", "x", {}).ok());
  }
  auto bytes = [&] {
    std::ifstream f(dir.path() + "/data.mdb", std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(f), {});
  };
  const std::string before = bytes();
  {
    auto typo = OpenLocalBlobStore(dir.path(), "typo");
    ASSERT_TRUE(typo.ok()) << typo.status().ToString();
    EXPECT_EQ((*typo)->Get("a", {}).status().code(), Code::kNotFound);
    EXPECT_EQ((*typo)->Head("a", {}).status().code(), Code::kNotFound);
    EXPECT_EQ((*typo)->Delete("a", {}).code(), Code::kNotFound);
    EXPECT_EQ((*typo)->AcquireLease("a", 15, "", {}).status().code(), Code::kNotFound);
    auto listed = (*typo)->List({});
    ASSERT_TRUE(listed.ok());
    EXPECT_TRUE(listed->items.empty());
    EXPECT_EQ((*typo)->Get("bad//name", {}).status().code(), Code::kInvalidArgument);
  }
  // Writes it refuses make none either (the second review of issue 57): a
  // conditional put, a batch whose check fails, and any write of a store
  // that makes no containers.
  {
    auto typo = OpenLocalBlobStore(dir.path(), "typo");
    PutOptions if_match;
    if_match.conditions.if_match = "\"0x1\"";
    EXPECT_FALSE((*typo)->Put("a", "x", if_match).ok());
    BatchOp check;
    check.kind = BatchOp::Kind::kCheck;
    check.blob = "a";
    check.conditions.if_match = "\"0x1\"";
    BatchOp put;
    put.kind = BatchOp::Kind::kPut;
    put.blob = "b";
    EXPECT_FALSE((*typo)->CommitBatch({put, check}).status.ok());
    LocalOptions no_create;
    no_create.create_container = false;
    auto strict = OpenLocalBlobStore(dir.path(), "typo", no_create);
    ASSERT_TRUE(strict.ok());
    EXPECT_EQ((*strict)->Put("a", "x", {}).status().code(), Code::kNotFound);
    EXPECT_EQ((*strict)->CommitBatch({put}).status.code(), Code::kNotFound);
  }
  EXPECT_EQ(bytes(), before) << "reads of a container never written changed the file";
  EXPECT_EQ(CheckLocalStore(dir.path(), "typo").status().code(), Code::kNotFound);
  {
    auto typo = OpenLocalBlobStore(dir.path(), "typo");
    ASSERT_TRUE((*typo)->Put("b", "y", {}).ok());
    EXPECT_EQ((*typo)->Get("b", {})->data, "y");
    EXPECT_EQ((*typo)->Get("a", {}).status().code(), Code::kNotFound);
  }
  auto checked = CheckLocalStore(dir.path(), "typo");
  ASSERT_TRUE(checked.ok()) << checked.status().ToString();
  EXPECT_EQ(checked->blobs, 1);
}

// Compaction writes every record of an older format in the current one
// (format 4 here), and the blob reads the same after it.
TEST(LocalBlobStore, CompactionRewritesOlderRecordsInTheCurrentFormat) {
  TempDir dir;
  const std::string name = "t/a/e/-p/-old";
  {
    auto store = OpenLocalBlobStore(dir.path());
    ASSERT_TRUE(store.ok());
    ASSERT_TRUE((*store)->Put(name, "old body", {}).ok());
  }
  auto raw = [&](std::optional<std::string> put) {
    auto env = LmdbEnv::Open(dir.path(), StoreOptions{}.local.map_size);
    auto buckets = (*env)->Database("container:blobtable");
    auto txn = LmdbTxn::Begin(**env, /*read_only=*/!put);
    MDB_val k = ToVal(name), v;
    EXPECT_EQ(mdb_get(txn->get(), *buckets, &k, &v), 0);
    std::string was(FromVal(v));
    if (put) {
      v = ToVal(*put);
      EXPECT_EQ(mdb_put(txn->get(), *buckets, &k, &v, 0), 0);
      EXPECT_TRUE(txn->Commit().ok());
    }
    return was;
  };
  auto bucket = DecodeBucket(raw(std::nullopt), name);
  ASSERT_TRUE(bucket.ok());
  raw(EncodeFormat4Record(bucket->front()));
  ASSERT_EQ(raw(std::nullopt)[0], '\xB4');
  auto before = OpenLocalBlobStore(dir.path()).value()->Get(name, {});
  ASSERT_TRUE(before.ok());
  ASSERT_TRUE(Store::Compact(dir.path()).ok());
  EXPECT_TRUE(IsCurrentFormat(raw(std::nullopt)));
  auto after = OpenLocalBlobStore(dir.path()).value()->Get(name, {});
  ASSERT_TRUE(after.ok()) << after.status().ToString();
  EXPECT_EQ(after->data, "old body");
  EXPECT_EQ(after->properties.etag, before->properties.etag);
  EXPECT_EQ(after->properties.content_md5, before->properties.content_md5);
  EXPECT_EQ(after->properties.metadata, before->properties.metadata);
}

TEST(LocalBlobStore, AFormat2RecordIsReadAndMovedInlineWhenRewritten) {
  TempDir dir;
  {
    auto store = OpenLocalBlobStore(dir.path());  // creates the databases
    ASSERT_TRUE(store.ok());
  }
  {
    auto env = LmdbEnv::Open(dir.path(), StoreOptions{}.local.map_size);
    auto buckets = (*env)->Database("container:blobtable");
    auto data = (*env)->Database("data:blobtable");
    ASSERT_TRUE(buckets.ok() && data.ok());
    const std::string body = "format two";
    msgpack::sbuffer buf;
    const char header[5] = {'\xB2', 0, 0, 0, 0};
    buf.write(header, sizeof header);
    msgpack::packer<msgpack::sbuffer> pk(&buf);
    pk.pack_array(2);
    pk.pack(2);
    pk.pack_array(1);
    pk.pack_array(2);
    pk.pack(std::string("old"));
    pk.pack_array(12);
    pk.pack(std::string("\"0x7\""));
    pk.pack(int64_t{1700000000});
    pk.pack_map(0);
    pk.pack(0);
    pk.pack(std::string());
    pk.pack(0);
    pk.pack(int64_t{0});
    pk.pack(int64_t{0});
    pk.pack(uint64_t{7});
    pk.pack(uint64_t{body.size()});
    pk.pack(Crc32(body));
    pk.pack_nil();
    std::string value(buf.data(), buf.size());
    const uint32_t crc = Crc32(std::string_view(value).substr(5));
    for (int i = 0; i < 4; ++i) value[1 + i] = static_cast<char>(crc >> (8 * i));
    char id[8];
    DataKey(7, id);
    auto txn = LmdbTxn::Begin(**env, /*read_only=*/false);
    MDB_val k = ToVal("old"), v = ToVal(value), dk{sizeof id, id}, dv = ToVal(body);
    ASSERT_EQ(mdb_put(txn->get(), *buckets, &k, &v, 0), 0);
    ASSERT_EQ(mdb_put(txn->get(), *data, &dk, &dv, 0), 0);
    ASSERT_TRUE(txn->Commit().ok());  // over: the handles may go while `txn` lives
    (*env)->ReleaseDatabase("container:blobtable");
    (*env)->ReleaseDatabase("data:blobtable");
  }
  auto store = OpenLocalBlobStore(dir.path());
  ASSERT_TRUE(store.ok());
  auto got = (*store)->Get("old", {});
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(got->data, "format two");
  EXPECT_EQ(got->properties.etag, "\"0x7\"");
  PutOptions if_match;
  if_match.conditions.if_match = "\"0x7\"";
  ASSERT_TRUE((*store)->Put("old", "rewritten", if_match).ok());
  EXPECT_EQ((*store)->Get("old", {})->data, "rewritten");
  EXPECT_EQ(CountValues(dir.path(), "data:blobtable"), 0u);
}

// The stored sequence, or nullopt if it was never bumped.
std::optional<uint64_t> StoredSequence(const std::string& dir) {
  std::optional<uint64_t> seq;
  ReadDatabase(dir, kMetaDb, [&](MDB_txn* txn, MDB_dbi dbi) {
    MDB_val k = ToVal(kEtagCounterKey), v;
    if (mdb_get(txn, dbi, &k, &v) == 0 && v.mv_size == 16) {
      seq.emplace();
      memcpy(&*seq, static_cast<char*>(v.mv_data) + 8, 8);
    }
  });
  return seq;
}

// A version's ETag is numbered from LMDB's transaction id and the write's
// place in it, with no counter written (a counter costs the meta database a
// page each commit): ETags stay unique within a batch, across commits and
// across a reopen, and only a blob with data apart bumps the stored
// sequence (for its data's id).
TEST(LocalBlobStore, VersionsAreNumberedWithoutWritingACounter) {
  TempDir dir;
  std::set<std::string> etags;
  {
    auto store = OpenLocalBlobStore(dir.path(), "blobtable");
    ASSERT_TRUE(store.ok());
    std::vector<BatchOp> ops;
    for (int i = 0; i < 50; ++i) {
      BatchOp op;
      op.blob = "b" + std::to_string(i);
      ops.push_back(op);
    }
    auto batch = (*store)->CommitBatch(ops);
    ASSERT_TRUE(batch.status.ok()) << batch.status.ToString();
    for (int i = 0; i < 50; ++i) {
      auto head = (*store)->Head("b" + std::to_string(i), {});
      ASSERT_TRUE(head.ok());
      EXPECT_TRUE(etags.insert(head->properties.etag).second) << head->properties.etag;
    }
    for (int i = 0; i < 20; ++i) {
      auto put = (*store)->Put("again", std::to_string(i), {});
      ASSERT_TRUE(put.ok());
      EXPECT_TRUE(etags.insert(put->etag).second) << put->etag;
    }
  }
  EXPECT_EQ(StoredSequence(dir.path()), std::nullopt) << "small blobs write no counter";
  auto store = OpenLocalBlobStore(dir.path(), "blobtable");
  ASSERT_TRUE(store.ok());
  auto put = (*store)->Put("again", "after a reopen", {});
  ASSERT_TRUE(put.ok());
  EXPECT_TRUE(etags.insert(put->etag).second) << put->etag;
  ASSERT_TRUE((*store)->Put("large", std::string(2 * kInlineDataBytes, 'l'), {}).ok());
  EXPECT_EQ(StoredSequence(dir.path()), 1u) << "the data's id";
}

// Past 2^20 versions in one transaction, VersionNumber says so (the store
// then numbers from the stored sequence, with the top bit set); the next
// transaction numbers afresh.
TEST(LocalBlobStore, VersionNumbersStopAtTheirPlaceLimit) {
  TempDir dir;
  auto env = LmdbEnv::Open(dir.path(), StoreOptions{}.local.map_size);
  ASSERT_TRUE(env.ok());
  auto dbi = (*env)->Database("x");  // for a commit that writes (an empty one keeps its id)
  ASSERT_TRUE(dbi.ok());
  std::optional<uint64_t> first, last;
  {
    auto txn = LmdbTxn::Begin(**env, /*read_only=*/false);
    ASSERT_TRUE(txn.ok());
    first = (*env)->VersionNumber(txn->get());
    for (int i = 1; i < (1 << 20); ++i) last = (*env)->VersionNumber(txn->get());
    ASSERT_TRUE(first && last);
    EXPECT_EQ(*last - *first, (1u << 20) - 1);
    EXPECT_EQ((*env)->VersionNumber(txn->get()), std::nullopt);
    MDB_val k = ToVal("k"), v = ToVal("v");
    ASSERT_EQ(mdb_put(txn->get(), *dbi, &k, &v, 0), 0);
    ASSERT_TRUE(txn->Commit().ok());
  }
  auto txn = LmdbTxn::Begin(**env, /*read_only=*/false);
  ASSERT_TRUE(txn.ok());
  auto next = (*env)->VersionNumber(txn->get());
  ASSERT_TRUE(next.has_value());
  EXPECT_GT(*next, *last);
}

// Packs a format-3 bucket of one record named "n" with metadata {a: ...}
// (`metadata_value` packs the value) and inline data "hi"; the record and
// its entry carry `extra` more elements, as a later format might add.
template <typename PackValue>
std::string OneRecordBucket(int extra, PackValue metadata_value) {
  msgpack::sbuffer buf;
  msgpack::packer<msgpack::sbuffer> pk(&buf);
  pk.pack_array(2);
  pk.pack(3);
  pk.pack_array(1);
  pk.pack_array(2 + extra);
  pk.pack(std::string("n"));
  pk.pack_array(13 + extra);
  pk.pack(std::string("\"e\""));
  pk.pack(7);
  pk.pack_map(1);
  pk.pack(std::string("a"));
  metadata_value(pk);
  pk.pack(0);                             // lease state
  pk.pack(std::string());                 // lease id
  for (int v : {0, 0, 0, 0}) pk.pack(v);  // lease duration .. data_id
  pk.pack(2);                             // data_size
  pk.pack_nil();
  pk.pack_nil();
  pk.pack_bin(2);
  pk.pack_bin_body("hi", 2);
  for (int i = 0; i < extra; ++i) {  // nested, as a later field might be
    pk.pack_array(1);
    pk.pack_map(1);
    pk.pack(1);
    pk.pack(2);
  }
  for (int i = 0; i < extra; ++i) pk.pack(std::string("after the record"));
  return Format3Value(buf);
}

// Records are decoded in place (without an object tree): every field lands,
// fields a later format adds are skipped, and anything else is Corruption
// naming the bucket's key.
TEST(LocalBlobRecord, DecodesInPlaceSkipsLaterFieldsAndRefusesWhatIsNotARecord) {
  auto plain = [](auto& pk) { pk.pack(std::string("1")); };
  for (int extra : {0, 2}) {
    auto bucket = DecodeBucket(OneRecordBucket(extra, plain), "key");
    ASSERT_TRUE(bucket.ok()) << bucket.status().ToString();
    ASSERT_EQ(bucket->size(), 1u);
    const BlobRecord& r = (*bucket)[0].record;
    EXPECT_EQ((*bucket)[0].name, "n");
    EXPECT_EQ(r.etag, "\"e\"");
    EXPECT_EQ(r.last_modified_s, 7);
    EXPECT_EQ(r.metadata, (Metadata{{"a", "1"}}));
    ASSERT_TRUE(r.inline_data.has_value());
    EXPECT_EQ(*r.inline_data, "hi");
    EXPECT_FALSE(r.data_crc.has_value());
  }
  ExpectCorruptBucket(OneRecordBucket(0, [](auto& pk) { pk.pack(1); }),
                      "metadata value is not a string");
  ExpectCorruptBucket(OneRecordBucket(0, [](auto& pk) { pk.pack_array(0); }), "metadata value");
  const std::string good = OneRecordBucket(0, plain);
  std::string cut = good.substr(5, good.size() - 8);
  msgpack::sbuffer cut_buf;
  cut_buf.write(cut.data(), cut.size());
  ExpectCorruptBucket(Format3Value(cut_buf), "cut short");
  msgpack::sbuffer deep;
  msgpack::packer<msgpack::sbuffer> pk(&deep);
  for (int i = 0; i < 40; ++i) pk.pack_array(1);
  pk.pack(1);
  ExpectCorruptBucket(Format3Value(deep), "bucket is not long enough");
  msgpack::sbuffer deeper;
  msgpack::packer<msgpack::sbuffer> pk2(&deeper);
  pk2.pack_array(3);  // nested deep where a later format's element is skipped
  pk2.pack(3);
  pk2.pack_array(0);
  for (int i = 0; i < 40; ++i) pk2.pack_array(1);
  pk2.pack(1);
  ExpectCorruptBucket(Format3Value(deeper), "nested too deep");
  ExpectCorruptBucket(good + "x", "checksum");
}

// A lease record in `state` whose every field is set, some to values no
// lease holds (a record must give back whatever it was given).
lease::LeaseRecord OddLease(LeaseState state) {
  lease::LeaseRecord l;
  l.state = state;
  l.id = "lease";
  l.duration_seconds = -1;
  l.expires_ms = 1234567890123;
  l.broken_at_ms = -5;
  return l;
}

// Format 4 (blob_record.h): every field comes back; bytes a later format
// adds to the head are skipped; the head is checked by its own CRC and the
// inline data by data_crc, each apart, so a reader may hand the data over
// unchecked where it lies (InPlaceData::kAsItLies) and every other read
// reports its damage.
TEST(LocalBlobRecord, Format4ChecksItsHeadAndItsInlineDataApart) {
  BucketEntry e;
  e.name = "n";
  BlobRecord& r = e.record;
  r.etag = "\"e\"";
  r.last_modified_s = 7;
  r.metadata = {{"a", "1"}, {"b", ""}};
  r.lease = OddLease(LeaseState::kLeased);
  r.inline_data = "hi";
  r.data_size = 2;
  r.data_crc = Crc32("hi");
  r.data_md5 = "md5";
  const std::string value = EncodeFormat4Record(e);
  ASSERT_EQ(value[0], '\xB4');
  auto same = [&](const std::string& v) {
    auto bucket = DecodeBucket(v, "key");
    ASSERT_TRUE(bucket.ok()) << bucket.status().ToString();
    ASSERT_EQ(bucket->size(), 1u);
    const BucketEntry& b = (*bucket)[0];
    EXPECT_EQ(b.name, "n");
    EXPECT_EQ(b.record.etag, r.etag);
    EXPECT_EQ(b.record.last_modified_s, 7);
    EXPECT_EQ(b.record.metadata, r.metadata);
    EXPECT_EQ(b.record.lease.state, LeaseState::kLeased);
    EXPECT_EQ(b.record.lease.id, "lease");
    EXPECT_EQ(b.record.lease.duration_seconds, -1);
    EXPECT_EQ(b.record.lease.expires_ms, 1234567890123);
    EXPECT_EQ(b.record.lease.broken_at_ms, -5);
    EXPECT_EQ(b.record.inline_data, std::optional<std::string>("hi"));
    EXPECT_EQ(b.record.data_id, 0u);
    EXPECT_EQ(b.record.data_crc, r.data_crc);
    EXPECT_EQ(b.record.data_md5, "md5");
  };
  same(value);
  // A later format's bytes after the metadata, inside the head's length.
  uint32_t head = 0;
  for (int i = 0; i < 4; ++i) head |= uint32_t{static_cast<unsigned char>(value[5 + i])} << (8 * i);
  std::string later = value.substr(9, head) + "later";
  const uint32_t crc = Crc32(later), size = static_cast<uint32_t>(later.size());
  std::string longer(1, '\xB4');
  for (int i = 0; i < 4; ++i) longer += static_cast<char>(crc >> (8 * i));
  for (int i = 0; i < 4; ++i) longer += static_cast<char>(size >> (8 * i));
  same(longer + later + "hi");

  std::string damaged_head = value;
  damaged_head[9 + head / 2] ^= 1;
  ExpectCorruptBucket(damaged_head, "checksum");
  ExpectCorruptBucket(value.substr(0, 8), "cut short");
  ExpectCorruptBucket(value.substr(0, 9 + head - 1), "cut short");
  ExpectCorruptBucket(value.substr(0, value.size() - 1), "not the size its head says");
  ExpectCorruptBucket(value + "x", "not the size its head says");

  // Damaged inline data: the head reads, the data is refused when checked.
  std::string damaged_data = value;
  damaged_data.back() ^= 1;
  auto bucket = DecodeBucket(damaged_data, "key");
  ASSERT_TRUE(bucket.ok()) << bucket.status().ToString();
  auto owned = ReadData(nullptr, 0, (*bucket)[0]);
  EXPECT_EQ(owned.status().code(), Code::kCorruption) << owned.status().ToString();
  EXPECT_NE(owned.status().message().find("does not match its checksum"), std::string::npos);
  Status visited = VisitBucket(damaged_data, "key", [&](const RecordView& view) {
    EXPECT_EQ(ReadData(nullptr, 0, view).status().code(), Code::kCorruption);
    auto as_it_lies = ReadData(nullptr, 0, view, InPlaceData::kAsItLies);
    ASSERT_TRUE(as_it_lies.ok());
    EXPECT_EQ(*as_it_lies, "hh");  // 'i' with its lowest bit flipped
  });
  EXPECT_TRUE(visited.ok()) << visited.ToString();
}

// Format 5 (blob_record.h): every field comes back exactly, whether it
// was packed (the local ETag, a canonical MD5, a lowercase UUID) or kept as
// written (any other form); a name that is its key is not stored, and the
// head's checksum then covers the key, so a key changed on disk is damage.
TEST(LocalBlobRecord, Format5PacksWhatItCanAndGivesBackEveryFieldExactly) {
  const std::string uuid = "c7a46050-e6c0-467b-a60f-112a75663e70";
  struct Case {
    std::string name, etag, md5, value;
    bool leased;
  };
  const std::vector<Case> cases = {
      {"t/a/e/-p/-r", "\"0x382FF466A7C1F0C60000000000500000\"", "DEsIRLJgqa/ABGd1mPBkpg==", uuid,
       false},
      {"t/a/e/-p/-r", "\"0x382ff466a7c1f0c60000000000500000\"",
       "DEsIRLJgqa/ABGd1mPBkpg=", "C7A46050-E6C0-467B-A60F-112A75663E70", true},
      {"t/a/e/-p/-r", "\"e\"", "md5", "c7a46050xe6c0-467b-a60f-112a75663e70", true},
      {std::string(kBucketPrefix + 30, 'n'), "", "", "", false},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name.substr(0, 20) + " " + c.etag + " " + c.value);
    BucketEntry e;
    e.name = c.name;
    BlobRecord& r = e.record;
    r.etag = c.etag;
    r.last_modified_s = -3;
    r.metadata = {{"btxn", c.value}, {"b", ""}, {"c", uuid}};
    if (c.leased) r.lease = OddLease(LeaseState::kBroken);
    r.inline_data = "hi";
    r.data_size = 2;
    r.data_md5 = c.md5;
    const std::string value = EncodeRecord(e), key = BucketKey(c.name);
    ASSERT_EQ(value[0], '\xB5');
    auto bucket = DecodeBucket(value, key);
    ASSERT_TRUE(bucket.ok()) << bucket.status().ToString();
    const BucketEntry& b = (*bucket)[0];
    EXPECT_EQ(b.name, c.name);
    EXPECT_EQ(b.record.etag, c.etag);
    EXPECT_EQ(b.record.last_modified_s, -3);
    EXPECT_EQ(b.record.metadata, r.metadata);
    EXPECT_EQ(b.record.lease.state, r.lease.state);
    EXPECT_EQ(b.record.lease.id, r.lease.id);
    EXPECT_EQ(b.record.lease.duration_seconds, r.lease.duration_seconds);
    EXPECT_EQ(b.record.lease.expires_ms, r.lease.expires_ms);
    EXPECT_EQ(b.record.lease.broken_at_ms, r.lease.broken_at_ms);
    EXPECT_EQ(b.record.inline_data, std::optional<std::string>("hi"));
    EXPECT_EQ(b.record.data_crc, std::optional<uint32_t>(Crc32("hi")));
    EXPECT_EQ(b.record.data_md5, c.md5);
    // Read through the view too: two records in a row reuse one view.
    RecordView view;
    for (int twice = 0; twice < 2; ++twice)
      ASSERT_TRUE(VisitBucket(value, key, view, [&](const RecordView& v) {
                    EXPECT_EQ(v.etag, c.etag);
                    EXPECT_EQ(v.DataMd5(), c.md5);
                    ASSERT_EQ(v.metadata.size(), 3u);  // in name order: b, btxn, c
                    EXPECT_EQ(v.metadata[1].second, c.value);
                    EXPECT_EQ(v.metadata[2].second, uuid);
                  }).ok());
    // Under another key: damage, whether the name is the key or (a long
    // name) kept in the head beside a key of its prefix and digest.
    std::string other = key;
    other[other.size() / 2] ^= 1;
    auto moved = DecodeBucket(value, other);
    EXPECT_EQ(moved.status().code(), Code::kCorruption) << moved.status().ToString();
    for (size_t at : {size_t{1}, size_t{7}, value.size() - 1}) {
      std::string damaged = value;
      damaged[at] ^= 0x10;
      auto read = DecodeBucket(damaged, key);
      if (at == value.size() - 1) {  // the inline data: found when it is read
        ASSERT_TRUE(read.ok());
        EXPECT_TRUE(ReadData(nullptr, 0, (*read)[0]).status().IsCorruption());
      } else {
        EXPECT_TRUE(read.status().IsCorruption()) << at;
      }
    }
    EXPECT_TRUE(DecodeBucket(value.substr(0, 5), key).status().IsCorruption());
    EXPECT_TRUE(DecodeBucket(value.substr(0, value.size() - 1), key).status().IsCorruption());
  }
}

// What format 5 saves on an entity's record as the local store writes it:
// the head of a blob with the local ETag, an MD5 and a transaction's stamp
// is under a third of format 4's (issue 57: docs/performance.md, "Where the
// bytes go").
TEST(LocalBlobRecord, Format5HeadIsAThirdOfFormat4s) {
  BucketEntry e;
  e.name = "t/orders/e/-customer02D030030030030/-order02D030030030030030030030";
  e.record.etag = "\"0x382FF466A7C1F0C60000000000500000\"";
  e.record.last_modified_s = 1795000000;
  e.record.metadata = {{"btxn", "c7a46050-e6c0-467b-a60f-112a75663e70"}};
  e.record.inline_data = std::string(300, 'x');
  e.record.data_size = 300;
  e.record.data_md5 = Md5Base64(*e.record.inline_data);
  const size_t four = EncodeFormat4Record(e).size() - 300, five = EncodeRecord(e).size() - 300;
  EXPECT_EQ(four, 253u);
  EXPECT_LE(five * 3, four) << five;
}

}  // namespace
}  // namespace blobtable::testing
