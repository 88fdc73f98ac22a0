// SPDX-License-Identifier: Apache-2.0
// Entities in Azure Tables' JSON form (odata=minimalmetadata), for the CLI:
//   {"odata.etag": "...", "PartitionKey": "p", "RowKey": "r",
//    "Timestamp": "2024-05-01T12:00:00.0000000Z", "Timestamp@odata.type": "Edm.DateTime",
//    "Name": "text", "Count": 3, "Big": "9007199254740993", "Big@odata.type": "Edm.Int64"}
// Unannotated JSON maps to String, Boolean, Int32 (integers that fit) and
// Double; Int64, Binary (base64), Guid and DateTime need their annotation.
#ifndef BLOBTABLE_TOOLS_ENTITY_JSON_H_
#define BLOBTABLE_TOOLS_ENTITY_JSON_H_

#include <nlohmann/json.hpp>

#include <string>
#include <string_view>

#include "blobtable/entity.h"

namespace blobtable::cli {

// InvalidArgument naming the property on anything that does not convert.
// The "odata.etag" member, if any, is returned in `*etag` (may be null).
Result<Entity> EntityFromJson(const nlohmann::json& json, std::string* etag);
// `text` parsed as JSON; InvalidArgument "<what> is not valid JSON: ... at
// line L, column C: ..." (the parser's words: where, and what it expected)
// if it is not. `one_line`: `text` is a line of a larger input, whose number
// the caller gives: the message says only the column.
Result<nlohmann::json> ParseJson(std::string_view text, std::string_view what,
                                 bool one_line = false);
nlohmann::ordered_json EntityToJson(const Entity& entity);
// Adds a command line's property, `NAME=VALUE` (a String) or
// `NAME:TYPE=VALUE` (TYPE: Edm.Int64, int64, bool, ...), to the entity JSON
// `j` as EntityFromJson reads it; InvalidArgument "<command>: ..." for a bad
// form, an unknown type, a property given twice or a value not of its type.
Status AddPropertyArg(nlohmann::json& j, const std::string& arg, std::string_view command);
// A property's type as the command line may write it ("Edm.Int64", "int64",
// "INT64", "bool"): its Edm name; empty if it names none.
std::string EdmTypeNamed(std::string_view given);
// Adds `name` with the text `value` read as an Edm `type` (Int32, Double and
// Boolean as JSON literals; Double also NaN, Infinity, -Infinity; the
// others as their strings) to the entity JSON `j`, with its annotation;
// InvalidArgument "property 'NAME': ..." for a value not of its type.
Status AddTypedProperty(nlohmann::json& j, const std::string& name, const std::string& type,
                        const std::string& value);

}  // namespace blobtable::cli

#endif  // BLOBTABLE_TOOLS_ENTITY_JSON_H_
