// SPDX-License-Identifier: Apache-2.0
#include "util/random.h"

#include <unistd.h>

#include <memory>
#include <random>

namespace blobtable::internal {

uint64_t RandomU64() {
  // One generator per thread, reseeded when the process id changes so that
  // forked children never repeat their parent's ids.
  // Its 2.5 KB of state on the heap: the library's thread-local storage
  // must fit the small static TLS room glibc keeps for a library opened
  // with dlopen (util/thread_spare.h).
  thread_local std::unique_ptr<std::mt19937_64> gen;
  thread_local pid_t seeded_for = -1;
  if (gen == nullptr) gen = std::make_unique<std::mt19937_64>();
  if (seeded_for != getpid()) {
    std::random_device rd;
    std::seed_seq seq{rd(), rd(), rd(), rd(), static_cast<unsigned>(getpid())};
    gen->seed(seq);
    seeded_for = getpid();
  }
  return (*gen)();
}

std::string NewGuid() {
  uint64_t hi = RandomU64(), lo = RandomU64();
  hi = (hi & ~0xF000ULL) | 0x4000ULL;              // version 4
  lo = (lo & ~(0xC0ULL << 56)) | (0x80ULL << 56);  // RFC 4122 variant
  static const char* kHex = "0123456789abcdef";
  std::string out;
  out.reserve(36);
  auto put = [&](uint64_t v, int nibbles) {
    for (int i = nibbles - 1; i >= 0; --i) out.push_back(kHex[(v >> (i * 4)) & 0xF]);
  };
  put(hi >> 32, 8);
  out.push_back('-');
  put((hi >> 16) & 0xFFFF, 4);
  out.push_back('-');
  put(hi & 0xFFFF, 4);
  out.push_back('-');
  put(lo >> 48, 4);
  out.push_back('-');
  put(lo & 0xFFFFFFFFFFFFULL, 12);
  return out;
}

}  // namespace blobtable::internal
