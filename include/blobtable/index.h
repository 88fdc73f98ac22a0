// SPDX-License-Identifier: Apache-2.0
// Secondary indexes (docs/indexes.md): declared once per table with
// Store::CreateIndex, kept in the same atomic step as every write to the
// table by every client of the store, queried by range with
// Table::QueryIndex.
//
//   blobtable::IndexSpec by_email{.name = "byEmail", .properties = {"email"}, .unique = true};
//   Status created = store->CreateIndex("users", by_email);   // builds it, online
//   blobtable::IndexQuery q{.equal = {blobtable::PropertyValue(std::string("a@x.org"))}};
//   auto page = users->QueryIndex("byEmail", q);              // Result<QueryPage>
#ifndef BLOBTABLE_INDEX_H_
#define BLOBTABLE_INDEX_H_

#include <cstdint>
#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "blobtable/entity.h"

namespace blobtable {

// What an index orders by and what it answers alone.
// An index orders its entries by 1 to this many properties (IndexSpec::properties).
inline constexpr size_t kMaxIndexedProperties = 3;

struct IndexSpec {
  // The table-name rules: 3-63 ASCII letters and digits, starting with a
  // letter; compared without case.
  std::string name{};
  // 1 to 3 properties, in order; not PartitionKey, RowKey or Timestamp. An
  // entity missing one of them is not in the index.
  std::vector<std::string> properties{};
  // At most one entity per combination of values: a write that would make a
  // second is refused with Conflict naming the index and the value.
  bool unique = false;
  // Properties copied into the index, so that a query selecting only them
  // (and the indexed ones) is answered from the index alone.
  std::vector<std::string> covered{};
};

// Building: every writer maintains it, queries may not use it yet (its
// backfill runs); ready: complete, queries use it; dropping: writers leave
// it and its entries are being removed.
enum class IndexState { kBuilding = 0, kReady = 1, kDropping = 2 };

struct IndexInfo {
  IndexSpec spec;
  IndexState state = IndexState::kBuilding;
};

// Store::CreateIndex's progress, after each batch of its backfill.
struct IndexBuildProgress {
  int64_t entities = 0;  // entities of the table walked so far (this run)
  int64_t entries = 0;   // of them, those the index holds (having every property)
};

struct CreateIndexOptions {
  // Called on the calling thread after each batch of the backfill.
  std::function<void(const IndexBuildProgress&)> progress;
};

struct DropIndexOptions {
  // Return only once the entries are gone (the drop's grace, 10 s on the
  // store's clock on Azure, none on the embedded store, then their
  // deletion). Off: return once the index is
  // marked dropping, and delete its entries on the store's background
  // threads (docs/indexes.md#dropping).
  bool wait = false;
};

// Which entries Table::QueryIndex reads: an equality on the first
// `equal.size()` properties of the index, then an optional range on the
// next one (both ends inclusive, either may be absent). Values compare in
// the index's order (docs/indexes.md#order): Int32 and Int64 together
// by value, -0.0 equal to 0.0, NaN after every other Double, and across
// types Boolean < integers < Double < DateTime < Guid < String < Binary.
struct IndexQuery {
  std::vector<PropertyValue> equal{};
  std::optional<PropertyValue> from{};
  std::optional<PropertyValue> to{};
};

// What Store::CheckIndex found. Clean when missing, dangling and
// duplicates are 0.
struct IndexCheckReport {
  int64_t entities = 0;    // entities of the table
  int64_t entries = 0;     // entries of the index
  int64_t missing = 0;     // entities with every indexed property and no entry for their values
  int64_t dangling = 0;    // entries whose entity is gone or holds other values
  int64_t duplicates = 0;  // values of a unique index held by more than one entity
  // The first problems found (up to 20), each naming the entity or entry.
  std::vector<std::string> problems;
  bool clean() const { return missing == 0 && dangling == 0 && duplicates == 0; }
};

}  // namespace blobtable

#endif  // BLOBTABLE_INDEX_H_
