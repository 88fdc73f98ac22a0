// SPDX-License-Identifier: Apache-2.0
// A table's secondary index definitions (issue 34) and their stored form:
// one schema blob per table, read by every client of the store so that all
// of them maintain the same indexes.
#ifndef BLOBTABLE_MODEL_INDEX_SCHEMA_H_
#define BLOBTABLE_MODEL_INDEX_SCHEMA_H_

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "blobtable/index.h"
#include "blobtable/status.h"

namespace blobtable::internal {

inline constexpr size_t kMaxIndexesPerTable = 8;
using blobtable::kMaxIndexedProperties;  // blobtable/index.h

using blobtable::IndexSpec;   // blobtable/index.h
using blobtable::IndexState;  // building, ready, dropping

struct IndexDefinition {
  IndexSpec spec;
  IndexState state = IndexState::kBuilding;
  // While building: the entity blob name its backfill has walked up to
  // (inclusive; empty: not started), so that a build resumes after a crash.
  std::string built_through{};
};

struct TableSchema {
  std::vector<IndexDefinition> indexes;
  // The index named `name` (compared without case), or null.
  const IndexDefinition* Find(std::string_view name) const;
  IndexDefinition* Find(std::string_view name);
  // Whether any index is maintained by writers (building or ready).
  bool Maintained() const;
};

// InvalidArgument, saying which rule, if `spec` cannot be added to
// `schema`: a bad or taken name, no property or more than three, a
// property twice or one that is a key or Timestamp (the table is already
// ordered by its keys), a bad property name, more than kMaxIndexesPerTable
// indexes.
Status ValidateNewIndex(const IndexSpec& spec, const TableSchema& schema);

// The stored form (msgpack, with a magic and a format number) and back;
// Corruption for anything DecodeTableSchema cannot read whole.
std::string EncodeTableSchema(const TableSchema& schema);
Result<TableSchema> DecodeTableSchema(std::string_view bytes);

}  // namespace blobtable::internal

#endif  // BLOBTABLE_MODEL_INDEX_SCHEMA_H_
