// SPDX-License-Identifier: Apache-2.0
// What an index holds for an entity (docs/indexes.md#stored-form): its
// entry, an entity of the index's hidden table (index_naming.h) keyed by
// the indexed values, whose properties are the indexed and covered
// properties of the entity and the entity's keys; and whether an entity's
// values satisfy an index query.
#ifndef BLOBTABLE_MODEL_INDEX_ENTRIES_H_
#define BLOBTABLE_MODEL_INDEX_ENTRIES_H_

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "blobtable/entity.h"
#include "blobtable/index.h"
#include "blobtable/status.h"
#include "model/blob_naming.h"

namespace blobtable::internal {

// The entity's keys, in its entry: names no user property can have.
inline constexpr char kEntryPartitionKey[] = "bt.pk";
inline constexpr char kEntryRowKey[] = "bt.rk";

// The values of `spec`'s properties in `entity`, in order; nullopt if it
// lacks one (it is then not in the index).
std::optional<std::vector<PropertyValue>> IndexedValues(const IndexSpec& spec,
                                                        const Entity& entity);

// The entry of `entity` (of table `table`) in `spec`, or nullopt if it is
// not in the index. InvalidArgument (naming the index) for values too long
// to index.
Result<std::optional<Entity>> EntryOf(std::string_view table, const IndexSpec& spec,
                                      const Entity& entity);

// The entity an entry names; Corruption if the entry holds no keys.
Result<naming::EntityKey> EntityOfEntry(const Entity& entry);

// The entity as the index answers it alone: keys, indexed and covered
// properties, from its entry.
Entity EntityFromEntry(const Entity& entry, const naming::EntityKey& keys);

// InvalidArgument unless `query` fits `spec`: at most as many equalities as
// properties, a range only on the property after them.
Status ValidateIndexQuery(const IndexSpec& spec, const IndexQuery& query);

// Whether `values` (an entity's, IndexedValues) satisfy `query`, compared
// whole in the index's order.
bool MatchesIndexQuery(const IndexQuery& query, const std::vector<PropertyValue>& values);

// Whether two lists of values are equal in the index's order.
bool SameIndexValues(const std::vector<PropertyValue>& a, const std::vector<PropertyValue>& b);

// "index byEmail (email = 'a@x.org')": for messages.
std::string DescribeIndexValues(const IndexSpec& spec, const std::vector<PropertyValue>& values);

}  // namespace blobtable::internal

#endif  // BLOBTABLE_MODEL_INDEX_ENTRIES_H_
