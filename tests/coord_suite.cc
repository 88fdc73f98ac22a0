// SPDX-License-Identifier: Apache-2.0
// The coordination suite. Lock: acquisition, tokens, release, holders killed and paused,
// the lost-lease signal, contention from threads and processes. Counter: totals under
// contention, sharded and not. Run on the
// local store (coord_test.cc: the fake clock, shared with forked children,
// moves leases past their end) and on Azurite (azure_blob_store_test.cc:
// the server's clock, so waiting out a lease takes its 15 s).
#include "tests/coord_suite.h"

#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <condition_variable>
#include <functional>
#include <future>
#include <limits>
#include <set>
#include <optional>
#include <thread>

#include "coord/coord_names.h"

namespace blobtable::testing {

void CoordTest::SetUp() {
  if (GetParam().fake_clock()) options_.clock = &clock_;
  options_.container = FreshContainer("locks");
  store_ = Open(options_.clock);
  ASSERT_NE(store_, nullptr);
}

std::unique_ptr<Store> CoordTest::Open(Clock* clock) const {
  StoreOptions o = options_;
  o.clock = clock;
  auto store = OpenBackendStore(GetParam(), o);
  EXPECT_TRUE(store.ok()) << store.status().ToString();
  return store.ok() ? std::move(*store) : nullptr;
}

void CoordTest::OutliveLease(int lease_seconds) {
  if (GetParam().fake_clock()) clock_.Advance(std::chrono::seconds(lease_seconds + 1));
  // On a server the acquirer that follows waits it out (LockOptions::timeout).
}

bool CoordTest::LeadsOnceTheLeaseRanOut(const LeaderElection& e, std::chrono::milliseconds wait) {
  for (int tries = 0; tries < 3; ++tries) {
    if (e.WaitForLeadership(wait)) return true;
    OutliveLease(15);
  }
  return false;
}

LockOptions CoordTest::Short() const {
  LockOptions o;
  o.lease_seconds = 15;
  // After OutliveLease: on the fake clock at once; on a server within the
  // lease and a margin.
  o.timeout = std::chrono::seconds(GetParam().fake_clock() ? 0 : 30);
  o.max_delay = std::chrono::milliseconds(500);
  return o;
}

namespace {

LockOptions Once() {
  LockOptions o;
  o.timeout = std::chrono::milliseconds(0);
  return o;
}

// A pipe a forked child reports on (a number a line) and reads "go" from.
struct Pipe {
  Pipe() { EXPECT_EQ(pipe(fd), 0); }
  ~Pipe() {
    close(fd[0]);
    close(fd[1]);
  }
  void Write(int64_t v) const {
    const std::string s = std::to_string(v) + "\n";
    EXPECT_EQ(write(fd[1], s.data(), s.size()), static_cast<ssize_t>(s.size()));
  }
  int64_t Read() const {  // -1 if the writer closed or failed
    std::string s;
    char c;
    while (read(fd[0], &c, 1) == 1 && c != '\n') s += c;
    return s.empty() ? -1 : std::stoll(s);
  }
  int fd[2] = {-1, -1};
};

}  // namespace

TEST_P(CoordTest, EachAcquisitionGetsALargerTokenAndReleaseIsIdempotent) {
  auto none = Lock::Inspect(*store_, "report");
  ASSERT_TRUE(none.ok()) << none.status().ToString();
  EXPECT_FALSE(none->held);
  EXPECT_EQ(none->token, 0);
  LockOptions o = Once();
  o.owner = "tester";
  auto first = Lock::Acquire(*store_, "report", o);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  EXPECT_TRUE((*first)->held());
  EXPECT_EQ((*first)->token(), 1);
  auto info = Lock::Inspect(*store_, "report");
  ASSERT_TRUE(info.ok());
  EXPECT_TRUE(info->held);
  EXPECT_EQ(info->owner, "tester");
  EXPECT_EQ(info->token, 1);
  auto busy = Lock::Acquire(*store_, "report", Once());
  EXPECT_EQ(busy.status().code(), Code::kLockTimeout) << busy.status().ToString();
  EXPECT_TRUE((*first)->Release().ok());
  EXPECT_TRUE((*first)->Release().ok());  // again: nothing to do
  EXPECT_FALSE((*first)->held());
  EXPECT_TRUE((*first)->status().ok());
  auto second = Lock::Acquire(*store_, "report", Once());
  ASSERT_TRUE(second.ok()) << second.status().ToString();
  EXPECT_EQ((*second)->token(), 2);
  // Another name is another lock.
  auto other = Lock::Acquire(*store_, "report/2 ✓", Once());
  ASSERT_TRUE(other.ok()) << other.status().ToString();
  EXPECT_EQ((*other)->token(), 1);
}

TEST_P(CoordTest, BadNamesAndOptionsAreRefused) {
  EXPECT_EQ(Lock::Acquire(*store_, "").status().code(), Code::kInvalidArgument);
  EXPECT_EQ(Lock::Acquire(*store_, std::string(257, 'x')).status().code(), Code::kInvalidArgument);
  LockOptions o;
  o.lease_seconds = 5;
  EXPECT_EQ(Lock::Acquire(*store_, "x", o).status().code(), Code::kInvalidArgument);
  o = {};
  o.max_delay = std::chrono::milliseconds(1);
  EXPECT_EQ(Lock::Acquire(*store_, "x", o).status().code(), Code::kInvalidArgument);
}

TEST_P(CoordTest, AKilledHolderLosesTheLockWhenItsLeaseRunsOut) {
  Pipe report;
  pid_t child = ForkChild([&] {
    auto store = Open(options_.clock);
    if (store == nullptr) return 2;
    auto lock = Lock::Acquire(*store, "job", Short());
    if (!lock.ok()) return 3;
    report.Write((*lock)->token());
    for (;;) pause();  // until killed
  });
  const int64_t killed_token = report.Read();
  ASSERT_GT(killed_token, 0);
  ASSERT_EQ(kill(child, SIGKILL), 0);
  EXPECT_EQ(WaitChild(child), 128 + SIGKILL);
  EXPECT_EQ(Lock::Acquire(*store_, "job", Once()).status().code(), Code::kLockTimeout);
  OutliveLease(15);
  auto next = Lock::Acquire(*store_, "job", Short());
  ASSERT_TRUE(next.ok()) << next.status().ToString();
  EXPECT_GT((*next)->token(), killed_token);
}

TEST_P(CoordTest, APausedHolderSeesItLostAndItsFencedWritesAreRefused) {
  auto table = *store_->OpenTable("jobs");
  Pipe report, go;
  pid_t child = ForkChild([&] {
    auto store = Open(options_.clock);
    if (store == nullptr) return 2;
    auto t = store->OpenTable("jobs");
    auto lock = Lock::Acquire(*store, "job", Short());
    if (!lock.ok()) return 3;
    const int64_t token = (*lock)->token();
    auto first = FencedUpdate(*t, "p", "r", token, [](Entity& e, bool) {
      e.Set("by", "paused holder");
      return Status::OK();
    });
    if (!first.ok()) return 4;
    report.Write(token);
    if (go.Read() != 1) return 5;    // SIGSTOPped here, then resumed
    if ((*lock)->held()) return 10;  // it must know before it acts
    auto stale = FencedUpdate(*t, "p", "r", token, [](Entity& e, bool) {
      e.Set("by", "paused holder, again");
      return Status::OK();
    });
    if (!stale.status().IsLeaseLost()) return 11;
    return 0;
  });
  const int64_t old_token = report.Read();
  ASSERT_GT(old_token, 0);
  ASSERT_TRUE(StopChild(child));
  OutliveLease(15);
  auto next = Lock::Acquire(*store_, "job", Short());
  ASSERT_TRUE(next.ok()) << next.status().ToString();
  EXPECT_GT((*next)->token(), old_token);
  auto mine = FencedUpdate(table, "p", "r", (*next)->token(), [](Entity& e, bool) {
    e.Set("by", "next holder");
    return Status::OK();
  });
  ASSERT_TRUE(mine.ok()) << mine.status().ToString();
  ASSERT_EQ(kill(child, SIGCONT), 0);
  go.Write(1);
  EXPECT_EQ(WaitChild(child), 0) << "10: held() was still true; 11: the stale write went through";
  auto now = table.Get("p", "r");
  ASSERT_TRUE(now.ok());
  EXPECT_EQ(now->GetAs<std::string>("by"), "next holder");
  EXPECT_EQ(now->GetAs<int64_t>(kFencingTokenProperty), (*next)->token());
}

TEST_P(CoordTest, ALeaseTakenAwayIsReportedOnceThroughOnLost) {
  std::promise<Status> lost;
  LockOptions o = Once();
  o.lease_seconds = 15;
  o.on_lost = [&](const Status& why) { lost.set_value(why); };
  auto lock = Lock::Acquire(*store_, "watched", o);
  ASSERT_TRUE(lock.ok()) << lock.status().ToString();
  // Someone breaks the lease (an operator, or a client that decided the
  // holder was dead): the next renewal learns it.
  ASSERT_TRUE(
      store_->blob_store().BreakLease(internal::coord::LockBlobName("watched"), 0, {}).ok());
  // What a break means (lock.h, docs/coordination.md#lock-with-a-fencing-token): another client may
  // take the lock at once, and held() cannot see that before the next renewal; the
  // fencing token is what refuses the old holder's writes meanwhile.
  auto table = *store_->OpenTable("jobs");
  auto next = Lock::Acquire(*store_, "watched", Once());
  ASSERT_TRUE(next.ok()) << next.status().ToString();
  EXPECT_GT((*next)->token(), (*lock)->token());
  if (GetParam().fake_clock()) {
    EXPECT_TRUE((*lock)->held());  // no renewal yet
  }
  ASSERT_TRUE(FencedUpdate(table, "p", "r", (*next)->token(), [](Entity&, bool) {
                return Status::OK();
              }).ok());
  EXPECT_EQ(
      FencedUpdate(table, "p", "r", (*lock)->token(), [](Entity&, bool) { return Status::OK(); })
          .status()
          .code(),
      Code::kLeaseLost);
  if (GetParam().fake_clock()) clock_.Advance(std::chrono::seconds(5));  // a renewal is due
  auto future = lost.get_future();
  ASSERT_EQ(future.wait_for(std::chrono::seconds(20)), std::future_status::ready);
  EXPECT_EQ(future.get().code(), Code::kLeaseLost);
  EXPECT_FALSE((*lock)->held());
  EXPECT_EQ((*lock)->status().code(), Code::kLeaseLost);
  // Its expiry is when storage said the lease was gone: a supervisor
  // (`blobtable lock`) kills its command at once, without a grace.
  EXPECT_LE((*lock)->expiry(),
            store_->options().clock ? store_->options().clock->Steady() : Clock::Real()->Steady());
  EXPECT_TRUE((*lock)->Release().ok());  // idempotent after a loss
}

TEST_P(CoordTest, ThreadsTakingTurnsExcludeEachOther) {
  // The real clock: on the fake one every waiter's backoff moves time for
  // the holder too.
  auto store = Open(nullptr);
  ASSERT_NE(store, nullptr);
  auto table = *store->OpenTable("jobs");
  constexpr int kThreads = 4, kEach = 5;
  std::mutex mu;
  std::set<int64_t> tokens;
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&] {
      for (int i = 0; i < kEach; ++i) {
        LockOptions o;
        o.timeout = std::chrono::seconds(60);
        auto lock = Lock::Acquire(*store, "turns", o);
        if (!lock.ok()) {
          ++failures;
          continue;
        }
        // An unconditional read-then-write: only exclusion keeps it exact.
        auto cur = table.Get("p", "n");
        const int64_t n = cur.ok() ? cur->GetAs<int64_t>("n").value_or(0) : 0;
        if (!table.Upsert(Entity("p", "n").Set("n", n + 1)).ok()) ++failures;
        std::lock_guard<std::mutex> g(mu);
        tokens.insert((*lock)->token());
      }
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(table.Get("p", "n")->GetAs<int64_t>("n"), kThreads * kEach);
  EXPECT_EQ(tokens.size(), static_cast<size_t>(kThreads * kEach));  // all distinct
}

TEST_P(CoordTest, ProcessesTakingTurnsExcludeEachOther) {
  constexpr int kProcs = 3, kEach = 4;
  std::vector<pid_t> pids;
  for (int p = 0; p < kProcs; ++p)
    pids.push_back(ForkChild([&] {
      auto store = Open(nullptr);
      if (store == nullptr) return 2;
      auto table = *store->OpenTable("jobs");
      for (int i = 0; i < kEach; ++i) {
        LockOptions o;
        o.timeout = std::chrono::seconds(60);
        auto lock = Lock::Acquire(*store, "turns", o);
        if (!lock.ok()) return 3;
        auto cur = table.Get("p", "n");
        const int64_t n = cur.ok() ? cur->GetAs<int64_t>("n").value_or(0) : 0;
        if (!table.Upsert(Entity("p", "n").Set("n", n + 1)).ok()) return 4;
      }
      return 0;
    }));
  for (pid_t pid : pids) EXPECT_EQ(WaitChild(pid), 0);
  auto store = Open(nullptr);
  EXPECT_EQ(store->OpenTable("jobs")->Get("p", "n")->GetAs<int64_t>("n"), kProcs * kEach);
  auto info = Lock::Inspect(*store, "turns");
  ASSERT_TRUE(info.ok());
  EXPECT_EQ(info->token, kProcs * kEach);
  EXPECT_FALSE(info->held);
}

TEST_P(CoordTest, FencedUpdateRefusesAnOlderTokenAndKeepsTheNewest) {
  auto table = *store_->OpenTable("jobs");
  auto set = [](const char* by) {
    return [by](Entity& e, bool) {
      e.Set("by", by);
      return Status::OK();
    };
  };
  ASSERT_TRUE(FencedUpdate(table, "p", "r", 5, set("five")).ok());
  ASSERT_TRUE(FencedUpdate(table, "p", "r", 5, set("five again")).ok());  // the same holder
  auto old = FencedUpdate(table, "p", "r", 4, set("four"));
  EXPECT_EQ(old.status().code(), Code::kLeaseLost);
  EXPECT_NE(old.status().message().find("fenced"), std::string::npos);
  ASSERT_TRUE(FencedUpdate(table, "p", "r", 7, set("seven")).ok());
  EXPECT_EQ(table.Get("p", "r")->GetAs<std::string>("by"), "seven");
  EXPECT_EQ(FencedUpdate(table, "p", "r", 0, set("zero")).status().code(), Code::kInvalidArgument);
}

TEST_P(CoordTest, CounterAddsAndGetsAndRefusesWhatCannotBe) {
  auto visits = Counter::Open(*store_, "visits");
  ASSERT_TRUE(visits.ok()) << visits.status().ToString();
  EXPECT_EQ(visits->Get().value_or(-1), 0);  // never added to
  int attempts = 0;
  EXPECT_EQ(visits->Add(5, &attempts).value_or(-1), 5);
  EXPECT_EQ(attempts, 1);
  EXPECT_EQ(visits->Add(-2).value_or(-1), 3);
  EXPECT_EQ(visits->Get().value_or(-1), 3);
  // Another name, another counter; the same name from another handle, the same.
  EXPECT_EQ(Counter::Open(*store_, "visits/other")->Get().value_or(-1), 0);
  EXPECT_EQ(Counter::Open(*store_, "visits")->Add(1).value_or(-1), 4);
  auto big = visits->Add(std::numeric_limits<int64_t>::max());
  EXPECT_EQ(big.status().code(), Code::kInvalidArgument) << big.status().ToString();
  EXPECT_EQ(visits->Get().value_or(-1), 4);  // unchanged
  EXPECT_EQ(Counter::Open(*store_, "").status().code(), Code::kInvalidArgument);
  CounterOptions bad;
  bad.shards = 0;
  EXPECT_EQ(Counter::Open(*store_, "x", bad).status().code(), Code::kInvalidArgument);
}

TEST_P(CoordTest, CounterTotalsHoldUnderContentionShardedOrNot) {
  auto store = Open(nullptr);  // the real clock: threads back off for real
  ASSERT_NE(store, nullptr);
  for (int shards : {1, 4}) {
    CounterOptions o;
    o.shards = shards;
    o.retry.max_attempts = 1000;
    o.retry.max_total = std::chrono::minutes(5);
    const std::string name = "hits-" + std::to_string(shards);
    constexpr int kThreads = 4, kEach = 20;
    std::atomic<int> failures{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t)
      threads.emplace_back([&] {
        auto c = Counter::Open(*store, name, o);
        for (int i = 0; i < kEach; ++i)
          if (!c->Add(1).ok()) ++failures;
      });
    for (auto& t : threads) t.join();
    EXPECT_EQ(failures.load(), 0) << shards;
    // Read with another shard count: the listing finds every shard.
    EXPECT_EQ(Counter::Open(*store, name)->Get().value_or(-1), kThreads * kEach) << shards;
  }
  // Processes: three adding 10 each to one shard.
  std::vector<pid_t> pids;
  for (int p = 0; p < 3; ++p)
    pids.push_back(ForkChild([&] {
      auto s = Open(nullptr);
      if (s == nullptr) return 2;
      CounterOptions o;
      o.retry.max_attempts = 1000;
      auto c = Counter::Open(*s, "procs", o);
      for (int i = 0; i < 10; ++i)
        if (!c->Add(1).ok()) return 3;
      return 0;
    }));
  for (pid_t pid : pids) EXPECT_EQ(WaitChild(pid), 0);
  EXPECT_EQ(Counter::Open(*store, "procs")->Get().value_or(-1), 30);
}

namespace {

// Records on_change calls.
struct Changes {
  std::mutex mu;
  std::vector<std::pair<bool, int64_t>> seen;
  LeaderOptions Options(const std::string& identity) {
    LeaderOptions o;
    o.lease_seconds = 15;
    o.identity = identity;
    o.on_change = [this](bool leader, int64_t term) {
      std::lock_guard<std::mutex> g(mu);
      seen.emplace_back(leader, term);
    };
    return o;
  }
};

constexpr std::chrono::seconds kElection{30};  // real time: campaigns retry within 1 s

// A forked process that opens a store with `open`, leads "scheduler" (a 15 s
// lease), writes its term to `report` and then does nothing until killed.
pid_t ForkLeader(Pipe& report, const std::function<std::unique_ptr<Store>()>& open) {
  return ForkChild([&] {
    auto store = open();
    if (store == nullptr) return 2;
    LeaderOptions o;
    o.lease_seconds = 15;
    auto e = LeaderElection::Start(*store, "scheduler", o);
    if (!e.ok() || !(*e)->WaitForLeadership(kElection)) return 3;
    report.Write((*e)->term());
    for (;;) pause();
  });
}

}  // namespace

TEST_P(CoordTest, OneLeaderAtATimeAndAResignationHandsOver) {
  EXPECT_FALSE(LeaderElection::Current(*store_, "scheduler")->elected);
  Changes a_changes, b_changes;
  auto a = LeaderElection::Start(*store_, "scheduler", a_changes.Options("a"));
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  ASSERT_TRUE((*a)->WaitForLeadership(kElection));
  auto b = LeaderElection::Start(*store_, "scheduler", b_changes.Options("b"));
  ASSERT_TRUE(b.ok());
  EXPECT_FALSE((*b)->is_leader());
  EXPECT_EQ((*b)->term(), 0);
  auto current = LeaderElection::Current(*store_, "scheduler");
  ASSERT_TRUE(current.ok());
  EXPECT_TRUE(current->elected);
  EXPECT_EQ(current->identity, "a");
  const int64_t first_term = (*a)->term();
  EXPECT_EQ(current->term, first_term);
  ASSERT_TRUE((*a)->Resign().ok());
  EXPECT_FALSE((*a)->is_leader());
  ASSERT_TRUE((*b)->WaitForLeadership(kElection));
  EXPECT_GT((*b)->term(), first_term);
  EXPECT_EQ(LeaderElection::Current(*store_, "scheduler")->identity, "b");
  EXPECT_TRUE((*a)->Resign().ok());  // idempotent
  std::lock_guard<std::mutex> g(a_changes.mu);
  EXPECT_EQ(a_changes.seen, (std::vector<std::pair<bool, int64_t>>{{true, first_term}}));
}

TEST_P(CoordTest, AKilledLeaderIsSucceededWithAHigherTerm) {
  Pipe report;
  pid_t child = ForkLeader(report, [&] { return Open(options_.clock); });
  const int64_t dead_term = report.Read();
  ASSERT_GT(dead_term, 0);
  Changes changes;
  auto successor = LeaderElection::Start(*store_, "scheduler", changes.Options("successor"));
  ASSERT_TRUE(successor.ok());
  ASSERT_EQ(kill(child, SIGKILL), 0);
  EXPECT_EQ(WaitChild(child), 128 + SIGKILL);
  EXPECT_FALSE((*successor)->is_leader());  // not before the dead leader's lease runs out
  OutliveLease(15);
  ASSERT_TRUE(LeadsOnceTheLeaseRanOut(**successor, kElection / 3));
  EXPECT_GT((*successor)->term(), dead_term);
}

// A store whose first lease acquisition is answered 16 s after it was
// sent: the test's clock moves inside it.
class SlowFirstAcquire : public BlobStoreWrapper {
 public:
  SlowFirstAcquire(std::shared_ptr<BlobStore> target, const internal::FakeClock& clock,
                   std::atomic<bool>& moved)
      : BlobStoreWrapper(std::move(target)), clock_(clock), moved_(moved) {}
  Result<LeaseResult> AcquireLease(std::string_view name, int duration, std::string_view proposed,
                                   const LeaseOptions& c) override {
    if (!moved_.exchange(true)) clock_.Advance(std::chrono::seconds(16));
    return BlobStoreWrapper::AcquireLease(name, duration, proposed, c);
  }

