// SPDX-License-Identifier: Apache-2.0
// The CLI's bulk commands (docs/cli.md#import-and-export): a table's rows out
// as JSON lines, and JSON lines in, one entity a line in the form `get`
// prints.
#ifndef BLOBTABLE_TOOLS_BULK_H_
#define BLOBTABLE_TOOLS_BULK_H_

#include <cstdint>
#include <functional>
#include <iosfwd>
#include <string>
#include <string_view>

#include "blobtable/index.h"
#include "blobtable/store.h"
#include "blobtable/table.h"

namespace blobtable::cli {

struct BulkOptions {
  // import: insert (an existing row is skipped, not a failure), upsert
  // (idempotent: a rerun after an interruption is safe), replace or merge
  // (the row must exist; any version: ETags belong to the store that wrote
  // them, so a line's "odata.etag" is ignored).
  std::string mode = "upsert";
  int parallel = 16;           // import: writes in flight at once (1: one at a time)
  bool stop_on_error = false;  // import: stop after the first failed row (those in flight finish)
  bool quiet = false;          // no progress and no summary (errors are still reported)
  bool progress = false;       // progress on stderr (set when stderr is a terminal)
  int64_t limit = -1;          // export: stop after this many rows (-1: all; `query --limit`)
  // export: how rows print (tools/entity_output.h; `query --format`);
  // import: how rows are read (jsonl, csv, tsv: tools/row_source.h)
  std::string format = "jsonl";
  std::string types;               // import of csv/tsv: "name:Edm.Int64,..." (tools/row_source.h)
  std::string input_name;          // import: named in its messages ("orders.jsonl line 5"), if set
  std::string command = "export";  // export: the command, as its messages name it
  // export: asked when no row was printed; an error is the command's.
  std::function<Status()> if_none;
  int64_t input_bytes = -1;  // import: the input's size, if it is a regular file (for % and ETA)
};

// Whether progress is shown on `err`: it is stderr, and a terminal.
bool ShowsProgress(const std::ostream& err);

// How far `key` is through [from, to], 0..1: the bytes after the prefix
// `from` and `to` share, read as a base-256 fraction. An export of a known
// RowKey range shows it as its estimated progress.
double RangeFraction(std::string_view from, std::string_view to, std::string_view key);

// A query over an index (`query --index`): Table::QueryIndex's arguments.
struct IndexRead {
  std::string index;
  IndexQuery query;
};

// Every row `q` selects (through `index` if given), continuations followed,
// one JSON object a line on `out`; progress (with an estimate of how far
// through the range, when `q` has a partition and both RowKey bounds) and a
// one-line summary on `err`. The exit code.
int CmdExport(const Table& table, QueryOptions q, const BulkOptions& options, std::ostream& out,
              std::ostream& err, const IndexRead* index = nullptr);

// The rows of `in` (options.format: one entity a line, or csv/tsv with a
// header), written by options.mode; every bad row or failed write is
// reported with its line number and reason, the others go on (unless
// stop_on_error: then nothing after the first failed line is written).
// Every row is checked (ValidateEntity) before it joins a batch. Where
// `store` commits atomic batches (the embedded store), a thousand rows go
// in one write, and a batch that a row fails is halved until the failing
// rows are alone. Ten rows in a row failing on storage rather than on
// their data (unreachable, credentials refused, no store there) stop it,
// saying where to run again from. SIGINT/SIGTERM stop it after the batch
// in hand, with the summary (exit 130). Exit code 0 only if no row failed;
// else the code of the first failure (2 for a bad line).
int CmdImport(const Store* store, const Table& table, const BulkOptions& options, std::istream& in,
              std::ostream& err);

}  // namespace blobtable::cli

#endif  // BLOBTABLE_TOOLS_BULK_H_
