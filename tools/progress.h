// SPDX-License-Identifier: Apache-2.0
// The bulk commands' progress line (tools/bulk.h): rows and bytes so far on
// one line of a terminal, and a summary at the end.
#ifndef BLOBTABLE_TOOLS_PROGRESS_H_
#define BLOBTABLE_TOOLS_PROGRESS_H_

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <ostream>
#include <string>

#include "tools/bulk.h"

namespace blobtable::cli {

using Steady = std::chrono::steady_clock;

// Rows and bytes so far, drawn on one line of the terminal at most twice a
// second, and the summary at the end.
class Progress {
 public:
  Progress(const char* verb, const BulkOptions& o, std::ostream& err)
      : verb_(verb),
        o_(o),
        err_(err),
        start_(Steady::now()),
        drawn_(start_ - std::chrono::seconds(1)) {}  // the first page shows at once

  // `fraction`: how far through the work, if known (else negative): of the
  // key range (an estimate), or of the input file (with the time left).
  void Add(int64_t rows, int64_t bytes, double fraction = -1, bool of_file = false) {
    rows_ += rows;
    bytes_ += bytes;
    if (!o_.progress || o_.quiet || Steady::now() - drawn_ < std::chrono::milliseconds(500)) return;
    drawn_ = Steady::now();
    err_ << "\r" << Line();
    if (fraction >= 0 && !of_file)
      err_ << ", about " << static_cast<int>(fraction * 100) << " % of the range";
    if (fraction > 0 && of_file) {
      const double s = std::chrono::duration<double>(Steady::now() - start_).count();
      err_ << ", " << static_cast<int>(fraction * 100) << " %, about "
           << static_cast<int64_t>(s / fraction - s + 0.5) << " s left";
    }
    err_ << "\033[K" << std::flush;
  }

  // The summary: `what` says how the rows went.
  void Finish(const std::string& what) {
    if (o_.quiet) return;
    if (o_.progress) err_ << "\r\033[K";
    err_ << Line() << what << "\n";
  }

 private:
  std::string Line() const {
    const double s = std::chrono::duration<double>(Steady::now() - start_).count();
    char buf[160];
    std::snprintf(buf, sizeof buf, "%s: %lld rows, %.1f MB in %.1f s (%.0f rows/s)", verb_,
                  static_cast<long long>(rows_), static_cast<double>(bytes_) / 1e6, s,
                  s > 0 ? static_cast<double>(rows_) / s : 0.0);
    return buf;
  }

  const char* verb_;
  const BulkOptions& o_;
  std::ostream& err_;
  Steady::time_point start_, drawn_;
  int64_t rows_ = 0, bytes_ = 0;
};

}  // namespace blobtable::cli

#endif  // BLOBTABLE_TOOLS_PROGRESS_H_
