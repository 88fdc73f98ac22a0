// SPDX-License-Identifier: Apache-2.0
// The Lock suite (coord_suite.cc) on the embedded store, with the fake clock.
#include "tests/coord_suite.h"

#include <atomic>
#include <condition_variable>
#include <future>
#include <mutex>
#include <thread>

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

#include "coord/coord_names.h"
#include "testing/counting_blob_store.h"
#include "tools/held_command.h"

namespace blobtable::testing {
namespace {

INSTANTIATE_TEST_SUITE_P(Local, CoordTest, ::testing::Values(LocalBackend()), PrintBackend);

// Renewals that fail Unavailable the first `failures` times; counts them
// and lets a test wait for the n-th (a condition, not a sleep).
class FlakyRenewals final : public BlobStoreWrapper {
 public:
  FlakyRenewals(std::shared_ptr<BlobStore> target, int failures)
      : BlobStoreWrapper(std::move(target)), failures_(failures) {}
  Result<LeaseResult> RenewLease(std::string_view n, std::string_view id,
                                 const LeaseOptions& c) override {
    std::lock_guard<std::mutex> g(mu_);
    ++attempts_;
    cv_.notify_all();
    if (attempts_ <= failures_) return Status::Unavailable("injected: storage unreachable");
    return BlobStoreWrapper::RenewLease(n, id, c);
  }
  bool WaitForAttempts(int n) {
    std::unique_lock<std::mutex> lk(mu_);
    return cv_.wait_for(lk, std::chrono::seconds(10), [&] { return attempts_ >= n; });
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  int attempts_ = 0;
  const int failures_;
};

class LockRenewalTest : public ::testing::Test {
 protected:
  // store_, on the fake clock, its first `failures` renewals failing.
  Store* OpenFlaky(int failures) {
    StoreOptions o;
    o.clock = &clock_;
    o.wrap_blob_store = [this, failures](std::shared_ptr<BlobStore> b) {
      flaky_ = std::make_shared<FlakyRenewals>(std::move(b), failures);
      return flaky_;
    };
    auto store = Store::Open(dir_.path() + "/db", o);
    EXPECT_TRUE(store.ok()) << store.status().ToString();
    store_ = store.ok() ? std::move(*store) : nullptr;
    return store_.get();
  }
  std::unique_ptr<Lock> Hold(int failures) {
    if (OpenFlaky(failures) == nullptr) return nullptr;
    LockOptions lo;
    lo.lease_seconds = 15;  // renewed every 5 s; a failed renewal retried every second
    lo.on_lost = [this](const Status&) {
      if (++lost_ == 1) lost_signal_.set_value();
    };
    auto lock = Lock::Acquire(*store_, "renewed", lo);
    EXPECT_TRUE(lock.ok()) << lock.status().ToString();
    return lock.ok() ? std::move(*lock) : nullptr;
  }
  // Moves the fake clock by `d` and waits until the renewal thread has made
  // its n-th renewal attempt.
  void Step(std::chrono::milliseconds d, int n) {
    clock_.Advance(d);
    ASSERT_TRUE(flaky_->WaitForAttempts(n)) << "renewal attempt " << n;
  }

