// SPDX-License-Identifier: Apache-2.0
// Python values <-> blobtable's (convert.h).
#include "python/src/convert.h"

#include <datetime.h>

#include <chrono>
#include <string>
#include <string_view>

namespace blobtable::python {
namespace {

// What blobtable._types defines, looked up once. Never destroyed: it lives
// as long as the interpreter (a destructor at exit could run after it).
struct Types {
  py::object entity, int32, int64, guid, datetime, errors, error, epoch, uuid;
  py::str etag = "etag", ticks = "_ticks", stale = "stale", int32_names = "_int32";
  py::str partition_key = "PartitionKey", row_key = "RowKey";
};

const Types& T() {
  static Types* types = [] {
    py::module_ m = py::module_::import("blobtable._types");
    auto* t = new Types();
    t->entity = m.attr("Entity");
    t->int32 = m.attr("Int32");
    t->int64 = m.attr("Int64");
    t->guid = m.attr("Guid");
    t->datetime = m.attr("DateTime");
    t->errors = m.attr("ERRORS");
    t->error = m.attr("Error");
    t->epoch = m.attr("EPOCH");
    t->uuid = m.attr("UUID");
    return t;
  }();
  return *types;
}

bool IsA(py::handle v, const py::object& type) {
  return PyObject_IsInstance(v.ptr(), type.ptr()) == 1;
}

[[noreturn]] void ThrowPython(PyObject* type, const std::string& message) {
  PyErr_SetString(type, message.c_str());
  throw py::error_already_set();
}

std::string Utf8(py::handle s) {
  Py_ssize_t n = 0;
  const char* p = PyUnicode_AsUTF8AndSize(s.ptr(), &n);
  if (p == nullptr) throw py::error_already_set();  // a lone surrogate
  return std::string(p, static_cast<size_t>(n));
}

// The remainder below a microsecond of a blobtable.DateTime (0 for a plain datetime).
int64_t RemainderOf(py::handle when) {
  if (!IsA(when, T().datetime)) return 0;
  py::object r = py::getattr(when, "ticks_remainder", py::int_(0));
  int64_t rem = r.cast<int64_t>();
  if (rem < 0 || rem > 9) ThrowPython(PyExc_ValueError, "ticks_remainder must be 0-9");
  return rem;
}

Code CodeOfName(std::string_view name) {
  for (int c = 1; c <= static_cast<int>(Code::kOutcomeUnknown); ++c)
    if (CodeName(static_cast<Code>(c)) == name) return static_cast<Code>(c);
  return Code::kInternal;
}

}  // namespace

void InitConversions() {
  PyDateTime_IMPORT;
  if (PyDateTimeAPI == nullptr) throw py::error_already_set();
}

void Raise(const Status& status) {
  std::string name(CodeName(status.code()));
  py::object cls = T().errors.attr("get")(name, T().error);
  py::object exc = cls(status.message(), name, status.http_status(), status.storage_code());
  PyErr_SetObject(cls.ptr(), exc.ptr());
  throw py::error_already_set();
}

int64_t TicksOf(py::handle when) {
  if (!PyDateTime_Check(when.ptr())) ThrowPython(PyExc_TypeError, "not a datetime");
  // Naive: no tzinfo, or one whose utcoffset() is None (Python's own rule).
  if (when.attr("utcoffset")().is_none())
    ThrowPython(PyExc_ValueError,
                "a naive datetime has no time zone: give an aware one (tzinfo=timezone.utc)");
  py::object delta = py::reinterpret_borrow<py::object>(when) - T().epoch;
  PyObject* d = delta.ptr();
  int64_t micros =
      (int64_t{PyDateTime_DELTA_GET_DAYS(d)} * 86'400 + PyDateTime_DELTA_GET_SECONDS(d)) *
          1'000'000 +
      PyDateTime_DELTA_GET_MICROSECONDS(d);
  return micros * 10 + RemainderOf(when);
}

py::object DateTimeOf(DateTime when) {
  using namespace std::chrono;
  int64_t ticks = when.time_since_epoch().count();
  int64_t micros = ticks >= 0 ? ticks / 10 : -((-ticks + 9) / 10);  // floor
  int64_t remainder = ticks - micros * 10;
  sys_time<microseconds> t{microseconds{micros}};
  sys_days day = floor<days>(t);
  year_month_day ymd{day};
  hh_mm_ss<microseconds> hms{t - day};
  PyObject* dt = PyDateTimeAPI->DateTime_FromDateAndTime(
      static_cast<int>(ymd.year()), static_cast<int>(static_cast<unsigned>(ymd.month())),
      static_cast<int>(static_cast<unsigned>(ymd.day())), static_cast<int>(hms.hours().count()),
      static_cast<int>(hms.minutes().count()), static_cast<int>(hms.seconds().count()),
      static_cast<int>(hms.subseconds().count()), PyDateTime_TimeZone_UTC,
      PyDateTimeAPI->DateTimeType);
  if (dt == nullptr) throw py::error_already_set();
  py::object result = py::reinterpret_steal<py::object>(dt);
  if (remainder != 0) return T().datetime.attr("_from")(result, remainder);
  return result;
}

PropertyValue ToValue(std::string_view name, py::handle value, bool int32_before) {
  PyObject* v = value.ptr();
  auto where = [&] { return "property '" + std::string(name) + "': "; };
  if (PyBool_Check(v)) return v == Py_True;
  if (PyLong_Check(v)) {
    int overflow = 0;
    long long x = PyLong_AsLongLongAndOverflow(v, &overflow);
    if (overflow != 0) ThrowPython(PyExc_OverflowError, where() + "an int outside Int64's range");
    if (x == -1 && PyErr_Occurred()) throw py::error_already_set();
    bool fits = x >= INT32_MIN && x <= INT32_MAX;
    if (IsA(value, T().int32) || (int32_before && fits && !IsA(value, T().int64)))
      return static_cast<int32_t>(x);
    return static_cast<int64_t>(x);
  }
  if (PyFloat_Check(v)) return PyFloat_AS_DOUBLE(v);
  if (PyUnicode_Check(v)) {
    if (IsA(value, T().guid)) return Guid{Utf8(value)};
    return Utf8(value);
  }
  if (PyBytes_Check(v))
    return Binary{std::string(PyBytes_AS_STRING(v), static_cast<size_t>(PyBytes_GET_SIZE(v)))};
  if (PyByteArray_Check(v))
    return Binary{
        std::string(PyByteArray_AS_STRING(v), static_cast<size_t>(PyByteArray_GET_SIZE(v)))};
  if (PyMemoryView_Check(v)) {
    Py_buffer view;
    if (PyObject_GetBuffer(v, &view, PyBUF_C_CONTIGUOUS) != 0) throw py::error_already_set();
    Binary b{std::string(static_cast<const char*>(view.buf), static_cast<size_t>(view.len))};
    PyBuffer_Release(&view);
    return b;
  }
  if (PyDateTime_Check(v)) {
    try {
      return DateTime(Ticks(TicksOf(value)));
    } catch (py::error_already_set& e) {
      if (!e.matches(PyExc_ValueError)) throw;
      ThrowPython(PyExc_ValueError, where() + py::str(e.value()).cast<std::string>());
    }
  }
  if (IsA(value, T().uuid)) return Guid{py::str(value).cast<std::string>()};
  if (value.is_none())
    ThrowPython(PyExc_TypeError,
                where() + "None has no EDM type (to drop a property, leave it out)");
  ThrowPython(PyExc_TypeError, where() + "a " + std::string(Py_TYPE(v)->tp_name) +
                                   " has no EDM type (str, bytes, bool, int, float, datetime, "
                                   "uuid.UUID, or blobtable.Int32/Int64/Guid/DateTime)");
}

py::object FromProperty(const PropertyView& p) {
  switch (p.type()) {
    case EdmType::kString: {
      std::string_view s = p.text();
      return py::reinterpret_steal<py::object>(
          PyUnicode_DecodeUTF8(s.data(), static_cast<Py_ssize_t>(s.size()), "surrogateescape"));
    }
    case EdmType::kBinary: return py::bytes(p.bytes().data(), p.bytes().size());
    case EdmType::kBoolean: return py::bool_(p.boolean());
    case EdmType::kDateTime: return DateTimeOf(p.date_time());
    case EdmType::kDouble: return py::float_(p.number());
    case EdmType::kGuid: {
      std::string_view g = p.text();
      py::str text(g.data(), g.size());
      // uuid.UUID where its text is the stored one (lowercase), else the
      // text itself, so that writing it back stores the same bytes.
      bool lower = g.find_first_of("ABCDEF") == std::string_view::npos;
      return lower ? T().uuid(text) : T().guid(text);
    }
    case EdmType::kInt32:
    case EdmType::kInt64: return py::int_(p.integer());
  }
  return py::none();
}

Entity ToEntity(py::handle entity) {
  if (!PyMapping_Check(entity.ptr()) || PyUnicode_Check(entity.ptr()))
    ThrowPython(PyExc_TypeError, "an entity is a Mapping (blobtable.Entity or a dict)");
  const Types& t = T();
  py::object int32_names = py::getattr(entity, t.int32_names, py::none());
  auto read_as_int32 = [&](py::handle name) {
    return !int32_names.is_none() && PySet_Contains(int32_names.ptr(), name.ptr()) == 1;
  };
  py::object items = py::reinterpret_steal<py::object>(PyMapping_Items(entity.ptr()));
  if (!items) throw py::error_already_set();
  Entity e;
  bool has_pk = false, has_rk = false;
  for (py::handle item : items) {
    py::handle key = PyTuple_GET_ITEM(item.ptr(), 0);
    py::handle value = PyTuple_GET_ITEM(item.ptr(), 1);
    if (!PyUnicode_Check(key.ptr())) ThrowPython(PyExc_TypeError, "property names are str");
    std::string name = Utf8(key);
    if (name == "PartitionKey" || name == "RowKey") {
      if (!PyUnicode_Check(value.ptr())) ThrowPython(PyExc_TypeError, name + " is a str");
      (name == "PartitionKey" ? has_pk : has_rk) = true;
      if (name == "PartitionKey")
        e.set_partition_key(Utf8(value));
      else
        e.set_row_key(Utf8(value));
      continue;
    }
    e.Set(std::move(name), ToValue(Utf8(key), value, read_as_int32(key)));
  }
  if (!has_pk || !has_rk)
    Raise(Status::InvalidArgument(std::string("the entity has no ") +
                                  (has_pk ? "RowKey" : "PartitionKey") + " item"));
  py::object etag = py::getattr(entity, t.etag, py::none());
  if (!etag.is_none()) e.set_etag(Utf8(etag));
  return e;
}

py::handle NameCache::Get(std::string_view name) {
  for (const auto& [text, object] : names_)
    if (text == name) return object;
  py::str object(name.data(), name.size());
  PyObject* interned = object.release().ptr();
  PyUnicode_InternInPlace(&interned);
  names_.emplace_back(std::string(name), py::reinterpret_steal<py::object>(interned));
  return names_.back().second;
}

py::object FromView(const EntityView& entity, NameCache* names) {
  const Types& t = T();
  NameCache own;
  if (names == nullptr) names = &own;
  auto* type = reinterpret_cast<PyTypeObject*>(t.entity.ptr());
  py::tuple no_args;
  py::object obj = py::reinterpret_steal<py::object>(type->tp_new(type, no_args.ptr(), nullptr));
  if (!obj) throw py::error_already_set();
  PyObject* d = obj.ptr();
  auto set = [&](py::handle key, py::handle value) {
    if (PyDict_SetItem(d, key.ptr(), value.ptr()) != 0) throw py::error_already_set();
  };
  auto str = [](std::string_view s) { return py::str(s.data(), s.size()); };
  set(t.partition_key, str(entity.partition_key()));
  set(t.row_key, str(entity.row_key()));
  py::object int32_names = py::none();
  for (const PropertyView& p : entity.properties()) {
    py::handle key = names->Get(p.name());
    set(key, FromProperty(p));
    if (p.type() == EdmType::kInt32) {
      if (int32_names.is_none())
        int32_names = py::reinterpret_steal<py::object>(PyFrozenSet_New(nullptr));
      PySet_Add(int32_names.ptr(), key.ptr());
    }
  }
  obj.attr(t.etag) =
      entity.etag().empty() ? py::object(py::none()) : py::object(str(entity.etag()));
  // The Timestamp as its ticks: made a datetime only if it is read
  // (blobtable.Entity.timestamp), which a query's rows mostly are not.
  obj.attr(t.ticks) = entity.timestamp() == DateTime{}
                          ? py::object(py::none())
                          : py::object(py::int_(entity.timestamp().time_since_epoch().count()));
  obj.attr(t.stale) = py::bool_(entity.stale());
  obj.attr(t.int32_names) = int32_names;
  return obj;
}

py::object FromEntity(const Entity& entity, NameCache* names) {
  std::vector<PropertyView> properties;
  properties.reserve(entity.properties().size());
  for (const auto& [name, value] : entity.properties()) properties.emplace_back(name, value);
  EntityView view(entity.partition_key(), entity.row_key(), entity.timestamp(), entity.etag(),
                  properties);
  view.set_stale(entity.stale());
  return FromView(view, names);
}

void TakeStored(py::handle target, const Entity& stored) {
  const Types& t = T();
  if (!IsA(target, t.entity)) return;
  target.attr(t.etag) = py::str(stored.etag());
  target.attr(t.ticks) = py::int_(stored.timestamp().time_since_epoch().count());
  target.attr(t.stale) = py::bool_(false);
  // The Int32s as written, as a read would have named them, so that
  // changing and writing it again keeps them Int32 (a name it no longer
  // holds stays named, as after a read: the rule follows the name).
  py::set names;
  py::object before = py::getattr(target, t.int32_names, py::none());
  if (!before.is_none())
    for (py::handle name : before) names.add(name);
  for (const auto& [name, value] : stored.properties()) {
    py::str key(name.data(), name.size());
    if (std::holds_alternative<int32_t>(value))
      names.add(key);
    else if (PySet_Discard(names.ptr(), key.ptr()) < 0)
      throw py::error_already_set();
  }
  target.attr(t.int32_names) =
      names.empty() ? py::object(py::none())
                    : py::reinterpret_steal<py::object>(PyFrozenSet_New(names.ptr()));
}

Status StatusOfPythonError(py::error_already_set& e,
                           std::shared_ptr<py::error_already_set>* pending) {
  if (e.matches(T().error)) {
    py::object exc = e.value();
    Code code = CodeOfName(py::str(exc.attr("code")).cast<std::string>());
    return Status::FromStorage(code, py::getattr(exc, "http_status", py::int_(0)).cast<int>(),
                               py::str(py::getattr(exc, "storage_code", py::str(""))),
                               py::str(py::getattr(exc, "message", py::str(exc))));
  }
  *pending = std::make_shared<py::error_already_set>(std::move(e));
  return Status::Internal("the function raised a Python exception");
}

}  // namespace blobtable::python
