// The local backend under damage and misuse from outside the API: restored
// backups, aliased paths, crashed readers, damaged files, full disks, long
// keys, read-only users (README "Local backend: what damages a store").
#include <gtest/gtest.h>

#include <filesystem>

#include "blobtable/blob_store.h"
#include "tests/test_util.h"

namespace blobtable::testing {
namespace {

namespace fs = std::filesystem;

Result<std::shared_ptr<BlobStore>> OpenAt(const std::string& dir, StoreOptions o = {}) {
  return OpenLocalBlobStore(dir, o);
}

// A store restored from a copy counts on from the copy's counter; an ETag
// issued after the copy was taken must never match one issued after the
// restore, or a client holding it would overwrite newer data unchecked.
TEST(LocalStoreDamage, AnETagFromBeforeARestoreNeverMatchesAgain) {
  TempDir dir, backup;
  std::string etag_b;
  {
    auto store = OpenAt(dir.path());
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    ASSERT_TRUE((*store)->Put("a", "A", {}).ok());
    fs::copy_file(dir.path() + "/data.mdb", backup.path() + "/data.mdb");
    auto b = (*store)->Put("b", "B", {});
    ASSERT_TRUE(b.ok());
    etag_b = b->etag;
  }
  fs::copy_file(backup.path() + "/data.mdb", dir.path() + "/data.mdb",
                fs::copy_options::overwrite_existing);
  auto store = OpenAt(dir.path());
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  auto c = (*store)->Put("b", "C", {});
  ASSERT_TRUE(c.ok());
  EXPECT_NE(c->etag, etag_b);
  PutOptions stale;
  stale.conditions.if_match = etag_b;
  EXPECT_EQ((*store)->Put("b", "overwrites C?", stale).status().code(), Code::kConflict);
  EXPECT_EQ((*store)->Get("b", {})->data, "C");
}

}  // namespace
}  // namespace blobtable::testing