  TempDir dir_;
  FakeClock clock_;
  std::shared_ptr<FlakyRenewals> flaky_;
  std::unique_ptr<Store> store_;
  std::atomic<int> lost_{0};
  std::promise<void> lost_signal_;
};

TEST_F(LockRenewalTest, ARenewalThatFailsTransientlyIsRetriedAndTheLockKept) {
  auto lock = Hold(/*failures=*/2);
  ASSERT_NE(lock, nullptr);
  Step(std::chrono::seconds(5), 1);  // due: fails
  Step(std::chrono::seconds(1), 2);  // retried: fails
  Step(std::chrono::seconds(1), 3);  // retried: renewed
  // Renewed at 7 s: held until its next renewal is due, whatever storage did.
  Step(std::chrono::seconds(5), 4);
  EXPECT_TRUE(lock->held());
  EXPECT_TRUE(lock->status().ok());
  EXPECT_EQ(lost_.load(), 0);
}

TEST_F(LockRenewalTest, RenewalsFailingForTheWholeLeaseLoseTheLock) {
  auto lock = Hold(/*failures=*/1000);
  ASSERT_NE(lock, nullptr);
  Step(std::chrono::seconds(5), 1);
  int attempts = 1;
  // Retried every second until the lease (less its margin, 13.5 s) is spent.
  for (int t = 6; t <= 13; ++t) Step(std::chrono::seconds(1), ++attempts);
  EXPECT_TRUE(lock->held());  // 13 s: still within 13.5 s
  clock_.Advance(std::chrono::seconds(1));
  EXPECT_FALSE(lock->held());  // by its own clock, before storage would let anyone in
  // The attempt at 14 s fails past the lease: lost, reported once.
  ASSERT_EQ(lost_signal_.get_future().wait_for(std::chrono::seconds(10)),
            std::future_status::ready);
  EXPECT_EQ(lost_.load(), 1);
  EXPECT_FALSE(lock->status().ok());
  EXPECT_NE(lock->status().message().find("could not renew"), std::string::npos)
      << lock->status().ToString();
  EXPECT_TRUE(lock->Release().ok());
}

// Whether process `pid` (not necessarily a child) ends within `within`:
// waits on a pidfd, which becomes readable when it does.
bool EndsWithin(pid_t pid, std::chrono::milliseconds within) {
  const int fd = static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
  if (fd < 0) return errno == ESRCH;  // gone already
  pollfd p{fd, POLLIN, 0};
  const bool ended = poll(&p, 1, static_cast<int>(within.count())) == 1;
  close(fd);
  return ended;
}

// The pid a held command writes to `fifo` once it runs.
pid_t CommandPid(const std::string& fifo) {
  std::ifstream in(fifo);  // opens once the command opens it to write
  pid_t pid = 0;
  in >> pid;
  return pid;
}

// A command that writes its pid to `fifo` and then sleeps a minute; with
// `ignore_term`, SIGTERM cannot stop it.
std::vector<std::string> PidThenSleep(const std::string& fifo, bool ignore_term) {
  return {
      "sh", "-c",
      std::string(ignore_term ? "trap '' TERM; " : "") + "echo $$ > " + fifo + "; exec sleep 60"};
}

// Issue 30, hole 2: `blobtable lock` SIGKILLed left its command running,
// reparented to init, while the lock's lease ran out and the next holder
// came in. The command now dies with its supervisor.
TEST(HeldCommand, DiesWithItsSupervisor) {
  TempDir dir;
  const std::string fifo = dir.path() + "/pid";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  const std::vector<std::string> command = PidThenSleep(fifo, false);
  const pid_t cli = fork();
  if (cli == 0) {
    execl(BLOBTABLE_CLI_PATH, BLOBTABLE_CLI_PATH, "--store", (dir.path() + "/db").c_str(), "lock",
          "job", "--", command[0].c_str(), command[1].c_str(), command[2].c_str(), nullptr);
    _exit(127);
  }
  ASSERT_GT(cli, 0);
  const pid_t held = CommandPid(fifo);
  ASSERT_GT(held, 0);
  ASSERT_EQ(kill(cli, SIGKILL), 0);
  int status = 0;
  ASSERT_EQ(waitpid(cli, &status, 0), cli);
  const bool ended = EndsWithin(held, std::chrono::seconds(5));
  if (!ended) kill(held, SIGKILL);
  EXPECT_TRUE(ended) << "the command outlived its supervisor";
}

// Issue 55, item 2: with stdin not a terminal, SIGSTOP to the command
// stopped its supervisor too (it raised SIGTSTP on itself, as for a
// terminal's Ctrl-Z), and SIGCONT to the command resumed the command only:
// the lease lapsed and a second holder came in while the command wrote on.
// Only a terminal's foreground job stops with its command; otherwise the
// supervisor says so and goes on renewing.
TEST(HeldCommand, ACommandStoppedBySignalLeavesItsSupervisorRunning) {
  TempDir dir;
  const std::string fifo = dir.path() + "/pid";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  const std::vector<std::string> command = PidThenSleep(fifo, false);
  int said[2];
  ASSERT_EQ(pipe(said), 0);
  const pid_t cli = fork();
  if (cli == 0) {
    const int null = open("/dev/null", O_RDONLY);
    if (null < 0 || dup2(null, STDIN_FILENO) < 0 || dup2(said[1], STDERR_FILENO) < 0) _exit(126);
    close(said[0]);
    execl(BLOBTABLE_CLI_PATH, BLOBTABLE_CLI_PATH, "--store", (dir.path() + "/db").c_str(), "lock",
          "job", "--", command[0].c_str(), command[1].c_str(), command[2].c_str(), nullptr);
    _exit(127);
  }
  ASSERT_GT(cli, 0);
  close(said[1]);
  const pid_t held = CommandPid(fifo);
  ASSERT_GT(held, 0);
  ASSERT_EQ(kill(held, SIGSTOP), 0);
  // What the supervisor says once it has seen the stop (bounded: the old
  // supervisor stopped itself and said nothing).
  std::string err;
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (err.find("still held and renewed") == std::string::npos) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        give_up - std::chrono::steady_clock::now());
    pollfd p{said[0], POLLIN, 0};
    if (left.count() <= 0 || poll(&p, 1, static_cast<int>(left.count())) != 1) break;
    char buf[256];
    const ssize_t n = read(said[0], buf, sizeof buf);
    if (n <= 0) break;
    err.append(buf, static_cast<size_t>(n));
  }
  int status = 0;
  const pid_t changed = waitpid(cli, &status, WNOHANG | WUNTRACED);
  EXPECT_NE(err.find("lock job is still held and renewed"), std::string::npos) << err;
  EXPECT_EQ(changed, 0) << "the supervisor stopped (or ended) with its command";
  // Clean up: both continue; SIGTERM to the supervisor goes on to the command.
  kill(cli, SIGCONT);
  kill(held, SIGCONT);
  kill(cli, SIGTERM);
  EXPECT_EQ(waitpid(cli, &status, 0), cli);
  EXPECT_TRUE(EndsWithin(held, std::chrono::seconds(5)));
  close(said[0]);
}

// Issue 30, hole 2: a lock lost to renewals storage never answered. The
// command (which ignores SIGTERM) used to get SIGKILL only 10 s after the
// SIGTERM, long after the lease ran out on storage; it is now dead before
// the lease can end (by the supervisor's clock: fake here, and never moved
// to the lease's end).
TEST_F(LockRenewalTest, ALostLockStopsItsCommandBeforeTheLeaseCanEnd) {
  ASSERT_NE(OpenFlaky(/*failures=*/1000), nullptr);
  Store& store = *store_;
  const std::string fifo = dir_.path() + "/pid";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  LockOptions lo;
  lo.lease_seconds = 15;
  std::ostringstream err;
  int code = -1;
  std::thread cli([&] { code = cli::CmdLock(store, "job", lo, PidThenSleep(fifo, true), 5, err); });
  const pid_t held = CommandPid(fifo);
  Step(std::chrono::seconds(5), 1);  // renewals fail from here on
  for (int n = 2; n <= 9; ++n) Step(std::chrono::seconds(1), n);
  clock_.Advance(std::chrono::seconds(1));         // 14 s: held() is false; SIGTERM, ignored
  clock_.Advance(std::chrono::milliseconds(600));  // 14.6 s: the lease ends at 15 s
  const bool ended = held > 0 && EndsWithin(held, std::chrono::seconds(5));
  if (!ended && held > 0) kill(held, SIGKILL);
  cli.join();
  EXPECT_TRUE(ended) << "still running when the lease could run out";
  EXPECT_EQ(code, 128 + SIGKILL) << err.str();
  EXPECT_NE(err.str().find("lock job lost"), std::string::npos) << err.str();
}

// Issue 30, hole 2 (leader): a leader whose renewals go unanswered steps
// down by its clock; it used to release the lease then, letting the next
// leader in while whatever it led (a supervised command) was still being
// stopped. Its lease now runs out by itself, at lease_expiry().
TEST_F(LockRenewalTest, ALeaderSteppingDownLeavesItsLeaseToRunOut) {
  ASSERT_NE(OpenFlaky(/*failures=*/1000), nullptr);
  Store& store = *store_;
  LeaderOptions lo;
  lo.lease_seconds = 15;
  std::promise<void> stepped_down;
  lo.on_change = [&](bool leading, int64_t) {
    if (!leading) stepped_down.set_value();
  };
  auto first = LeaderElection::Start(store, "sched", lo);
  ASSERT_TRUE(first.ok());
  ASSERT_TRUE((*first)->WaitForLeadership(std::chrono::seconds(10)));
  const SteadyTime expiry = (*first)->lease_expiry();
  Step(std::chrono::seconds(5), 1);
  for (int n = 2; n <= 9; ++n) Step(std::chrono::seconds(1), n);
  clock_.Advance(std::chrono::seconds(1));  // 14 s: steps down by its clock
  ASSERT_EQ(stepped_down.get_future().wait_for(std::chrono::seconds(10)),
            std::future_status::ready);
  EXPECT_FALSE((*first)->is_leader());
  EXPECT_EQ((*first)->lease_expiry(), expiry);
  ASSERT_TRUE((*first)->Resign().ok());  // no lease of its own left to release: sends nothing
  LeaderOptions next;
  next.lease_seconds = 15;
  auto second = LeaderElection::Start(store, "sched", next);
  ASSERT_TRUE(second.ok());
  EXPECT_FALSE((*second)->WaitForLeadership(std::chrono::seconds(2)))
      << "the next leader came in before the lease ran out";
  clock_.Advance(std::chrono::milliseconds(1100));  // past the lease
  EXPECT_TRUE((*second)->WaitForLeadership(std::chrono::seconds(10)));
  EXPECT_GE(clock_.Steady(), expiry);
}

// Issue 55, item 3: an operator breaks the leader's lease; this process's
// next renewal learns it, steps down and wins the election again within
// milliseconds, as term 2. The command started as term 1 used to run on:
// the supervisor looks every 100 ms and never saw is_leader() false. A new
// term is a loss for the command.
TEST_F(LockRenewalTest, ALeaderCommandIsStoppedWhenItsProcessLeadsAgainUnderANewTerm) {
  ASSERT_NE(OpenFlaky(/*failures=*/0), nullptr);
  Store& store = *store_;
  const std::string fifo = dir_.path() + "/pid";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  LeaderOptions lo;
  lo.lease_seconds = 15;
  std::ostringstream err;
  int code = -1;
  std::thread cli([&] {
    code = cli::CmdLeader(store, "sched", lo, std::chrono::seconds(10), PidThenSleep(fifo, false),
                          5, err);
  });
  const pid_t held = CommandPid(fifo);
  ASSERT_TRUE(store.blob_store().BreakLease(internal::coord::LeaderBlobName("sched"), 0, {}).ok());
  Step(std::chrono::seconds(5), 1);  // the renewal finds the lease gone; a campaign wins term 2
  const bool ended = held > 0 && EndsWithin(held, std::chrono::seconds(5));
  if (!ended && held > 0) kill(held, SIGKILL);
  cli.join();
  EXPECT_TRUE(ended) << "the command of term 1 ran on under term 2";
  EXPECT_NE(err.str().find("leadership of sched (term 1) lost"), std::string::npos) << err.str();
  auto now = LeaderElection::Current(store, "sched");
  ASSERT_TRUE(now.ok());
  EXPECT_GE(now->term, 2);
}

// Storage faults on a queue's items: the next `get_failures` reads of an
// item's body answer 503; the next raise of a count fails (503, not
// applied) or, with `lose_count_answer`, is applied and its answer lost.
class ItemFaults final : public BlobStoreWrapper {
 public:
  using BlobStoreWrapper::BlobStoreWrapper;
  Result<GetResult> Get(std::string_view name, const ReadOptions& o) override {
    if (Item(name) && get_failures > 0) {
      --get_failures;
      return Status::Unavailable("injected: 503 on the item's body");
    }
    return BlobStoreWrapper::Get(name, o);
  }
  Result<WriteResult> SetMetadata(std::string_view name, const Metadata& m,
                                  const WriteOptions& o) override {
    if (!Item(name) || count_failures == 0) return BlobStoreWrapper::SetMetadata(name, m, o);
    --count_failures;
    if (lose_count_answer) (void)BlobStoreWrapper::SetMetadata(name, m, o);
    if (count_cut_off)  // a connection reset mid-request: the client cannot tell
      return Status::OutcomeUnknown("injected: the raise of the count cut off");
    return Status::Unavailable("injected: 503 on the count");
  }
  int get_failures = 0, count_failures = 0;
  bool lose_count_answer = false, count_cut_off = false;

