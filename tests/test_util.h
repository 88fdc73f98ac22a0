// SPDX-License-Identifier: Apache-2.0
// Shared test fixtures: a fake clock that works across fork(), temporary
// directories, and helpers for running child processes.
#ifndef BLOBTABLE_TESTS_TEST_UTIL_H_
#define BLOBTABLE_TESTS_TEST_UTIL_H_

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <string>

#include "blobtable/blob_store.h"
#include "blobtable/options.h"
#include "blobtable/status.h"
#include "testing/fake_clock.h"
#include "util/macros.h"

namespace blobtable::testing {

// The fake clock (testing/fake_clock.h), as the tests have always named it.
using blobtable::internal::FakeClock;

// StatusOf (util/macros.h), as the tests have always named it.
using blobtable::internal::StatusOf;

// Conditions on one ETag ("*": any version).
inline AccessConditions IfMatch(std::string etag) {
  AccessConditions c;
  c.if_match = std::move(etag);
  return c;
}
inline AccessConditions IfNoneMatch(std::string etag) {
  AccessConditions c;
  c.if_none_match = std::move(etag);
  return c;
}

// A fresh directory under the test temp dir, removed on destruction.
// A loopback port nobody listens on now (bound, named, closed): a
// connection to it is refused, or a server started next can take it.
inline int UnusedLoopbackPort() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(addr);
  int port = 0;
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0 &&
      getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0)
    port = ntohs(addr.sin_port);
  close(fd);
  return port;
}

class TempDir {
 public:
  TempDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "blobtable-test-XXXXXX").string();
    path_ = mkdtemp(tmpl.data());
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// Forks a child that runs `body` and exits with its return value (never
// returning into the test framework). Returns the child's pid.
inline pid_t ForkChild(const std::function<int()>& body) {
  pid_t pid = fork();
  if (pid == 0) {
    int rc = 1;
    try {
      rc = body();
    } catch (...) {
      rc = 99;
    }
    _exit(rc);
  }
  return pid;
}

// Stops `pid` with SIGSTOP and returns once all of its threads have
// stopped. kill() only queues the signal: a child still running after it
// returned could act on a fake clock the test moves next (renew a lease the
// test means to let run out, or stop half way through a write and hold
// LMDB's writer lock, so the test's own next write waits for good).
inline bool StopChild(pid_t pid) {
  if (kill(pid, SIGSTOP) != 0) return false;
  int status = 0;
  return waitpid(pid, &status, WUNTRACED) == pid && WIFSTOPPED(status);
}

// Waits for `pid`; returns its exit code, or 128 + signal if killed.
inline int WaitChild(pid_t pid) {
  int status = 0;
  if (waitpid(pid, &status, 0) < 0) return -1;
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return -1;
}

// The real clock, but the first wait between retries (of the store it is
// given to) runs `hook` first: another client acts while a request waits.
class HookedRealClock final : public Clock {
 public:
  explicit HookedRealClock(std::function<void()> hook) : hook_(std::move(hook)) {}
  TimePoint Now() const override { return Clock::Real()->Now(); }
  SteadyTime Steady() const override { return Clock::Real()->Steady(); }
  std::chrono::milliseconds SinceBoot() const override { return Clock::Real()->SinceBoot(); }
  std::string BootId() const override { return Clock::Real()->BootId(); }
  void SleepFor(std::chrono::milliseconds d) const override {
    if (!hooked_.exchange(true)) hook_();
    Clock::Real()->SleepFor(d);
  }

 private:
  std::function<void()> hook_;
  mutable std::atomic<bool> hooked_{false};
};

}  // namespace blobtable::testing

#endif  // BLOBTABLE_TESTS_TEST_UTIL_H_
