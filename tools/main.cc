// SPDX-License-Identifier: Apache-2.0
#include <pthread.h>
#include <signal.h>

#include <iostream>
#include <thread>

#include "tools/cli.h"
#include "tools/metrics_output.h"

namespace {

// SIGUSR1 writes the metrics of the stores the running command opened to
// stderr (docs/cli.md#metrics-of-a-command). Blocked in every thread (set
// here, before any starts: they inherit it) and taken by a thread of its
// own, which may lock and print where a signal handler may not.
void PrintMetricsOnSignal() {
  sigset_t usr1;
  sigemptyset(&usr1);
  sigaddset(&usr1, SIGUSR1);
  if (pthread_sigmask(SIG_BLOCK, &usr1, nullptr) != 0) return;
  std::thread([usr1] {
    for (;;) {
      int sig = 0;
      if (sigwait(&usr1, &sig) == 0) blobtable::cli::PrintMetrics(std::cerr);
    }
  }).detach();
}

}  // namespace

int main(int argc, char** argv) {
  std::ios::sync_with_stdio(false);
  PrintMetricsOnSignal();
  return blobtable::cli::Run(argc, argv, std::cin, std::cout, std::cerr);
}
