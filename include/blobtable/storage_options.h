// SPDX-License-Identifier: Apache-2.0
// How each backend is opened: the local (LMDB) store's options and the Azure
// backend's. A Store takes them inside StoreOptions (blobtable/options.h);
// OpenLocalBlobStore (blobtable/blob_store.h) takes LocalOptions alone.
#ifndef BLOBTABLE_STORAGE_OPTIONS_H_
#define BLOBTABLE_STORAGE_OPTIONS_H_

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "blobtable/export.h"
#include "blobtable/retry.h"

namespace blobtable {

// The container a store uses when none is named.
inline constexpr char kDefaultContainer[] = "blobtable";

// Local backend: what an acknowledged write survives.
enum class LocalDurability {
  // Every commit waits until the disk has it (LMDB's two syncs: the data,
  // then the page that points at it). An acknowledged write survives a
  // crash of the process, of the system, and a power loss.
  kFull,
  // Every commit still syncs its data, but not the page that points at it
  // (LMDB's MDB_NOMETASYNC): one sync a commit instead of two. An
  // acknowledged write survives a crash of the process (kill -9) with
  // nothing lost. A crash of the system or a power loss may lose the last
  // commit acknowledged before it (the store opens as it was one commit
  // earlier: every write of that commit gone, none half there); it never
  // damages the store.
  kRelaxed,
};

// The local backend (a directory).
struct LocalOptions {
  // The largest the LMDB file may grow to. The file grows only as data is
  // written; this reserves address space.
  uint64_t map_size = uint64_t{64} << 30;  // 64 GiB
  // The mode of the files a new store creates (data.mdb, lock.mdb,
  // blobtable.store; less the umask); a directory made for it gets the same
  // plus search bits. 0600 keeps a store to its owner. A user who can read
  // but not write a store opens it read-only: reads work, writes fail
  // IOError saying so.
  unsigned file_mode = 0644;
  // See LocalDurability. Stores of one process that share a directory share
  // its commits: while one of them asks kFull, all get it.
  LocalDurability durability = LocalDurability::kFull;
  // A container is made by its first write that succeeds. Off: such a
  // write fails NotFound instead (StoreOptions::create_if_missing off sets
  // it off).
  bool create_container = true;
};

// The Azure backend (a connection string).
struct AzureOptions {
  // HTTP transport: "curl" (default) or "cpprest" (where this build has it:
  // HttpTransportNames()); empty: the connection string's HttpTransport
  // setting, else curl.
  std::string http_transport;
  // CA bundle for TLS verification; empty: the connection string's CaFile,
  // else the system's. Verification is always on for https.
  std::string ca_file;
  // Per HTTP request (one attempt).
  std::chrono::milliseconds request_timeout{30'000};
  // Retries of throttled, failed (408, 429, 500, 502, 503, 504) and
  // unanswered requests: exponential backoff with jitter, bounded both by
  // attempts and by the total time spent (retry_unavailable is not read:
  // an unanswered request is always retried within these bounds).
  RetryPolicy retry = DefaultStorageRetry();

  // 5 attempts, waits from 200 ms up to 8 s, a minute in all.
  static RetryPolicy DefaultStorageRetry() {
    RetryPolicy r;
    r.max_attempts = 5;
    r.initial_delay = std::chrono::milliseconds(200);
    r.max_delay = std::chrono::milliseconds(8'000);
    r.max_total = std::chrono::milliseconds(60'000);
    return r;
  }
};

// The HTTP transports this build of the library has: "curl", then
// "cpprest" unless it was built without cpprestsdk (BLOBTABLE_WITH_CPPREST
// off; asking for it then fails InvalidArgument when the store is opened).
BLOBTABLE_EXPORT const std::vector<std::string>& HttpTransportNames();

}  // namespace blobtable

#endif  // BLOBTABLE_STORAGE_OPTIONS_H_