 private:
  const internal::FakeClock& clock_;
  std::atomic<bool>& moved_;
};

// What the successor above may meet under load: its try at the dead
// leader's lease sent before the test moved the clock past that lease and
// answered after. It takes the lease with 16 s gone, judges it lost at once
// (a stall past its deadline) and lets it run out by itself; it leads once
// time goes on (LeadsOnceTheLeaseRanOut). Waiting without time going on, it
// never does.
TEST_P(CoordTest, ACampaignAnsweredPastItsDeadlineLeadsOnceTimeGoesOn) {
  if (!GetParam().fake_clock()) GTEST_SKIP() << "moves the fake clock inside a request";
  Pipe report;
  pid_t child = ForkLeader(report, [&] { return Open(options_.clock); });
  const int64_t dead_term = report.Read();
  ASSERT_GT(dead_term, 0);
  ASSERT_EQ(kill(child, SIGKILL), 0);
  EXPECT_EQ(WaitChild(child), 128 + SIGKILL);
  std::atomic<bool> moved{false};
  StoreOptions o = options_;
  o.wrap_blob_store = [&](std::shared_ptr<BlobStore> target) -> std::shared_ptr<BlobStore> {
    return std::make_shared<SlowFirstAcquire>(std::move(target), clock_, moved);
  };
  auto store = OpenBackendStore(GetParam(), o);
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  Changes changes;
  auto successor = LeaderElection::Start(**store, "scheduler", changes.Options("successor"));
  ASSERT_TRUE(successor.ok());
  ASSERT_TRUE(LeadsOnceTheLeaseRanOut(**successor, std::chrono::seconds(3)));
  EXPECT_TRUE(moved.load());
  EXPECT_GT((*successor)->term(), dead_term);
}

TEST_P(CoordTest, APausedLeaderKnowsItLostBeforeActingAndIsFenced) {
  auto table = *store_->OpenTable("jobs");
  Pipe report, go;
  pid_t child = ForkChild([&] {
    auto store = Open(options_.clock);
    if (store == nullptr) return 2;
    auto t = *store->OpenTable("jobs");
    LeaderOptions o;
    o.lease_seconds = 15;
    auto e = LeaderElection::Start(*store, "scheduler", o);
    if (!e.ok() || !(*e)->WaitForLeadership(kElection)) return 3;
    const int64_t term = (*e)->term();
    report.Write(term);
    if (go.Read() != 1) return 5;  // SIGSTOPped here, then resumed
    if ((*e)->is_leader()) return 10;
    auto stale = FencedUpdate(t, "p", "r", term, [](Entity& x, bool) {
      x.Set("by", "old leader");
      return Status::OK();
    });
    if (!stale.status().IsLeaseLost()) return 11;
    return 0;
  });
  const int64_t old_term = report.Read();
  ASSERT_GT(old_term, 0);
  ASSERT_TRUE(StopChild(child));
  Changes changes;
  auto successor = LeaderElection::Start(*store_, "scheduler", changes.Options("successor"));
  ASSERT_TRUE(successor.ok());
  OutliveLease(15);
  ASSERT_TRUE(LeadsOnceTheLeaseRanOut(**successor, kElection / 3));
  ASSERT_TRUE(FencedUpdate(table, "p", "r", (*successor)->term(), [](Entity& x, bool) {
                x.Set("by", "new leader");
                return Status::OK();
              }).ok());
  ASSERT_EQ(kill(child, SIGCONT), 0);
  go.Write(1);
  EXPECT_EQ(WaitChild(child), 0) << "10: still leader after the pause; 11: its write went through";
  EXPECT_EQ(table.Get("p", "r")->GetAs<std::string>("by"), "new leader");
}

namespace {

QueueOptions Oldest() {
  QueueOptions o;
  o.visibility_seconds = 15;
  o.spread = 1;  // always the oldest visible item: deterministic
  return o;
}

}  // namespace

// Dequeues until an item is visible: at once on the fake clock (after
// OutliveLease); on a server, within its lease (polled: its clock is its own).
std::optional<QueueItem> CoordTest::DequeueWithin(const WorkQueue& q) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(40);
  for (;;) {
    auto item = q.Dequeue();
    EXPECT_TRUE(item.ok()) << item.status().ToString();
    if (!item.ok() || *item || GetParam().fake_clock() ||
        std::chrono::steady_clock::now() > deadline)
      return item.ok() ? *item : std::nullopt;
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
  }
}

