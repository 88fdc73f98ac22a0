// SPDX-License-Identifier: Apache-2.0
#include "tools/held_command.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <optional>
#include <ostream>
#include <string_view>
#include <thread>

#include <CLI/CLI.hpp>

#include "coord/clock_wait.h"
#include "coord/lease_time.h"
#include "tools/cli.h"
#include "tools/cli/command.h"

namespace blobtable::cli {
namespace {

using std::chrono::milliseconds;

// The command's process group (its pid); 0 while none runs.
std::atomic<pid_t> g_group{0};
// A signal that came before the group was recorded: blocking signals
// around fork() holds them back from this thread only, and another thread
// (the lease's renewal) may take one meanwhile.
std::atomic<int> g_pending{0};

// Passes a signal meant for us on to the command's process group
// (async-signal-safe). The command has a group of its own, so a terminal's
// Ctrl-C reaches it only through us.
void Forward(int sig) {
  const pid_t group = g_group.load();
  if (group > 0)
    kill(-group, sig);
  else
    g_pending.store(sig);
}

constexpr int kForwarded[] = {SIGINT, SIGTERM, SIGHUP};

// A command to run: its arguments, what it finds in its environment
// ("NAME=value", on top of ours), and its stdin (ours if -1).
struct ChildCommand {
  std::vector<std::string> command;
  std::vector<std::string> environment;
  int stdin_fd = -1;
};

// In the child between fork() and exec: only async-signal-safe calls
// (everything it needs is built before the fork).
[[noreturn]] void RunChild(pid_t parent, const sigset_t& old_mask, char* const* argv,
                           char* const* envp, int stdin_fd, bool terminal) {
  for (int sig : kForwarded) signal(sig, SIG_DFL);
  setpgid(0, 0);
  if (terminal) {  // as the parent does: before the command can read it
    signal(SIGTTOU, SIG_IGN);
    (void)tcsetpgrp(STDIN_FILENO, getpid());
    signal(SIGTTOU, SIG_DFL);
  }
  if (stdin_fd >= 0 && (dup2(stdin_fd, STDIN_FILENO) < 0 || close(stdin_fd) < 0)) _exit(kExitOther);
  // Killed with the supervisor, whatever ends it (SIGKILL included). Asked
  // for after the fork: if the supervisor died before, getppid() says so.
  // (Not across the exec of a set-user-ID program: Linux clears it then.)
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != parent) _exit(kExitOther);
  sigprocmask(SIG_SETMASK, &old_mask, nullptr);
  sigset_t metrics_signal;  // ours, taken by a thread of ours (tools/main.cc): not the command's
  sigemptyset(&metrics_signal);
  sigaddset(&metrics_signal, SIGUSR1);
  sigprocmask(SIG_UNBLOCK, &metrics_signal, nullptr);
  execvpe(argv[0], argv, envp);
  const int e = errno;
  // "command not found" as a shell says it; 127 or 126 as a shell exits.
  const char* why = e == ENOENT   ? "No such file or directory"
                    : e == EACCES ? "Permission denied"
                                  : "cannot execute";
  const char* parts[] = {"blobtable: error: cannot run '", argv[0], "': ", why, "\n"};
  for (const char* p : parts) (void)!write(STDERR_FILENO, p, std::strlen(p));
  _exit(e == ENOENT ? 127 : 126);
}

// This process's environment with `assignments` ("NAME=value") set.
std::vector<std::string> EnvironmentWith(const std::vector<std::string>& assignments) {
  std::vector<std::string> env;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string_view entry(*e);
    const bool replaced = std::any_of(assignments.begin(), assignments.end(), [&](auto& a) {
      const size_t name_end = a.find('=') + 1;
      return entry.substr(0, name_end) == std::string_view(a).substr(0, name_end);
    });
    if (!replaced) env.emplace_back(entry);
  }
  env.insert(env.end(), assignments.begin(), assignments.end());
  return env;
}

