// SPDX-License-Identifier: Apache-2.0
#include "tools/cli/suggest.h"

#include <algorithm>

namespace blobtable::cli {
namespace {

// Optimal string alignment distance: Levenshtein plus adjacent swaps.
size_t Distance(std::string_view a, std::string_view b) {
  std::vector<std::vector<size_t>> d(a.size() + 1, std::vector<size_t>(b.size() + 1));
  for (size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (size_t i = 1; i <= a.size(); ++i)
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  return d[a.size()][b.size()];
}

}  // namespace

std::string Nearest(std::string_view typed, const std::vector<std::string>& names) {
  std::string best;
  size_t best_distance = typed.size() <= 4 ? 1 : 2;
  for (const std::string& name : names) {
    const size_t d = Distance(typed, name);
    if (d <= best_distance && (best.empty() || d < best_distance)) {
      best = name;
      best_distance = d;
    }
  }
  return best;
}

}  // namespace blobtable::cli
