// SPDX-License-Identifier: Apache-2.0
// Running programs from tests: the CLI binary, the official JavaScript SDK's
// client (tests/interop/azure_client.mjs), shell pipelines.
#ifndef BLOBTABLE_TESTS_SHELL_H_
#define BLOBTABLE_TESTS_SHELL_H_

#include <sys/wait.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "tests/test_util.h"

namespace blobtable::testing {

struct ShellRun {
  int code;  // exit code; -1 if it did not exit
  std::string out, err;
};

// Runs `command` under /bin/sh with `input` on stdin; captures both streams.
inline ShellRun Shell(const std::string& command, const std::string& input = "") {
  TempDir dir;
  const std::string in = dir.path() + "/in", out = dir.path() + "/out", err = dir.path() + "/err";
  std::ofstream(in) << input;
  const int status = std::system((command + " <" + in + " >" + out + " 2>" + err).c_str());
  auto slurp = [](const std::string& path) {
    std::ifstream f(path);
    std::stringstream ss;
    ss << f.rdbuf();
    return ss.str();
  };
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, slurp(out), slurp(err)};
}

// `s` in single quotes for the shell.
inline std::string Quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

// The official SDK's client with `args` (see tests/interop/azure_client.mjs).
inline std::string AzureClient(const std::string& args) {
  return "node " + std::string(BLOBTABLE_SOURCE_DIR) + "/tests/interop/azure_client.mjs " + args;
}

}  // namespace blobtable::testing

#endif  // BLOBTABLE_TESTS_SHELL_H_
