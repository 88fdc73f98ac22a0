// SPDX-License-Identifier: Apache-2.0
// The transaction suite: written once, run on the local backend with the fake
// clock (txn_test.cc) and on Azurite (azure_blob_store_test.cc).
#ifndef BLOBTABLE_TESTS_TXN_SUITE_H_
#define BLOBTABLE_TESTS_TXN_SUITE_H_

#include <signal.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <atomic>

#include <functional>
#include <map>
#include <optional>
#include <thread>

#include "blobtable/store.h"
#include "model/blob_naming.h"
#include "tests/backend.h"
#include "testing/counting_blob_store.h"
#include "tests/test_util.h"
#include "testing/sync_point.h"
#include "txn/txn_record.h"
#include "util/macros.h"
#include "testing/hooks.h"

namespace blobtable::testing {

// Leases that TxnTest::Expire() runs out: the shortest Azure allows.
inline TransactionOptions ShortLeases() {
  TransactionOptions o;
  o.lease_seconds = 15;
  o.renewal_margin = std::chrono::seconds(5);
  return o;
}

// Why a test of the lease coordinator in this process skips on a store that
// commits as one batch. (Coordinators killed in a child process are
// coordinators everywhere: there the suite tests a store of each kind.)
inline constexpr const char* kNoCoordinator =
    "commits as one atomic batch here: no coordinator to stall, fence or renew";

class TxnTest : public ::testing::TestWithParam<Backend> {
 protected:
  void SetUp() override {
    internal::SyncPoints::ClearAll();
    // Backoff moves the shared fake clock (in this process and its children)
    // fifty times faster than it sleeps: waiting out a dead coordinator's
    // leases takes a fraction of a second, while time still passes evenly
    // for every live coordinator: waiters side by side share time rather
    // than add theirs up (SleepPaced). Set once, before any thread shares
    // the clock (ThreadSanitizer found it set again by stores opened in
    // threads).
    clock_.set_sleep([this](std::chrono::milliseconds d) { clock_.SleepPaced(d, 50); });
    container_ = FreshContainer("txn");
    store_ = Open();
    ASSERT_NE(store_, nullptr);
    accounts_.emplace(*store_->OpenTable("accounts"));
    ledger_.emplace(*store_->OpenTable("ledger"));
  }
  void TearDown() override { internal::SyncPoints::ClearAll(); }

  StoreOptions Options() {
    StoreOptions o;
    o.container = container_;
    o.wrap_blob_store = [this](std::shared_ptr<BlobStore> b) {
      auto c = std::make_shared<internal::CountingBlobStore>(std::move(b));
      // The protocol's requests, not the tables' index definitions read
      // again in the background (a slow run's), in every count here.
      for (const char* table : {"t/accounts~/", "t/ledger~/"}) c->LeaveOutGetsUnder(table);
      counter_.store(c.get());  // stores may open in several threads
      return c;
    };
    if (!GetParam().fake_clock()) return o;  // real time and waits: the server keeps the time
    o.clock = &clock_;
    return o;
  }
  // coordinator: commit through the lease coordinator even where the
  // backend commits as one batch (a store of each kind on one directory).
  std::unique_ptr<Store> Open(bool coordinator = false) {
    StoreOptions o = Options();
    o = internal::WithAtomicCommits(o, !coordinator);
    auto s = OpenBackendStore(GetParam(), o);
    EXPECT_TRUE(s.ok()) << s.status().ToString();
    return s.ok() ? std::move(*s) : nullptr;
  }
  bool fake_clock() const { return GetParam().fake_clock(); }
  // Transactions commit as one batch: no coordinator, record, lock or lease.
  bool atomic() const { return GetParam().atomic; }
  // What a dead coordinator's leases running out gives a successor: with the
  // fake clock, time; on a server, breaking every lease in the container
  // (what expiry would do, without the wait).
  // Only leases with a duration run out: infinite ones (what a transaction
  // holds on the entities it marked) stay, as they would.
  void Expire() {
    if (fake_clock()) {
      clock_.Advance(std::chrono::seconds(16));
      return;
    }
    ListOptions all;
    auto page = store_->blob_store().List(all);
    ASSERT_TRUE(page.ok()) << page.status().ToString();
    for (const BlobItem& item : page->items)
      if ((item.properties.lease_state == LeaseState::kLeased ||
           item.properties.lease_state == LeaseState::kBreaking) &&
          item.properties.lease_duration != LeaseDurationType::kInfinite)
        (void)store_->blob_store().BreakLease(item.name, 0, {});
  }
  TransactionOptions TxnOptions() { return ShortLeases(); }