TEST_P(CoordTest, QueueDeliversOldestFirstAndCompletesOnce) {
  auto q = WorkQueue::Open(*store_, "thumbnails", Oldest());
  ASSERT_TRUE(q.ok()) << q.status().ToString();
  EXPECT_FALSE(q->Dequeue().value_or(std::nullopt).has_value());  // empty
  std::vector<std::string> ids;
  for (const char* body : {"a.jpg", "b.jpg", "c.jpg"}) {
    auto id = q->Enqueue(body);
    ASSERT_TRUE(id.ok()) << id.status().ToString();
    ids.push_back(*id);
    if (GetParam().fake_clock()) clock_.Advance(std::chrono::milliseconds(1));  // distinct ids
  }
  auto first = q->Dequeue();
  ASSERT_TRUE(first.ok() && *first) << first.status().ToString();
  EXPECT_EQ((*first)->body, "a.jpg");
  EXPECT_EQ((*first)->id, ids[0]);
  EXPECT_EQ((*first)->dequeue_count, 1);
  auto second = q->Dequeue();  // the first is taken: the next one
  ASSERT_TRUE(second.ok() && *second);
  EXPECT_EQ((*second)->body, "b.jpg");
  EXPECT_TRUE(q->Complete(**first).ok());
  EXPECT_EQ(q->Complete(**first).code(), Code::kNotFound);  // gone already
  EXPECT_TRUE(q->Abandon(**second).ok());
  EXPECT_TRUE(q->Abandon(**second).ok());  // idempotent
  auto listed = q->List();
  ASSERT_TRUE(listed.ok());
  ASSERT_EQ(listed->size(), 2u);
  EXPECT_EQ((*listed)[0].id, ids[1]);
  EXPECT_EQ((*listed)[0].dequeue_count, 1);
  EXPECT_FALSE((*listed)[0].taken);
  auto again = q->Dequeue();  // abandoned: visible at once
  ASSERT_TRUE(again.ok() && *again);
  EXPECT_EQ((*again)->id, ids[1]);
  EXPECT_EQ((*again)->dequeue_count, 2);
  EXPECT_TRUE(q->Extend(&**again).ok());
  EXPECT_TRUE(q->Complete(**again).ok());
}

