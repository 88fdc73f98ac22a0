// SPDX-License-Identifier: Apache-2.0
// blobtable-proxy: the fault and latency proxy (devtools/proxy/fault_proxy.h)
// as a program, driven over a control port. Example:
//   blobtable-proxy --upstream 10000 --listen 10100 --control 10101 --latency-ms 10
//   echo "rate lose-answer 50" | nc -q1 127.0.0.1 10101
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <iostream>
#include <string>

#include <CLI/CLI.hpp>

#include "devtools/proxy/fault_proxy.h"

namespace {

std::atomic<bool> g_stop{false};
void OnSignal(int) { g_stop.store(true); }

// Serves control connections: each line a command, each answer a line.
void ServeControl(int fd, blobtable::proxy::FaultProxy& proxy) {
  while (!g_stop.load()) {
    int c = accept(fd, nullptr, nullptr);
    if (c < 0) continue;
    std::string buf;
    char tmp[4096];
    for (ssize_t n; (n = read(c, tmp, sizeof(tmp))) > 0;) {
      buf.append(tmp, static_cast<size_t>(n));
      for (size_t nl; (nl = buf.find('\n')) != std::string::npos; buf.erase(0, nl + 1)) {
        const std::string answer = proxy.Control(buf.substr(0, nl)) + "\n";
        if (send(c, answer.data(), answer.size(), MSG_NOSIGNAL) < 0) break;
      }
    }
    close(c);
  }
}

}  // namespace

int main(int argc, char** argv) {
  int upstream = 0, listen_port = 0, control = 0;
  long latency_ms = 0, jitter_ms = 0;
  uint64_t seed = 1;
  CLI::App app(
      "blobtable-proxy: an HTTP/1.1 proxy on 127.0.0.1 that adds latency and "
      "injects faults, driven over a control port (see devtools/proxy/fault_proxy.h).",
      "blobtable-proxy");
  app.add_option("--upstream", upstream, "the service's port on 127.0.0.1")->required();
  app.add_option("--listen", listen_port, "the port to listen on (default: a free one)");
  app.add_option("--control", control, "the control port (default: a free one)");
  app.add_option("--latency-ms", latency_ms, "added each way (default 0)")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--jitter-ms", jitter_ms, "uniform jitter each way (default 0)")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--seed", seed, "for faults at a rate and jitter");
  CLI11_PARSE(app, argc, argv);

  auto proxy = blobtable::proxy::FaultProxy::Start(upstream, listen_port, seed);
  if (!proxy.ok()) {
    std::cerr << "blobtable-proxy: " << proxy.status().ToString() << "\n";
    return 2;
  }
  using std::chrono::milliseconds;
  (*proxy)->SetLatency(
      {milliseconds(latency_ms), milliseconds(latency_ms), milliseconds(jitter_ms)});
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<uint16_t>(control));
  socklen_t len = sizeof(addr);
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 || listen(fd, 8) != 0 ||
      getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    std::cerr << "blobtable-proxy: cannot listen on the control port\n";
    return 2;
  }
  struct sigaction stop {};
  stop.sa_handler = OnSignal;  // no SA_RESTART: accept() returns, and the loop ends
  sigaction(SIGTERM, &stop, nullptr);
  sigaction(SIGINT, &stop, nullptr);
  std::cout << "blobtable-proxy: listening on 127.0.0.1:" << (*proxy)->port() << ", control on "
            << "127.0.0.1:" << ntohs(addr.sin_port) << ", upstream 127.0.0.1:" << upstream
            << std::endl;
  ServeControl(fd, **proxy);
  return 0;
}
