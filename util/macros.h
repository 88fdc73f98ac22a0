// SPDX-License-Identifier: Apache-2.0
// Internal helpers for propagating Status and Result (not part of the API).
#ifndef BLOBTABLE_UTIL_MACROS_H_
#define BLOBTABLE_UTIL_MACROS_H_

#include "blobtable/status.h"

#define BT_CONCAT_INNER_(a, b) a##b
#define BT_CONCAT_(a, b) BT_CONCAT_INNER_(a, b)

// Returns the Status of `expr` from the enclosing function if it failed.
#define BT_RETURN_IF_ERROR(expr)             \
  do {                                       \
    ::blobtable::Status bt_status_ = (expr); \
    if (!bt_status_.ok()) return bt_status_; \
  } while (0)

// `lhs = value of expr`, or returns its Status from the enclosing function.
#define BT_ASSIGN_OR_RETURN(lhs, expr) \
  BT_ASSIGN_OR_RETURN_IMPL_(BT_CONCAT_(bt_result_, __LINE__), lhs, expr)
#define BT_ASSIGN_OR_RETURN_IMPL_(tmp, lhs, expr) \
  auto tmp = (expr);                              \
  if (!tmp.ok()) return tmp.status();             \
  lhs = std::move(tmp).value()

namespace blobtable::internal {

// The Status of a call's answer, whether it is a Status or a Result<T>
// (for code that handles both alike: wrappers, logs, tests).
inline const Status& StatusOf(const Status& s) { return s; }
template <typename T>
const Status& StatusOf(const Result<T>& r) {
  return r.status();
}

}  // namespace blobtable::internal

#endif  // BLOBTABLE_UTIL_MACROS_H_
