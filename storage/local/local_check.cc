// SPDX-License-Identifier: Apache-2.0
// `blobtable check` for the local backend: every record and every blob's
// data in a container, read and checked against its checksum.
#include "blobtable/blob_store.h"

#include <filesystem>

#include "storage/local/lmdb_env.h"
#include "storage/local/lmdb_page_walk.h"
#include "util/macros.h"
#include "storage/local/blob_record.h"
#include "storage/conditions.h"
#include "util/stored_format.h"

namespace blobtable::internal {
namespace {

// Checks one decoded bucket's blobs' data, and that each lies under its
// own name's key; adds to `report`.
Status CheckData(MDB_txn* txn, MDB_dbi data, std::string_view key, const Bucket& bucket,
                 CheckReport& report) {
  for (const BucketEntry& e : bucket) {
    ++report.blobs;
    // A key's byte flipped in the file: reads by name miss the blob, and a
    // write of that name makes a second one (the review of issue 55).
    if (BucketKey(e.name) != key) {
      report.damaged.push_back({e.name, "record",
                                "it is stored under another key than its name's (the key is "
                                "damaged in the file)"});
      continue;
    }
    auto blob = ReadData(txn, data, e);
    if (blob.status().IsCorruption()) {
      report.damaged.push_back({e.name, "data", blob.status().message()});
      continue;
    }
    BT_RETURN_IF_ERROR(blob.status());
    if (!e.record.data_crc)
      ++report.unverified;
    else if (blob->size() != e.record.data_size)
      report.damaged.push_back({e.name, "data", "its data is not the size its record says"});
  }
  return Status::OK();
}

}  // namespace

// The data file's pages, read from the file (lmdb_page_walk.h) before
// anything is read through LMDB's map: LMDB trusts its pages, and a damaged
// one makes it fault (SIGSEGV, SIGBUS) or skip rows without a word.
Status CheckPages(LmdbEnv& env) {
  BT_ASSIGN_OR_RETURN(LmdbTxn txn, LmdbTxn::Begin(env, /*read_only=*/true));  // pins the snapshot
  const std::string damage = WalkLmdbPages(env.directory() + "/data.mdb", mdb_txn_id(txn.get()));
  if (damage.empty()) return Status::OK();
  return Status::Corruption("local store " + env.directory() + ": its data file is damaged (" +
                            damage + "): restore it from a backup");
}

// The containers the store holds, by name, in words ("none" if none).
static std::string ContainersIn(LmdbEnv& env) {
  auto txn = LmdbTxn::Begin(env, /*read_only=*/true);
  if (!txn.ok()) return "unknown: " + txn.status().ToString();
  MDB_dbi main = 0;
  MDB_cursor* cursor = nullptr;
  if (mdb_dbi_open(txn->get(), nullptr, 0, &main) != 0 ||
      mdb_cursor_open(txn->get(), main, &cursor) != 0)
    return "unknown";
  std::string names;
  const std::string prefix = kContainerDbPrefix;
  MDB_val k, v;
  for (int rc = mdb_cursor_get(cursor, &k, &v, MDB_FIRST); rc == 0;
       rc = mdb_cursor_get(cursor, &k, &v, MDB_NEXT)) {
    const std::string_view key = FromVal(k);
    if (key.starts_with(prefix))
      names += (names.empty() ? "'" : ", '") + std::string(key.substr(prefix.size())) + "'";
  }
  mdb_cursor_close(cursor);
  return names.empty() ? "none" : names;
}

namespace {

// Reads every bucket and blob, in one read transaction.
Result<CheckReport> Walk(LmdbEnv& env, MDB_dbi buckets, MDB_dbi data) {
  BT_ASSIGN_OR_RETURN(LmdbTxn txn, LmdbTxn::Begin(env, /*read_only=*/true));
  MDB_cursor* cursor = nullptr;
  int rc = mdb_cursor_open(txn.get(), buckets, &cursor);
  if (rc != 0) return LmdbError(rc, "walking the local store");
  std::unique_ptr<MDB_cursor, void (*)(MDB_cursor*)> guard(cursor, mdb_cursor_close);
  CheckReport report;
  MDB_val k, v;
  for (rc = mdb_cursor_get(cursor, &k, &v, MDB_FIRST); rc == 0;
       rc = mdb_cursor_get(cursor, &k, &v, MDB_NEXT)) {
    const std::string key(FromVal(k));
    auto bucket = DecodeBucket(FromVal(v), key);
    if (!bucket.ok()) {
      ++report.blobs;
      report.damaged.push_back({key, "record", bucket.status().message()});
      continue;
    }
    BT_RETURN_IF_ERROR(CheckData(txn.get(), data, key, *bucket, report));
  }
  if (rc != MDB_NOTFOUND) return LmdbError(rc, "walking the local store");
  return report;
}

}  // namespace

}  // namespace blobtable::internal

namespace blobtable {

Result<CheckReport> CheckLocalStore(const std::string& directory, std::string_view container,
                                    const LocalOptions& options) {
  BT_RETURN_IF_ERROR(internal::ValidateContainerName(container));
  // A check makes nothing: a directory without a store (a typo) is said so,
  // as every other command says it (it used to be made a store, checked
  // clean).
  std::error_code ec;
  if (!std::filesystem::exists(directory + "/data.mdb", ec))
    return Status::NotFound("no store at " + directory + " (and a check makes none)");
  BT_ASSIGN_OR_RETURN(std::shared_ptr<internal::LmdbEnv> env,
                      internal::LmdbEnv::Open(directory, options.map_size, options.file_mode));
  BT_RETURN_IF_ERROR(internal::CheckPages(*env));
  // Opened, never made: a check writes nothing (a container's name damaged
  // in the file, or mistyped, used to be made an empty container, checked
  // clean).
  const std::string bucket_db = internal::kContainerDbPrefix + std::string(container);
  const std::string data_db = internal::kDataDbPrefix + std::string(container);
  auto buckets = env->Database(bucket_db, /*create=*/false);
  if (buckets.status().IsNotFound())
    return Status::NotFound("local store " + directory + " holds no container '" +
                            std::string(container) +
                            "' (it holds: " + internal::ContainersIn(*env) + ")");
  BT_RETURN_IF_ERROR(buckets.status());
  auto data = env->Database(data_db, /*create=*/false);
  if (!data.ok()) {
    env->ReleaseDatabase(bucket_db);
    if (data.status().IsNotFound())
      return Status::Corruption("local store " + directory + ": container '" +
                                std::string(container) + "' has no data database (" + data_db +
                                "): restore it from a backup");
    return data.status();
  }
  auto report = internal::Walk(*env, *buckets, *data);  // its transaction ends before the release
  env->ReleaseDatabase(bucket_db);
  env->ReleaseDatabase(data_db);
  return report;
}

}  // namespace blobtable
