// SPDX-License-Identifier: Apache-2.0
#include "storage/local/dense_copy.h"

#include <memory>
#include <optional>
#include <string_view>
#include <vector>

#include "storage/local/blob_record.h"
#include "storage/local/lmdb_env.h"
#include "util/macros.h"
#include "util/stored_format.h"

namespace blobtable::internal {
namespace {

// Bytes written between commits of the copy: few commits (each frees the
// copies of the tree's rightmost pages), and a bounded set of dirty pages.
constexpr size_t kCommitEvery = size_t{64} << 20;

using EnvPtr = std::unique_ptr<MDB_env, void (*)(MDB_env*)>;

// The copy's write transactions, committed every kCommitEvery bytes.
class CopyWriter {
 public:
  explicit CopyWriter(MDB_env* env) : env_(env) {}
  ~CopyWriter() {
    if (txn_ != nullptr) mdb_txn_abort(txn_);
  }
  Result<MDB_txn*> Txn() {
    if (txn_ == nullptr) {
      const int rc = mdb_txn_begin(env_, nullptr, 0, &txn_);
      if (rc != 0) return LmdbError(rc, "writing the compacted copy");
    }
    return txn_;
  }
  Status Put(MDB_dbi dbi, MDB_val key, MDB_val value, unsigned flags) {
    BT_ASSIGN_OR_RETURN(MDB_txn * txn, Txn());
    const int rc = mdb_put(txn, dbi, &key, &value, flags);
    if (rc != 0) return LmdbError(rc, "writing the compacted copy");
    written_ += key.mv_size + value.mv_size;
    return written_ >= kCommitEvery ? Commit() : Status::OK();
  }
  Status Commit() {
    written_ = 0;
    if (txn_ == nullptr) return Status::OK();
    const int rc = mdb_txn_commit(txn_);
    txn_ = nullptr;
    return rc == 0 ? Status::OK() : LmdbError(rc, "writing the compacted copy");
  }

 private:
  MDB_env* env_;
  MDB_txn* txn_ = nullptr;
  size_t written_ = 0;
};

// The names in the main database: each a named database or, if not, a
// plain record (blobtable writes none there; copied all the same).
Result<std::vector<std::string>> MainNames(MDB_txn* txn) {
  MDB_dbi main;
  MDB_cursor* cursor = nullptr;
  int rc = mdb_dbi_open(txn, nullptr, 0, &main);
  if (rc == 0) rc = mdb_cursor_open(txn, main, &cursor);
  if (rc != 0) return LmdbError(rc, "reading the store to compact it");
  std::vector<std::string> names;
  MDB_val k, v;
  for (rc = mdb_cursor_get(cursor, &k, &v, MDB_FIRST); rc == 0;
       rc = mdb_cursor_get(cursor, &k, &v, MDB_NEXT))
    names.emplace_back(FromVal(k));
  mdb_cursor_close(cursor);
  if (rc != MDB_NOTFOUND) return LmdbError(rc, "reading the store to compact it");
  return names;
}

// A blob's record in the current format, if `value` is one of an older
// format that decodes (a bucket of one blob); nothing otherwise.
std::optional<std::string> Upgraded(std::string_view key, std::string_view value) {
  if (IsCurrentFormat(value)) return std::nullopt;
  auto bucket = DecodeBucket(value, key);
  if (!bucket.ok() || bucket->size() != 1) return std::nullopt;
  std::string now = EncodeRecord(bucket->front());
  if (now == value) return std::nullopt;
  return now;
}

// Database `name` of `src` copied whole into `out` in key order.
Status CopyDatabase(MDB_txn* src, const std::string& name, CopyWriter& out) {
  MDB_dbi from;
  int rc = mdb_dbi_open(src, name.c_str(), 0, &from);
  if (rc != 0) return LmdbError(rc, "reading database '" + name + "' to compact it");
  unsigned flags = 0;
  if ((rc = mdb_dbi_flags(src, from, &flags)) != 0)
    return LmdbError(rc, "reading database '" + name + "' to compact it");
  if (flags & MDB_DUPSORT)
    return Status::Internal("database '" + name +
                            "' holds sorted duplicates, which blobtable "
                            "never writes: not compacted");
  BT_ASSIGN_OR_RETURN(MDB_txn * txn, out.Txn());
  MDB_dbi to;
  if ((rc = mdb_dbi_open(txn, name.c_str(), MDB_CREATE | flags, &to)) != 0)
    return LmdbError(rc, "making database '" + name + "' in the compacted copy");
  const bool records = std::string_view(name).starts_with(kContainerDbPrefix);
  MDB_cursor* cursor = nullptr;
  if ((rc = mdb_cursor_open(src, from, &cursor)) != 0)
    return LmdbError(rc, "reading database '" + name + "' to compact it");
  std::unique_ptr<MDB_cursor, void (*)(MDB_cursor*)> guard(cursor, mdb_cursor_close);
  MDB_val k, v;
  for (rc = mdb_cursor_get(cursor, &k, &v, MDB_FIRST); rc == 0;
       rc = mdb_cursor_get(cursor, &k, &v, MDB_NEXT)) {
    std::optional<std::string> upgraded;
    if (records) upgraded = Upgraded(FromVal(k), FromVal(v));
    BT_RETURN_IF_ERROR(out.Put(to, k, upgraded ? ToVal(*upgraded) : v, MDB_APPEND));
  }
  if (rc != MDB_NOTFOUND) return LmdbError(rc, "reading database '" + name + "' to compact it");
  return Status::OK();
}

// LMDB 0.9's page layout (64-bit): a page header of 16 bytes; a node's
// header of 8 bytes before its key and value, its size rounded up to even,
// and a 2-byte pointer to it; a value that would make its node larger than
// half a page goes to overflow pages of its own (the node then holds their
// 8-byte page number).
constexpr uint64_t kLmdbPageHeader = 16, kLmdbNodeHeader = 8, kLmdbPointer = 2;

struct Packing {
  uint64_t page;
  uint64_t leaves = 0, overflow = 0;
  uint64_t used = 0;  // bytes of the leaf being filled
  uint64_t branch_bytes = 0;

