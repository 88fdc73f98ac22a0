// SPDX-License-Identifier: Apache-2.0
// Why a --filter may have matched nothing (docs/cli.md#filters-that-match-nothing): Azure's
// rules stay (a comparison matches only a property of the literal's type,
// and names are case-sensitive), but a filter that could not match because
// of them is told so, with the fix.
#ifndef BLOBTABLE_TOOLS_FILTER_NOTES_H_
#define BLOBTABLE_TOOLS_FILTER_NOTES_H_

#include <string>
#include <vector>

#include "blobtable/entity.h"

namespace blobtable::cli {

// One note a comparison `NAME op LITERAL` of `filter` that can match none of
// `rows` because no row has NAME while some have it in other case ("no row
// has 'Total'; rows have 'total'"), or because every row with NAME holds
// another type than the literal's ("'total' is Edm.Double in the rows
// read; 100 is an Edm.Int32 literal: write 100.0"). Empty if none; a
// filter it cannot read gives no note.
std::vector<std::string> FilterMisses(const std::string& filter, const std::vector<Entity>& rows);

}  // namespace blobtable::cli

#endif  // BLOBTABLE_TOOLS_FILTER_NOTES_H_
