// SPDX-License-Identifier: Apache-2.0
// ThreadSpare<T, Tag>: a buffer (a string, a vector) lent from the calling
// thread's spare for the length of one call and given back, emptied but
// keeping its capacity, when the call ends. A hot read builds its blob name
// and its property views in memory the previous read of the thread
// allocated, instead of allocating and freeing on every call.
//
// A call that starts inside another (a visitor reading again) finds the
// spare lent out and starts from an empty T; whichever buffer is given back
// last stays the spare. `Tag` keeps apart the spares of different uses of
// the same T. Not to be passed between threads.
#ifndef BLOBTABLE_UTIL_THREAD_SPARE_H_
#define BLOBTABLE_UTIL_THREAD_SPARE_H_

#include <utility>

namespace blobtable::internal {

template <typename T, typename Tag>
class ThreadSpare {
 public:
  ThreadSpare() {
    if (T* spare = Spare()) {
      value_ = std::move(*spare);
      value_.clear();
    }
  }
  ~ThreadSpare() {
    value_.clear();
    if (T* spare = Spare()) *spare = std::move(value_);
  }
  ThreadSpare(const ThreadSpare&) = delete;
  ThreadSpare& operator=(const ThreadSpare&) = delete;

  T& operator*() { return value_; }
  T* operator->() { return &value_; }

 private:
  // Initial-exec: one load from the thread's block instead of a call to
  // __tls_get_addr on every read. It marks the library as needing static
  // TLS: opened with dlopen, all of its thread-local storage must fit the
  // room glibc keeps for that (512 bytes by default), so keep it small
  // (LibraryLoad.TheSharedLibraryOpensWithDlopen).
  struct Slot {
    T value;
    ~Slot() { Gone() = true; }
  };
  // True once the thread's spare is destroyed (a read from a static's
  // destructor runs after the main thread's thread_locals are gone): a read
  // then starts from an empty buffer and keeps nothing. Trivial, so it is
  // never destroyed itself.
  static bool& Gone() {
    [[gnu::tls_model("initial-exec")]] thread_local bool gone = false;
    return gone;
  }
  static T* Spare() {
    if (Gone()) return nullptr;
    [[gnu::tls_model("initial-exec")]] thread_local Slot slot;
    return &slot.value;
  }
  T value_;
};

}  // namespace blobtable::internal

#endif  // BLOBTABLE_UTIL_THREAD_SPARE_H_
