// SPDX-License-Identifier: Apache-2.0
// The local backend under damage and misuse from outside the API: restored
// backups, aliased paths, crashed readers, damaged files, full disks, long
// keys, read-only users (docs/backends.md#what-damages-a-local-store).
#include <gtest/gtest.h>

#include <sched.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <atomic>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <map>
#include <filesystem>
#include <thread>
#include <vector>

#include "blobtable/blob_store.h"
#include "blobtable/store.h"
#include "model/blob_naming.h"
#include "storage/local/lmdb_env.h"
#include "storage/local/lmdb_page_walk.h"
#include "storage/local/blob_record.h"
#include "tests/test_util.h"

namespace blobtable::testing {
namespace {
using namespace internal;

namespace fs = std::filesystem;

Result<std::shared_ptr<BlobStore>> OpenAt(const std::string& dir, LocalOptions o = {}) {
  return OpenLocalBlobStore(dir, kDefaultContainer, o);
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

// One environment per data file per process, however its path reaches it:
// a symlink, or another directory of hard links to the same files (the
// in-process effect of a bind mount). A second environment would drop this
// process's LMDB locks when it closed, while other processes write.
TEST(LocalStoreDamage, AliasedPathsShareOneEnvironment) {
  TempDir dir, links;
  auto first = LmdbEnv::Open(dir.path(), 64 << 20);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  fs::create_hard_link(dir.path() + "/data.mdb", links.path() + "/data.mdb");
  fs::create_hard_link(dir.path() + "/lock.mdb", links.path() + "/lock.mdb");
  const std::string symlink = links.path() + "/via-symlink";
  fs::create_directory_symlink(dir.path(), symlink);
  for (const std::string& alias : {links.path(), symlink}) {
    auto again = LmdbEnv::Open(alias, 64 << 20);
    ASSERT_TRUE(again.ok()) << alias << ": " << again.status().ToString();
    EXPECT_EQ(again->get(), first->get()) << alias;
  }

  // Writers in other processes, while this one opens and closes the aliases.
  auto store = OpenAt(dir.path());
  ASSERT_TRUE(store.ok());
  ASSERT_TRUE((*store)->Put("n", "0", {}).ok());
  auto increment = [](BlobStore& blobs) {
    for (;;) {
      auto got = blobs.Get("n", {});
      if (!got.ok()) return false;
      PutOptions put;
      put.conditions.if_match = got->properties.etag;
      auto r = blobs.Put("n", std::to_string(std::stoi(got->data) + 1), put);
      if (r.ok()) return true;
      if (!r.status().IsConflict()) return false;
    }
  };
  constexpr int kProcs = 3, kEach = 40;
  std::vector<pid_t> pids;
  for (int p = 0; p < kProcs; ++p)
    pids.push_back(ForkChild([&] {
      auto mine = OpenAt(dir.path());
      if (!mine.ok()) return 2;
      for (int i = 0; i < kEach; ++i)
        if (!increment(**mine)) return 3;
      return 0;
    }));
  for (int i = 0; i < kEach; ++i) {
    auto alias = OpenAt(i % 2 ? links.path() : symlink);  // opened and closed each time
    ASSERT_TRUE(alias.ok()) << alias.status().ToString();
    ASSERT_TRUE(increment(**alias));
  }
  for (pid_t pid : pids) EXPECT_EQ(WaitChild(pid), 0);
  EXPECT_EQ((*store)->Get("n", {})->data, std::to_string((kProcs + 1) * kEach));
}

// A second store on the same files in one process gets the map size it
// asked for when that is larger (it shares the first one's environment).
TEST(LocalStoreDamage, ALaterOpenAskingForALargerMapGetsIt) {
  TempDir dir;
  LocalOptions small, large;
  small.map_size = 4 << 20;
  large.map_size = 64 << 20;
  auto first = OpenAt(dir.path(), small);
  ASSERT_TRUE(first.ok());
  const std::string mib(1 << 20, 'x');
  Status full;
  for (int i = 0; i < 8 && full.ok(); ++i)
    full = (*first)->Put("b" + std::to_string(i), mib, {}).status();
  EXPECT_EQ(full.storage_code(), kLmdbMapFull) << full.ToString();
  auto second = OpenAt(dir.path(), large);
  ASSERT_TRUE(second.ok());
  for (int i = 0; i < 8; ++i) {
    auto put = (*second)->Put("c" + std::to_string(i), mib, {});
    ASSERT_TRUE(put.ok()) << i << ": " << put.status().ToString();
  }
  EXPECT_TRUE((*first)->Put("d", mib, {}).ok());  // the first shares the larger map
}

// Growing the map takes every shard of the transactions' gate (each thread
// reads under its own): with threads reading on several shards all along,
// later opens that ask for larger maps grow it, and every read and write
// succeeds.
TEST(LocalStoreDamage, TheMapGrowsWhileThreadsReadOnTheirOwnShards) {
  TempDir dir;
  LocalOptions options;
  options.map_size = 4 << 20;
  auto first = OpenAt(dir.path(), options);
  ASSERT_TRUE(first.ok());
  ASSERT_TRUE((*first)->Put("k", "v", {}).ok());
  std::atomic<bool> stop{false};
  std::atomic<int> failed{0}, reads{0};
  std::vector<std::thread> readers;
  for (int t = 0; t < 4; ++t)
    readers.emplace_back([&] {
      while (!stop.load()) {
        auto got = (*first)->Get("k", {});
        if (!got.ok() || got->data != "v") ++failed;
        ++reads;
      }
    });
  const std::string mib(1 << 20, 'x');
  for (int i = 0; i < 6; ++i) {
    options.map_size = static_cast<uint64_t>(8 + 4 * i) << 20;
    auto larger = OpenAt(dir.path(), options);  // grows the shared environment's map
    ASSERT_TRUE(larger.ok()) << i;
    auto put = (*larger)->Put("m" + std::to_string(i), mib, {});
    EXPECT_TRUE(put.ok()) << i << ": " << put.status().ToString();
  }
  while (reads.load() < 100) std::this_thread::yield();  // the readers have run
  stop = true;
  for (std::thread& t : readers) t.join();
  EXPECT_EQ(failed.load(), 0);
}

// A process killed inside a read leaves its reader slot behind, pinning the
// pages it saw; writers reclaim such slots while the store is in use.
pid_t ChildKilledWhileReading(const std::string& dir) {
  pid_t pid = ForkChild([&] {
    auto env = LmdbEnv::Open(dir, 64 << 20);
    if (!env.ok()) return 2;
    auto reading = LmdbTxn::Begin(**env, /*read_only=*/true);
    if (!reading.ok()) return 3;
    raise(SIGKILL);
    return 4;
  });
  return pid;
}

TEST(LocalStoreDamage, WritersReclaimTheSlotsOfReadersThatDied) {
  TempDir dir;
  auto store = OpenAt(dir.path());
  ASSERT_TRUE(store.ok());
  const std::string mib(1 << 20, 'x');
  ASSERT_TRUE((*store)->Put("big", mib, {}).ok());
  ASSERT_EQ(WaitChild(ChildKilledWhileReading(dir.path())), 128 + SIGKILL);
  auto env = LmdbEnv::Open(dir.path(), 64 << 20);
  ASSERT_TRUE(env.ok());
  (*env)->set_reader_check_interval(std::chrono::milliseconds(0));  // every write looks
  for (int i = 0; i < 150; ++i) ASSERT_TRUE((*store)->Put("big", mib, {}).ok()) << i;
  EXPECT_LT(fs::file_size(dir.path() + "/data.mdb"), 16u << 20);  // 150 MiB if pinned
}

TEST(LocalStoreDamage, AFullMapReclaimsDeadReadersBeforeGivingUp) {
  TempDir dir;
  LocalOptions o;
  o.map_size = 8 << 20;
  auto store = OpenAt(dir.path(), o);
  ASSERT_TRUE(store.ok());
  const std::string mib(1 << 20, 'x');
  ASSERT_TRUE((*store)->Put("big", mib, {}).ok());
  ASSERT_EQ(WaitChild(ChildKilledWhileReading(dir.path())), 128 + SIGKILL);
  auto env = LmdbEnv::Open(dir.path(), o.map_size);
  ASSERT_TRUE(env.ok());
  (*env)->set_reader_check_interval(std::chrono::hours(1));  // only MAP_FULL looks
  for (int i = 0; i < 30; ++i) ASSERT_TRUE((*store)->Put("big", mib, {}).ok()) << i;
}

// A data file cut short (half, or just its two meta pages) or emptied is
// Corruption on open, naming the file: never a SIGBUS on the first read, and
// never a new empty store that makes a table look empty.
// The CLI on the store in `dir`: its exit code and standard output.
struct CliRun {
  int code;
  std::string out;
};

CliRun RunCli(const std::string& dir, const std::string& args,
              const std::string& input = "/dev/null") {
  const std::string command = std::string(BLOBTABLE_CLI_PATH) + " --store '" + dir + "' " + args +
                              " <'" + input + "' 2>/dev/null";
  FILE* p = popen(command.c_str(), "r");
  std::string out;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof(buf), p)) > 0) out.append(buf, n);
  int status = pclose(p);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

class DamagedDataFile : public ::testing::TestWithParam<const char*> {};

TEST_P(DamagedDataFile, IsCorruptionOnOpenNotACrashOrAnEmptyStore) {
  TempDir dir;
  {
    auto store = OpenAt(dir.path());
    ASSERT_TRUE(store.ok());
    for (int i = 0; i < 50; ++i)
      ASSERT_TRUE((*store)->Put("b" + std::to_string(i), std::string(10'000, 'x'), {}).ok());
  }
  const std::string data = dir.path() + "/data.mdb";
  const std::string damage = GetParam();
  if (damage == "deleted")
    fs::remove(data);
  else if (damage == "half")
    fs::resize_file(data, fs::file_size(data) / 2);
  else if (damage == "8KiB")
    fs::resize_file(data, 8192);
  else if (damage == "100B")
    fs::resize_file(data, 100);
  else
    fs::resize_file(data, 0);
  auto bytes = [&] {
    std::ifstream f(data, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(f), {});
  };
  const std::string damaged = bytes();
  auto store = OpenAt(dir.path());
  EXPECT_EQ(store.status().code(), Code::kCorruption)
      << damage << ": " << store.status().ToString();
  EXPECT_NE(store.status().message().find("data.mdb"), std::string::npos)
      << store.status().ToString();
  // Issue 55, item 9: finding the damage changed nothing (the first open
  // padded a truncated file back to its meta's length, and the next one
  // took the zeros for pages: an LMDB assertion, reads that succeeded, a
  // backup of the damaged store with exit 0), and the next open says the
  // same.
  if (damage != "deleted" && damage != "empty") {
    EXPECT_EQ(bytes() == damaged, true) << damage << ": the damaged file was changed";
    EXPECT_EQ(OpenAt(dir.path()).status().code(), Code::kCorruption) << damage;
  }
  if (damage == "half") {  // from the shell: check says damaged every time; backup refuses
    for (int run = 0; run < 2; ++run) EXPECT_EQ(RunCli(dir.path(), "check").code, 8) << run;
    EXPECT_NE(RunCli(dir.path(), "backup " + dir.path() + "-copy").code, 0);
    EXPECT_EQ(bytes() == damaged, true) << "the damaged file was changed";
  }
  // compact copies every page through LMDB's map: it died of SIGBUS (exit
  // 135) on a file cut short (the review of issue 55); Corruption now, the
  // file left as it is.
  if (damage != "deleted") {
    EXPECT_EQ(RunCli(dir.path(), "compact").code, 1) << damage;
    if (damage != "empty") {
      EXPECT_EQ(bytes() == damaged, true) << damage << ": compact changed it";
    }
  }
  EXPECT_FALSE(fs::exists(data) && fs::file_size(data) > 0 && damage == "empty")
      << "an emptied data file was made into a new store";
}

INSTANTIATE_TEST_SUITE_P(Damage, DamagedDataFile,
                         ::testing::Values("half", "8KiB", "100B", "empty", "deleted"));

// The review of issue 55: one flipped bit in a page of data.mdb made
// `check`, `count`, `query` and `stats` die of SIGSEGV, and another made a
// query answer 53 rows of 161 with exit 0 (LMDB trusts its pages). `check`
// now walks every page from the file first. Each of these 300 copies of a
// store (two tables; values inline and on overflow pages; deletes, so the
// free list holds pages) has 1 to 3 bits flipped, in the first 64 bytes of
// a page (headers, node pointers, the first nodes) or anywhere. A child
// checks it, and must not crash; where it says the store is sound, another
// child reads every row through the API, and must find them all as written
// (no crash, no error, no row missing or changed): damage that changes what
// a read sees is damage `check` finds.
TEST(DamagedDataFile, EveryFlippedBitThatBreaksAPageIsFoundByCheckNeverACrash) {
  TempDir dir;
  const std::string pristine = dir.path() + "/pristine";
  std::map<std::string, std::string> rows;  // "table/pk/rk" -> v
  {
    auto store = Store::Open(pristine);
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    for (const char* name : {"big", "small"}) {
      auto table = *(*store)->OpenTable(name);
      for (int i = 0; i < 160; ++i) {
        const std::string pk = "p" + std::to_string(i % 3), rk = "r" + std::to_string(1000 + i);
        const std::string v(i % 17 == 0 ? 6000 : 150, static_cast<char>('a' + i % 26));
        ASSERT_TRUE(table.Upsert(Entity(pk, rk).Set("v", v)).ok());
        rows[std::string(name) + "/" + pk + "/" + rk] = v;
      }
      for (int i = 0; i < 160; i += 9) {
        const std::string pk = "p" + std::to_string(i % 3), rk = "r" + std::to_string(1000 + i);
        ASSERT_TRUE(table.Delete(pk, rk, "*").ok());
        rows.erase(std::string(name) + "/" + pk + "/" + rk);
      }
    }
  }
  // In a child: 0 if every row reads back as written, 2 if the reads
  // differ, 1 if a read failed.
  auto read_all = [&](const std::string& at) -> int {
    auto store = Store::Open(at);
    if (!store.ok()) return 1;
    std::map<std::string, std::string> seen;
    for (const char* name : {"big", "small"}) {
      auto table = (*store)->OpenTable(name);
      if (!table.ok()) return 1;
      auto scan = table->Scan();
      for (const Entity& e : scan) {
        const std::string* v = e.FindAs<std::string>("v");
        seen[std::string(name) + "/" + e.partition_key() + "/" + e.row_key()] = v ? *v : "";
      }
      if (!scan.status().ok()) return 1;
      for (const auto& [key, v] : rows)  // each by its key too: a search routes by the keys
        if (key.starts_with(std::string(name) + "/")) {
          const size_t a = key.find('/'), b = key.find('/', a + 1);
          auto got = table->Get(key.substr(a + 1, b - a - 1), key.substr(b + 1));
          if (!got.ok()) return got.status().IsNotFound() ? 2 : 1;
        }
    }
    return seen == rows ? 0 : 2;
  };
  auto in_child = [](const std::function<int()>& body) { return WaitChild(ForkChild(body)); };
  ASSERT_EQ(in_child([&] { return read_all(pristine); }), 0);
  const uint64_t size = fs::file_size(pristine + "/data.mdb");
  int checked_sound = 0, found = 0;
  for (uint64_t seed = 1; seed <= 300; ++seed) {
    const std::string copy = dir.path() + "/copy";
    fs::remove_all(copy);
    fs::copy(pristine, copy);
    uint64_t x = seed * 0x9E3779B97F4A7C15ull;
    auto next = [&] { return x ^= x << 13, x ^= x >> 7, x ^= x << 17; };
    const int flips = 1 + static_cast<int>(next() % 3);
    {
      std::fstream f(copy + "/data.mdb", std::ios::in | std::ios::out | std::ios::binary);
      for (int i = 0; i < flips; ++i) {
        const uint64_t page = 2 + next() % (size / 4096 - 2);  // never the meta pages
        const uint64_t at = seed % 2 ? page * 4096 + next() % 64 : next() % size;
        char c = 0;
        f.seekg(static_cast<std::streamoff>(at));
        f.read(&c, 1);
        c = static_cast<char>(c ^ (1 << (next() % 8)));
        f.seekp(static_cast<std::streamoff>(at));
        f.write(&c, 1);
      }
    }
    const int check = in_child([&] {
      auto report = CheckLocalStore(copy);
      if (!report.ok()) return report.status().IsCorruption() ? 1 : 3;
      return report->damaged.empty() ? 0 : 1;
    });
    ASSERT_LE(check, 1) << "seed " << seed << ": check "
                        << (check >= 128 ? "died of a signal" : "failed otherwise");
    if (check == 1) {
      ++found;
      continue;
    }
    ++checked_sound;
    const int read = in_child([&] { return read_all(copy); });
    EXPECT_EQ(read, 0) << "seed " << seed << ": check said the store is sound, but reading it "
                       << (read >= 128 ? "crashed"
                           : read == 2 ? "answered wrongly"
                                       : "failed");
  }
  EXPECT_GT(found, 30);          // page damage is found...
  EXPECT_GT(checked_sound, 30);  // ...and flips in free pages or values' bytes still pass
}

// The review of issue 57: LMDB opens the meta page with the larger
// transaction number, and keeps no checksum of it, so one flipped bit there
// opened an older snapshot as the store (the last commit gone, exit 0), or,
// after `compact`, whose copy's first meta page described it empty, no
// table at all. The two numbers are consecutive, each on its page (N on
// page N % 2): a flip that breaks that is Corruption on open, and compact
// leaves both pages describing the whole copy.
TEST(DamagedDataFile, AFlippedBitInAMetaPagesTransactionNumberIsCorruption) {
  TempDir dir;
  auto fill = [](const std::string& at) {
    auto store = Store::Open(at);
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    auto table = *(*store)->OpenTable("tab");
    for (int i = 0; i < 4; ++i)
      ASSERT_TRUE(table.Upsert(Entity("p", "r" + std::to_string(i))).ok());
  };
  auto txnid = [](const std::string& at, int meta) {
    std::ifstream f(at + "/data.mdb", std::ios::binary);
    f.seekg(meta * 4096 + 144);
    uint64_t v = 0;
    f.read(reinterpret_cast<char*>(&v), 8);
    return v;
  };
  const std::string plain = dir.path() + "/plain", compacted = dir.path() + "/compacted";
  fill(plain);
  fill(compacted);
  ASSERT_TRUE(Store::Compact(compacted).ok());
  EXPECT_GE(std::min(txnid(compacted, 0), txnid(compacted, 1)), 1u)
      << "both meta pages describe the compacted copy";
  for (const std::string& pristine : {plain, compacted}) {
    for (int meta : {0, 1}) {
      for (int bit : {0, 1, 6, 40}) {
        SCOPED_TRACE(pristine + " meta " + std::to_string(meta) + " bit " + std::to_string(bit));
        const uint64_t before = txnid(pristine, meta), other = txnid(pristine, 1 - meta);
        const uint64_t after = before ^ (uint64_t{1} << bit);
        const std::string copy = dir.path() + "/copy";
        fs::remove_all(copy);
        fs::copy(pristine, copy);
        {
          std::fstream f(copy + "/data.mdb", std::ios::binary | std::ios::in | std::ios::out);
          f.seekp(meta * 4096 + 144);
          f.write(reinterpret_cast<const char*>(&after), 8);
        }
        auto store = Store::Open(copy);
        // Bit 1 can give a pair LMDB writes (N-2 from N beside N-1, or N+1
        // from N-1 beside N): not found; LMDB then opens the snapshot of the
        // commit before the last (docs/backends.md says so).
        if (after % 2 == static_cast<uint64_t>(meta) &&
            (after + 1 == other || other + 1 == after)) {
          EXPECT_EQ(bit, 1);
          EXPECT_TRUE(store.ok()) << store.status().ToString();
          continue;
        }
        ASSERT_EQ(store.status().code(), Code::kCorruption) << store.status().ToString();
        EXPECT_NE(store.status().message().find("transaction numbers"), std::string::npos);
      }
    }
  }
}

// The second review of issue 57: the meta pages were read in two reads,
// without LMDB's writer lock, and commits of other processes between them
// gave a pair two commits apart: a healthy store refused as damaged (3
// opens in 3,000 while six processes wrote). They are judged as one read
// sees them, and a pair judged damaged only when a second read sees it
// again.
TEST(DamagedDataFile, MetaPagesAreNeverJudgedDamagedWhileOtherProcessesCommit) {
  TempDir dir;
  {
    auto store = Store::Open(dir.path());
    ASSERT_TRUE(store.ok());
  }
  std::vector<pid_t> writers;
  for (int w = 0; w < 2; ++w)
    writers.push_back(ForkChild([&, w] {
      StoreOptions o;
      o.local.durability = LocalDurability::kRelaxed;
      auto store = Store::Open(dir.path(), o);
      if (!store.ok()) return 2;
      auto table = *(*store)->OpenTable("tab");
      for (int i = 0; i < 1500; ++i)
        if (!table.Upsert(Entity("p" + std::to_string(w), "r" + std::to_string(i % 50))).ok())
          return 3;
      return 0;
    }));
  int checks = 0, damaged = 0, running = 2;
  std::string why;
  while (running > 0) {
    for (int i = 0; i < 200; ++i, ++checks) {
      std::string verdict = CheckLmdbMetaPages(dir.path() + "/data.mdb");
      if (!verdict.empty()) {
        ++damaged;
        why = verdict;
      }
    }
    running = 0;
    for (pid_t& pid : writers) {
      if (pid == 0) continue;
      int status = 0;
      if (waitpid(pid, &status, WNOHANG) == pid) {
        EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
        pid = 0;
      } else {
        ++running;
      }
    }
  }
  EXPECT_EQ(damaged, 0) << "of " << checks << " checks; the last: " << why;
  EXPECT_GT(checks, 0);
}

// The second review of issue 55: damage the page walk alone let through,
// each made by one flipped bit of a store's data.mdb; `check` must report
// each (and write nothing), and none may crash a process (SIGFPE).
TEST(DamagedDataFile, CheckFindsFlippedKeysNamesFlagsAndPageSizes) {
  TempDir dir;
  const std::string pristine = dir.path() + "/pristine";
  {
    auto store = Store::Open(pristine);
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    auto table = *(*store)->OpenTable("tab");
    for (int i = 0; i < 200; ++i)
      ASSERT_TRUE(table.Upsert(Entity("p", "r" + std::to_string(1000 + i)).Set("n", i)).ok());
  }
  const std::string bytes = [&] {
    std::ifstream f(pristine + "/data.mdb", std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(f), {});
  }();
  // A copy with bit `mask` of byte `at` flipped; its bytes, to see that a
  // check changed nothing.
  auto flipped = [&](const std::string& name, size_t at, char mask) {
    const std::string copy = dir.path() + "/" + name;
    fs::copy(pristine, copy);
    std::string b = bytes;
    b[at] = static_cast<char>(b[at] ^ mask);
    std::ofstream(copy + "/data.mdb", std::ios::binary | std::ios::trunc) << b;
    return copy;
  };
  auto unchanged = [&](const std::string& copy, size_t at, char mask) {
    std::ifstream f(copy + "/data.mdb", std::ios::binary);
    std::string now(std::istreambuf_iterator<char>(f), {});
    return now.size() == bytes.size() && static_cast<char>(now[at] ^ mask) == bytes[at];
  };
  auto u64 = [&](size_t at) {
    uint64_t v = 0;
    std::memcpy(&v, bytes.data() + at, 8);
    return v;
  };
  // Where `needle` lies in the page `pgno` (a live one: old copies of
  // pages linger on the free list).
  auto in_page = [&](uint64_t pgno, const std::string& needle) {
    const size_t at = bytes.substr(pgno * 4096, 4096).find(needle);
    EXPECT_NE(at, std::string::npos) << needle;
    return at == std::string::npos ? 0 : pgno * 4096 + at;
  };
  // The main database's root, by the newer meta page (a leaf, in a store
  // of two databases): LMDB's MDB_meta after the 16-byte page header.
  const size_t newer = u64(4096 + 144) > u64(144) ? 4096 : 0;
  const uint64_t main_root = u64(newer + 128);
  // Where an entity's key lies in its live leaf page (copies of it linger
  // in pages on the free list): where LMDB's cursor finds it in its map.
  auto live_key = [&](const std::string& key) -> size_t {
    auto env = LmdbEnv::Open(pristine, LocalOptions{}.map_size);
    EXPECT_TRUE(env.ok());
    if (!env.ok()) return 0;
    auto dbi = (*env)->Database("container:blobtable", /*create=*/false);
    auto txn = LmdbTxn::Begin(**env, /*read_only=*/true);
    EXPECT_TRUE(dbi.ok() && txn.ok());
    MDB_cursor* cursor = nullptr;
    MDB_val k = ToVal(key), v;
    size_t at = 0;
    if (mdb_cursor_open(txn->get(), *dbi, &cursor) == 0 &&
        mdb_cursor_get(cursor, &k, &v, MDB_SET_KEY) == 0) {
      // The map is page-aligned; a page begins with its number (MDB_page).
      const auto p = reinterpret_cast<uintptr_t>(k.mv_data);
      uint64_t pgno = 0;
      std::memcpy(&pgno, reinterpret_cast<const void*>(p & ~uintptr_t{4095}), 8);
      at = pgno * 4096 + (p & 4095);
    }
    mdb_cursor_close(cursor);
    EXPECT_EQ(bytes.substr(at, key.size()), key);
    return at;
  };
  // An entity's key, its order kept (the last byte, 0 -> 8): reads by name
  // missed it and an insert of that name made a second blob.
  {
    const std::string name = *naming::EntityBlobName("tab", "p", "r1100");
    const size_t at = live_key(name) + name.size() - 1;
    const std::string copy = flipped("key", at, 0x08);
    auto check = CheckLocalStore(copy);
    ASSERT_TRUE(check.ok()) << check.status().ToString();
    ASSERT_EQ(check->damaged.size(), 1u);
    // Format 5 keeps no name beside a key that is one: its checksum covers
    // the key.
    EXPECT_NE(check->damaged[0].detail.find("checksum does not match"), std::string::npos)
        << check->damaged[0].detail;
    EXPECT_TRUE(unchanged(copy, at, 0x08));
  }
  // The container's name in the main tree: a check found no container,
  // made an empty one (writing to the file) and said clean.
  {
    const size_t at = in_page(main_root, "container:blobtable") + 17;
    const std::string copy = flipped("name", at, 0x01);
    auto check = CheckLocalStore(copy);
    EXPECT_EQ(check.status().code(), Code::kNotFound) << check.status().ToString();
    EXPECT_NE(check.status().message().find("holds no container 'blobtable'"), std::string::npos);
    EXPECT_TRUE(unchanged(copy, at, 0x01));
  }
  // A database's flags (MDB_REVERSEKEY, in its record after its name):
  // LMDB then searched in another order, and queries came back empty.
  {
    const std::string key = "container:blobtable";
    const size_t at = in_page(main_root, key) + key.size() + 4;
    const std::string copy = flipped("flags", at, 0x02);
    EXPECT_EQ(CheckLocalStore(copy).status().code(), Code::kCorruption);
    EXPECT_TRUE(unchanged(copy, at, 0x02));
  }
  // The page size in a meta page (the free list's md_pad, 4096 -> 0):
  // every command died of SIGFPE, opening included.
  for (size_t meta : {0, 1}) {
    const size_t at = meta * 4096 + 16 + 24 + 1;
    const std::string copy = flipped("psize" + std::to_string(meta), at, 0x10);
    const int opened = WaitChild(ForkChild([&] {
      auto store = Store::Open(copy);
      return store.status().IsCorruption() ? 0 : 1;
    }));
    EXPECT_EQ(opened, 0) << "meta " << meta << ": 136 is SIGFPE";
    EXPECT_TRUE(unchanged(copy, at, 0x10));
  }
}

// The pages past the end of the file that LMDB's last write allocated and
// freed again before committing (it never writes them) are not damage: the
// store opens, and keeps what it held. (Before 2026-11-27 such a store was
// refused as "data.mdb is truncated" after a large delete: these 1,500
// inserts and the drop leave such a page.)
TEST(LocalStoreDamage, AFileShortOnlyByPagesItsLastWriteFreedOpens) {
  TempDir dir;
  {
    auto store = Store::Open(dir.path());
    ASSERT_TRUE(store.ok());
    for (const auto& [name, rows] : {std::pair<std::string, int>{"orders", 1500}, {"keep", 10}}) {
      auto table = *(*store)->OpenTable(name);
      for (int i = 0; i < rows;) {
        auto txn = (*store)->Begin();
        for (int j = 0; j < 100 && i < rows; ++j, ++i)
          ASSERT_TRUE(txn->Insert(table, Entity("p", "r" + std::to_string(100000 + i))
                                             .Set("v", Binary{std::string(1000, 'v')}))
                          .ok());
        ASSERT_TRUE(txn->Commit().ok());
      }
    }
    ASSERT_TRUE((*store)->DropTable("orders").ok());
  }
  // The condition itself, read as LMDB reads it.
  MDB_env* env = nullptr;
  ASSERT_EQ(mdb_env_create(&env), 0);
  ASSERT_EQ(mdb_env_set_maxdbs(env, 1024), 0);
  ASSERT_EQ(mdb_env_open(env, dir.path().c_str(), MDB_RDONLY | MDB_NOLOCK, 0644), 0);
  MDB_envinfo info;
  MDB_stat stat;
  ASSERT_EQ(mdb_env_info(env, &info), 0);
  ASSERT_EQ(mdb_env_stat(env, &stat), 0);
  mdb_env_close(env);
  const uint64_t counted = (info.me_last_pgno + 1) * stat.ms_psize;
  ASSERT_LT(fs::file_size(dir.path() + "/data.mdb"), counted) << "the scenario no longer leaves "
                                                                 "a file shorter than its meta";
  auto store = Store::Open(dir.path());
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  EXPECT_EQ(*(*store)->OpenTable("keep")->Count(), 10);
  EXPECT_EQ(fs::file_size(dir.path() + "/data.mdb"), counted);
  auto check = CheckLocalStore(dir.path());
  ASSERT_TRUE(check.ok());
  EXPECT_TRUE(check->damaged.empty());
}

// A full disk: a write fails IOError saying so, reads go on, writes resume
// once space is freed, and creating a store on the full disk fails cleanly.
// On a 4 MiB tmpfs in a private mount namespace of a child process (needs
// CAP_SYS_ADMIN; skipped, with the reason, where there is none).
TEST(LocalStoreDamage, ADiskFullIsAClearErrorAndWritesResumeWhenSpaceReturns) {
  TempDir dir;
  constexpr int kNoNamespace = 77;
  pid_t pid = ForkChild([&] {
    if (unshare(CLONE_NEWNS) != 0 ||
        mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0 ||
        mount("tmpfs", dir.path().c_str(), "tmpfs", 0, "size=4m") != 0)
      return kNoNamespace;
    const std::string ballast = dir.path() + "/ballast";
    std::ofstream(ballast) << std::string(1 << 20, 'b');
    auto store = OpenAt(dir.path() + "/store");
    if (!store.ok()) return 2;
    Status full;
    int written = 0;
    for (; written < 200 && full.ok(); ++written)
      full = (*store)->Put("b" + std::to_string(written), std::string(64 << 10, 'x'), {}).status();
    if (!full.IsIOError()) return 3;
    if (full.message().find("no space left") == std::string::npos) return 4;
    if (!(*store)->Get("b0", {}).ok()) return 5;  // reads go on
    fs::remove(ballast);
    if (!(*store)->Put("after", std::string(64 << 10, 'y'), {}).ok()) return 6;
    // Fill the disk to the last byte, then create a new store on it.
    std::ofstream filler(dir.path() + "/filler");
    const std::string chunk(4096, 'f');
    while (filler.write(chunk.data(), chunk.size())) filler.flush();
    auto fresh = OpenAt(dir.path() + "/fresh");
    if (fresh.ok() || !fresh.status().IsIOError()) return 7;
    return 0;
  });
  int rc = WaitChild(pid);
  if (rc == kNoNamespace) GTEST_SKIP() << "no private mount namespace here (needs CAP_SYS_ADMIN)";
  EXPECT_EQ(rc, 0) << "the step that failed (see the test), or 128+signal";
}

// Flips one byte in the middle of blob `name`'s record's head (`where`
// "record"), of its inline data ("inline": the value's last byte) or of its
// data kept apart ("data"), behind the store's back, as a bad disk sector
// would.
void FlipAByte(const std::string& dir, const std::string& name, const std::string& where,
               const std::string& container = "blobtable") {
  auto env = LmdbEnv::Open(dir, LocalOptions{}.map_size);
  ASSERT_TRUE(env.ok());
  auto buckets = (*env)->Database("container:" + container);
  auto data = (*env)->Database("data:" + container);
  ASSERT_TRUE(buckets.ok() && data.ok());
  auto txn = LmdbTxn::Begin(**env, /*read_only=*/false);
  ASSERT_TRUE(txn.ok());
  const std::string key = BucketKey(name);
  MDB_val k = ToVal(key), v;
  ASSERT_EQ(mdb_get(txn->get(), *buckets, &k, &v), 0);
  std::string value(FromVal(v));
  MDB_dbi dbi = *buckets;
  char id[8];
  if (where == "data") {
    auto bucket = DecodeBucket(value, key);
    ASSERT_TRUE(bucket.ok());
    ASSERT_NE((*bucket)[0].record.data_id, 0u) << "data this small is kept in its record";
    for (int i = 0; i < 8; ++i)
      id[i] = static_cast<char>((*bucket)[0].record.data_id >> (56 - 8 * i));
    k = MDB_val{sizeof(id), id};
    ASSERT_EQ(mdb_get(txn->get(), *data, &k, &v), 0);
    value.assign(FromVal(v));
    dbi = *data;
  }
  if (where == "record") {  // format 5: the tag, the head's CRC and length (a varint), the head
    ASSERT_EQ(value[0], '\xB5');
    size_t at = 5, head = 0;
    for (int shift = 0;; shift += 7) {
      const auto b = static_cast<unsigned char>(value[at++]);
      head |= size_t{b & 0x7Fu} << shift;
      if (b < 0x80) break;
    }
    value[at + head / 2] ^= 0x01;
  } else if (where == "inline" || where == "inline first") {
    auto bucket = DecodeBucket(value, key);
    ASSERT_TRUE(bucket.ok());
    ASSERT_TRUE((*bucket)[0].record.inline_data.has_value()) << "data this large is kept apart";
    const size_t first = value.size() - (*bucket)[0].record.inline_data->size();
    value[where == "inline" ? value.size() - 1 : first] ^= 0x01;
  } else {
    value[value.size() / 2] ^= 0x01;
  }
  v = ToVal(value);
  ASSERT_EQ(mdb_put(txn->get(), dbi, &k, &v, 0), 0);
  ASSERT_TRUE(txn->Commit().ok());
}

// One flipped bit in a blob's data or record is Corruption naming the blob,
// never the wrong bytes; the damaged blob can be overwritten or deleted (and
// nothing else goes with it). Small data lives in its record ("inline"):
// "data" damages a blob large enough to have its data apart.
class FlippedByte : public ::testing::TestWithParam<const char*> {};

TEST_P(FlippedByte, IsCorruptionNamingTheBlobAndCanBeRepaired) {
  TempDir dir;
  auto store = OpenAt(dir.path());
  ASSERT_TRUE(store.ok());
  const std::string value(std::string(GetParam()) == "data" ? 3 * kInlineDataBytes : 1000, 'v');
  for (const char* name : {"victim", "neighbour", "gone"})
    ASSERT_TRUE((*store)->Put(name, value, {{}, {{"k", "v"}}}).ok());
  FlipAByte(dir.path(), "victim", GetParam());
  FlipAByte(dir.path(), "gone", GetParam());
  auto got = (*store)->Get("victim", {});
  EXPECT_EQ(got.status().code(), Code::kCorruption) << got.status().ToString();
  EXPECT_NE(got.status().message().find("victim"), std::string::npos) << got.status().ToString();
  PutOptions if_match;
  if_match.conditions.if_match = "\"0x1\"";
  if (std::string(GetParam()) == "record") {  // nothing to compare a condition with
    EXPECT_EQ((*store)->Put("victim", "x", if_match).status().code(), Code::kCorruption);
  }
  auto replaced = (*store)->Put("victim", "new", {});
  ASSERT_TRUE(replaced.ok()) << replaced.status().ToString();
  EXPECT_EQ((*store)->Get("victim", {})->data, "new");
  Status removed = (*store)->Delete("gone", {});
  EXPECT_TRUE(removed.ok()) << removed.ToString();
  EXPECT_TRUE((*store)->Get("gone", {}).status().IsNotFound());
  EXPECT_EQ((*store)->Get("neighbour", {})->data, value);
}

INSTANTIATE_TEST_SUITE_P(Damage, FlippedByte, ::testing::Values("data", "record", "inline"));

// Table::Visit and Table::GetView hand a row's value over where it lies,
// unchecked (in_place.h: the record's head is checked, the inline value is
// not): a value damaged in a way that still decodes reaches the visitor as
// it is, while Get, Query, Count, DeleteWhere and `blobtable check` report
// it (Corruption naming the blob). A value damaged so that it no longer
// decodes is Corruption through the views too, their visitor not called.
TEST(LocalStoreDamage, ViewsHandAValueOverAsItLiesWhileGetAndQueryCheckIt) {
  TempDir dir;
  auto blob = naming::EntityBlobName("orders", "p", "a");
  ASSERT_TRUE(blob.ok());
  auto open_damaged = [&](const char* where, size_t value_bytes = 1000) -> std::unique_ptr<Store> {
    std::filesystem::remove_all(dir.path());
    {
      auto store = Store::Open(dir.path());
      EXPECT_TRUE(store.ok());
      auto table = (*store)->OpenTable("orders");
      EXPECT_TRUE(table.ok());
      Entity e("p", "a");
      e.Set("v", Binary{std::string(value_bytes, 'v')});
      e.Set("z", std::string("zz"));  // last in the body: a last flipped byte is in its value
      EXPECT_TRUE(table->Upsert(e).ok());
    }
    FlipAByte(dir.path(), *blob, where);
    auto store = Store::Open(dir.path());
    EXPECT_TRUE(store.ok());
    return store.ok() ? std::move(*store) : nullptr;
  };
  {
    auto store = open_damaged("inline");
    ASSERT_NE(store, nullptr);
    auto table = store->OpenTable("orders");
    ASSERT_TRUE(table.ok());
    std::string seen;
    auto visited = table->Visit({}, [&](const EntityView& row) {
      const PropertyView* z = row.Find("z");
      if (z != nullptr) seen = std::string(z->text());
    });
    ASSERT_TRUE(visited.ok()) << visited.status().ToString();
    EXPECT_EQ(seen, "z{");  // 'z' with its lowest bit flipped
    seen.clear();
    const Status view = table->GetView("p", "a", [&](const EntityView& row) {
      const PropertyView* z = row.Find("z");
      if (z != nullptr) seen = std::string(z->text());
      return Status::OK();
    });
    ASSERT_TRUE(view.ok()) << view.ToString();
    EXPECT_EQ(seen, "z{");
    EXPECT_EQ(table->Get("p", "a").status().code(), Code::kCorruption);
    auto query = table->Query({});
    EXPECT_EQ(query.status().code(), Code::kCorruption) << query.status().ToString();
    EXPECT_NE(query.status().message().find("does not match its checksum"), std::string::npos)
        << query.status().ToString();
    // Count and DeleteWhere act on what they read: checked.
    QueryOptions filtered;
    filtered.filter = "z eq 'z{'";
    auto counted = table->Count(filtered);
    EXPECT_EQ(counted.status().code(), Code::kCorruption) << counted.status().ToString();
    auto deleted = table->DeleteWhere(filtered);
    EXPECT_EQ(deleted.status().code(), Code::kCorruption) << deleted.status().ToString();
    EXPECT_EQ(table->Get("p", "a").status().code(), Code::kCorruption);  // still there
  }

  {
    // A body large enough to be kept apart from its record, a byte in the
    // middle of its value flipped: the views hand it over too.
    auto store = open_damaged("data", 3 * kInlineDataBytes);
    ASSERT_NE(store, nullptr);
    auto table = store->OpenTable("orders");
    ASSERT_TRUE(table.ok());
    std::string value;
    const Status view = table->GetView("p", "a", [&](const EntityView& row) {
      const PropertyView* v = row.Find("v");
      if (v != nullptr) value = std::string(v->bytes());
      return Status::OK();
    });
    ASSERT_TRUE(view.ok()) << view.ToString();
    EXPECT_EQ(value.size(), 3 * kInlineDataBytes);
    EXPECT_NE(value, std::string(3 * kInlineDataBytes, 'v'));  // one byte flipped
    EXPECT_EQ(table->Get("p", "a").status().code(), Code::kCorruption);
  }

  auto store = open_damaged("inline first");  // the body's first byte: it no longer decodes
  ASSERT_NE(store, nullptr);
  auto table = store->OpenTable("orders");
  ASSERT_TRUE(table.ok());
  bool called = false;
  const Status broken = table->GetView("p", "a", [&](const EntityView&) {
    called = true;
    return Status::OK();
  });
  EXPECT_EQ(broken.code(), Code::kCorruption) << broken.ToString();
  EXPECT_NE(broken.message().find(*blob), std::string::npos) << broken.ToString();
  EXPECT_FALSE(called);
  auto listed = table->Visit({}, [&](const EntityView&) { called = true; });
  EXPECT_EQ(listed.status().code(), Code::kCorruption) << listed.status().ToString();
  EXPECT_FALSE(called);
}

// Through the table API: a damaged entity reads as Corruption (the query
// over its table too, naming it), and Delete "*" or Upsert repairs it.
TEST(LocalStoreDamage, ADamagedEntityIsRepairedThroughTheTableApi) {
  TempDir dir;
  auto store = Store::Open(dir.path());
  ASSERT_TRUE(store.ok());
  auto table = (*store)->OpenTable("orders");
  ASSERT_TRUE(table.ok());
  for (const char* rk : {"a", "b", "c"}) ASSERT_TRUE(table->Upsert(Entity("p", rk)).ok());
  for (const char* rk : {"a", "b"}) {
    auto blob = naming::EntityBlobName("orders", "p", rk);
    ASSERT_TRUE(blob.ok());
    FlipAByte(dir.path(), *blob, "record");
  }
  EXPECT_EQ(table->Get("p", "a").status().code(), Code::kCorruption);
  auto query = table->Query({});
  EXPECT_EQ(query.status().code(), Code::kCorruption) << query.status().ToString();
  EXPECT_TRUE(table->Delete("p", "a", "*").ok());
  EXPECT_TRUE(table->Upsert(Entity("p", "b")).ok());
  auto all = table->Query({});
  ASSERT_TRUE(all.ok()) << all.status().ToString();
  EXPECT_EQ(all->entities.size(), 2u);  // b (rewritten) and c
}

// `blobtable check` lists what is damaged and goes on past it; deleting or
// rewriting the entity through the CLI repairs it.
TEST(LocalStoreDamage, CheckListsDamagedBlobsAndTheCliRepairsThem) {
  TempDir dir;
  {
    auto store = Store::Open(dir.path());
    ASSERT_TRUE(store.ok());
    auto table = (*store)->OpenTable("orders");
    for (const char* rk : {"a", "b", "c", "d"}) {
      Entity e("p", rk);
      if (std::string(rk) == "c")
        e.Set("big", std::string(2 * kInlineDataBytes, 'c'));  // data apart
      ASSERT_TRUE(table->Upsert(e).ok());
    }
  }
  auto a = naming::EntityBlobName("orders", "p", "a");
  auto c = naming::EntityBlobName("orders", "p", "c");
  auto b = naming::EntityBlobName("orders", "p", "b");
  FlipAByte(dir.path(), *a, "record");
  FlipAByte(dir.path(), *b, "inline");
  FlipAByte(dir.path(), *c, "data");
  CliRun check = RunCli(dir.path(), "check");
  EXPECT_EQ(check.code, 8) << check.out;
  EXPECT_NE(check.out.find("\"blob\":\"" + *a + "\",\"damage\":\"record\""), std::string::npos)
      << check.out;
  EXPECT_NE(check.out.find("\"blob\":\"" + *c + "\",\"damage\":\"data\""), std::string::npos)
      << check.out;
  EXPECT_NE(check.out.find("\"blob\":\"" + *b + "\",\"damage\":\"data\""), std::string::npos)
      << check.out;
  EXPECT_NE(check.out.find("{\"blobs\":4,\"damaged\":3,\"unverified\":0}"), std::string::npos)
      << check.out;
  EXPECT_EQ(RunCli(dir.path(), "get orders p c").code, 1);  // Corruption: not the wrong bytes
  EXPECT_EQ(RunCli(dir.path(), "get orders p b").code, 1);
  EXPECT_EQ(RunCli(dir.path(), "delete orders p a").code, 0);
  EXPECT_EQ(RunCli(dir.path(), "delete orders p b").code, 0);
  FILE* input = fopen((dir.path() + "/c.json").c_str(), "w");
  fputs(R"({"PartitionKey":"p","RowKey":"c","n":1})", input);
  fclose(input);
  EXPECT_EQ(RunCli(dir.path(), "put orders --mode upsert", dir.path() + "/c.json").code, 0);
  check = RunCli(dir.path(), "check");
  EXPECT_EQ(check.code, 0) << check.out;
  EXPECT_NE(check.out.find("{\"blobs\":2,\"damaged\":0,\"unverified\":0}"), std::string::npos)
      << check.out;
}

// Containers opened and closed one after another give their LMDB handles
// back: a process is not limited to 511 containers over its lifetime.
TEST(LocalStoreDamage, ClosedContainersGiveTheirDatabaseHandlesBack) {
  TempDir dir;
  for (int i = 0; i < 600; ++i) {
    const std::string container = "c" + std::to_string(1000 + i);
    auto store = OpenLocalBlobStore(dir.path(), container);
    ASSERT_TRUE(store.ok()) << i << ": " << store.status().ToString();
    ASSERT_TRUE((*store)->Put("b", container, {}).ok()) << i;
  }
  auto again = OpenLocalBlobStore(dir.path(), "c1000");
  ASSERT_TRUE(again.ok());
  EXPECT_EQ((*again)->Get("b", {})->data, "c1000");
}

// The files' mode is the caller's to choose (owner-only here).
TEST(LocalStoreDamage, FilesGetTheModeAsked) {
  TempDir dir;
  LocalOptions o;
  o.file_mode = 0600;
  const std::string store_dir = dir.path() + "/private";
  auto store = OpenAt(store_dir, o);
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  ASSERT_TRUE((*store)->Put("b", "x", {}).ok());
  for (const char* file : {"/data.mdb", "/lock.mdb", "/blobtable.store"}) {
    struct stat st;
    ASSERT_EQ(stat((store_dir + file).c_str(), &st), 0) << file;
    EXPECT_EQ(st.st_mode & 0777, 0600u) << file;
  }
  struct stat st;
  ASSERT_EQ(stat(store_dir.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
}

// A user who may read a store but not write it opens it read-only: reads
// work, writes say why. As root, a child drops to nobody; as anyone else,
// the files are made read-only.
TEST(LocalStoreDamage, AUserWhoCannotWriteOpensTheStoreReadOnly) {
  TempDir dir;
  const std::string store_dir = dir.path() + "/shared";
  {
    auto store = OpenAt(store_dir);
    ASSERT_TRUE(store.ok());
    ASSERT_TRUE((*store)->Put("b", "readable", {}).ok());
  }
  fs::permissions(dir.path(), fs::perms(0755));
  if (geteuid() != 0) {
    for (const char* file : {"/data.mdb", "/lock.mdb", "/blobtable.store"})
      fs::permissions(store_dir + file, fs::perms(0444));
    fs::permissions(store_dir, fs::perms(0555));
  }
  pid_t pid = ForkChild([&] {
    if (geteuid() == 0 && (setgid(65534) != 0 || setuid(65534) != 0)) return 2;
    auto store = OpenAt(store_dir);
    if (!store.ok()) {
      fprintf(stderr, "open: %s\n", store.status().ToString().c_str());
      return 3;
    }
    auto got = (*store)->Get("b", {});
    if (!got.ok() || got->data != "readable") return 4;
    Status put = (*store)->Put("c", "x", {}).status();
    if (!put.IsIOError() || put.message().find("read-only") == std::string::npos) {
      fprintf(stderr, "put: %s\n", put.ToString().c_str());
      return 5;
    }
    return 0;
  });
  EXPECT_EQ(WaitChild(pid), 0) << "the step that failed (see the test)";
  fs::permissions(store_dir, fs::perms(0755));  // for TempDir to remove it
}

// Stores written when the checksum came from zlib must keep matching: the
// CRC is gzip's (zlib's crc32()), whatever computes it. Known answers of
// that CRC, and lengths around the accelerated paths' block sizes.
TEST(LocalStoreDamage, TheChecksumIsTheCrc32StoresWereWrittenWith) {
  EXPECT_EQ(Crc32(""), 0u);
  EXPECT_EQ(Crc32("123456789"), 0xCBF43926u);
  EXPECT_EQ(Crc32("The quick brown fox jumps over the lazy dog"), 0x414FA339u);
  EXPECT_EQ(Crc32(std::string(1024, '\0')), 0xEFB5AF2Eu);
}

// LocalDurability::kRelaxed skips a sync, never an acknowledgement's worth of
// a process crash: every write acknowledged before a kill -9 (here, in the
// middle of the writes that follow) is there after it, and the store is
// intact. (What it may lose, a system crash's last commit, needs a power cut
// to show.)
TEST(LocalStoreDamage, RelaxedDurabilityLosesNothingAcknowledgedWhenTheProcessIsKilled) {
  TempDir dir;
  int acks[2];
  ASSERT_EQ(pipe(acks), 0);
  pid_t pid = ForkChild([&] {
    close(acks[0]);
    StoreOptions o;
    o.local.durability = LocalDurability::kRelaxed;
    auto store = Store::Open(dir.path(), o);
    if (!store.ok()) return 2;
    auto table = (*store)->OpenTable("orders");
    if (!table.ok()) return 3;
    for (uint32_t i = 0;; ++i) {
      Entity e("p", std::to_string(i));
      e.Set("n", int64_t{i});
      if (!table->Insert(e).ok()) return 4;
      if (write(acks[1], &i, sizeof i) != sizeof i) return 5;  // acknowledged
    }
  });
  close(acks[1]);
  uint32_t last = 0;
  for (int seen = 0; seen < 300; ++seen) {
    if (read(acks[0], &last, sizeof last) != sizeof last) {
      FAIL() << "the writer stopped: the step that failed, or 128+signal: " << WaitChild(pid);
    }
  }
  kill(pid, SIGKILL);
  EXPECT_EQ(WaitChild(pid), 128 + SIGKILL);
  close(acks[0]);

  auto store = Store::Open(dir.path());
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  auto table = (*store)->OpenTable("orders");
  ASSERT_TRUE(table.ok());
  for (uint32_t i = 0; i <= last; ++i)
    ASSERT_TRUE(table->Get("p", std::to_string(i)).ok()) << "acknowledged write " << i << " lost";
  auto check = CheckLocalStore(dir.path());
  ASSERT_TRUE(check.ok()) << check.status().ToString();
  EXPECT_TRUE(check->damaged.empty());
}

// Stores of one process sharing a directory share its commits: the
// strongest durability asked for holds for all.
TEST(LocalStoreDamage, TheStrongestDurabilityAskedForHolds) {
  TempDir dir;
  auto relaxed = LmdbEnv::Open(dir.path(), 64 << 20, 0644, LmdbEnv::Sync::kRelaxed);
  ASSERT_TRUE(relaxed.ok());
  unsigned flags = 0;
  mdb_env_get_flags((*relaxed)->env(), &flags);
  EXPECT_NE(flags & MDB_NOMETASYNC, 0u);
  auto full = LmdbEnv::Open(dir.path(), 64 << 20, 0644, LmdbEnv::Sync::kFull);
  ASSERT_TRUE(full.ok());
  EXPECT_EQ(full->get(), relaxed->get());
  mdb_env_get_flags((*full)->env(), &flags);
  EXPECT_EQ(flags & (MDB_NOMETASYNC | MDB_NOSYNC), 0u);
  auto relaxed_again = LmdbEnv::Open(dir.path(), 64 << 20, 0644, LmdbEnv::Sync::kRelaxed);
  ASSERT_TRUE(relaxed_again.ok());
  mdb_env_get_flags((*relaxed_again)->env(), &flags);
  EXPECT_EQ(flags & (MDB_NOMETASYNC | MDB_NOSYNC), 0u) << "weakened while a full user holds it";
}

}  // namespace
}  // namespace blobtable::testing
