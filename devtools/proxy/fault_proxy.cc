// SPDX-License-Identifier: Apache-2.0
#include "devtools/proxy/fault_proxy.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <cstring>
#include <sstream>

namespace blobtable::proxy {
namespace {

using std::chrono::milliseconds;

sockaddr_in Loopback(int port) {
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = htons(static_cast<uint16_t>(port));
  return a;
}

// Reads one HTTP message from `fd` into `out`: the head, then the body its
// framing gives (none when `no_body`: the answer to a HEAD, a 204 or a 304).
// Bytes past it stay in `buf`. False at EOF or on framing it cannot follow.
bool ReadMessage(int fd, std::string& buf, std::string& out, bool no_body) {
  char tmp[65536];
  auto more = [&] {
    ssize_t n = read(fd, tmp, sizeof(tmp));
    if (n <= 0) return false;
    buf.append(tmp, static_cast<size_t>(n));
    return true;
  };
  size_t end;
  while ((end = buf.find("\r\n\r\n")) == std::string::npos)
    if (!more()) return false;
  std::string head = buf.substr(0, end);
  for (char& ch : head) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  if (head.rfind("http/", 0) == 0) {  // an answer: some statuses carry no body
    const int status = std::atoi(head.c_str() + head.find(' ') + 1);
    no_body = no_body || status == 204 || status == 304 || (status >= 100 && status < 200);
  }
  size_t body = 0;
  if (!no_body) {
    if (size_t cl = head.find("\r\ncontent-length:"); cl != std::string::npos) {
      char* stop = nullptr;
      body = std::strtoul(head.c_str() + cl + 17, &stop, 10);
    } else if (head.find("transfer-encoding: chunked") != std::string::npos) {
      size_t last;  // up to the last chunk ("0", no trailers)
      while ((last = buf.find("\r\n0\r\n\r\n", end)) == std::string::npos)
        if (!more()) return false;
      body = last + 7 - (end + 4);
    }
  }
  while (buf.size() < end + 4 + body)
    if (!more()) return false;
  out = buf.substr(0, end + 4 + body);
  buf.erase(0, end + 4 + body);
  return true;
}

void SendAll(int fd, std::string_view s) {
  while (!s.empty()) {
    ssize_t n = send(fd, s.data(), s.size(), MSG_NOSIGNAL);
    if (n <= 0) return;
    s.remove_prefix(static_cast<size_t>(n));
  }
}

// The next close sends a reset, not an orderly end.
void ResetOnClose(int fd) {
  linger hard{1, 0};
  setsockopt(fd, SOL_SOCKET, SO_LINGER, &hard, sizeof(hard));
}

}  // namespace

const char* ProxyFaultName(ProxyFault f) {
  static const char* kNames[kProxyFaultCount] = {"answer-503", "lose-answer", "reset-request",
                                                 "reset-response", "stall"};
  return kNames[static_cast<int>(f)];
}

FaultProxy::Match FaultProxy::Containing(std::string needle) {
  return [needle = std::move(needle)](const std::string& line) {
    return line.find(needle) != std::string::npos;
  };
}

FaultProxy::FaultProxy(int upstream_port, uint64_t seed)
    : upstream_port_(upstream_port), rng_(seed) {}

Result<std::unique_ptr<FaultProxy>> FaultProxy::Start(int upstream_port, int listen_port,
                                                      uint64_t seed) {
  std::unique_ptr<FaultProxy> p(new FaultProxy(upstream_port, seed));
  if (Status s = p->Listen(listen_port); !s.ok()) return s;
  p->acceptor_ = std::thread([raw = p.get()] { raw->AcceptLoop(); });
  return p;
}

Status FaultProxy::Listen(int port) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  int one = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  sockaddr_in addr = Loopback(port);
  socklen_t len = sizeof(addr);
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 || listen(fd, 128) != 0 ||
      getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    const std::string why = std::strerror(errno);
    close(fd);
    return Status::IOError("proxy: cannot listen on 127.0.0.1:" + std::to_string(port) + ": " +
                           why);
  }
  port_ = ntohs(addr.sin_port);
  listen_fd_.store(fd);
  return Status::OK();
}