// Starts `child.command` in a process group of its own; -1 if fork failed.
// Signals we pass on are blocked from before the fork until the group is
// recorded, and one another thread took meanwhile is passed on then, so
// none is dropped.
pid_t Start(const ChildCommand& child, bool terminal) {
  std::vector<char*> argv;
  for (const std::string& a : child.command) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  std::vector<std::string> env_text = EnvironmentWith(child.environment);
  std::vector<char*> envp;
  for (std::string& e : env_text) envp.push_back(e.data());
  envp.push_back(nullptr);
  sigset_t block, old_mask;
  sigemptyset(&block);
  for (int sig : kForwarded) sigaddset(&block, sig);
  sigprocmask(SIG_BLOCK, &block, &old_mask);
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid == 0) RunChild(parent, old_mask, argv.data(), envp.data(), child.stdin_fd, terminal);
  if (pid > 0) {
    setpgid(pid, pid);  // as the child does: whichever runs first
    g_group = pid;
    if (const int sig = g_pending.exchange(0); sig != 0) kill(-pid, sig);
  }
  sigprocmask(SIG_SETMASK, &old_mask, nullptr);
  return pid;
}

// While the command runs, the terminal (if we have it in the foreground)
// belongs to the command's group, so that it can read it; given back after.
class Terminal {
 public:
  // Whether this process has the terminal now (its group is the
  // foreground one).
  static bool Ours() { return isatty(STDIN_FILENO) && tcgetpgrp(STDIN_FILENO) == getpgrp(); }
  Terminal(pid_t group, bool ours) : group_(group), given_(ours) {
    if (given_) Handover(group_);
  }
  ~Terminal() {
    if (given_) Handover(getpgrp());
  }
  // The command stopped (Ctrl-Z, or a read of the terminal from the
  // background): stop with it, so that the shell sees the job stopped,
  // and take it on again when continued.
  void StopWithCommand() {
    if (given_) Handover(getpgrp());
    raise(SIGTSTP);  // the whole process stops here, until SIGCONT
    given_ = Ours();
    if (given_) Handover(group_);
    kill(-group_, SIGCONT);
  }

 private:
  static void Handover(pid_t group) {
    // A background group setting the foreground one gets SIGTTOU.
    struct sigaction ignore = {}, old = {};
    ignore.sa_handler = SIG_IGN;
    sigaction(SIGTTOU, &ignore, &old);
    (void)tcsetpgrp(STDIN_FILENO, group);
    sigaction(SIGTTOU, &old, nullptr);
  }
  pid_t group_;
  bool given_ = false;
};

int ExitCodeOf(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return kExitOther;
}

// What a supervised command runs under: `held()` while it may run,
// `expiry()` when its lease may run out on storage, `why()` it was lost.
struct Holding {
  std::string what;
  std::function<bool()> held;
  std::function<SteadyTime()> expiry;
  std::function<Status()> why;
};

// SIGKILL goes to the command's group this long before the lease's
// expiry, so that the kill has landed before storage can let anyone in.
constexpr milliseconds kKillMargin{500};

