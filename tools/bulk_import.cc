// SPDX-License-Identifier: Apache-2.0
// `import` and `restore` (tools/bulk.h CmdImport): rows read one at a time
// (tools/row_source.h), checked before they join a batch, written a batch
// at a time; a batch that fails for a row's sake is halved until the rows
// that fail are alone, so every good row goes in and every bad one is
// reported with its own line.
#include <atomic>
#include <csignal>
#include <optional>
#include <set>
#include <utility>
#include <vector>

#include "blobtable/store.h"
#include "tools/bulk.h"
#include "tools/cli.h"
#include "tools/progress.h"
#include "tools/row_source.h"
#include "util/parallel.h"

namespace blobtable::cli {
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

// Rows in a row that failed on storage, not on their data (the store is
// unreachable, refuses the credentials, is not there): the import stops
// there rather than try every row of its input.
constexpr int kGiveUpAfter = 10;

// A failure no row can fix: storage unreachable or failing, credentials
// refused (exit 10), no store at the endpoint (exit 11), a local I/O
// failure or a bug.
bool StorageFailure(const Status& s) {
  switch (ExitCodeFor(s)) {
    case kExitUnavailable:
    case kExitOutcomeUnknown:
    case kExitAuthentication:
    case kExitNoStore: return true;
    default: return s.code() == Code::kIOError || s.code() == Code::kInternal;
  }
}

// A failure one row of a batch can cause (halving the batch finds it).
bool RowFailure(const Status& s) {
  return (s.IsInvalidArgument() && !StorageFailure(s)) || s.IsConflict() || s.IsNotFound();
}

Status Write(const Table& table, const std::string& mode, const Entity& e) {
  if (mode == "insert") return table.Insert(e).status();
  if (mode == "replace") return table.Replace(e, "*").status();
  if (mode == "merge") return table.Merge(e, "*").status();
  return table.Upsert(e).status();
}

Status Buffer(Transaction& txn, const Table& table, const std::string& mode, const Entity& e) {
  if (mode == "insert") return txn.Insert(table, e);
  if (mode == "replace") return txn.Replace(table, e, "*");
  if (mode == "merge") return txn.Merge(table, e, "*");
  return txn.Upsert(table, e);
}

// A row's result until it is written (or if it never is).
Status NotWritten() { return Status::Internal("not written"); }
bool Unwritten(const Status& s) {
  return s.code() == Code::kInternal && s.message() == "not written";
}

class Importer {
 public:
  Importer(const Store* store, const Table& table, const BulkOptions& o, std::ostream& err)
      : table_(table),
        o_(o),
        err_(err),
        atomic_(store != nullptr && store->blob_store().traits().atomic_batch ? store : nullptr),
        width_(static_cast<size_t>(std::max(1, o.parallel))),
        batch_(atomic_ != nullptr ? 1000
               : o.stop_on_error  ? width_
                                  : width_ * 8),
        progress_("import", o, err) {}

  int Run(RowSource& source);

 private:
  // The next batch: rows whose entity is good, up to batch_ of them; none
  // twice with the same keys (the second waits for the next batch); with
  // --stop-on-error, ends before a bad row (kept in *bad).
  std::vector<InputRow> ReadBatch(RowSource& source, std::optional<InputRow>* bad);
  void WriteBatch(const std::vector<InputRow>& rows, std::vector<Status>& results);
  // rows [lo, hi) as one atomic write, halved while a row fails it.
  void WriteAtomic(const std::vector<InputRow>& rows, size_t lo, size_t hi,
                   std::vector<Status>& results);
  void WriteParallel(const std::vector<InputRow>& rows, std::vector<Status>& results);
  // Counts and reports one row's outcome.
  void Tally(const InputRow& row, const Status& s);
  void Report(int64_t line, const Status& s);
  std::string Where(int64_t line) const {
    return o_.input_name.empty() ? "line " + std::to_string(line)
                                 : o_.input_name + " line " + std::to_string(line);
  }
  int Finish();

