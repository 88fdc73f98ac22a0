// SPDX-License-Identifier: Apache-2.0
// Query filters in Azure Tables' OData syntax ($filter), parsed once and
// evaluated on entities (docs/api.md#filters).
//
//   expr       := or
//   or         := and ('or' and)*
//   and        := unary ('and' unary)*
//   unary      := 'not' unary | '(' expr ')' | comparison
//   comparison := operand op operand    (one side a property, the other a literal)
//   op         := eq | ne | gt | ge | lt | le
//   literal    := 'text' ('' for a quote) | 123 (Int32) | 123L (Int64) | 1.5, 1e3 (Double)
//               | true | false | datetime'2026-01-01T00:00:00Z' | guid'...'
//               | X'0A0B' | binary'0A0B'
//   property   := PartitionKey | RowKey | Timestamp | any property name
//
// Keywords are lower case, as in Azure. A comparison is true only between
// values of the same type: with a missing property, or one of another type,
// it is false, and not, and, or combine results as plain booleans (so
// `not (n eq 5)` is true for an entity without n). Strings and binaries
// compare byte by byte (ordinal UTF-8, the order of keys); Booleans false <
// true; a Double NaN compares false with anything.
#ifndef BLOBTABLE_MODEL_FILTER_H_
#define BLOBTABLE_MODEL_FILTER_H_

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "blobtable/entity.h"
#include "blobtable/entity_view.h"
#include "blobtable/status.h"

namespace blobtable::internal {

enum class CompareOp { kEq, kNe, kGt, kGe, kLt, kLe };

// A parsed filter: a tree of comparisons under not, and, or.
struct FilterNode {
  enum class Kind { kCompare, kNot, kAnd, kOr };
  Kind kind = Kind::kCompare;
  // kCompare: `property op literal`.
  std::string property;
  CompareOp op = CompareOp::kEq;
  PropertyValue literal;
  // kNot: one child; kAnd, kOr: two.
  std::vector<std::unique_ptr<FilterNode>> children;
};

// The key range a filter's top-level conjunction narrows a query to: rows
// outside it cannot match. Unset members narrow nothing.
struct FilterKeyRange {
  std::optional<std::string> partition_key;  // PartitionKey eq '...'
  std::optional<std::string> row_key_from;   // inclusive (gt is checked by the filter)
  std::optional<std::string> row_key_to;     // inclusive
  bool empty = false;                        // contradictory: nothing matches
};

// What a filter may hold (Filter::Parse refuses more, InvalidArgument): its
// tree is walked recursively, and these bound its depth. Azure's own limit
// is 15 comparisons.
inline constexpr int kMaxFilterNesting = 64;       // parentheses and nots, one inside another
inline constexpr int kMaxFilterComparisons = 100;  // comparisons in all

class Filter {
 public:
  // InvalidArgument naming the 1-based character position of the error.
  static Result<Filter> Parse(std::string_view text);

  // Whether the entity matches; the view form compares each value where it
  // lies (a scan's rows, decoded in place, are never copied to be tested).
  bool Matches(const EntityView& entity) const;
  bool Matches(const Entity& entity) const;
  const FilterNode& root() const { return *root_; }
  FilterKeyRange KeyRange() const;
  // The properties it reads other than PartitionKey, RowKey and Timestamp,
  // sorted, each once: an entity with only those (DecodeEntityViewPart) and its
  // keys matches exactly when the whole entity does.
  std::vector<std::string> Properties() const;
  // The filter written back in the syntax above (fully parenthesized).
  std::string ToString() const;

 private:
  explicit Filter(std::shared_ptr<const FilterNode> root) : root_(std::move(root)) {}
  std::shared_ptr<const FilterNode> root_;
};

// `a op b` for two values of the same type; false for different types.
bool CompareValues(const PropertyValue& a, CompareOp op, const PropertyValue& b);

}  // namespace blobtable::internal

#endif  // BLOBTABLE_MODEL_FILTER_H_
