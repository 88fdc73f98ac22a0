#include "tools/held_command.h"

#include <functional>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <ostream>
#include <thread>

#include "tools/cli.h"

namespace blobtable::cli {
namespace {

std::atomic<pid_t> g_child{0};

// Passes a signal meant for us on to the command (async-signal-safe).
void Forward(int sig) {
  const pid_t child = g_child.load();
  if (child > 0) kill(child, sig);
}

// Starts `command` with env_name=value in its environment; -1 if fork failed.
pid_t Start(const std::vector<std::string>& command, const char* env_name, int64_t value) {
  std::vector<char*> argv;
  for (const std::string& a : command) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  const std::string value_text = std::to_string(value);
  pid_t pid = fork();
  if (pid == 0) {
    setenv(env_name, value_text.c_str(), 1);
    execvp(argv[0], argv.data());
    _exit(127);
  }
  return pid;
}

int ExitCodeOf(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return kExitOther;
}

// Runs `command` while `held()`, looking every 100 ms; once it is not,
// SIGTERM, and SIGKILL 10 s later. Signals to us go on to the command.
// The command's exit code.
int Supervise(const std::string& what, const std::function<bool()>& held,
              const std::function<Status()>& why, const std::vector<std::string>& command,
              const char* env_name, int64_t value, std::ostream& err) {
  struct sigaction forward = {}, old_int = {}, old_term = {}, old_hup = {};
  forward.sa_handler = Forward;
  sigemptyset(&forward.sa_mask);
  sigaction(SIGINT, &forward, &old_int);
  sigaction(SIGTERM, &forward, &old_term);
  sigaction(SIGHUP, &forward, &old_hup);
  const pid_t child = Start(command, env_name, value);
  int status = 1 << 8;
  if (child < 0) {
    err << "blobtable: error: cannot start the command (fork)\n";
  } else {
    g_child = child;
    bool stopped = false;
    auto term_sent = std::chrono::steady_clock::time_point{};
    for (;;) {
      const pid_t done = waitpid(child, &status, WNOHANG);
      if (done == child) break;
      if (done < 0 && errno != EINTR) break;
      if (!stopped && !held()) {
        const Status s = why();
        err << "blobtable: error: " << what << " lost ("
            << (s.ok() ? "the lease may have lapsed" : s.ToString())
            << "): stopping the command\n";
        kill(child, SIGTERM);
        stopped = true;
        term_sent = std::chrono::steady_clock::now();
      } else if (stopped &&
                 std::chrono::steady_clock::now() - term_sent > std::chrono::seconds(10)) {
        kill(child, SIGKILL);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    g_child = 0;
  }
  sigaction(SIGINT, &old_int, nullptr);
  sigaction(SIGTERM, &old_term, nullptr);
  sigaction(SIGHUP, &old_hup, nullptr);
  return ExitCodeOf(status);
}

}  // namespace

int CmdLock(const Store& store, const std::string& name, const LockOptions& options,
            const std::vector<std::string>& command, std::ostream& err) {
  if (command.empty())
    return Fail(err, Status::InvalidArgument("lock: give the command after --"));
  auto lock = Lock::Acquire(store, name, options);
  if (!lock.ok()) return Fail(err, lock.status());
  Lock& l = **lock;
  const int code = Supervise("lock " + name, [&] { return l.held(); }, [&] { return l.status(); },
                             command, "BLOBTABLE_LOCK_TOKEN", l.token(), err);
  Status released = l.Release();
  if (!released.ok()) err << "blobtable: warning: " << released.ToString() << "\n";
  return code;
}

int CmdLeader(const Store& store, const std::string& name, const LeaderOptions& options,
              std::chrono::milliseconds timeout, const std::vector<std::string>& command,
              std::ostream& err) {
  if (command.empty())
    return Fail(err, Status::InvalidArgument("leader: give the command after --"));
  auto election = LeaderElection::Start(store, name, options);
  if (!election.ok()) return Fail(err, election.status());
  LeaderElection& e = **election;
  const auto forever = std::chrono::hours(24 * 365);
  if (!e.WaitForLeadership(timeout.count() < 0 ? forever : timeout))
    return Fail(err, Status::LockTimeout("leader election " + name + ": not leader within " +
                                         std::to_string(timeout.count()) + " ms"));
  const int code = Supervise("leadership of " + name, [&] { return e.is_leader(); },
                             [&] { return e.last_loss(); }, command, "BLOBTABLE_LEADER_TERM",
                             e.term(), err);
  Status resigned = e.Resign();
  if (!resigned.ok()) err << "blobtable: warning: " << resigned.ToString() << "\n";
  return code;
}

}  // namespace blobtable::cli