  const Table& table_;
  const BulkOptions& o_;
  std::ostream& err_;
  const Store* const atomic_;
  const size_t width_, batch_;
  Progress progress_;
  std::optional<InputRow> carried_;  // a row whose keys were already in the batch
  int64_t written_ = 0, skipped_ = 0, failed_ = 0, last_line_ = 0, first_failed_line_ = 0;
  int64_t storage_failures_in_a_row_ = 0;
  int64_t resume_line_ = 0;  // where to run again from, after giving up
  Status gave_up_;           // the failure that made it give up
  int first_failure_ = kExitOk;
  bool stopped_ = false;  // --stop-on-error met a failure
};

std::vector<InputRow> Importer::ReadBatch(RowSource& source, std::optional<InputRow>* bad) {
  std::vector<InputRow> rows;
  std::set<std::pair<std::string, std::string>> keys;
  InputRow row;
  while (rows.size() < batch_ && !g_interrupted) {
    if (carried_) {
      row = std::move(*carried_);
      carried_.reset();
    } else if (!source.Next(&row)) {
      break;
    }
    if (row.entity.ok())
      if (Status valid = ValidateEntity(*row.entity); !valid.ok()) row.entity = valid;
    if (!row.entity.ok()) {
      if (o_.stop_on_error) {
        *bad = std::move(row);
        break;
      }
      Report(row.number, row.entity.status());
      progress_.Add(1, static_cast<int64_t>(row.bytes));
      continue;
    }
    if (!keys.emplace(row.entity->partition_key(), row.entity->row_key()).second) {
      carried_ = std::move(row);  // the same entity twice: in order, one batch each
      break;
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

void Importer::WriteAtomic(const std::vector<InputRow>& rows, size_t lo, size_t hi,
                           std::vector<Status>& results) {
  if (hi - lo == 1) {
    results[lo] = Write(table_, o_.mode, *rows[lo].entity);
    return;
  }
  auto txn = atomic_->Begin();
  Status s = txn.status();
  for (size_t i = lo; s.ok() && i < hi; ++i) s = Buffer(*txn, table_, o_.mode, *rows[i].entity);
  if (s.ok()) s = txn->Commit().status();
  if (s.ok() || !RowFailure(s)) {
    std::fill(results.begin() + static_cast<std::ptrdiff_t>(lo),
              results.begin() + static_cast<std::ptrdiff_t>(hi), s);
    return;
  }
  const size_t mid = lo + (hi - lo) / 2;
  WriteAtomic(rows, lo, mid, results);
  const bool left_failed = std::any_of(results.begin() + static_cast<std::ptrdiff_t>(lo),
                                       results.begin() + static_cast<std::ptrdiff_t>(mid),
                                       [](const Status& r) { return !r.ok(); });
  if (o_.stop_on_error && left_failed) return;  // nothing after a failed row
  WriteAtomic(rows, mid, hi, results);
}

void Importer::WriteParallel(const std::vector<InputRow>& rows, std::vector<Status>& results) {
  // Storage failing for row after row (as the answers come): the rows not
  // yet begun are left, and the import gives up (the rows left are never
  // passed over in silence).
  std::atomic<int64_t> failing{storage_failures_in_a_row_};
  std::atomic<size_t> last_straw{rows.size()};
  internal::ParallelFor(rows.size(), width_, [&](size_t i) {
    if (failing.load() >= kGiveUpAfter) return;
    results[i] = Write(table_, o_.mode, *rows[i].entity);
    if (!StorageFailure(results[i])) {
      failing = 0;
    } else if (++failing >= kGiveUpAfter) {
      size_t none = rows.size();
      last_straw.compare_exchange_strong(none, i);
    }
  });
  if (last_straw < rows.size() && gave_up_.ok()) gave_up_ = results[last_straw];
}

void Importer::WriteBatch(const std::vector<InputRow>& rows, std::vector<Status>& results) {
  if (atomic_ != nullptr && !rows.empty())
    WriteAtomic(rows, 0, rows.size(), results);
  else
    WriteParallel(rows, results);
}

void Importer::Report(int64_t line, const Status& s) {
  ++failed_;
  if (first_failed_line_ == 0) first_failed_line_ = line;
  if (first_failure_ == kExitOk) first_failure_ = ExitCodeFor(s);
  err_ << "blobtable: " << Where(line) << ": " << Printable(s.ToString()) << "\n";
}

void Importer::Tally(const InputRow& row, const Status& s) {
  // Not written, or failed after the import gave up (not reported one by one).
  if (Unwritten(s) || (!gave_up_.ok() && !s.ok())) {
    if (resume_line_ == 0) resume_line_ = row.number;
    return;
  }
  last_line_ = row.number;
  if (s.ok()) {
    ++written_;
  } else if (o_.mode == "insert" && s.IsConflict()) {
    ++skipped_;  // already there: a rerun of an interrupted import
  } else {
    Report(row.number, s);
  }
  if (!StorageFailure(s)) {
    storage_failures_in_a_row_ = 0;
  } else if (++storage_failures_in_a_row_ >= kGiveUpAfter && gave_up_.ok()) {
    gave_up_ = s;
  }
}

int Importer::Run(RowSource& source) {
  while (!stopped_ && !g_interrupted && gave_up_.ok()) {
    std::optional<InputRow> bad;
    std::vector<InputRow> rows = ReadBatch(source, &bad);
    if (rows.empty() && !bad && !carried_) break;
    std::vector<Status> results(rows.size(), NotWritten());
    WriteBatch(rows, results);
    int64_t bytes = 0;
    // Every row is tallied: with --stop-on-error those after the first
    // failure are not written, but rows in flight then (remote stores) may
    // have been, and are counted.
    for (size_t i = 0; i < rows.size(); ++i) {
      bytes += static_cast<int64_t>(rows[i].bytes);
      Tally(rows[i], results[i]);
    }
    if (bad && failed_ == 0) {  // the first failure unless a write before it failed
      Report(bad->number, bad->entity.status());
      last_line_ = bad->number;
      progress_.Add(1, static_cast<int64_t>(bad->bytes));
    }
    stopped_ = o_.stop_on_error && failed_ > 0;
    const double fraction =
        o_.input_bytes > 0 ? static_cast<double>(source.consumed()) / o_.input_bytes : -1;
    progress_.Add(static_cast<int64_t>(rows.size()), bytes, std::min(fraction, 1.0),
                  /*of_file=*/true);
  }
  return Finish();
}

int Importer::Finish() {
  std::string how = ": " + std::to_string(written_) + " written, " + std::to_string(skipped_) +
                    " skipped (existing), " + std::to_string(failed_) + " failed";
  if (stopped_)
    how += "; stopped at the first failure (line " + std::to_string(first_failed_line_) + ")";
  if (g_interrupted) how += "; interrupted after line " + std::to_string(last_line_);
  if (!gave_up_.ok()) {
    if (first_failure_ == kExitOk) first_failure_ = ExitCodeFor(gave_up_);
    // Said even with --quiet: the one thing a stopped import must say.
    err_ << "blobtable: import: stopped: " << kGiveUpAfter
         << " rows in a row failed on storage, not on their data (the last: " << gave_up_.ToString()
         << "); " << written_ << " written"
         << (resume_line_ > 0 ? "; run it again from " + Where(resume_line_) +
                                    " (rows before it that failed are reported above)"
                              : std::string())
         << "\n";
  }
  progress_.Finish(how);
  if (g_interrupted) {
    if (o_.quiet)  // the summary is the one thing an interrupted import must say
      err_ << "import: interrupted after line " << last_line_ << how << "\n";
    return 130;
  }
  return first_failure_;
}

}  // namespace

int CmdImport(const Store* store, const Table& table, const BulkOptions& o, std::istream& in,
              std::ostream& err) {
  if (o.mode != "insert" && o.mode != "upsert" && o.mode != "replace" && o.mode != "merge")
    return Fail(err, Status::InvalidArgument("unknown --mode '" + o.mode +
                                             "' (insert, upsert, replace, merge)"));
  ColumnTypes types;
  if (!o.types.empty()) {
    auto parsed = ParseColumnTypes(o.types);
    if (!parsed.ok()) return Fail(err, parsed.status());
    types = std::move(*parsed);
  }
  auto source = MakeRowSource(o.format, std::move(types), in);
  if (!source.ok()) return Fail(err, source.status());
  InterruptStops interrupts;
  Importer importer(store, table, o, err);
  int rc = importer.Run(**source);
  if (in.bad() && !g_interrupted)
    return Fail(err, Status::IOError("import: cannot read the input"));
  return rc;
}

}  // namespace blobtable::cli
