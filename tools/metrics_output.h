// SPDX-License-Identifier: Apache-2.0
// --metrics and SIGUSR1: the metrics of the stores a command opened
// (Store::Metrics), in the OpenMetrics text format, on standard error when
// the command ends or whenever the process is sent SIGUSR1
// (docs/cli.md#metrics-of-a-command).
#ifndef BLOBTABLE_TOOLS_METRICS_OUTPUT_H_
#define BLOBTABLE_TOOLS_METRICS_OUTPUT_H_

#include <iosfwd>

#include "blobtable/store.h"

namespace blobtable::cli {

// Remembers `store`'s metrics (they outlive it: Store::MetricsSource).
void NoteStoreOpened(const Store& store);
// Forgets every store noted (a new command starts).
void ForgetStores();
// Writes the metrics of every store noted, each as one OpenMetrics text
// ending "# EOF"; nothing if none was opened. Thread-safe.
void PrintMetrics(std::ostream& out);

}  // namespace blobtable::cli

#endif  // BLOBTABLE_TOOLS_METRICS_OUTPUT_H_