 private:
  static bool Item(std::string_view name) { return name.find("/i/") != std::string_view::npos; }
};

class QueueDeliveryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    StoreOptions o;
    o.wrap_blob_store = [this](std::shared_ptr<BlobStore> b) {
      faults_ = std::make_shared<ItemFaults>(std::move(b));
      return faults_;
    };
    auto store = Store::Open(dir_.path(), o);
    ASSERT_TRUE(store.ok());
    store_ = std::move(*store);
    QueueOptions qo;
    qo.visibility_seconds = 15;
    queue_.emplace(*WorkQueue::Open(*store_, "jobs", qo));
    ASSERT_TRUE(queue_->Enqueue("job").ok());
  }
  QueueEntry Only() {
    auto listed = queue_->List();
    EXPECT_TRUE(listed.ok() && listed->size() == 1);
    return listed.ok() && listed->size() == 1 ? (*listed)[0] : QueueEntry{};
  }
  TempDir dir_;
  std::shared_ptr<ItemFaults> faults_;
  std::unique_ptr<Store> store_;
  std::optional<WorkQueue> queue_;
};

// Issue 55, item 4: a Dequeue that failed after taking the lease (a 503 on
// the body) left the item hidden for the visibility (the next take found
// nothing), its lease held by a delivery that never happened. It is given
// back now: visible at once, its count as it was.
TEST_F(QueueDeliveryTest, ADeliveryThatFailsGivesTheItemBackUncounted) {
  faults_->get_failures = 1;
  EXPECT_EQ(queue_->Dequeue().status().code(), Code::kUnavailable);
  EXPECT_FALSE(Only().taken);
  EXPECT_EQ(Only().dequeue_count, 0);
  faults_->count_failures = 1;  // the raise of the count fails, not applied
  EXPECT_EQ(queue_->Dequeue().status().code(), Code::kUnavailable);
  EXPECT_FALSE(Only().taken);
  EXPECT_EQ(Only().dequeue_count, 0);
  auto item = queue_->Dequeue();
  ASSERT_TRUE(item.ok() && *item) << item.status().ToString();
  EXPECT_EQ((*item)->dequeue_count, 1);
  EXPECT_TRUE(queue_->Complete(**item).ok());
}