// Runs `child` while `holding.held()`. Once it is not: SIGTERM to the
// command's group, then SIGKILL to it kKillMargin before
// `holding.expiry()` (by `clock`), or 10 s after the SIGTERM if that is
// sooner. Looks every 100 ms, and wakes for the kill on time. Signals to us
// go on to the command. When the command ends, what it left in its group
// is killed: nothing of it runs after the lease is given up. The command's
// exit code.
int Supervise(const Clock& clock, const Holding& holding, const ChildCommand& child_command,
              std::ostream& err) {
  struct sigaction forward = {}, old[3] = {};
  forward.sa_handler = Forward;
  sigemptyset(&forward.sa_mask);
  for (int i = 0; i < 3; ++i) sigaction(kForwarded[i], &forward, &old[i]);
  const bool foreground = Terminal::Ours();
  const pid_t child = Start(child_command, foreground);
  int status = 1 << 8;
  if (child < 0) {
    err << "blobtable: error: cannot start the command (fork): " << std::strerror(errno) << "\n";
  } else {
    Terminal terminal(child, foreground);
    bool stopping = false, killed = false;
    SteadyTime kill_at{};
    for (;;) {
      const pid_t done = waitpid(child, &status, WNOHANG | WUNTRACED);
      if (done == child && WIFSTOPPED(status)) {
        // Job control is for a terminal's foreground job: stop with the
        // command so the shell sees the job stopped. Anything else (a
        // SIGSTOP from a script, a debugger) stops the command alone: this
        // process goes on renewing, and still stops the command for good
        // before the lease could end if it is lost meanwhile.
        if (foreground) {
          terminal.StopWithCommand();
        } else {
          err << "blobtable: the command was stopped (" << strsignal(WSTOPSIG(status)) << "); "
              << holding.what << " is still held and renewed (kill -CONT " << child
              << " continues the command)\n";
        }
        continue;
      }
      if (done == child) break;
      if (done < 0 && errno != EINTR) break;
      const SteadyTime now = clock.Steady();
      if (!stopping && !holding.held()) {
        const Status s = holding.why();
        err << "blobtable: error: " << holding.what << " lost ("
            << (s.ok() ? "the lease may have lapsed" : s.ToString()) << "): stopping the command\n";
        kill(-child, SIGTERM);
        stopping = true;
        kill_at = std::min(holding.expiry() - kKillMargin, now + std::chrono::seconds(10));
      }
      if (stopping && !killed && now >= kill_at) {
        kill(-child, SIGKILL);
        killed = true;
      }
      milliseconds nap(100);
      if (stopping && !killed)
        nap = std::clamp(std::chrono::duration_cast<milliseconds>(kill_at - now), milliseconds(0),
                         nap);
      else if (!stopping)
        nap = std::clamp(
            std::chrono::duration_cast<milliseconds>(holding.expiry() - kKillMargin - now),
            milliseconds(1), nap);
      std::this_thread::sleep_for(nap);
    }
    kill(-child, SIGKILL);  // what the command left running in its group
    g_group = 0;
  }
  for (int i = 0; i < 3; ++i) sigaction(kForwarded[i], &old[i], nullptr);
  return ExitCodeOf(status);
}

const Clock& ClockOf(const Store& store) {
  return store.options().clock != nullptr ? *store.options().clock : *Clock::Real();
}

// A lock or leadership that could not be had: the exit code the user chose
// for it (`--conflict-exit-code`), so that it is told apart from the
// command's own.
int NotHad(std::ostream& err, const Status& s, int conflict_exit_code) {
  const int code = Fail(err, s);
  return code == kExitLockTimeout ? conflict_exit_code : code;
}

}  // namespace

void DefineHeldCommand(CLI::App& command, HeldCommandOptions& options,
                       std::chrono::milliseconds* timeout, int* lease_seconds,
                       const char* timeout_help) {
  command.add_option("NAME", options.name)->required();
  command.add_option("COMMAND", options.command, "the command and its arguments, after --")
      ->required()
      ->expected(-1);
  command
      .add_option_function<double>(
          "--timeout",
          [timeout](double s) {
            *timeout = std::chrono::milliseconds(static_cast<int64_t>(s * 1000));
          },
          timeout_help)
      ->check(AtLeast(0));
  command.add_option("--lease", *lease_seconds, "SECONDS, 15..60 (default 30)")
      ->check(CLI::Range(15, 60));
  command
      .add_option("--conflict-exit-code", options.conflict_exit_code,
                  "N: the exit code when it could not be had in time (default 5), as flock -E, "
                  "to tell it from the command's own")
      ->check(CLI::Range(0, 255));
}

int CmdLock(const Store& store, const std::string& name, const LockOptions& options,
            const std::vector<std::string>& command, int conflict_exit_code, std::ostream& err) {
  if (command.empty()) return Fail(err, Status::InvalidArgument("lock: give the command after --"));
  auto lock = Lock::Acquire(store, name, options);
  if (!lock.ok()) return NotHad(err, lock.status(), conflict_exit_code);
  Lock& l = **lock;
  const int code = Supervise(ClockOf(store),
                             {"lock " + name, [&] { return l.held(); }, [&] { return l.expiry(); },
                              [&] { return l.status(); }},
                             {command, {"BLOBTABLE_LOCK_TOKEN=" + std::to_string(l.token())}}, err);
  Status released = l.Release();
  if (!released.ok()) err << "blobtable: warning: " << released.ToString() << "\n";
  return code;
}