TEST_P(CoordTest, QueueRedeliversAnItemWhoseVisibilityRanOut) {
  auto q = WorkQueue::Open(*store_, "jobs", Oldest());
  ASSERT_TRUE(q->Enqueue("work").ok());
  auto slow = q->Dequeue();
  ASSERT_TRUE(slow.ok() && *slow);
  EXPECT_FALSE(q->Dequeue().value_or(std::nullopt).has_value());  // invisible while taken
  OutliveLease(15);
  auto retry = DequeueWithin(*q);
  ASSERT_TRUE(retry.has_value());
  EXPECT_EQ(retry->id, (*slow)->id);
  EXPECT_EQ(retry->dequeue_count, 2);
  EXPECT_EQ(q->Complete(**slow).code(), Code::kLeaseLost);  // the slow worker must not count it
  EXPECT_EQ(q->Extend(&**slow).code(), Code::kLeaseLost);
  EXPECT_TRUE(q->Complete(*retry).ok());
}

TEST_P(CoordTest, QueueMovesAPoisonItemToTheDeadLetters) {
  QueueOptions o = Oldest();
  o.max_dequeues = 2;
  auto q = WorkQueue::Open(*store_, "jobs", o);
  auto id = q->Enqueue("crashes its worker");
  ASSERT_TRUE(id.ok());
  for (int i = 1; i <= 2; ++i) {
    auto item = q->Dequeue();
    ASSERT_TRUE(item.ok() && *item);
    EXPECT_EQ((*item)->dequeue_count, i);
    ASSERT_TRUE(q->Abandon(**item).ok());
  }
  EXPECT_FALSE(q->Dequeue().value_or(std::nullopt).has_value());  // moved, not delivered
  EXPECT_TRUE(q->List()->empty());
  auto dead = q->DeadLetters();
  ASSERT_TRUE(dead.ok());
  ASSERT_EQ(dead->size(), 1u);
  EXPECT_EQ((*dead)[0].id, *id);
  EXPECT_EQ((*dead)[0].dequeue_count, 2);
  EXPECT_EQ(WorkQueue::Open(*store_, "jobs", QueueOptions{0}).status().code(),
            Code::kInvalidArgument);
}

