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

#include "blobtable/status.h"

namespace blobtable::internal {

inline constexpr size_t kMaxIndexesPerTable = 8;
inline constexpr size_t kMaxIndexedProperties = 3;

struct IndexSpec {
  std::string name;                     // the table-name rules, compared without case
  std::vector<std::string> properties;  // 1..3, in order; not the keys or Timestamp
  bool unique = false;
  std::vector<std::string> covered;  // answered from the index alone
};

// Building: writers maintain it, queries may not use it yet (the backfill
// runs); ready: complete; dropping: writers leave it, its entries go.
enum class IndexState { kBuilding, kReady, kDropping };

struct IndexDefinition {
  IndexSpec spec;
  IndexState state = IndexState::kBuilding;
};

struct TableSchema {
  std::vector<IndexDefinition> indexes;
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