int CmdLeader(const Store& store, const std::string& name, const LeaderOptions& options,
              std::chrono::milliseconds timeout, const std::vector<std::string>& command,
              int conflict_exit_code, std::ostream& err) {
  if (command.empty())
    return Fail(err, Status::InvalidArgument("leader: give the command after --"));
  auto election = LeaderElection::Start(store, name, options);
  if (!election.ok()) return Fail(err, election.status());
  LeaderElection& e = **election;
  const auto forever = std::chrono::hours(24 * 365);
  if (!e.WaitForLeadership(timeout.count() < 0 ? forever : timeout))
    return NotHad(err,
                  Status::LockTimeout("leader election " + name + ": not leader within " +
                                      std::to_string(timeout.count()) + " ms"),
                  conflict_exit_code);
  // The command leads for one term: a new term (the lease was broken and
  // this process won again, between two looks) is a loss for it. Its
  // lease was taken away, so nothing is left to wait for before the kill.
  const int64_t term = e.term();
  const Clock& clock = ClockOf(store);
  auto same_term = [&] { return e.term() == term; };
  const int code = Supervise(
      clock,
      {"leadership of " + name + " (term " + std::to_string(term) + ")",
       [&] { return e.is_leader() && same_term(); },
       [&] { return same_term() || e.term() == 0 ? e.lease_expiry() : clock.Steady(); },
       [&] {
         const int64_t now = e.term();
         return now != 0 && now != term
                    ? Status::LeaseLost("the lease was broken; this process leads again, as term " +
                                        std::to_string(now))
                    : e.last_loss();
       }},
      {command, {"BLOBTABLE_LEADER_TERM=" + std::to_string(term)}}, err);
  Status resigned = e.Resign();
  if (!resigned.ok()) err << "blobtable: warning: " << resigned.ToString() << "\n";
  return code;
}

namespace {

// A file holding `bytes`, read from its start: the stdin of `queue run`'s
// command (a pipe would need a thread to feed a body larger than its
// buffer). -1 with errno if it could not be made.
int FileHolding(const std::string& bytes) {
  const int fd = memfd_create("blobtable-queue-item", MFD_CLOEXEC);
  if (fd < 0) return -1;
  for (size_t done = 0; done < bytes.size();) {
    const ssize_t n = write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return close(fd), -1;
    done += static_cast<size_t>(n);
  }
  if (lseek(fd, 0, SEEK_SET) != 0) return close(fd), -1;
  return fd;
}

}  // namespace

namespace {

// A queue item's lease, extended every third of the visibility from a
// thread of its own, so that the supervisor's loop never waits on storage:
// an extension that hangs (a network gone dark) leaves held() to turn false
// by the clock when the lease may no longer be counted on, and the command
// is stopped before storage could let another worker in. A failed extension
// is tried again a second later while the lease is usable (Extend says
// LeaseLost once it is not).
class ItemLease {
 public:
  ItemLease(const WorkQueue& queue, QueueItem item, int visibility_seconds, const Clock& clock)
      : queue_(queue),
        clock_(clock),
        every_(std::chrono::milliseconds(visibility_seconds * 1000 / 3)),
        // Storage ends the lease the visibility after the request that took
        // or extended it was sent; the item says when it may be counted on.
        margin_(std::chrono::seconds(visibility_seconds) -
                internal::coord::UsableFor(visibility_seconds)),
        item_(std::move(item)),
        usable_until_(item_.lease_usable_until.value_or(SteadyTime::max())),
        // A third into the lease as the take counted it (it started when
        // the take was sent), not from whenever this thread gets going: a
        // loaded machine may start it late (a fake clock moved meanwhile).
        first_due_(item_.lease_usable_until
                       ? *item_.lease_usable_until -
                             internal::coord::UsableFor(visibility_seconds) + every_
                       : clock.Steady() + every_),
        thread_([this] { Run(); }) {}
  ~ItemLease() { Stop(); }
  ItemLease(const ItemLease&) = delete;
  ItemLease& operator=(const ItemLease&) = delete;