FaultProxy::~FaultProxy() {
  stopping_.store(true);
  acceptor_.join();
  if (int fd = listen_fd_.exchange(-1); fd >= 0) close(fd);
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (int fd : open_) shutdown(fd, SHUT_RDWR);
  }
  for (Relayer& r : relays_) r.thread.join();
}

void FaultProxy::AcceptLoop() {
  while (!stopping_.load()) {
    const int fd = listen_fd_.load();
    pollfd p{fd, POLLIN, 0};
    if (fd < 0 || poll(&p, 1, 50) <= 0) {
      if (fd < 0) std::this_thread::sleep_for(milliseconds(20));
      continue;
    }
    int client = accept4(fd, nullptr, nullptr, SOCK_CLOEXEC);
    if (client < 0) continue;
    std::lock_guard<std::mutex> lock(mu_);
    for (auto it = relays_.begin(); it != relays_.end();) {
      if (!it->done->load()) {
        ++it;
        continue;
      }
      it->thread.join();
      it = relays_.erase(it);
    }
    open_.push_back(client);
    auto done = std::make_shared<std::atomic<bool>>(false);
    relays_.push_back({std::thread([this, client, done] {
                         Relay(client);
                         done->store(true);
                       }),
                       done});
  }
}

void FaultProxy::Track(int fd, bool open) {
  std::lock_guard<std::mutex> lock(mu_);
  if (open)
    open_.push_back(fd);
  else
    open_.erase(std::remove(open_.begin(), open_.end(), fd), open_.end());
}

milliseconds FaultProxy::Delay(bool up) {
  std::lock_guard<std::mutex> lock(mu_);
  const milliseconds base = up ? latency_.up : latency_.down;
  if (latency_.jitter.count() <= 0) return base;
  return base + milliseconds(static_cast<int64_t>(rng_() % (latency_.jitter.count() + 1)));
}

std::optional<ProxyFault> FaultProxy::Pick(const std::string& first_line) {
  std::lock_guard<std::mutex> lock(mu_);
  for (int k = 0; k < kProxyFaultCount; ++k) {
    Once& once = once_[k];
    if (once.left > 0 && once.match && once.match(first_line)) {
      --once.left;
      return static_cast<ProxyFault>(k);
    }
  }
  for (int k = 0; k < kProxyFaultCount; ++k)
    if (rate_[k] > 0 && rng_() % static_cast<uint64_t>(rate_[k]) == 0)
      return static_cast<ProxyFault>(k);
  return std::nullopt;
}

void FaultProxy::Relay(int client) {
  int up = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr = Loopback(upstream_port_);
  if (connect(up, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    close(up);
    Track(client, false);
    ResetOnClose(client);
    close(client);
    return;
  }
  Track(up, true);
  std::string from_client, from_server, request, response;
  while (!stopping_.load()) {
    if (!ReadMessage(client, from_client, request, /*no_body=*/false)) break;
    if (blackhole_.load()) continue;  // swallowed: no answer, ever
    const std::string first = request.substr(0, request.find("\r\n"));
    const std::optional<ProxyFault> fault = Pick(first);
    if (fault) ++injected_[static_cast<int>(*fault)];
    std::this_thread::sleep_for(Delay(/*up=*/true));
    if (fault == ProxyFault::kAnswer503) {
      SendAll(client,
              "HTTP/1.1 503 Server Busy\r\nx-ms-error-code: ServerBusy\r\n"
              "Content-Length: 0\r\n\r\n");
      continue;
    }
    if (fault == ProxyFault::kResetRequest) {
      SendAll(up, std::string_view(request).substr(0, request.size() / 2));
      ResetOnClose(up);
      ResetOnClose(client);
      break;
    }
    SendAll(up, request);
    if (!ReadMessage(up, from_server, response, first.rfind("HEAD ", 0) == 0)) break;
    std::this_thread::sleep_for(Delay(/*up=*/false));
    if (fault == ProxyFault::kLoseAnswer || fault == ProxyFault::kResetResponse) {
      if (fault == ProxyFault::kResetResponse)
        SendAll(client, std::string_view(response).substr(0, response.size() / 2));
      ResetOnClose(client);
      break;
    }
    if (fault == ProxyFault::kStall) {
      const auto until = std::chrono::steady_clock::now() + stall_;
      while (!stopping_.load() && std::chrono::steady_clock::now() < until)
        std::this_thread::sleep_for(milliseconds(20));
      break;
    }
    // Counted before the client can see the answer: a caller that got its
    // response must find it counted (counting after the send raced the test).
    ++relayed_;
    SendAll(client, response);
  }
  Track(up, false);
  Track(client, false);
  close(up);
  close(client);
}

void FaultProxy::Inject(ProxyFault f, Match match, int count) {
  std::lock_guard<std::mutex> lock(mu_);
  once_[static_cast<int>(f)] = Once{std::move(match), count};
}

void FaultProxy::InjectRate(ProxyFault f, int one_in) {
  std::lock_guard<std::mutex> lock(mu_);
  rate_[static_cast<int>(f)] = std::max(0, one_in);
}

void FaultProxy::SetLatency(Latency latency) {
  std::lock_guard<std::mutex> lock(mu_);
  latency_ = latency;
}

void FaultProxy::SetStall(milliseconds stall) {
  std::lock_guard<std::mutex> lock(mu_);
  stall_ = stall;
}

void FaultProxy::Blackhole(bool on) { blackhole_.store(on); }

void FaultProxy::Refuse(bool on) {
  if (on == refusing_.exchange(on)) return;
  if (on) {
    if (int fd = listen_fd_.exchange(-1); fd >= 0) close(fd);
    std::lock_guard<std::mutex> lock(mu_);
    for (int fd : open_) {
      ResetOnClose(fd);
      shutdown(fd, SHUT_RDWR);
    }
    return;
  }
  (void)Listen(port_);  // the same port again
}

void FaultProxy::Clear() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    once_ = {};
    rate_ = {};
    latency_ = {};
  }
  Blackhole(false);
  Refuse(false);
}