// The review of issue 55: a raise of the count cut off mid-request (not
// applied, but the client cannot tell) made the take answer OutcomeUnknown
// (`queue take` exit 7, "settle it first") though it read back that
// nothing was counted and gave the item back: it did nothing, and says so.
TEST_F(QueueDeliveryTest, ATakeReadBackAsNotCountedIsUnavailableNotUnknown) {
  faults_->count_failures = 1;
  faults_->count_cut_off = true;
  const Status s = queue_->Dequeue().status();
  EXPECT_EQ(s.code(), Code::kUnavailable) << s.ToString();
  EXPECT_FALSE(Only().taken);
  EXPECT_EQ(Only().dequeue_count, 0);
}

// A raise of the count applied but answered with an error: counted on
// storage, so the delivery is made (never a count without an item).
TEST_F(QueueDeliveryTest, ACountRaisedWhoseAnswerWasLostIsADelivery) {
  faults_->count_failures = 1;
  faults_->lose_count_answer = true;
  auto item = queue_->Dequeue();
  ASSERT_TRUE(item.ok() && *item) << item.status().ToString();
  EXPECT_EQ((*item)->dequeue_count, 1);
  EXPECT_TRUE(Only().taken);
  EXPECT_TRUE(queue_->Complete(**item).ok());
}

