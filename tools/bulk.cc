// SPDX-License-Identifier: Apache-2.0
#include "tools/bulk.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <optional>
#include <csignal>
#include <cstdio>
#include <iostream>
#include <istream>
#include <ostream>
#include <vector>

#include <unistd.h>

#include "blobtable/store.h"
#include "tools/cli.h"
#include "tools/entity_json.h"
#include "tools/entity_output.h"
#include "util/parallel.h"

namespace blobtable::cli {
namespace {

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

// One line of the input: its entity, or why not.
struct Line {
  int64_t number = 0;
  size_t bytes = 0;
  Result<Entity> entity = Status::InvalidArgument("empty");
};

Line ParseLine(int64_t number, const std::string& text) {
  Line l;
  l.number = number;
  l.bytes = text.size() + 1;
  auto j = ParseJson(text, "the line", /*one_line=*/true);
  if (!j.ok())
    l.entity = j.status();
  else if (!j->is_object())
    l.entity = Status::InvalidArgument("not a JSON object");
  else
    l.entity = EntityFromJson(*j, nullptr);
  return l;
}

Status Write(const Table& table, const std::string& mode, const Entity& e) {
  if (mode == "insert") return table.Insert(e).status();
  if (mode == "replace") return table.Replace(e, "*").status();
  if (mode == "merge") return table.Merge(e, "*").status();
  return table.Upsert(e).status();
}

// The first 8 bytes of `s` after `skip`, as a base-256 fraction.
double Fraction(std::string_view s, size_t skip) {
  double v = 0, scale = 1.0 / 256;
  for (size_t i = skip; i < s.size() && i < skip + 8; ++i, scale /= 256)
    v += static_cast<unsigned char>(s[i]) * scale;
  return v;
}

}  // namespace

bool ShowsProgress(const std::ostream& err) { return &err == &std::cerr && isatty(STDERR_FILENO); }

double RangeFraction(std::string_view from, std::string_view to, std::string_view key) {
  size_t common = 0;
  while (common < from.size() && common < to.size() && from[common] == to[common]) ++common;
  const double lo = Fraction(from, common), hi = Fraction(to, common);
  if (hi <= lo) return 0;
  if (key.substr(0, common) != from.substr(0, common)) return key < from ? 0 : 1;
  return std::clamp((Fraction(key, common) - lo) / (hi - lo), 0.0, 1.0);
}

int CmdExport(const Table& table, QueryOptions q, const BulkOptions& o, std::ostream& out,
              std::ostream& err, const IndexRead* index) {
  auto output = MakeEntityOutput(o.format, /*many=*/true, out, q.select);
  if (!output)
    return Fail(err, Status::InvalidArgument("unknown --format '" + o.format +
                                             "' (jsonl, json, table, csv, tsv)"));
  Progress progress("export", o, err);
  bool stale = false;
  int64_t printed = 0;
  const int page_size = q.top;
  do {
    if (o.limit >= 0) q.top = static_cast<int>(std::min<int64_t>(page_size, o.limit - printed));
    auto page = index != nullptr ? table.QueryIndex(index->index, index->query, q) : table.Query(q);
    if (!page.ok()) return Fail(err, page.status());
    int64_t bytes = 0;
    for (const Entity& e : page->entities) bytes += output->Add(e);
    if (!output->status().ok()) return Fail(err, output->status());
    if (!out) return Fail(err, Status::IOError("export: cannot write the output"));
    double fraction = -1;
    if (q.partition_key && q.row_key_from && q.row_key_to && !page->entities.empty())
      fraction = RangeFraction(*q.row_key_from, *q.row_key_to, page->entities.back().row_key());
    progress.Add(static_cast<int64_t>(page->entities.size()), bytes, fraction);
    printed += static_cast<int64_t>(page->entities.size());
    stale = stale || page->stale;
    q.continuation = page->continuation;
  } while (!q.continuation.empty() && (o.limit < 0 || printed < o.limit));
  output->Finish();
  if (!output->status().ok()) return Fail(err, output->status());
  out.flush();
  progress.Finish("");
  WarnIfStale(stale, err);
  return kExitOk;
}

namespace {

// SIGINT or SIGTERM during an import: it stops after the rows in flight
// and prints its summary (then exits 130).
volatile std::sig_atomic_t g_interrupted = 0;
void Interrupt(int) { g_interrupted = 1; }

// The handlers while an import runs; the old ones again after. No
// SA_RESTART: a read waiting on a pipe returns at once.
class InterruptStops {
 public:
  InterruptStops() {
    g_interrupted = 0;
    struct sigaction sa {};
    sa.sa_handler = Interrupt;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, &old_int_);
    sigaction(SIGTERM, &sa, &old_term_);
  }
  ~InterruptStops() {
    sigaction(SIGINT, &old_int_, nullptr);
    sigaction(SIGTERM, &old_term_, nullptr);
  }

