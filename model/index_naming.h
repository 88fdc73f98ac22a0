// SPDX-License-Identifier: Apache-2.0
// Where a secondary index lives (docs/indexes.md#stored-form): each index is
// a hidden table whose entities are its entries, so that every write to it
// goes through the commit protocol as any entity does; the table's index
// definitions are one entity of another hidden table.
//
//   index entries:  table "<table>~<index>"  (blobs t/<table>~<index>/e/-<PK>/-<RK>)
//   definitions:    table "<table>~", entity ("", "schema")
//
// '~' is outside the table-name rules, so no user table is hidden and no
// hidden table is a user's. An entry's keys are text (letters and '1': never escaped in names):
//   PartitionKey  tuple(KeyOf(v1), ..., KeyOf(vn))      (index_key.h)
//   RowKey        unique: ""; otherwise tuple(PK, RK) of the entity, or 'Z'
//                 and 16 bytes of SHA-256 of it where the name would pass
//                 Azure's 1,024 characters
// tuple() joins byte strings order-preservingly: each byte of a part as two
// letters 'A'-'P', then '1'. So List Blobs order is (values, entity keys),
// a unique entry is named by its values alone (creating it is the claim on
// them), and a range over the index is a range of blob names.
#ifndef BLOBTABLE_MODEL_INDEX_NAMING_H_
#define BLOBTABLE_MODEL_INDEX_NAMING_H_

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "blobtable/entity.h"
#include "blobtable/status.h"

namespace blobtable::internal::naming {

inline constexpr char kHiddenTableMark = '~';
inline constexpr char kSchemaRowKey[] = "schema";  // PartitionKey ""

// An index name follows the table-name rules (3-63 ASCII letters and
// digits, starting with a letter), compared without case.
Status ValidateIndexName(std::string_view index);

// "<table>~<index>" and "<table>~", lowercase.
std::string IndexTableName(std::string_view table, std::string_view index);
std::string SchemaTableName(std::string_view table);
// The blob of `table`'s definitions (entity ("", kSchemaRowKey) of
// SchemaTableName(table)); InvalidArgument for a name no blob can have.
Result<std::string> SchemaBlobName(std::string_view table);
// Whether `table` names a hidden table (it holds the mark).
bool IsHiddenTable(std::string_view table);

// tuple() of `parts`, appended to `out`.
void AppendTuple(std::string& out, const std::vector<std::string>& parts);

struct IndexEntryKeys {
  std::string partition_key;
  std::string row_key;
  bool keys_hashed = false;  // the entity is named by the hash of its keys
};
// The keys of the entry of entity (pk, rk) holding `values` (one per
// property of the index, in order). InvalidArgument if the entry's blob
// name would pass 1,024 characters even with the entity's keys hashed
// (values too long to index together; the message says how they count).
Result<IndexEntryKeys> IndexEntryKeysOf(std::string_view table, std::string_view index,
                                        const std::vector<PropertyValue>& values, bool unique,
                                        std::string_view pk, std::string_view rk);

// The blobs of the index's table a query lists: under `prefix`, from
// `from` (inclusive) to before `to`. `equal`: values of the first
// properties; `lower`/`upper`: an optional range on the next. Entries in
// it may hold values outside the range (index_key.h): each is checked.
struct IndexScan {
  std::string prefix, from, to;
};
IndexScan IndexScanOf(std::string_view table, std::string_view index,
                      const std::vector<PropertyValue>& equal,
                      const std::optional<PropertyValue>& lower,
                      const std::optional<PropertyValue>& upper);

}  // namespace blobtable::internal::naming

#endif  // BLOBTABLE_MODEL_INDEX_NAMING_H_
