// SPDX-License-Identifier: Apache-2.0
#include "model/index_naming.h"

#include "blobtable/blob_store.h"
#include "model/blob_naming.h"
#include "model/index_key.h"
#include "util/ascii.h"
#include "util/digest.h"

namespace blobtable::internal::naming {
namespace {

constexpr char kEntryHashMark = 'Z';  // after every tuple's letters

// Each byte as two letters 'A'..'P' (its high and low half): text a key may
// hold, in the bytes' order, that names carry unescaped.
void AppendTuplePart(std::string& out, std::string_view part) {
  for (char c : part) {
    const auto b = static_cast<unsigned char>(c);
    out.push_back(static_cast<char>('A' + (b >> 4)));
    out.push_back(static_cast<char>('A' + (b & 15)));
  }
}

// Below every letter: a shorter part sorts first.
void AppendTupleEnd(std::string& out) { out.push_back('1'); }

std::string ValuesKey(const std::vector<PropertyValue>& values) {
  std::string out;
  for (const PropertyValue& v : values) {
    AppendTuplePart(out, index_key::KeyOf(v));
    AppendTupleEnd(out);
  }
  return out;
}

Status ValuesTooLong(size_t length) {
  return Status::InvalidArgument(
      "the indexed values are too long for an index entry: its blob name would be " +
      std::to_string(length) +
      " characters and Azure allows 1024 (each value counts 2 characters a byte of its "
      "first 113, and a longer one 32 more for its hash)");
}

}  // namespace

Status ValidateIndexName(std::string_view index) {
  if (FollowsTableNameRules(index)) return Status::OK();
  return Status::InvalidArgument("index name '" + std::string(index) +
                                 "' must be 3-63 ASCII letters and digits, starting with a letter");
}

std::string IndexTableName(std::string_view table, std::string_view index) {
  return AsciiLower(table) + kHiddenTableMark + AsciiLower(index);
}

std::string SchemaTableName(std::string_view table) { return AsciiLower(table) + kHiddenTableMark; }

Result<std::string> SchemaBlobName(std::string_view table) {
  return EntityBlobName(SchemaTableName(table), "", kSchemaRowKey);
}

bool IsHiddenTable(std::string_view table) {
  return table.find(kHiddenTableMark) != std::string_view::npos;
}

void AppendTuple(std::string& out, const std::vector<std::string>& parts) {
  for (const std::string& p : parts) {
    AppendTuplePart(out, p);
    AppendTupleEnd(out);
  }
}

Result<IndexEntryKeys> IndexEntryKeysOf(std::string_view table, std::string_view index,
                                        const std::vector<PropertyValue>& values, bool unique,
                                        std::string_view pk, std::string_view rk) {
  const std::string hidden = IndexTableName(table, index);
  IndexEntryKeys keys;
  keys.partition_key = ValuesKey(values);
  if (!unique) AppendTuple(keys.row_key, {std::string(pk), std::string(rk)});
  auto name = EntityBlobName(hidden, keys.partition_key, keys.row_key);
  if (name.ok()) return keys;
  if (unique) return ValuesTooLong(EntityPrefix(hidden).size() + keys.partition_key.size());
  // Named by a hash of the keys (the entry's body names the entity).
  const std::string hash = Sha256(keys.row_key).substr(0, 16);
  keys.row_key = std::string(1, kEntryHashMark);
  AppendTuplePart(keys.row_key, hash);
  keys.keys_hashed = true;
  name = EntityBlobName(hidden, keys.partition_key, keys.row_key);
  if (!name.ok()) return ValuesTooLong(EntityPrefix(hidden).size() + keys.partition_key.size());
  return keys;
}

IndexScan IndexScanOf(std::string_view table, std::string_view index,
                      const std::vector<PropertyValue>& equal,
                      const std::optional<PropertyValue>& lower,
                      const std::optional<PropertyValue>& upper) {
  const std::string entity_prefix = EntityPrefix(IndexTableName(table, index)) + "-";
  const std::string equal_key = ValuesKey(equal);
  IndexScan scan;
  scan.prefix = entity_prefix + EncodeKey(equal_key);
  scan.from = scan.prefix;
  if (lower) {
    std::string from_key = equal_key;
    AppendTuplePart(from_key, index_key::ScanLowerBound(*lower));
    scan.from = entity_prefix + EncodeKey(from_key);
  }
  const std::string bound = upper ? index_key::ScanUpperBound(*upper) : "";
  if (bound.empty()) {
    scan.to = scan.prefix + '\x7f';  // past every character a name continues with
  } else {
    std::string to_key = equal_key;
    AppendTuplePart(to_key, bound);
    scan.to = entity_prefix + EncodeKey(to_key);
  }
  return scan;
}

}  // namespace blobtable::internal::naming
