// SPDX-License-Identifier: Apache-2.0
// A system the embedded workloads (W1) compare: blobtable's embedded store,
// SQLite, RocksDB, raw LMDB. Keys arrive in order per thread (each thread its
// own range); values are the same bytes for every system.
#ifndef BLOBTABLE_BENCH_KV_PEER_H_
#define BLOBTABLE_BENCH_KV_PEER_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "blobtable/status.h"

namespace bench {

// What a get does with the value it finds: nothing past finding it (W1's
// get: raw LMDB hands back a pointer, RocksDB a copy), or read every byte
// of it (W1's get-value: what a caller that uses the value pays too).
enum class ValueUse { kFind, kReadAll };

// The sum of the bytes of `value`: reading all of it, as kReadAll asks (a
// value of the benchmark's bytes sums to more than 0).
inline uint64_t SumOfBytes(std::string_view value) {
  uint64_t sum = 0;
  for (unsigned char c : value) sum += c;
  return sum;
}

class KvPeer {
 public:
  virtual ~KvPeer() = default;
  // A fresh store in the empty directory `dir`, for `threads` threads.
  virtual blobtable::Status Open(const std::string& dir, int threads) = 0;
  virtual blobtable::Status Insert(int thread, const std::string& key,
                                   const std::string& value) = 0;
  virtual blobtable::Status Get(int thread, const std::string& key, ValueUse use) = 0;
  // Replaces an existing key, conditional on the version this thread last
  // wrote where the system has versions (blobtable: the ETag; SQLite: a
  // version column); RocksDB and LMDB overwrite (they are the floor).
  virtual blobtable::Status Replace(int thread, const std::string& key,
                                    const std::string& value) = 0;
  // Reads `n` keys in order from `from`.
  virtual blobtable::Status Range(int thread, const std::string& from, int n) = 0;
};

std::unique_ptr<KvPeer> NewBlobtablePeer(bool relaxed);
// synchronous: "FULL" or "NORMAL" (WAL either way).
std::unique_ptr<KvPeer> NewSqlitePeer(const std::string& synchronous);
std::unique_ptr<KvPeer> NewRocksDbPeer(bool sync);
std::unique_ptr<KvPeer> NewLmdbPeer();

}  // namespace bench

#endif  // BLOBTABLE_BENCH_KV_PEER_H_