  int Balance(const Table& t, const std::string& pk, const std::string& rk) {
    auto e = t.Get(pk, rk);
    if (!e.ok()) return -1;
    return *e->FindAs<int32_t>("balance");
  }
  void Seed() {
    for (auto [pk, rk] : {std::pair{"eu", "alice"}, {"eu", "bob"}, {"us", "carol"}}) {
      Entity e(pk, rk);
      e.Set("balance", 100);
      ASSERT_TRUE(accounts_->Insert(e).ok());
    }
  }
  // alice -10, carol +10, and a ledger line: two tables, two partitions.
  Status Transfer(Store& store, int amount = 10, std::string line_key = "") {
    auto txn = store.Begin(TxnOptions());
    auto accounts = *store.OpenTable("accounts");
    auto ledger = *store.OpenTable("ledger");
    auto a = txn->Get(accounts, "eu", "alice");
    auto c = txn->Get(accounts, "us", "carol");
    if (!a.ok()) return a.status();
    if (!c.ok()) return c.status();
    Entity a2 = *a, c2 = *c;
    a2.Set("balance", *a->FindAs<int32_t>("balance") - amount);
    c2.Set("balance", *c->FindAs<int32_t>("balance") + amount);
    BT_RETURN_IF_ERROR(txn->Replace(accounts, a2, "*"));
    BT_RETURN_IF_ERROR(txn->Replace(accounts, c2, "*"));
    if (line_key.empty()) line_key = "t-" + std::to_string(amount) + "-" + std::to_string(++lines_);
    Entity line("2026", line_key);
    line.Set("amount", amount);
    BT_RETURN_IF_ERROR(txn->Insert(ledger, line));
    return txn->Commit().status();
  }
  // Runs `body` in a forked coordinator that is SIGKILLed at sync point
  // `point`; returns the child's exit status (128 + SIGKILL when it died
  // there; 10 + the Code of `body` if the point was never reached).
  int KillCoordinatorAt(const std::string& point, const std::function<Status(Store&)>& body) {
    return WaitChild(ForkChild([&] {
      auto store = Open(/*coordinator=*/true);  // what is killed is always a coordinator
      internal::SyncPoints::Set(point, [] { raise(SIGKILL); });
      return 10 + static_cast<int>(body(*store).code());
    }));
  }
  int KillTransferAt(const std::string& point, const std::string& line_key = "") {
    return KillCoordinatorAt(point, [&](Store& s) { return Transfer(s, 10, line_key); });
  }

  // Nothing of any transaction is left: no records, no lock marks or leases,
  // no reservations, no leased entities.
  // The commit point: the record's pending version rewritten committed
  // (If-Match; its pending create is If-None-Match "*").
  static bool IsCommitPoint(std::string_view name, const PutOptions& po) {
    return name.rfind(internal::kRecordPrefix, 0) == 0 && po.conditions.if_match.has_value();
  }
  void ExpectNoLeftovers() {
    store_->WaitForFinishing();
    ListOptions all;
    auto page = store_->blob_store().List(all);
    ASSERT_TRUE(page.ok());
    for (const BlobItem& item : page->items) {
      if (item.name.rfind(internal::kRecordPrefix, 0) == 0) {
        // Only an aborted record stays: a decider made it, and Recover
        // removes it once nothing of its transaction is left.
        auto got = store_->blob_store().Get(item.name, {});
        ASSERT_TRUE(got.ok()) << item.name;
        auto rec = internal::DecodeRecord(got->data, item.name);
        ASSERT_TRUE(rec.ok()) << rec.status().ToString();
        EXPECT_TRUE(rec->state == internal::TxnState::kAborted) << "record left: " << item.name;
        continue;
      }
      EXPECT_EQ(item.properties.metadata.count(internal::kPrewriteMetadata), 0u) << item.name;
      EXPECT_NE(item.properties.lease_state, LeaseState::kLeased) << item.name;
      if (item.name.find("/l/") != std::string::npos) {
        EXPECT_EQ(item.properties.metadata.count(internal::kTxnMetadata), 0u) << item.name;
      }
    }
  }

  std::string container_;
  internal::FakeClock clock_;
  std::atomic<internal::CountingBlobStore*> counter_{nullptr};  // the last store opened's
  std::unique_ptr<Store> store_;
  std::optional<Table> accounts_, ledger_;
  int lines_ = 0;
};

}  // namespace blobtable::testing

#endif  // BLOBTABLE_TESTS_TXN_SUITE_H_
