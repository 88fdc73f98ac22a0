// SPDX-License-Identifier: Apache-2.0
// Python values <-> blobtable's (docs/python.md#types), and Status -> the
// exception of its code (docs/python.md#errors). Every function here needs
// the GIL.
#ifndef BLOBTABLE_PYTHON_SRC_CONVERT_H_
#define BLOBTABLE_PYTHON_SRC_CONVERT_H_

#include <pybind11/pybind11.h>

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "blobtable/entity.h"
#include "blobtable/entity_view.h"
#include "blobtable/status.h"

namespace blobtable::python {

namespace py = pybind11;

// Readies this file's use of CPython's datetime API (its table is a static
// of each file that includes datetime.h): called once, by the module's init.
void InitConversions();

// Raises the exception of `status`'s code (blobtable._types.ERRORS).
[[noreturn]] void Raise(const Status& status);
// The value of a Result, or raises its failure.
template <typename T>
T Take(Result<T>&& result) {
  if (!result.ok()) Raise(result.status());
  return std::move(*result);
}
inline void Check(const Status& status) {
  if (!status.ok()) Raise(status);
}

// A Python value as an EDM value. `int32_before`: the entity read this
// property as Int32 (a plain int that fits stays Int32). Raises TypeError
// for a value of no EDM type, OverflowError for an int outside Int64, and
// ValueError for a naive datetime.
PropertyValue ToValue(std::string_view name, py::handle value, bool int32_before);
// A property's value as Python's (an Int32 as a plain int).
py::object FromProperty(const PropertyView& property);

// A Mapping with the items "PartitionKey" and "RowKey" (a blobtable.Entity
// or a plain dict) as an Entity; its etag attribute, if any, too.
Entity ToEntity(py::handle entity);
// Python strings of the property names met so far: a page's rows mostly
// share their names, so each is made (and hashed) once a page, not once a row.
class NameCache {
 public:
  py::handle Get(std::string_view name);

 private:
  std::vector<std::pair<std::string, py::object>> names_;
};

// A new blobtable.Entity of `entity` (`names`: a cache to share between the
// entities of a page, or none); of a row seen in place, without copying it.
py::object FromEntity(const Entity& entity, NameCache* names = nullptr);
py::object FromView(const EntityView& entity, NameCache* names = nullptr);
// Sets `target`'s etag and timestamp (a blobtable.Entity written) from what
// storage stored; a plain dict is left as it is.
void TakeStored(py::handle target, const Entity& stored);

// A datetime (aware) as 100-ns ticks since 1970, and back.
int64_t TicksOf(py::handle when);
py::object DateTimeOf(DateTime when);

// The status of a Python exception raised in a caller's function that
// blobtable calls back (Table::Update, Store::RunTransaction): a
// blobtable.Error gives its code (and may be retried); any other exception
// is kept in `pending` and stops the call with Internal.
Status StatusOfPythonError(py::error_already_set& e,
                           std::shared_ptr<py::error_already_set>* pending);

}  // namespace blobtable::python

#endif  // BLOBTABLE_PYTHON_SRC_CONVERT_H_