// A network gone dark, as a relay that swallows traffic: while dark, every
// request is sent and gets no answer. One with a deadline gives up
// Unavailable once the fake clock passes it (as the Azure backend cuts its
// request timeout to fit); one without waits until the light is back (the
// request timeout, 30 s, and the retry budget, 60 s, in real life). It
// counts the requests made under a lease (a renewal, a release, a write
// with a lease id) that carried no deadline.
class DarkNetwork final : public BlobStoreWrapper {
 public:
  DarkNetwork(std::shared_ptr<BlobStore> target, const FakeClock& clock)
      : BlobStoreWrapper(std::move(target)), clock_(clock) {}
  void Dark(bool on) {
    std::lock_guard<std::mutex> g(mu_);
    dark_ = on;
    cv_.notify_all();
  }
  // Waits (a bound for the failure, not a pause) until `n` requests have
  // gone unanswered since the network went dark.
  bool WaitForUnanswered(int n) {
    std::unique_lock<std::mutex> lk(mu_);
    return cv_.wait_for(lk, std::chrono::seconds(10), [&] { return unanswered_ >= n; });
  }
  // The requests made under a lease that carried no deadline, by kind.
  std::vector<std::string> without_deadline() const {
    std::lock_guard<std::mutex> g(mu_);
    return without_deadline_;
  }

