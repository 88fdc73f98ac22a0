// Azurite for tests: started from the repository's node_modules (pinned in
// package.json, installed by scripts/setup) on a free loopback port with
// in-memory persistence, and stopped when the test program ends.
#ifndef BLOBTABLE_TESTS_AZURITE_H_
#define BLOBTABLE_TESTS_AZURITE_H_

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

  int port() const { return port_; }
  const std::string& cert_file() const { return cert_; }
  // A connection string for the dev account, with the given transport.
  std::string ConnectionString(const std::string& transport = "curl") const;
  void Stop();

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
