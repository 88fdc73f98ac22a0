// Pieces of the data model's validation (key_rules.cc) that other parts of
// the model use too.
#ifndef BLOBTABLE_MODEL_KEY_RULES_H_
#define BLOBTABLE_MODEL_KEY_RULES_H_

#include <string_view>

namespace blobtable {

// xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx, hexadecimal digits of either case.
bool IsGuid(std::string_view g);

}  // namespace blobtable

#endif  // BLOBTABLE_MODEL_KEY_RULES_H_
