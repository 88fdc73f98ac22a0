// SPDX-License-Identifier: Apache-2.0
// The stored form of an entity: the body of its blob.
//
// msgpack array: ["bt.entity", format, PartitionKey, RowKey, timestamp_ticks,
//                 [[name, type, value], ...]]
// `format` is 1. A reader refuses formats it does not know (Corruption saying
// so) rather than guess; new formats add a number and keep reading old ones.
// Types are EdmType numbers; values: String str, Binary bin, Boolean bool,
// DateTime int (100 ns ticks since the Unix epoch), Double float64, Guid str,
// Int32/Int64 int.
#ifndef BLOBTABLE_MODEL_ENTITY_CODEC_H_
#define BLOBTABLE_MODEL_ENTITY_CODEC_H_

#include <string>
#include <string_view>
#include <vector>

#include "blobtable/entity.h"
#include "blobtable/entity_view.h"

namespace blobtable::internal {

inline constexpr int kEntityFormat = 1;

// Encodes a validated entity. InvalidArgument if the encoding exceeds
// kMaxEntityBytes (naming the entity). ETag is not stored (the blob has it).
Result<std::string> EncodeEntity(const Entity& entity);

// Decodes a blob body. Corruption naming `blob_name` if the body is not an
// entity of a known format or breaks what ValidateStoredEntity checks; never
// crashes. The limits (sizes, counts, name and key rules) are checked when
// an entity is written (EncodeEntity's callers validate), not on every
// read: an entity written by other means may exceed them, and is then
// refused when written back.
Result<Entity> DecodeEntity(std::string_view body, std::string_view blob_name);

// DecodeEntity into `out`, a new (default-constructed) Entity, which a hot
// read builds once and hands up by name (an Entity moved costs as much as a
// quarter of its decode). `out` is left as it was on an error.
Status DecodeEntityInto(std::string_view body, std::string_view blob_name, Entity& out);

// The same as a view of `body` (and of `etag`): its properties are put in
// `props` (cleared first), which the view refers to, as it refers to the
// body. No allocation once `props` has room. Errors as DecodeEntity's.
Result<EntityView> DecodeEntityView(std::string_view body, std::string_view blob_name,
                                    std::string_view etag, std::vector<PropertyView>& props);

// The view of DecodeEntityView keeping only the properties named in `only`:
// the keys, the Timestamp and those. What a scan tests its filter on before
// it decodes a row whole. The body's form is checked whole; the rules
// (ValidateStoredEntity) only for what is kept.
Result<EntityView> DecodeEntityViewPart(std::string_view body, std::string_view blob_name,
                                        const std::vector<std::string>& only,
                                        std::vector<PropertyView>& props);

// A view of `e` (with its ETag and stale flag), its properties put in
// `props` (cleared first); valid while `e` and `props` are.
EntityView ViewOf(const Entity& e, std::vector<PropertyView>& props);

// ViewOf's inverse: `view` copied into `out`, a new (default-constructed)
// Entity (EntityView::ToEntity, and a decode that fills its caller's result).
void CopyViewInto(const EntityView& view, Entity& out);

// What every entity read must be, whoever wrote it (key_rules.cc): keys,
// names and strings valid UTF-8, DateTimes in range, GUIDs of GUID form.
// InvalidArgument naming the first that is not.
Status ValidateStoredEntity(const Entity& entity);
Status ValidateStoredView(const EntityView& entity);

}  // namespace blobtable::internal

#endif  // BLOBTABLE_MODEL_ENTITY_CODEC_H_
