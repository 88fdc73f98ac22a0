// SPDX-License-Identifier: Apache-2.0
#include "tools/held_command.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <ostream>
#include <thread>

#include <CLI/CLI.hpp>

#include "tools/cli.h"

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

// In the child between fork() and exec: only async-signal-safe calls
// (everything it needs is built before the fork).
[[noreturn]] void RunChild(pid_t parent, const sigset_t& old_mask, char* const* argv,
                           char* const* envp, bool terminal) {
  for (int sig : kForwarded) signal(sig, SIG_DFL);
  setpgid(0, 0);
  if (terminal) {  // as the parent does: before the command can read it
    signal(SIGTTOU, SIG_IGN);
    (void)tcsetpgrp(STDIN_FILENO, getpid());
    signal(SIGTTOU, SIG_DFL);
  }
  // Killed with the supervisor, whatever ends it (SIGKILL included). Asked
  // for after the fork: if the supervisor died before, getppid() says so.
  // (Not across the exec of a set-user-ID program: Linux clears it then.)
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != parent) _exit(kExitOther);
  sigprocmask(SIG_SETMASK, &old_mask, nullptr);
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

// Starts `command` in a process group of its own with env_name=value in
// its environment; -1 if fork failed. Signals we pass on are blocked from
// before the fork until the group is recorded, and one another thread
// took meanwhile is passed on then, so none is dropped.
pid_t Start(const std::vector<std::string>& command, const char* env_name, int64_t value,
            bool terminal) {
  std::vector<char*> argv;
  for (const std::string& a : command) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  const std::string assignment = std::string(env_name) + "=" + std::to_string(value);
  std::vector<std::string> env_text;
  for (char** e = environ; *e != nullptr; ++e)
    if (std::strncmp(*e, assignment.c_str(), std::strlen(env_name) + 1) != 0)
      env_text.push_back(*e);
  env_text.push_back(assignment);
  std::vector<char*> envp;
  for (std::string& e : env_text) envp.push_back(e.data());
  envp.push_back(nullptr);
  sigset_t block, old_mask;
  sigemptyset(&block);
  for (int sig : kForwarded) sigaddset(&block, sig);
  sigprocmask(SIG_BLOCK, &block, &old_mask);
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid == 0) RunChild(parent, old_mask, argv.data(), envp.data(), terminal);
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

// SIGKILL goes to the command's group this long before the lease's
// expiry, so that the kill has landed before storage can let anyone in.
constexpr milliseconds kKillMargin{500};

// Runs `command` while `held()`. Once it is not: SIGTERM to the command's
// group, then SIGKILL to it kKillMargin before `expiry()` (by `clock`), or
// 10 s after the SIGTERM if that is sooner. Looks every 100 ms, and wakes
// for the kill on time. Signals to us go on to the command. When the
// command ends, what it left in its group is killed: nothing of it runs
// after the lease is given up. The command's exit code.
int Supervise(const Clock& clock, const std::string& what, const std::function<bool()>& held,
              const std::function<SteadyTime()>& expiry, const std::function<Status()>& why,
              const std::vector<std::string>& command, const char* env_name, int64_t value,
              std::ostream& err) {
  struct sigaction forward = {}, old[3] = {};
  forward.sa_handler = Forward;
  sigemptyset(&forward.sa_mask);
  for (int i = 0; i < 3; ++i) sigaction(kForwarded[i], &forward, &old[i]);
  const bool foreground = Terminal::Ours();
  const pid_t child = Start(command, env_name, value, foreground);
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
        terminal.StopWithCommand();
        continue;
      }
      if (done == child) break;
      if (done < 0 && errno != EINTR) break;
      const SteadyTime now = clock.Steady();
      if (!stopping && !held()) {
        const Status s = why();
        err << "blobtable: error: " << what << " lost ("
            << (s.ok() ? "the lease may have lapsed" : s.ToString()) << "): stopping the command\n";
        kill(-child, SIGTERM);
        stopping = true;
        kill_at = std::min(expiry() - kKillMargin, now + std::chrono::seconds(10));
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
        nap = std::clamp(std::chrono::duration_cast<milliseconds>(expiry() - kKillMargin - now),
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
      ->check(CLI::NonNegativeNumber);
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
  const int code = Supervise(
      ClockOf(store), "lock " + name, [&] { return l.held(); }, [&] { return l.expiry(); },
      [&] { return l.status(); }, command, "BLOBTABLE_LOCK_TOKEN", l.token(), err);
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
  const int code = Supervise(
      ClockOf(store), "leadership of " + name, [&] { return e.is_leader(); },
      [&] { return e.lease_expiry(); }, [&] { return e.last_loss(); }, command,
      "BLOBTABLE_LEADER_TERM", e.term(), err);
  Status resigned = e.Resign();
  if (!resigned.ok()) err << "blobtable: warning: " << resigned.ToString() << "\n";
  return code;
}

}  // namespace blobtable::cli
