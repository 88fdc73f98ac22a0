#include "tools/lock_command.h"

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

// Starts `command` with the token in its environment; -1 if fork failed.
pid_t Start(const std::vector<std::string>& command, int64_t token) {
  std::vector<char*> argv;
  for (const std::string& a : command) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  const std::string token_text = std::to_string(token);
  pid_t pid = fork();
  if (pid == 0) {
    setenv("BLOBTABLE_LOCK_TOKEN", token_text.c_str(), 1);
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

}  // namespace

int CmdLock(const Store& store, const std::string& name, const LockOptions& options,
            const std::vector<std::string>& command, std::ostream& err) {
  if (command.empty())
    return Fail(err, Status::InvalidArgument("lock: give the command after --"));
  auto lock = Lock::Acquire(store, name, options);
  if (!lock.ok()) return Fail(err, lock.status());
  struct sigaction forward = {}, old_int = {}, old_term = {}, old_hup = {};
  forward.sa_handler = Forward;
  sigemptyset(&forward.sa_mask);
  sigaction(SIGINT, &forward, &old_int);
  sigaction(SIGTERM, &forward, &old_term);
  sigaction(SIGHUP, &forward, &old_hup);
  const pid_t child = Start(command, (*lock)->token());
  if (child < 0) return Fail(err, Status::IOError("lock: cannot start the command (fork)"));
  g_child = child;
  int status = 0;
  bool stopped = false;
  auto term_sent = std::chrono::steady_clock::time_point{};
  // Waits for the command, looking at the lock every 100 ms: a lost lock
  // (storage said so, or the lease may have lapsed by our clock) stops it.
  for (;;) {
    const pid_t done = waitpid(child, &status, WNOHANG);
    if (done == child) break;
    if (done < 0 && errno != EINTR) {
      status = 1 << 8;
      break;
    }
    if (!stopped && !(*lock)->held()) {
      Status why = (*lock)->status();
      err << "blobtable: error: lock " << name << " lost ("
          << (why.ok() ? "the lease may have lapsed" : why.ToString())
          << "): stopping the command\n";
      kill(child, SIGTERM);
      stopped = true;
      term_sent = std::chrono::steady_clock::now();
    } else if (stopped && std::chrono::steady_clock::now() - term_sent > std::chrono::seconds(10)) {
      kill(child, SIGKILL);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  g_child = 0;
  sigaction(SIGINT, &old_int, nullptr);
  sigaction(SIGTERM, &old_term, nullptr);
  sigaction(SIGHUP, &old_hup, nullptr);
  Status released = (*lock)->Release();
  if (!released.ok()) err << "blobtable: warning: " << released.ToString() << "\n";
  return ExitCodeOf(status);
}

}  // namespace blobtable::cli
