// SPDX-License-Identifier: Apache-2.0
// What `import` reads (docs/cli.md#import-and-export): rows of an input, one
// at a time, in JSON lines (the form `get` prints), CSV or TSV (the form
// `export --format csv|tsv` prints), each row with its line number and its
// entity or why not. Memory is bounded by one row, whatever the input: a
// line or record over kMaxRowInputBytes is refused as soon as it is over,
// and the rest of it skipped.
#ifndef BLOBTABLE_TOOLS_ROW_SOURCE_H_
#define BLOBTABLE_TOOLS_ROW_SOURCE_H_

#include <cstdint>
#include <istream>
#include <map>

#include <nlohmann/json.hpp>
#include <memory>
#include <string>

#include "blobtable/entity.h"
#include "blobtable/status.h"

namespace blobtable::cli {

// The most input one entity is read from: an entity is at most 1 MiB
// encoded, and its JSON can be six times that (every byte a \u escape).
inline constexpr size_t kMaxRowInputBytes = 8u << 20;
// `txn`'s operations, all of them.
inline constexpr size_t kMaxTxnInputBytes = 64u << 20;
// `queue put`'s body: an item's is at most 4 MiB (blobtable/queue.h).
inline constexpr size_t kMaxItemInputBytes = 4u << 20;

// Everything on `in`, or InvalidArgument "<what> is over N bytes" as soon
// as it is longer than `max` (nothing more is read).
Result<std::string> ReadInput(std::istream& in, size_t max, const std::string& what);

// Lines of `in`, each at most `max` bytes (a longer one is cut there and
// the rest of it skipped; too_long() says so). A final line without its
// newline counts.
class LineReader {
 public:
  LineReader(std::istream& in, size_t max) : in_(*in.rdbuf()), max_(max) {}
  // The next line (without its newline or a carriage return before it) in
  // *line; false at the end of the input.
  bool Next(std::string* line);
  bool too_long() const { return too_long_; }
  // Quotes (") among the bytes of the last line cut off as too long: a
  // reader of quoted fields knows from them whether its field goes on.
  int64_t skipped_quotes() const { return skipped_quotes_; }
  // Whether the last line ended in "\r\n" (its \r is not in the line).
  bool had_cr() const { return had_cr_; }
  int64_t number() const { return number_; }      // of the line Next gave
  int64_t consumed() const { return consumed_; }  // bytes read so far

 private:
  std::streambuf& in_;
  const size_t max_;
  bool too_long_ = false, had_cr_ = false;
  int64_t number_ = 0, consumed_ = 0, skipped_quotes_ = 0;
};

// One row of the input: where it starts and its entity, or why not.
struct InputRow {
  int64_t number = 0;  // its (first) line
  size_t bytes = 0;    // of input it took
  Result<Entity> entity = Status::InvalidArgument("empty");
};

class RowSource {
 public:
  virtual ~RowSource() = default;
  // The next row in *row (a bad row is a row: its entity says why); false
  // at the end of the input.
  virtual bool Next(InputRow* row) = 0;
  // Bytes read so far.
  virtual int64_t consumed() const = 0;
};

// A property's type for every row of a delimited input (`import --types`):
// name to Edm type name.
using ColumnTypes = std::map<std::string, std::string>;

// A delimited cell's value when no type is given for it: true and false
// Booleans, a JSON number (no spaces) as JSON reads it, anything else the
// string itself.
nlohmann::json InferredCell(const std::string& cell);

// "name:Edm.Int64,other:double" (types as `put NAME:TYPE=VALUE` takes them)
// as ColumnTypes; InvalidArgument naming the bad part.
Result<ColumnTypes> ParseColumnTypes(const std::string& text);

// The rows of `in` in `format`: "jsonl", "csv" (RFC 4180: a quoted field
// may hold commas, quotes doubled and line breaks) or "tsv" (tab, newline,
// carriage return and backslash escaped). csv and tsv start with a header row of column names:
// PartitionKey and RowKey, the properties, and for any property a column NAME@odata.type holding
// each row's type of it. A cell's type is its row's NAME@odata.type cell, else `types`, else read
// from its text: true or false a Boolean, a JSON integer an Int32, a JSON number with a fraction or
// an exponent a Double, anything else a String; an empty cell is no property (an empty String needs
// its type given). InvalidArgument for an unknown format, or a header that is not one (read here:
// "line 1 (the header):
// ..."); an empty input has no rows.
Result<std::unique_ptr<RowSource>> MakeRowSource(const std::string& format, ColumnTypes types,
                                                 std::istream& in);

}  // namespace blobtable::cli

#endif  // BLOBTABLE_TOOLS_ROW_SOURCE_H_
