// SPDX-License-Identifier: Apache-2.0
// Where a secondary index's entries live (issue 34), beside the table's
// entities and locks:
//
//   t/<table>/i/<index>/-<key(v1)>[/-<key(v2)>[/-<key(v3)>]]/-<key(PK)>/-<key(RK)>
//   t/<table>/i/<index>/-<key(v1)>[/-<key(v2)>[/-<key(v3)>]]           (unique)
//
// key(v) is naming::EncodeKey of index_key::KeyOf(v): the order-preserving
// bytes of the value, escaped as entity keys are, so List Blobs order is the
// index's order (values, then the entity's keys), and every character of a
// segment sorts above the '/' that ends it (a shorter value first). A
// unique index's entry is named by its values alone: creating it (If-None-
// Match *) is the claim on them. A non-unique entry whose name would pass
// Azure's 1,024 characters names the entity by a hash instead,
// "/#<32 hex digits of SHA-256>" (its body then names the entity).
#ifndef BLOBTABLE_MODEL_INDEX_NAMING_H_
#define BLOBTABLE_MODEL_INDEX_NAMING_H_

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "blobtable/entity.h"
#include "blobtable/status.h"

namespace blobtable::internal::naming {

// An index name follows the table-name rules (3-63 ASCII letters and
// digits, starting with a letter), compared without case.
Status ValidateIndexName(std::string_view index);

// "t/<table>/i/<index>/" (both lowercase).
std::string IndexPrefix(std::string_view table, std::string_view index);
// Every entry whose first values are `values` (an equality on a prefix of
// the index's properties): IndexPrefix + "-<key(v1)>/" ...
std::string IndexValuesPrefix(std::string_view table, std::string_view index,
                              const std::vector<PropertyValue>& values);

// The entry of the entity (pk, rk) with `values` (one per property of the
// index, in order). InvalidArgument if even a unique entry, or one named
// by the keys' hash, would pass 1,024 characters (values of escaped length
// that an index cannot hold). `*keys_hashed`: the entity is named by hash.
Result<std::string> IndexEntryName(std::string_view table, std::string_view index,
                                   const std::vector<PropertyValue>& values, bool unique,
                                   std::string_view pk, std::string_view rk,
                                   bool* keys_hashed = nullptr);

// The names a range scan over the next property after `equal` lists: from
// the first entry whose value there may be >= `lower` (inclusive), to
// before the first whose value there is past `upper` (exclusive; the end of
// the equality's entries if `upper` has no bound). Entries between may hold
// values outside the range (index_key.h): each is checked.
std::string IndexScanFrom(std::string_view table, std::string_view index,
                          const std::vector<PropertyValue>& equal,
                          const std::optional<PropertyValue>& lower);
std::string IndexScanTo(std::string_view table, std::string_view index,
                        const std::vector<PropertyValue>& equal,
                        const std::optional<PropertyValue>& upper);

// The entity a non-unique entry's name gives, if it names it by its keys
// (nullopt for an entry named by hash; InvalidArgument if `name` is no
// entry of the index after `value_count` values).
Result<std::optional<std::pair<std::string, std::string>>> EntityOfIndexEntry(
    std::string_view table, std::string_view index, size_t value_count, std::string_view name);

}  // namespace blobtable::internal::naming

#endif  // BLOBTABLE_MODEL_INDEX_NAMING_H_
