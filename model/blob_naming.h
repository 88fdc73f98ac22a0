// SPDX-License-Identifier: Apache-2.0
// Where entities live: the stable mapping from (table, PartitionKey, RowKey)
// to blob names. See docs/data-model.md#blob-naming for the full description.
//
//   entity blob:  t/<table>/e/-<key(PK)>/-<key(RK)>
//   lock blob:    t/<table>/l/-<key(PK)>
//
// <table> is the table name in lowercase (Azure table names are
// case-insensitive). key() is an order-preserving escape of the key's UTF-8
// bytes: '1'-'9', 'A'-'Z', 'a'-'z' stand for themselves; every other byte b
// becomes a marker and two uppercase hex digits, the marker chosen by the
// range b falls in so that byte order is kept:
//   0x00-0x30 -> '0'HH   0x3A-0x40 -> '@'HH   0x5B-0x60 -> '_'HH   0x7B-0xFF -> '~'HH
// Hence: names contain no '/', '.', '%' or space from keys (no "." or ".."
// segments, nothing to normalise), every character of key() sorts above '/',
// and List Blobs order is (PartitionKey, RowKey) byte-wise ordinal order. The
// '-' before each key keeps empty keys from making empty segments.
#ifndef BLOBTABLE_MODEL_BLOB_NAMING_H_
#define BLOBTABLE_MODEL_BLOB_NAMING_H_

#include <optional>
#include <string>
#include <string_view>

#include "blobtable/status.h"
#include "util/stored_format.h"

namespace blobtable::internal::naming {

// Escapes and unescapes a key. Decode accepts only what Encode produces
// (InvalidArgument otherwise), so the mapping is a bijection.
std::string EncodeKey(std::string_view key);
Result<std::string> DecodeKey(std::string_view encoded);

// Azure table name rules: 3-63 ASCII letters and digits, starting with a
// letter; "tables" is reserved.
Status ValidateTableName(std::string_view table);
// The rules without the reserved name (index names follow them too).
bool FollowsTableNameRules(std::string_view name);

std::string TablePrefix(std::string_view table);                           // "t/<table>/"
std::string EntityPrefix(std::string_view table);                          // "t/<table>/e/"
std::string PartitionPrefix(std::string_view table, std::string_view pk);  // ".../e/-<pk>/"

// The entity blob name. InvalidArgument if it would exceed Azure's 1,024
// characters (the message says how long and how keys are counted).
Result<std::string> EntityBlobName(std::string_view table, std::string_view pk,
                                   std::string_view rk);
// The same, written into `out` (its capacity reused: a thread's spare on
// the read path). True if every byte of both keys is IsPlainKeyByte
// (key_rules.h: ValidateKey has nothing to refuse in them), false if a key
// holds a byte ValidateKey must judge: the encoding pass looks at every
// byte anyway, so a read checks its keys without a second pass. On
// InvalidArgument `out` is unspecified.
Result<bool> WriteEntityBlobName(std::string_view table, std::string_view pk, std::string_view rk,
                                 std::string& out);
Result<std::string> LockBlobName(std::string_view table, std::string_view pk);
// Stripe `stripe` of the partition whose first lock blob is `lock`: `lock`
// itself for stripe 0, else `lock` + "/" + stripe (txn/lock_stripes.h). An
// encoded key holds no '/', so no stripe is another partition's lock.
std::string LockStripeBlobName(std::string_view lock, int stripe);

struct EntityKey {
  std::string partition_key;
  std::string row_key;
};
// The keys of an entity blob name under EntityPrefix(table); InvalidArgument
// if `name` is not one.
Result<EntityKey> ParseEntityBlobName(std::string_view table, std::string_view name);
// True if `name` is the blob of the entity (pk, rk) of the table whose
// EntityPrefix is `entity_prefix`: ParseEntityBlobName's question, asked
// of keys already known, without decoding or allocating.
bool IsEntityBlobNameOf(std::string_view name, std::string_view entity_prefix, std::string_view pk,
                        std::string_view rk);
// The same for a name under `partition_prefix` (PartitionPrefix(table, pk)),
// the entity's PartitionKey known to be pk: only the RowKey is compared.
bool IsRowBlobNameOf(std::string_view name, std::string_view partition_prefix, std::string_view rk);
// The prefix of every table's blobs ("t/").
std::string AllTablesPrefix();
// The least name past every blob of `table` (and of no other table): where
// a listing of AllTablesPrefix() goes on to the next table.
std::string AfterTable(std::string_view table);
// The table a blob under AllTablesPrefix() belongs to (lowercase, as named),
// and whether it is one of its entity blobs; nullopt for other names.
struct TableOfBlob {
  std::string table;
  bool entity = false;
};
std::optional<TableOfBlob> TableOf(std::string_view name);

// True if `name` lies under some table's EntityPrefix (the blobs a cache
// may keep; locks and transaction records never do).
bool IsEntityBlobName(std::string_view name);
// True if `name` lies under some table's lock segment (a partition lock
// stripe, of a table or of an index's table).
bool IsLockBlobName(std::string_view name);

}  // namespace blobtable::internal::naming

#endif  // BLOBTABLE_MODEL_BLOB_NAMING_H_