  void Add(uint64_t key, uint64_t value) {
    const uint64_t node_max = ((page - kLmdbPageHeader) / 2) & ~uint64_t{1};
    uint64_t node = kLmdbNodeHeader + key + value;
    if (node > node_max) {
      overflow += (kLmdbPageHeader + value + page - 1) / page;
      node = kLmdbNodeHeader + key + 8;
    }
    node = ((node + 1) & ~uint64_t{1}) + kLmdbPointer;
    if (leaves == 0 || used + node > page - kLmdbPageHeader) {
      ++leaves;  // a new leaf, named in the level above by its first key
      used = 0;
      branch_bytes += ((kLmdbNodeHeader + key + 1) & ~uint64_t{1}) + kLmdbPointer;
    }
    used += node;
  }
  // The pages: leaves, overflow pages, and the branch levels above more
  // than one leaf, up to a root of one page.
  uint64_t Total() const { return Walk(nullptr); }
  // The tree's depth: its leaves and the branch levels above them.
  uint64_t Depth() const {
    uint64_t depth = 0;
    Walk(&depth);
    return depth;
  }

 private:
  uint64_t Walk(uint64_t* depth) const {
    const uint64_t room = page - kLmdbPageHeader;
    uint64_t total = leaves + overflow, level = leaves > 1 ? branch_bytes : 0, levels = 1;
    while (level > 0) {
      const uint64_t n = (level + room - 1) / room;
      total += n;
      ++levels;
      level = n > 1 ? n * (kLmdbNodeHeader + 32 + kLmdbPointer) : 0;  // a key of about 32 bytes
    }
    if (depth != nullptr) *depth = levels;
    return total;
  }
};

// One more commit, of the first record of the first database that has one
// written again as it is: LMDB writes the meta page of each commit in turn,
// and the new file's other one still described it empty. So both describe
// the whole copy: a flipped bit in either never opens an empty store (and
// CheckLmdbMetaPages refuses the file).
Status CommitAgain(MDB_env* env, const std::vector<std::string>& names) {
  MDB_txn* txn = nullptr;
  int rc = mdb_txn_begin(env, nullptr, 0, &txn);
  if (rc != 0) return LmdbError(rc, "writing the compacted copy");
  for (const std::string& name : names) {
    MDB_dbi dbi;
    MDB_cursor* cursor = nullptr;
    MDB_val k, v;
    if (mdb_dbi_open(txn, name.c_str(), 0, &dbi) != 0) continue;  // a plain record
    if ((rc = mdb_cursor_open(txn, dbi, &cursor)) != 0) break;
    const int found = mdb_cursor_get(cursor, &k, &v, MDB_FIRST);
    if (found == 0) {
      const std::string key(FromVal(k)), value(FromVal(v));  // the page is about to be copied
      MDB_val kk = ToVal(key), vv = ToVal(value);
      rc = mdb_put(txn, dbi, &kk, &vv, 0);
    }
    mdb_cursor_close(cursor);
    if (found == 0) break;
  }
  if (rc != 0) {
    mdb_txn_abort(txn);
    return LmdbError(rc, "writing the compacted copy");
  }
  rc = mdb_txn_commit(txn);
  return rc == 0 ? Status::OK() : LmdbError(rc, "writing the compacted copy");
}

}  // namespace

Result<uint64_t> DenseSize(MDB_txn* txn) {
  MDB_stat stat;
  MDB_dbi main;
  int rc = mdb_dbi_open(txn, nullptr, 0, &main);
  if (rc == 0) rc = mdb_stat(txn, main, &stat);
  if (rc != 0) return LmdbError(rc, "reading the store's figures");
  BT_ASSIGN_OR_RETURN(std::vector<std::string> names, MainNames(txn));
  uint64_t pages = 2 + 1;  // the two meta pages, the main database
  bool again_counted = false;
  for (const std::string& name : names) {
    MDB_dbi dbi;
    if ((rc = mdb_dbi_open(txn, name.c_str(), 0, &dbi)) == MDB_INCOMPATIBLE) continue;
    MDB_cursor* cursor = nullptr;
    if (rc == 0) rc = mdb_cursor_open(txn, dbi, &cursor);
    if (rc != 0) return LmdbError(rc, "reading the store's figures");
    Packing packing{stat.ms_psize};
    MDB_val k, v;
    for (rc = mdb_cursor_get(cursor, &k, &v, MDB_FIRST); rc == 0;
         rc = mdb_cursor_get(cursor, &k, &v, MDB_NEXT))
      packing.Add(k.mv_size, v.mv_size);
    mdb_cursor_close(cursor);
    if (rc != MDB_NOTFOUND) return LmdbError(rc, "reading the store's figures");
    pages += packing.Total();
    // CommitAgain's copies: the path to the first record, the main
    // database's leaf and the free list's.
    if (!again_counted && packing.leaves > 0) {
      pages += packing.Depth() + 2;
      again_counted = true;
    }
  }
  return pages * stat.ms_psize;
}

Status DenseCopy(MDB_txn* src, const std::string& dest, size_t map_size) {
  MDB_env* raw = nullptr;
  int rc = mdb_env_create(&raw);
  if (rc != 0) return LmdbError(rc, "making the compacted copy");
  EnvPtr env(raw, mdb_env_close);
  rc = mdb_env_set_maxdbs(raw, 1024);
  if (rc == 0) rc = mdb_env_set_mapsize(raw, map_size);
  // Unsynced commits: the copy is synced once, at the end, before it is
  // put in place (until then it is nobody's store).
  if (rc == 0) rc = mdb_env_open(raw, dest.c_str(), MDB_NOTLS | MDB_NOSYNC, 0644);
  if (rc != 0) return LmdbError(rc, "making the compacted copy in " + dest);
  BT_ASSIGN_OR_RETURN(std::vector<std::string> names, MainNames(src));
  CopyWriter out(raw);
  for (const std::string& name : names) {
    MDB_dbi probe;
    rc = mdb_dbi_open(src, name.c_str(), 0, &probe);
    if (rc == MDB_INCOMPATIBLE) {  // a plain record of the main database
      MDB_dbi main_from, main_to;
      MDB_val k = ToVal(name), v;
      BT_ASSIGN_OR_RETURN(MDB_txn * txn, out.Txn());
      rc = mdb_dbi_open(src, nullptr, 0, &main_from);
      if (rc == 0) rc = mdb_get(src, main_from, &k, &v);
      if (rc == 0) rc = mdb_dbi_open(txn, nullptr, 0, &main_to);
      if (rc != 0) return LmdbError(rc, "copying '" + name + "' to the compacted copy");
      BT_RETURN_IF_ERROR(out.Put(main_to, k, v, 0));
      continue;
    }
    if (rc != 0) return LmdbError(rc, "reading database '" + name + "' to compact it");
    BT_RETURN_IF_ERROR(CopyDatabase(src, name, out));
  }
  BT_RETURN_IF_ERROR(out.Commit());
  BT_RETURN_IF_ERROR(CommitAgain(raw, names));
  if ((rc = mdb_env_sync(raw, 1)) != 0) return LmdbError(rc, "syncing the compacted copy");
  return Status::OK();
}

}  // namespace blobtable::internal