  Result<GetResult> Get(std::string_view n, const ReadOptions& o) override {
    BT_RETURN_IF_ERROR(Send("get", o.deadline, false));
    return BlobStoreWrapper::Get(n, o);
  }
  Result<GetResult> Head(std::string_view n, const AccessConditions& c) override {
    BT_RETURN_IF_ERROR(Send("head", std::nullopt, false));
    return BlobStoreWrapper::Head(n, c);
  }
  Result<WriteResult> Put(std::string_view n, std::string_view d, const PutOptions& o) override {
    BT_RETURN_IF_ERROR(Send("put", o.deadline, !o.lease_id.empty()));
    return BlobStoreWrapper::Put(n, d, o);
  }
  Status Delete(std::string_view n, const WriteOptions& o) override {
    BT_RETURN_IF_ERROR(Send("delete", o.deadline, !o.lease_id.empty()));
    return BlobStoreWrapper::Delete(n, o);
  }
  Result<WriteResult> SetMetadata(std::string_view n, const Metadata& m,
                                  const WriteOptions& o) override {
    BT_RETURN_IF_ERROR(Send("metadata", o.deadline, !o.lease_id.empty()));
    return BlobStoreWrapper::SetMetadata(n, m, o);
  }
  Result<ListPage> List(const ListOptions& o) override {
    BT_RETURN_IF_ERROR(Send("list", o.deadline, false));
    return BlobStoreWrapper::List(o);
  }
  Result<LeaseResult> AcquireLease(std::string_view n, int d, std::string_view p,
                                   const LeaseOptions& o) override {
    BT_RETURN_IF_ERROR(Send("acquire", o.deadline, false));
    return BlobStoreWrapper::AcquireLease(n, d, p, o);
  }
  Result<LeaseResult> RenewLease(std::string_view n, std::string_view id,
                                 const LeaseOptions& o) override {
    BT_RETURN_IF_ERROR(Send("renew", o.deadline, true));
    return BlobStoreWrapper::RenewLease(n, id, o);
  }
  Result<LeaseResult> ReleaseLease(std::string_view n, std::string_view id,
                                   const LeaseOptions& o) override {
    BT_RETURN_IF_ERROR(Send("release", o.deadline, true));
    return BlobStoreWrapper::ReleaseLease(n, id, o);
  }

 private:
  Status Send(const char* kind, std::optional<SteadyTime> deadline, bool under_lease) {
    std::unique_lock<std::mutex> lk(mu_);
    if (!dark_) return Status::OK();
    if (under_lease && !deadline) without_deadline_.push_back(kind);
    ++unanswered_;
    cv_.notify_all();
    while (dark_) {
      if (deadline && clock_.Steady() >= *deadline)
        return Status::Unavailable(std::string("dark: no answer to the ") + kind +
                                   " by its deadline");
      cv_.wait_for(lk, std::chrono::milliseconds(20));  // a fake clock moves without notice
    }
    return Status::OK();
  }

  const FakeClock& clock_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool dark_ = false;
  int unanswered_ = 0;
  std::vector<std::string> without_deadline_;
};

enum class Supervisor { kLock, kLeader, kQueueRun };

