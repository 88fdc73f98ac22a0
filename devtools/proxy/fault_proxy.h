// SPDX-License-Identifier: Apache-2.0
// A TCP proxy for HTTP/1.1 between a client and a storage service on this
// machine (Azurite), adding latency and injecting the network's faults
// (docs/testing.md#the-fault-and-latency-proxy). Tests drive it in-process; blobtable-proxy
// (proxy_main.cc) runs it alone, driven over a control port, for the stress
// tool and the benchmarks.
//
// Each client connection gets a connection of its own to the upstream
// (client keep-alive is upstream keep-alive), and requests are relayed one
// at a time, message by message (Content-Length or chunked framing).
//
// Faults, per request (the next `count` that match, or one in N at seeded
// random), and what they do:
//   answer-503       answered 503 ServerBusy by the proxy; not forwarded
//   lose-answer      forwarded and applied; the client connection is reset
//                    instead of answered (no byte of the answer)
//   reset-request    half the request forwarded, then both connections
//                    reset: storage never sees a whole request
//   reset-response   forwarded and applied; half the answer relayed, then
//                    the client connection is reset
//   stall            forwarded and applied; the answer held for the stall
//                    time (set it past the client's request timeout), then
//                    the connection closed without it
// And states: refuse (the listening socket closed, so connections are
// refused, and open ones reset) and blackhole (requests read and never
// forwarded or answered).
//
// Loopback only: it listens on 127.0.0.1 and connects to 127.0.0.1.
#ifndef BLOBTABLE_DEVTOOLS_PROXY_FAULT_PROXY_H_
#define BLOBTABLE_DEVTOOLS_PROXY_FAULT_PROXY_H_

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "blobtable/status.h"

namespace blobtable::proxy {

enum class ProxyFault { kAnswer503, kLoseAnswer, kResetRequest, kResetResponse, kStall };
inline constexpr int kProxyFaultCount = 5;
const char* ProxyFaultName(ProxyFault f);  // "answer-503", "lose-answer", ...

// Added before each request goes up and each answer comes down, plus a
// uniform jitter of 0..jitter on each.
struct Latency {
  std::chrono::milliseconds up{0}, down{0}, jitter{0};
};

class FaultProxy {
 public:
  // Chooses requests by their first line ("PUT /account/container/blob?...").
  using Match = std::function<bool(const std::string& first_line)>;
  // Requests whose first line contains `needle` (empty: every request).
  static Match Containing(std::string needle);

  // Listens on 127.0.0.1:listen_port (0: a free port) and relays to
  // 127.0.0.1:upstream_port. IOError if it cannot listen.
  static Result<std::unique_ptr<FaultProxy>> Start(int upstream_port, int listen_port = 0,
                                                   uint64_t seed = 1);
  ~FaultProxy();
  FaultProxy(const FaultProxy&) = delete;
  FaultProxy& operator=(const FaultProxy&) = delete;

  int port() const { return port_; }

  // The next `count` requests that `match` meet fault `f` (replaces what
  // was set for f; count 0 clears it).
  void Inject(ProxyFault f, Match match, int count);
  // One request in `one_in` meets fault `f`, at random from the seed (0: never).
  void InjectRate(ProxyFault f, int one_in);
  void SetLatency(Latency latency);
  void SetStall(std::chrono::milliseconds stall);
  void Refuse(bool on);
  void Blackhole(bool on);
  // Back to a plain relay: no faults, no latency, accepting.
  void Clear();

  // Requests relayed whole, and faults injected, by kind.
  int relayed() const { return relayed_.load(); }
  int injected(ProxyFault f) const { return injected_[static_cast<int>(f)].load(); }

  // The control protocol of blobtable-proxy, one command a line, one answer
  // a line ("ok", a number, or "error: ..."):
  //   latency UP_MS DOWN_MS [JITTER_MS] | inject FAULT COUNT [TEXT] |
  //   rate FAULT N | stall MS | refuse on|off | blackhole on|off | clear |
  //   counts  ->  "relayed=N answer-503=N lose-answer=N ..."
  std::string Control(const std::string& line);

 private:
  FaultProxy(int upstream_port, uint64_t seed);
  Status Listen(int port);
  void AcceptLoop();
  void Relay(int client);
  // The fault a request meets, if any.
  std::optional<ProxyFault> Pick(const std::string& first_line);
  // The latency to add going up (or down), jitter drawn.
  std::chrono::milliseconds Delay(bool up);
  void Track(int fd, bool open);

  const int upstream_port_;
  int port_ = 0;
  std::atomic<int> listen_fd_{-1};
  std::atomic<bool> stopping_{false}, refusing_{false}, blackhole_{false};
  std::thread acceptor_;

  std::mutex mu_;  // everything below
  struct Once {
    Match match;
    int left = 0;
  };
  std::array<Once, kProxyFaultCount> once_{};
  std::array<int, kProxyFaultCount> rate_{};
  Latency latency_;
  std::chrono::milliseconds stall_{std::chrono::seconds(60)};
  std::mt19937_64 rng_;
  std::vector<int> open_;  // client and upstream sockets of live relays
  struct Relayer {
    std::thread thread;
    std::shared_ptr<std::atomic<bool>> done;
  };
  std::vector<Relayer> relays_;  // finished ones are joined as new ones start

  std::atomic<int> relayed_{0};
  std::array<std::atomic<int>, kProxyFaultCount> injected_{};
};

}  // namespace blobtable::proxy

#endif  // BLOBTABLE_DEVTOOLS_PROXY_FAULT_PROXY_H_
