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

// xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx, hexadecimal digits of either case.
bool IsGuid(std::string_view g);

// The ETag a write "at the entity's own ETag" (Replace/Merge without one,
// on a Table or in a Transaction) conditions on: entity.etag(), or
// InvalidArgument saying that `call` needs one.
Result<std::string> OwnETag(const Entity& entity, std::string_view call);

}  // namespace blobtable::internal

#endif  // BLOBTABLE_MODEL_KEY_RULES_H_