class DarkNetworkTest : public ::testing::TestWithParam<Supervisor> {
 protected:
  void SetUp() override {
    StoreOptions o;
    o.clock = &clock_;
    o.wrap_blob_store = [this](std::shared_ptr<BlobStore> b) {
      dark_ = std::make_shared<DarkNetwork>(std::move(b), clock_);
      return dark_;
    };
    auto store = Store::Open(dir_.path() + "/db", o);
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    store_ = std::move(*store);
  }
  // Runs the supervisor of GetParam() on a command that ignores SIGTERM,
  // with a 15 s lease, in a thread; its exit code is set when it returns.
  void Start(const std::string& fifo) {
    const std::vector<std::string> command = PidThenSleep(fifo, /*ignore_term=*/true);
    switch (GetParam()) {
      case Supervisor::kLock: {
        LockOptions lo;
        lo.lease_seconds = 15;
        cli_ = std::thread(
            [this, lo, command] { Ended(cli::CmdLock(*store_, "job", lo, command, 5, err_)); });
        break;
      }
      case Supervisor::kLeader: {
        LeaderOptions lo;
        lo.lease_seconds = 15;
        cli_ = std::thread([this, lo, command] {
          Ended(cli::CmdLeader(*store_, "job", lo, std::chrono::seconds(10), command, 5, err_));
        });
        break;
      }
      case Supervisor::kQueueRun: {
        QueueOptions qo;
        qo.visibility_seconds = 15;
        queue_.emplace(*WorkQueue::Open(*store_, "jobs", qo));
        ASSERT_TRUE(queue_->Enqueue("job").ok());
        auto item = queue_->Dequeue();
        ASSERT_TRUE(item.ok() && *item);
        cli_ = std::thread([this, item = **item, command] {
          Ended(cli::CmdQueueRun(*store_, *queue_, item, 15, command, err_));
        });
        break;
      }
    }
  }
  void Ended(int code) {
    code_ = code;
    returned_.set_value();
  }
  // After a failed assertion too: no command left running, no thread left
  // joinable (which would abort the program).
  void TearDown() override {
    if (held_ > 0) kill(held_, SIGKILL);
    if (dark_) dark_->Dark(false);
    if (cli_.joinable()) cli_.join();
  }

  TempDir dir_;
  FakeClock clock_;
  std::shared_ptr<DarkNetwork> dark_;
  std::unique_ptr<Store> store_;
  std::optional<WorkQueue> queue_;
  std::thread cli_;
  pid_t held_ = 0;
  std::ostringstream err_;
  int code_ = -1;
  std::promise<void> returned_;
};

// Issue 55, item 1, for all three supervisors: the path to storage goes
// dark while the command runs (a relay swallows every request). The
// renewal sent a third into the lease gets no answer; the command (which
// ignores SIGTERM) must be dead before the lease could end by the
// supervisor's clock (fake here, moved to 14.6 s of a 15 s lease). No
// request made under the lease may be waited on past its end: each carries
// the time the lease may be counted on as its deadline (the queue's
// extension used to have none, and kept `queue run` in its request 19 s
// past the lease), so the supervisor returns before the lease's end with
// the network still dark (a leader that stepped down campaigns again only
// once its old lease is over).
TEST_P(DarkNetworkTest, TheCommandIsStoppedAndNoRequestWaitedOnPastTheLease) {
  const std::string fifo = dir_.path() + "/pid";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  Start(fifo);
  const pid_t held = held_ = CommandPid(fifo);
  ASSERT_GT(held, 0);
  dark_->Dark(true);
  clock_.Advance(std::chrono::seconds(5));  // a renewal is due, and gets no answer
  ASSERT_TRUE(dark_->WaitForUnanswered(1));
  for (int s = 6; s <= 14; ++s) clock_.Advance(std::chrono::seconds(1));
  clock_.Advance(std::chrono::milliseconds(600));  // 14.6 s: the lease ends at 15 s
  const bool ended = EndsWithin(held, std::chrono::seconds(10));
  if (!ended) kill(held, SIGKILL);
  held_ = 0;  // dead now (its number may be reused once reaped)
  EXPECT_TRUE(ended) << "still running when the lease could run out";
  auto returned = returned_.get_future();  // at 14.6 s, the network still dark
  const bool on_time = returned.wait_for(std::chrono::seconds(10)) == std::future_status::ready;
  EXPECT_TRUE(on_time) << "waiting on a request past the lease's end";
  dark_->Dark(false);
  cli_.join();
  EXPECT_EQ(code_, 128 + SIGKILL) << err_.str();
  EXPECT_EQ(dark_->without_deadline(), std::vector<std::string>{});
}