TEST_P(CoordTest, ProcessesConsumeEveryItemExactlyOnce) {
  constexpr int kItems = 40, kProcs = 3;
  auto q = WorkQueue::Open(*store_, "work");
  for (int i = 0; i < kItems; ++i) ASSERT_TRUE(q->Enqueue("item " + std::to_string(i)).ok());
  std::vector<pid_t> pids;
  for (int p = 0; p < kProcs; ++p)
    pids.push_back(ForkChild([&] {
      auto store = Open(nullptr);  // the real clock: leases must not run out under us
      if (store == nullptr) return 2;
      auto done = *store->OpenTable("done");
      auto queue = WorkQueue::Open(*store, "work");
      for (;;) {
        auto item = queue->Dequeue();
        if (!item.ok()) return 3;
        if (!*item) return 0;  // nothing visible: the others hold the rest, or none is left
        Status completed = queue->Complete(**item);
        if (completed.IsLeaseLost() || completed.IsNotFound()) continue;
        if (!completed.ok()) return 4;
        // Completed by us alone: a second completion of one item would
        // find this row (Conflict).
        if (!done.Insert(Entity("p", (*item)->id).Set("body", (*item)->body)).ok()) return 5;
      }
    }));
  for (pid_t pid : pids) EXPECT_EQ(WaitChild(pid), 0) << "5: an item completed twice";
  auto store = Open(nullptr);
  int rows = 0;
  auto scan = store->OpenTable("done")->Scan();
  for (const Entity& e : scan) rows += e.row_key().empty() ? 0 : 1;
  EXPECT_TRUE(scan.status().ok());
  EXPECT_EQ(rows, kItems);  // none lost
  EXPECT_TRUE(q->List()->empty());
}

