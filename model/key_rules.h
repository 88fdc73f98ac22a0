// SPDX-License-Identifier: Apache-2.0
// Pieces of the data model's validation (key_rules.cc) that other parts of
// the model use too.
#ifndef BLOBTABLE_MODEL_KEY_RULES_H_
#define BLOBTABLE_MODEL_KEY_RULES_H_

#include <string>
#include <string_view>

#include "blobtable/entity.h"

namespace blobtable::internal {

// A property name's rules (ValidateEntity's): 1-255 characters, a letter
// or '_' first, then letters, digits or '_'; not a reserved name.
Status ValidatePropertyNameRules(std::string_view name);

// A key byte ValidateKey refuses wherever it stands: / \\ # ? and the
// ASCII control characters. Bytes from 0x80 up start longer characters,
// judged (UTF-8, C1 controls) by ValidateKey; every other byte is allowed.
constexpr bool IsForbiddenKeyByte(unsigned char b) {
  return b == '/' || b == '\\' || b == '#' || b == '?' || b <= 0x1F || b == 0x7F;
}
// True if ValidateKey accepts byte `b` without looking at its neighbours.
constexpr bool IsPlainKeyByte(unsigned char b) { return b < 0x80 && !IsForbiddenKeyByte(b); }

// `s` in single quotes for a message, as a terminal can show it whatever it
// holds: control characters (C0, DEL, C1) and bytes that are not UTF-8
// escaped (\x1b, \u0085), cut after 64 bytes with "...".
std::string QuotedForMessage(std::string_view s);

// xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx, hexadecimal digits of either case.
bool IsGuid(std::string_view g);

// The ETag a write "at the entity's own ETag" (Replace/Merge without one,
// on a Table or in a Transaction) conditions on: entity.etag(), or
// InvalidArgument saying that `call` needs one.
Result<std::string> OwnETag(const Entity& entity, std::string_view call);

}  // namespace blobtable::internal

#endif  // BLOBTABLE_MODEL_KEY_RULES_H_
