// A loopback HTTP/1.1 proxy for tests: relays request and response pairs
// between a client and a server, one server connection per client
// connection (so client keep-alive is server keep-alive), and on demand
// forwards a request, lets the server apply it, reads its answer, and then
// resets the client connection instead of passing the answer on: the lost
// response of a write that was applied. It can also answer chosen requests
// 503 itself, without forwarding them. Messages are framed by
// Content-Length or chunked (ending with an empty last chunk, no trailers).
#ifndef BLOBTABLE_TESTS_LOSING_PROXY_H_
#define BLOBTABLE_TESTS_LOSING_PROXY_H_

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cctype>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace blobtable::testing {

class LosingProxy {
 public:
  explicit LosingProxy(int upstream_port) : upstream_port_(upstream_port) {
    fd_ = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr = Loopback(0);
    socklen_t len = sizeof(addr);
    bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
    listen(fd_, 64);
    getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin_port);
    acceptor_ = std::thread([this] { Accept(); });
  }
  ~LosingProxy() {
    shutdown(fd_, SHUT_RDWR);
    acceptor_.join();
    close(fd_);
    {
      std::lock_guard<std::mutex> lk(mu_);
      for (int c : open_)
        if (c >= 0) shutdown(c, SHUT_RDWR);
    }
    for (auto& t : relays_) t.join();
  }

  int port() const { return port_; }
  // Chooses requests by their first line ("PUT /account/container/blob?... HTTP/1.1").
  using Match = std::function<bool(const std::string& first_line)>;

  // The next request whose first line contains `needle` is applied, and its
  // answer lost: the client's connection is reset instead.
  void LoseNextAnswerTo(const std::string& needle) {
    LoseNextAnswer([needle](const std::string& line) { return line.find(needle) != std::string::npos; });
  }
  void LoseNextAnswer(Match match) {
    std::lock_guard<std::mutex> lk(mu_);
    lose_ = std::move(match);
  }
  // The next `count` requests that `match` are not forwarded: each is
  // answered 503 Server Busy (what a throttled or failing service says).
  void RefuseNext(Match match, int count) {
    std::lock_guard<std::mutex> lk(mu_);
    refuse_ = std::move(match);
    refusals_left_ = count;
  }
  int lost() const { return lost_.load(); }
  int refused() const { return refused_.load(); }

 private:
  static sockaddr_in Loopback(int port) {
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = htons(static_cast<uint16_t>(port));
    return a;
  }
  void Accept() {
    for (;;) {
      int c = accept(fd_, nullptr, nullptr);
      if (c < 0) return;
      std::lock_guard<std::mutex> lk(mu_);
      open_.push_back(c);
      relays_.emplace_back([this, c] { Relay(c); });
    }
  }
  // Reads one message (headers, then a Content-Length body unless `no_body`)
  // from `fd` into `out`, keeping bytes past it in `buf`. False at EOF.
  static bool ReadMessage(int fd, std::string& buf, std::string& out, bool no_body) {
    size_t end;
    char tmp[65536];
    while ((end = buf.find("\r\n\r\n")) == std::string::npos) {
      ssize_t n = read(fd, tmp, sizeof(tmp));
      if (n <= 0) return false;
      buf.append(tmp, static_cast<size_t>(n));
    }
    std::string head = buf.substr(0, end);
    for (char& ch : head) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    size_t body = 0;
    size_t cl = head.find("\r\ncontent-length:");
    if (cl != std::string::npos && !no_body) body = std::stoul(head.substr(cl + 17));
    if (!no_body && head.find("transfer-encoding: chunked") != std::string::npos) {
      // Up to the last chunk ("0", no trailers).
      size_t last;
      while ((last = buf.find("\r\n0\r\n\r\n", end)) == std::string::npos) {
        ssize_t n = read(fd, tmp, sizeof(tmp));
        if (n <= 0) return false;
        buf.append(tmp, static_cast<size_t>(n));
      }
      body = last + 7 - (end + 4);
    }
    while (buf.size() < end + 4 + body) {
      ssize_t n = read(fd, tmp, sizeof(tmp));
      if (n <= 0) return false;
      buf.append(tmp, static_cast<size_t>(n));
    }
    out = buf.substr(0, end + 4 + body);
    buf.erase(0, end + 4 + body);
    return true;
  }
  static void SendAll(int fd, const std::string& s) {
    size_t off = 0;
    while (off < s.size()) {
      ssize_t n = send(fd, s.data() + off, s.size() - off, MSG_NOSIGNAL);
      if (n <= 0) return;
      off += static_cast<size_t>(n);
    }
  }
  void Relay(int client) {
    int up = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr = Loopback(upstream_port_);
    if (connect(up, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
      close(up);
      close(client);
      return;
    }
    std::string from_client, from_server, request, response;
    for (;;) {
      if (!ReadMessage(client, from_client, request, false)) break;
      std::string first = request.substr(0, request.find("\r\n"));
      bool lose = false, refuse = false;
      {
        std::lock_guard<std::mutex> lk(mu_);
        if (refusals_left_ > 0 && refuse_(first)) {
          refuse = true;
          --refusals_left_;
        } else if (lose_ && lose_(first)) {
          lose = true;
          lose_ = nullptr;
        }
      }
      if (refuse) {
        ++refused_;
        SendAll(client, "HTTP/1.1 503 Server Busy\r\nx-ms-error-code: ServerBusy\r\n"
                        "Content-Length: 0\r\n\r\n");
        continue;
      }
      SendAll(up, request);
      if (!ReadMessage(up, from_server, response, first.rfind("HEAD ", 0) == 0)) break;
      if (lose) {
        ++lost_;
        linger hard{1, 0};  // a reset, not an orderly close: no byte of the answer
        setsockopt(client, SOL_SOCKET, SO_LINGER, &hard, sizeof(hard));
        break;
      }
      SendAll(client, response);
    }
    close(up);
    std::lock_guard<std::mutex> lk(mu_);
    for (int& c : open_)
      if (c == client) c = -1;
    close(client);
  }

  const int upstream_port_;
  int fd_ = -1, port_ = 0;
  std::thread acceptor_;
  std::mutex mu_;
  std::vector<int> open_;
  std::vector<std::thread> relays_;
  Match lose_, refuse_;
  int refusals_left_ = 0;
  std::atomic<int> lost_{0}, refused_{0};
};

}  // namespace blobtable::testing

#endif  // BLOBTABLE_TESTS_LOSING_PROXY_H_