TEST_P(CoordTest, AWatchCallsBackOnEveryChangeAndOnlyThen) {
  auto config = *store_->OpenTable("config");
  std::vector<Result<Entity>> seen;
  WatchOptions manual;
  manual.background = false;
  auto watch = EntityWatch::Start(
      config, "service", "limits", [&](const Result<Entity>& now) { seen.push_back(now); }, manual);
  ASSERT_TRUE(watch.ok()) << watch.status().ToString();
  ASSERT_EQ(seen.size(), 1u);  // the current state, before Start returned: absent
  EXPECT_TRUE(seen[0].status().IsNotFound());
  EXPECT_FALSE((*watch)->Poll());  // still absent: no second call
  ASSERT_TRUE(config.Upsert(Entity("service", "limits").Set("max", 10)).ok());
  EXPECT_TRUE((*watch)->Poll());
  ASSERT_EQ(seen.size(), 2u);
  ASSERT_TRUE(seen[1].ok());
  EXPECT_EQ(seen[1]->GetAs<int64_t>("max"), 10);
  EXPECT_FALSE((*watch)->Poll());
  EXPECT_FALSE((*watch)->Poll());
  ASSERT_TRUE(config.Upsert(Entity("service", "limits").Set("max", 20)).ok());
  EXPECT_TRUE((*watch)->Poll());
  EXPECT_EQ(seen.back()->GetAs<int64_t>("max"), 20);
  ASSERT_TRUE(config.Delete("service", "limits", "*").ok());
  EXPECT_TRUE((*watch)->Poll());
  EXPECT_TRUE(seen.back().status().IsNotFound());
  EXPECT_FALSE((*watch)->Poll());
  EXPECT_EQ(seen.size(), 4u);
  EXPECT_EQ((*watch)->changes(), 4);  // the first state included
  EXPECT_EQ((*watch)->polls(), 8);
}

