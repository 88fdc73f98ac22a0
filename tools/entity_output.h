// SPDX-License-Identifier: Apache-2.0
// How the CLI prints entities (`get` and `query --format`):
//   jsonl  one compact JSON object a line (the default; what `import` reads)
//   json   `get`: the object, indented; `query`: one JSON array
//   table  aligned text columns: PartitionKey, RowKey, then every property
//          any row has, in name order (a cell shows at most 60 characters)
// A table is printed once every row is in: its widths depend on all of them.
#ifndef BLOBTABLE_TOOLS_ENTITY_OUTPUT_H_
#define BLOBTABLE_TOOLS_ENTITY_OUTPUT_H_

#include <cstdint>
#include <iosfwd>
#include <memory>
#include <string>

#include "blobtable/entity.h"

namespace blobtable::cli {

class EntityOutput {
 public:
  virtual ~EntityOutput() = default;
  // Writes (or keeps) one entity; the bytes written for it, for progress.
  virtual int64_t Add(const Entity& e) = 0;
  // Writes what is still to come (a table, the array's end).
  virtual void Finish() = 0;
};

// `format` is "jsonl", "json" or "table"; `many`: a list of entities (query)
// rather than one (get). Null for an unknown format.
std::unique_ptr<EntityOutput> MakeEntityOutput(const std::string& format, bool many,
                                               std::ostream& out);

}  // namespace blobtable::cli

#endif  // BLOBTABLE_TOOLS_ENTITY_OUTPUT_H_
