// SPDX-License-Identifier: Apache-2.0
// "Did you mean": the closest of some names to a mistyped one.
#ifndef BLOBTABLE_TOOLS_CLI_SUGGEST_H_
#define BLOBTABLE_TOOLS_CLI_SUGGEST_H_

#include <string>
#include <string_view>
#include <vector>

namespace blobtable::cli {

// The name in `names` nearest to `typed` by edit distance (insertions,
// deletions, substitutions, and swaps of two neighbours), if it is near
// enough to be a typo: at most 1 edit for names up to 4 characters, 2
// beyond. Empty if none is.
std::string Nearest(std::string_view typed, const std::vector<std::string>& names);

}  // namespace blobtable::cli

#endif  // BLOBTABLE_TOOLS_CLI_SUGGEST_H_
