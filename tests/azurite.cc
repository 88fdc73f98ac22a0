// SPDX-License-Identifier: Apache-2.0
#include "tests/azurite.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <thread>

namespace blobtable::testing {
namespace {

int FreeLoopbackPort() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  socklen_t len = sizeof(addr);
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
      getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    close(fd);
    return 0;
  }
  close(fd);
  return ntohs(addr.sin_port);
}

// Stops an instance when the test program exits.
class StopAtExit : public ::testing::Environment {
 public:
  explicit StopAtExit(Azurite* a) : a_(a) {}
  void TearDown() override { a_->Stop(); }

 private:
  Azurite* a_;
};

}  // namespace

Azurite* Azurite::Launch(bool https) {
  auto* a = new Azurite;
  std::string error;
  if (!a->Start(https, &error)) {
    ADD_FAILURE() << "Azurite did not start: " << error;
    return nullptr;
  }
  ::testing::AddGlobalTestEnvironment(new StopAtExit(a));
  return a;
}

Azurite* Azurite::Get() {
  static Azurite* instance = Launch(/*https=*/false);
  if (instance == nullptr) ADD_FAILURE() << "Azurite is not running";
  return instance;
}

Azurite* Azurite::GetHttps() {
  static Azurite* instance = Launch(/*https=*/true);
  if (instance == nullptr) ADD_FAILURE() << "Azurite (HTTPS) is not running";
  return instance;
}

bool Azurite::Start(bool https, std::string* error) {
  std::string bin = std::string(BLOBTABLE_SOURCE_DIR) + "/node_modules/.bin/azurite-blob";
  if (access(bin.c_str(), X_OK) != 0) {
    *error = bin + " is missing: run scripts/setup (it runs npm ci)";
    return false;
  }
  port_ = FreeLoopbackPort();
  static int instances = 0;
  std::string dir = (std::filesystem::temp_directory_path() /
                     ("blobtable-azurite-" + std::to_string(getpid()) + "-" +
                      std::to_string(++instances) + (https ? "-tls" : "")))
                        .string();
  std::filesystem::create_directories(dir);
  dir_ = dir;
  if (https) {
    cert_ = dir + "/cert.pem";
    key_ = dir + "/key.pem";
    std::string cmd =
        "openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=127.0.0.1 "
        "-addext subjectAltName=IP:127.0.0.1 -keyout " +
        key_ + " -out " + cert_ + " >/dev/null 2>&1";
    if (std::system(cmd.c_str()) != 0) {
      *error = "openssl could not make a test certificate";
      return false;
    }
  }
  int pipe_fds[2];
  if (pipe(pipe_fds) != 0) {
    *error = "pipe failed";
    return false;
  }
  pid_t pid = fork();
  if (pid == 0) {
    setpgid(0, 0);  // its own group: Stop() ends node and its children
    dup2(pipe_fds[1], 1);
    dup2(pipe_fds[1], 2);
    close(pipe_fds[0]);
    if (chdir(dir.c_str()) != 0) _exit(126);
    std::string port = std::to_string(port_);
    if (https) {
      execl(bin.c_str(), bin.c_str(), "--blobHost", "127.0.0.1", "--blobPort", port.c_str(),
            "--inMemoryPersistence", "--skipApiVersionCheck", "--cert", cert_.c_str(), "--key",
            key_.c_str(), static_cast<char*>(nullptr));
    } else {
      execl(bin.c_str(), bin.c_str(), "--blobHost", "127.0.0.1", "--blobPort", port.c_str(),
            "--inMemoryPersistence", "--skipApiVersionCheck", static_cast<char*>(nullptr));
    }
    _exit(127);
  }
  close(pipe_fds[1]);
  pid_ = pid;
  // Read its output until it says it listens (or dies, or 60 s pass).
  std::string output;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  bool ready = false;
  while (!ready && std::chrono::steady_clock::now() < deadline) {
    pollfd p{pipe_fds[0], POLLIN, 0};
    if (poll(&p, 1, 1000) <= 0) continue;
    char buf[4096];
    ssize_t n = read(pipe_fds[0], buf, sizeof(buf));
    if (n <= 0) break;  // exited
    output.append(buf, static_cast<size_t>(n));
    ready = output.find("successfully listens") != std::string::npos;
  }
  if (!ready) {
    *error = "no 'successfully listens' line; output:\n" + output;
    Stop();
    close(pipe_fds[0]);
    return false;
  }
  // Keep draining its output so it never blocks on a full pipe.
  std::thread([fd = pipe_fds[0]] {
    char buf[4096];
    while (read(fd, buf, sizeof(buf)) > 0) {}
    close(fd);
  }).detach();
  return true;
}

std::unique_ptr<Azurite> Azurite::StartOwn() {
  std::unique_ptr<Azurite> a(new Azurite);
  std::string error;
  if (!a->Start(/*https=*/false, &error)) {
    ADD_FAILURE() << "Azurite did not start: " << error;
    return nullptr;
  }
  return a;
}

void Azurite::Kill() {
  if (pid_ <= 0) return;
  kill(-pid_, SIGKILL);
  waitpid(pid_, nullptr, 0);
  pid_ = -1;
}

void Azurite::Freeze() {
  if (pid_ > 0) kill(-pid_, SIGSTOP);
}

void Azurite::Thaw() {
  if (pid_ > 0) kill(-pid_, SIGCONT);
}

std::string Azurite::ConnectionString(const std::string& transport) const {
  std::string scheme = cert_.empty() ? "http" : "https";
  return "DefaultEndpointsProtocol=" + scheme +
         ";AccountName=devstoreaccount1;"
         "AccountKey=Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/"
         "K1SZFPTOtr/KBHBeksoGMGw==;BlobEndpoint=" +
         scheme + "://127.0.0.1:" + std::to_string(port_) +
         "/devstoreaccount1;HttpTransport=" + transport;
}

void Azurite::Stop() {
  if (pid_ <= 0) return;
  kill(-pid_, SIGCONT);  // a frozen one could not act on SIGTERM
  kill(-pid_, SIGTERM);
  for (int i = 0; i < 100; ++i) {  // up to 5 s for a clean exit
    if (waitpid(pid_, nullptr, WNOHANG) == pid_) {
      pid_ = -1;
      return;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  kill(-pid_, SIGKILL);
  waitpid(pid_, nullptr, 0);
  pid_ = -1;
}

Azurite::~Azurite() {
  Kill();  // in-memory: nothing to keep
  std::error_code ec;
  if (!dir_.empty()) std::filesystem::remove_all(dir_, ec);
}

}  // namespace blobtable::testing