TEST_P(CoordTest, AWatchPollsInTheBackgroundEveryInterval) {
  auto config = *store_->OpenTable("config");
  ASSERT_TRUE(config.Upsert(Entity("service", "limits").Set("max", 1)).ok());
  std::mutex mu;
  std::condition_variable cv;
  int64_t latest = 0;
  WatchOptions o;
  o.interval = std::chrono::milliseconds(200);
  auto watch = EntityWatch::Start(
      config, "service", "limits",
      [&](const Result<Entity>& now) {
        std::lock_guard<std::mutex> g(mu);
        latest = now.ok() ? now->GetAs<int64_t>("max").value_or(-1) : -1;
        cv.notify_all();
      },
      o);
  ASSERT_TRUE(watch.ok());
  ASSERT_TRUE(config.Upsert(Entity("service", "limits").Set("max", 2)).ok());
  if (GetParam().fake_clock()) clock_.Advance(std::chrono::milliseconds(200));  // a poll is due
  std::unique_lock<std::mutex> lk(mu);
  EXPECT_TRUE(cv.wait_for(lk, std::chrono::seconds(20), [&] { return latest == 2; }));
  lk.unlock();
  (*watch)->Stop();
  (*watch)->Stop();  // idempotent
}

GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(CoordTest);

}  // namespace blobtable::testing