 private:
  struct sigaction old_int_ {
  }, old_term_{};
};

Status Buffer(Transaction& txn, const Table& table, const std::string& mode, const Entity& e) {
  if (mode == "insert") return txn.Insert(table, e);
  if (mode == "replace") return txn.Replace(table, e, "*");
  if (mode == "merge") return txn.Merge(table, e, "*");
  return txn.Upsert(table, e);
}

// Writes the parsed `lines` (each with its entity) into `results`: as one
// transaction of `atomic` (a store that commits it in one atomic write: the
// embedded store, one LMDB write for the batch; null for others), else
// `width` at a time.
// A batch a row of which fails (it exists, for insert; it is missing, for
// replace or merge) is written again row by row, to tell which.
void WriteBatch(const Store* atomic, const Table& table, const BulkOptions& o, size_t width,
                const std::vector<Line>& lines, std::vector<Status>& results) {
  if (atomic != nullptr && lines.size() > 1) {
    auto txn = atomic->Begin();
    Status s = txn.status();
    for (size_t i = 0; s.ok() && i < lines.size(); ++i)
      s = Buffer(*txn, table, o.mode, *lines[i].entity);
    if (s.ok()) s = txn->Commit().status();
    if (s.ok() || (!s.IsConflict() && !s.IsNotFound())) {
      results.assign(lines.size(), s);
      return;
    }
  }
  if (o.stop_on_error && atomic != nullptr) {
    // In order, up to the first failure: nothing after it is written.
    for (size_t i = 0; i < lines.size(); ++i)
      if (!(results[i] = Write(table, o.mode, *lines[i].entity)).ok()) break;
    return;
  }
  internal::ParallelFor(lines.size(), width,
                        [&](size_t i) { results[i] = Write(table, o.mode, *lines[i].entity); });
}

}  // namespace

int CmdImport(const Store* store, const Table& table, const BulkOptions& o, std::istream& in,
              std::ostream& err) {
  if (o.mode != "insert" && o.mode != "upsert" && o.mode != "replace" && o.mode != "merge")
    return Fail(err, Status::InvalidArgument("unknown --mode '" + o.mode +
                                             "' (insert, upsert, replace, merge)"));
  InterruptStops interrupts;
  Progress progress("import", o, err);
  int64_t written = 0, skipped = 0, failed = 0, number = 0, consumed = 0, last_line = 0;
  int first_failure = kExitOk;
  bool stopped = false;  // --stop-on-error met a failure
  // Lines are parsed a batch at a time before any of the batch is written:
  // with --stop-on-error nothing after a bad line is written. A batch is one
  // atomic write where the store has them, else `parallel` writes at once.
  const size_t width = static_cast<size_t>(std::max(1, o.parallel));
  const Store* atomic =
      store != nullptr && store->blob_store().traits().atomic_batch ? store : nullptr;
  const size_t batch = atomic != nullptr ? 1000 : o.stop_on_error ? width : width * 8;
  std::string text;
  bool more = true;
  auto report = [&](int64_t line, const Status& s) {
    ++failed;
    if (first_failure == kExitOk) first_failure = ExitCodeFor(s);
    err << "blobtable: line " << line << ": " << s.ToString() << "\n";
  };
  while (more && !stopped && !g_interrupted) {
    std::vector<Line> lines;
    std::optional<Line> bad;  // with --stop-on-error: the first bad line, written after none
    while (lines.size() < batch && !g_interrupted &&
           (more = static_cast<bool>(std::getline(in, text)))) {
      ++number;
      consumed += static_cast<int64_t>(text.size()) + 1;
      if (text.find_first_not_of(" \t\r") == std::string::npos) continue;  // blank
      Line line = ParseLine(number, text);
      if (line.entity.ok()) {
        lines.push_back(std::move(line));
      } else if (o.stop_on_error) {
        bad = std::move(line);
        break;
      } else {
        report(line.number, line.entity.status());
        progress.Add(1, static_cast<int64_t>(line.bytes));
      }
    }
    // A line not written (after a failure, with --stop-on-error) keeps this.
    std::vector<Status> results(lines.size(), Status::Internal("not written"));
    WriteBatch(atomic, table, o, width, lines, results);
    int64_t bytes = 0;
    for (size_t i = 0; i < lines.size(); ++i) {
      if (o.stop_on_error && failed > 0) break;  // after the first failure: not written
      bytes += static_cast<int64_t>(lines[i].bytes);
      const Status& s = results[i];
      if (s.ok()) {
        ++written;
      } else if (o.mode == "insert" && s.IsConflict()) {
        ++skipped;  // already there: a rerun of an interrupted import
      } else {
        report(lines[i].number, s);
      }
      last_line = lines[i].number;
    }
    if (bad && failed == 0) {  // the first failure unless a write before it failed
      report(bad->number, bad->entity.status());
      last_line = bad->number;
    }
    stopped = o.stop_on_error && failed > 0;
    const double fraction = o.input_bytes > 0 ? static_cast<double>(consumed) / o.input_bytes : -1;
    progress.Add(static_cast<int64_t>(lines.size()), bytes, std::min(fraction, 1.0),
                 /*of_file=*/true);
  }
  if (in.bad() && !g_interrupted)
    return Fail(err, Status::IOError("import: cannot read the input"));
  std::string how = ": " + std::to_string(written) + " written, " + std::to_string(skipped) +
                    " skipped (existing), " + std::to_string(failed) + " failed";
  if (stopped) how += "; stopped at the first failure (line " + std::to_string(last_line) + ")";
  if (g_interrupted) how += "; interrupted after line " + std::to_string(last_line);
  progress.Finish(how);
  if (g_interrupted) {
    if (o.quiet)  // the summary is the one thing an interrupted import must say
      err << "import: interrupted after line " << last_line << how << "\n";
    return 130;
  }
  return first_failure;
}

}  // namespace blobtable::cli
