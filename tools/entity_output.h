// SPDX-License-Identifier: Apache-2.0
// How the CLI prints entities (`get`, `query` and `export --format`):
//   jsonl  one compact JSON object a line (the default; what `import` reads)
//   json   `get`: the object, indented; `query`: one JSON array
//   table  aligned text columns: PartitionKey, RowKey, then every property
//          (a cell shows at most 60 columns of a terminal)
//   csv    comma-separated values with a header line (RFC 4180 quoting)
//   tsv    tab-separated values with a header line (\t \n \r \\ escaped)
// The columnar three (tools/entity_columns.cc) settle their columns on the
// first 1,000 rows (or the --select list) and stream the rest.
#ifndef BLOBTABLE_TOOLS_ENTITY_OUTPUT_H_
#define BLOBTABLE_TOOLS_ENTITY_OUTPUT_H_

#include <cstdint>
#include <iosfwd>
#include <memory>
#include <string>
#include <vector>

#include "blobtable/entity.h"
#include "blobtable/status.h"

namespace blobtable::cli {

class EntityOutput {
 public:
  virtual ~EntityOutput() = default;
  // Writes (or keeps) one entity; the bytes written for it, for progress.
  virtual int64_t Add(const Entity& e) = 0;
  // Writes what is still to come (rows held back, the array's end).
  virtual void Finish() = 0;
  // Not OK once a row could not be written whole (csv, tsv: a property
  // outside the settled columns); nothing is written after it.
  virtual Status status() const { return Status::OK(); }
};

// `format` is one of the above; `many`: a list of entities (query) rather
// than one (get); `selected`: the --select list (the columns of a columnar
// format). Null for an unknown format.
std::unique_ptr<EntityOutput> MakeEntityOutput(const std::string& format, bool many,
                                               std::ostream& out,
                                               const std::vector<std::string>& selected = {});
std::unique_ptr<EntityOutput> MakeColumnarOutput(const std::string& format,
                                                 const std::vector<std::string>& selected,
                                                 std::ostream& out);

}  // namespace blobtable::cli

#endif  // BLOBTABLE_TOOLS_ENTITY_OUTPUT_H_
