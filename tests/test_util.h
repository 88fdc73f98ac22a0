// Shared test fixtures: a fake clock that works across fork(), temporary
// directories, and helpers for running child processes.
#ifndef BLOBTABLE_TESTS_TEST_UTIL_H_
#define BLOBTABLE_TESTS_TEST_UTIL_H_

#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <string>

#include "blobtable/options.h"
#include "blobtable/status.h"

namespace blobtable::testing {

// A clock that only moves when told to. Its time lives in shared anonymous
// memory, so processes forked after it was made see every Advance().
// Wall-clock and monotonic time that move only when told, shared with forked
// children (anonymous shared memory). Advance() moves both, as real time
// passing does; Jump() moves the wall clock alone, as setting it does.
// SleepFor() advances, or runs the hook set_sleep() gave it.
class FakeClock final : public Clock {
 public:
  explicit FakeClock(TimePoint start = TimePoint(std::chrono::seconds(1'700'000'000)))
      : ms_(static_cast<std::atomic<int64_t>*>(mmap(nullptr, 2 * sizeof(std::atomic<int64_t>),
                                                    PROT_READ | PROT_WRITE,
                                                    MAP_SHARED | MAP_ANONYMOUS, -1, 0))) {
    new (&ms_[0]) std::atomic<int64_t>(
        std::chrono::duration_cast<std::chrono::milliseconds>(start.time_since_epoch()).count());
    new (&ms_[1]) std::atomic<int64_t>(0);
  }
  ~FakeClock() override { munmap(ms_, 2 * sizeof(*ms_)); }
  FakeClock(const FakeClock&) = delete;
  FakeClock& operator=(const FakeClock&) = delete;

  TimePoint Now() const override { return TimePoint(std::chrono::milliseconds(ms_[0].load())); }
  SteadyTime Steady() const override {
    return SteadyTime(std::chrono::milliseconds(ms_[1].load()));
  }
  void SleepFor(std::chrono::milliseconds d) const override {
    if (sleep_) sleep_(d);
    else Advance(d);
  }
  void Advance(std::chrono::milliseconds d) const {
    ms_[0].fetch_add(d.count());
    ms_[1].fetch_add(d.count());
  }
  void Jump(std::chrono::milliseconds d) const { ms_[0].fetch_add(d.count()); }
  // Set before the clock is shared with other threads.
  void set_sleep(std::function<void(std::chrono::milliseconds)> sleep) { sleep_ = std::move(sleep); }

 private:
  std::atomic<int64_t>* ms_;  // [0] wall, [1] monotonic
  std::function<void(std::chrono::milliseconds)> sleep_;
};

// The Status of a call's answer, whether it is a Status or a Result<T>.
inline const Status& StatusOf(const Status& s) { return s; }
template <typename T>
const Status& StatusOf(const Result<T>& r) {
  return r.status();
}

// A fresh directory under the test temp dir, removed on destruction.
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

// Waits for `pid`; returns its exit code, or 128 + signal if killed.
inline int WaitChild(pid_t pid) {
  int status = 0;
  if (waitpid(pid, &status, 0) < 0) return -1;
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return -1;
}

}  // namespace blobtable::testing

#endif  // BLOBTABLE_TESTS_TEST_UTIL_H_
