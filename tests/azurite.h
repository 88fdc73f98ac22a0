// SPDX-License-Identifier: Apache-2.0
// Azurite for tests: started from the repository's node_modules (pinned in
// package.json, installed by scripts/setup) on a free loopback port with
// in-memory persistence, and stopped when the test program ends.
#ifndef BLOBTABLE_TESTS_AZURITE_H_
#define BLOBTABLE_TESTS_AZURITE_H_

#include <memory>
#include <string>

namespace blobtable::testing {

class Azurite {
 public:
  // The shared plain-HTTP instance, started on first use; fails the calling
  // test (and returns null) if Azurite cannot be started.
  static Azurite* Get();
  // A second instance serving HTTPS with a self-signed certificate for
  // 127.0.0.1 made for this run (cert_file() is its CA file).
  static Azurite* GetHttps();
  // An instance of the caller's own (plain HTTP), for tests that stop, kill
  // or freeze it; killed when destroyed. Null (and the test failed) if it
  // cannot start.
  static std::unique_ptr<Azurite> StartOwn();
  ~Azurite();

  int port() const { return port_; }
  const std::string& cert_file() const { return cert_; }
  // A connection string for the dev account, with the given transport.
  std::string ConnectionString(const std::string& transport = "curl") const;
  void Stop();
  // SIGKILL: connections to its port are refused from now on.
  void Kill();
  // SIGSTOP / SIGCONT: connections are accepted by the kernel, and nothing
  // answers until thawed (requests time out).
  void Freeze();
  void Thaw();

 private:
  Azurite() = default;
  static Azurite* Launch(bool https);
  bool Start(bool https, std::string* error);

  int port_ = 0;
  int pid_ = -1;
  std::string dir_;
  std::string cert_, key_;  // HTTPS only
};

}  // namespace blobtable::testing

#endif  // BLOBTABLE_TESTS_AZURITE_H_