std::string FaultProxy::Control(const std::string& line) {
  std::istringstream in(line);
  std::string cmd, arg;
  in >> cmd;
  auto fault_named = [](const std::string& name) -> std::optional<ProxyFault> {
    for (int k = 0; k < kProxyFaultCount; ++k)
      if (name == ProxyFaultName(static_cast<ProxyFault>(k))) return static_cast<ProxyFault>(k);
    return std::nullopt;
  };
  if (cmd == "latency") {
    long up = -1, down = -1, jitter = 0;
    in >> up >> down;
    if (!(in >> jitter)) jitter = 0;
    if (up < 0 || down < 0 || jitter < 0) return "error: latency UP_MS DOWN_MS [JITTER_MS]";
    SetLatency({milliseconds(up), milliseconds(down), milliseconds(jitter)});
    return "ok";
  }
  if (cmd == "inject" || cmd == "rate") {
    std::string name;
    long n = -1;
    in >> name >> n;
    std::optional<ProxyFault> f = fault_named(name);
    if (!f || n < 0)
      return "error: " + cmd +
             " FAULT N (faults: answer-503 lose-answer "
             "reset-request reset-response stall)";
    if (cmd == "rate") {
      InjectRate(*f, static_cast<int>(n));
      return "ok";
    }
    std::string needle;
    std::getline(in >> std::ws, needle);
    Inject(*f, Containing(needle), static_cast<int>(n));
    return "ok";
  }
  if (cmd == "stall") {
    long ms = -1;
    in >> ms;
    if (ms < 0) return "error: stall MS";
    SetStall(milliseconds(ms));
    return "ok";
  }
  if (cmd == "refuse" || cmd == "blackhole") {
    in >> arg;
    if (arg != "on" && arg != "off") return "error: " + cmd + " on|off";
    if (cmd == "refuse")
      Refuse(arg == "on");
    else
      Blackhole(arg == "on");
    return "ok";
  }
  if (cmd == "clear") {
    Clear();
    return "ok";
  }
  if (cmd == "counts") {
    std::string out = "relayed=" + std::to_string(relayed());
    for (int k = 0; k < kProxyFaultCount; ++k)
      out += std::string(" ") + ProxyFaultName(static_cast<ProxyFault>(k)) + "=" +
             std::to_string(injected(static_cast<ProxyFault>(k)));
    return out;
  }
  return "error: unknown command '" + cmd + "'";
}

}  // namespace blobtable::proxy