  bool held() const {
    std::lock_guard<std::mutex> lk(mu_);
    return lost_.ok() && clock_.Steady() < usable_until_;
  }
  // When the lease may end on storage; once storage said it is gone (an
  // extension refused: broken, or taken after it ran out), another worker
  // may hold the item already, so the command is killed at once, as
  // `lock` kills it.
  SteadyTime expiry() const {
    std::lock_guard<std::mutex> lk(mu_);
    if (gone_at_) return *gone_at_;
    return usable_until_ == SteadyTime::max() ? usable_until_ : usable_until_ + margin_;
  }
  Status lost() const {
    std::lock_guard<std::mutex> lk(mu_);
    if (!lost_.ok() || clock_.Steady() < usable_until_) return lost_;
    return Status::LeaseLost("no extension was answered in time: the lease may have run out");
  }
  // Stops extending (waits for an extension in flight) and hands the item
  // back, with its lease as last extended, to complete or give back.
  QueueItem& Stop() {
    {
      std::lock_guard<std::mutex> lk(mu_);
      stopping_ = true;
    }
    cv_.notify_all();
    if (thread_.joinable()) thread_.join();
    return item_;
  }

 private:
  void Run() {
    std::unique_lock<std::mutex> lk(mu_);
    SteadyTime next = first_due_;
    while (!stopping_ && lost_.ok()) {
      if (clock_.Steady() < next) {
        internal::coord::WaitOnClock(clock_, cv_, lk, next);
        continue;
      }
      lk.unlock();
      const SteadyTime sent = clock_.Steady();
      const Status s = queue_.Extend(&item_);  // the only user of item_ until Stop()
      lk.lock();
      if (s.ok()) {
        usable_until_ = item_.lease_usable_until.value_or(SteadyTime::max());
        next = sent + every_;
      } else if (s.IsLeaseLost()) {
        lost_ = s;
        // Refused by storage (not by this process's clock): gone since then.
        if (clock_.Steady() < usable_until_) gone_at_ = sent;
      } else {
        next = sent + std::min<std::chrono::milliseconds>(std::chrono::seconds(1), every_);
      }
    }
  }

  const WorkQueue& queue_;
  const Clock& clock_;
  const std::chrono::milliseconds every_, margin_;
  QueueItem item_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;
  Status lost_;
  SteadyTime usable_until_;
  std::optional<SteadyTime> gone_at_;
  const SteadyTime first_due_;
  std::thread thread_;  // last: starts once the rest is set
};

}  // namespace

int CmdQueueRun(const Store& store, const WorkQueue& queue, QueueItem item, int visibility_seconds,
                const std::vector<std::string>& command, std::ostream& err) {
  if (command.empty())
    return Fail(err, Status::InvalidArgument("queue run: give the command after --"));
  const int body = FileHolding(item.body);
  if (body < 0) {
    const Status s = Status::IOError(std::string("queue run: cannot hold the item's body for "
                                                 "the command's stdin: ") +
                                     std::strerror(errno));
    (void)queue.Abandon(item);
    return Fail(err, s);
  }
  const std::string what = "queue " + queue.name() + ", item " + item.id;
  std::vector<std::string> environment = {
      "BLOBTABLE_QUEUE_ITEM=" + item.id,
      "BLOBTABLE_QUEUE_DEQUEUE_COUNT=" + std::to_string(item.dequeue_count)};
  ItemLease lease(queue, std::move(item), visibility_seconds, ClockOf(store));
  const int code = Supervise(ClockOf(store),
                             {what, [&] { return lease.held(); }, [&] { return lease.expiry(); },
                              [&] { return lease.lost(); }},
                             {command, std::move(environment), body}, err);
  close(body);
  const bool lost = !lease.held();
  QueueItem& taken = lease.Stop();
  if (lost) return code;  // delivered again: nothing to complete or give back
  if (code != 0) {
    const Status abandoned = queue.Abandon(taken);
    if (!abandoned.ok()) err << "blobtable: warning: " << abandoned.ToString() << "\n";
    return code;
  }
  const Status completed = queue.Complete(taken);
  return completed.ok() ? kExitOk : Fail(err, completed);
}

}  // namespace blobtable::cli