INSTANTIATE_TEST_SUITE_P(Supervisors, DarkNetworkTest,
                         ::testing::Values(Supervisor::kLock, Supervisor::kLeader,
                                           Supervisor::kQueueRun),
                         [](const ::testing::TestParamInfo<Supervisor>& p) {
                           switch (p.param) {
                             case Supervisor::kLock: return "Lock";
                             case Supervisor::kLeader: return "Leader";
                             case Supervisor::kQueueRun: return "QueueRun";
                           }
                           return "Unknown";
                         });

// What each call costs in requests (docs/coordination.md#coordination).
TEST(CoordCost, RequestsPerCall) {
  TempDir dir;
  std::shared_ptr<internal::CountingBlobStore> counter;
  StoreOptions o;
  o.wrap_blob_store = [&](std::shared_ptr<BlobStore> b) {
    counter = std::make_shared<internal::CountingBlobStore>(std::move(b));
    return counter;
  };
  auto store = Store::Open(dir.path(), o);
  ASSERT_TRUE(store.ok());
  LockOptions once;
  once.timeout = std::chrono::milliseconds(0);
  {
    auto first = Lock::Acquire(**store, "l", once);  // the lock's blob is made first
    ASSERT_TRUE(first.ok());
    EXPECT_EQ(counter->Counts(),
              (std::map<std::string, int>{{"lease", 2}, {"put", 1}, {"head", 1}, {"metadata", 1}}));
  }
  counter->Clear();
  {
    auto again = Lock::Acquire(**store, "l", once);
    ASSERT_TRUE(again.ok());
    EXPECT_EQ(counter->Counts(),
              (std::map<std::string, int>{{"lease", 1}, {"head", 1}, {"metadata", 1}}));
    counter->Clear();
  }
  EXPECT_EQ(counter->Counts(), (std::map<std::string, int>{{"release", 1}}));
  auto c = Counter::Open(**store, "c");
  ASSERT_TRUE(c->Add(1).ok());
  counter->Clear();
  ASSERT_TRUE(c->Add(1).ok());
  EXPECT_EQ(counter->Counts(), (std::map<std::string, int>{{"head", 1}, {"put", 1}}));
  counter->Clear();
  ASSERT_TRUE(c->Get().ok());
  EXPECT_EQ(counter->Counts(), (std::map<std::string, int>{{"list", 1}}));
  auto q = WorkQueue::Open(**store, "q");
  counter->Clear();
  ASSERT_TRUE(q->Enqueue("x").ok());
  EXPECT_EQ(counter->Counts(), (std::map<std::string, int>{{"put", 1}}));
  counter->Clear();
  auto item = q->Dequeue();
  ASSERT_TRUE(item.ok() && *item);
  EXPECT_EQ(counter->Counts(),
            (std::map<std::string, int>{{"list", 1}, {"lease", 1}, {"get", 1}, {"metadata", 1}}));
  counter->Clear();
  ASSERT_TRUE(q->Complete(**item).ok());
  EXPECT_EQ(counter->Counts(), (std::map<std::string, int>{{"delete", 1}}));
  // A watch: an idle poll is one GET answered "not modified" (no body).
  auto config = *(*store)->OpenTable("config");
  ASSERT_TRUE(config.Upsert(Entity("s", "limits")).ok());
  WatchOptions manual;
  manual.background = false;
  auto watch = EntityWatch::Start(
      config, "s", "limits", [](const Result<Entity>&) {}, manual);
  ASSERT_TRUE(watch.ok());
  counter->Clear();
  for (int i = 0; i < 3; ++i) EXPECT_FALSE((*watch)->Poll());
  EXPECT_EQ(counter->Counts(), (std::map<std::string, int>{{"get", 3}}));
  EXPECT_EQ(counter->NotModified(), 3);
}

}  // namespace
}  // namespace blobtable::testing
