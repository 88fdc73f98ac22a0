// SPDX-License-Identifier: Apache-2.0
// The C API: entities and their typed properties (include/blobtable/c.h).
#include <iterator>
#include <string>
#include <variant>

#include "bindings/c/c_handles.h"

namespace blobtable::internal::c_api {
namespace {

// What an accessor of a NULL entity hands back.
const std::string kEmpty;

// Sets property (name, name_len) of `entity` to `value`.
blobtable_code SetProperty(blobtable_entity* entity, const char* name, size_t name_len,
                           PropertyValue value) {
  std::string_view n;
  if (entity == nullptr) return NullArgument("entity");
  if (!View(name, name_len, &n)) return BadString("name");
  entity->entity.Set(std::string(n), std::move(value));
  return Ok();
}

// The property `name` of `entity` as T (or, for `also`, an Int32): NotFound,
// or InvalidArgument naming both types.
template <typename T>
blobtable_code Find(const blobtable_entity* entity, const char* name, size_t name_len,
                    const PropertyValue** found) {
  std::string_view n;
  if (entity == nullptr) return NullArgument("entity");
  if (!View(name, name_len, &n)) return BadString("name");
  const PropertyValue* v = entity->entity.Find(n);
  if (v == nullptr)
    return Record(Status::NotFound("the entity has no property '" + std::string(n) + "'"));
  bool widens = (std::is_same_v<T, int64_t> ||
                 std::is_same_v<T, double>)&&std::holds_alternative<int32_t>(*v);
  if (!std::holds_alternative<T>(*v) && !widens) {
    PropertyValue wanted = T{};
    return Invalid("property '" + std::string(n) + "' is " + std::string(EdmTypeName(TypeOf(*v))) +
                   ", not " + std::string(EdmTypeName(TypeOf(wanted))));
  }
  *found = v;
  return Ok();
}

template <typename T, typename Out>
blobtable_code GetNumber(const blobtable_entity* entity, const char* name, size_t name_len,
                         Out* value) {
  const PropertyValue* v = nullptr;
  if (value == nullptr) return NullArgument("value");
  if (blobtable_code c = Find<T>(entity, name, name_len, &v); c != BLOBTABLE_OK) return c;
  if (auto* narrow = std::get_if<int32_t>(v)) {
    *value = static_cast<Out>(*narrow);
  } else {
    *value = static_cast<Out>(std::get<T>(*v));
  }
  return BLOBTABLE_OK;
}

}  // namespace
}  // namespace blobtable::internal::c_api

using namespace blobtable::internal::c_api;  // NOLINT: the entry points below are C's
using blobtable::Binary;
using blobtable::DateTime;
using blobtable::Entity;
using blobtable::Guid;
using blobtable::PropertyValue;
using blobtable::Status;
using blobtable::Ticks;

extern "C" {

blobtable_entity* blobtable_entity_create(const char* pk, size_t pk_len, const char* rk,
                                          size_t rk_len) {
  std::string_view p, r;
  if (!View(pk, pk_len, &p) || !View(rk, rk_len, &r)) return nullptr;
  try {
    return NewEntity(Entity(std::string(p), std::string(r)));
  } catch (...) {
    return nullptr;
  }
}

blobtable_entity* blobtable_entity_clone(const blobtable_entity* entity) {
  if (entity == nullptr) return nullptr;
  try {
    return NewEntity(entity->entity);
  } catch (...) {
    return nullptr;
  }
}

void blobtable_entity_free(blobtable_entity* entity) { delete entity; }

const char* blobtable_entity_partition_key(const blobtable_entity* entity, size_t* len) {
  return entity == nullptr ? Out(kEmpty, len) : Out(entity->entity.partition_key(), len);
}
const char* blobtable_entity_row_key(const blobtable_entity* entity, size_t* len) {
  return entity == nullptr ? Out(kEmpty, len) : Out(entity->entity.row_key(), len);
}
const char* blobtable_entity_etag(const blobtable_entity* entity, size_t* len) {
  return entity == nullptr ? Out(kEmpty, len) : Out(entity->entity.etag(), len);
}

blobtable_code blobtable_entity_set_etag(blobtable_entity* entity, const char* etag, size_t len) {
  return Call([&] {
    std::string_view v;
    if (entity == nullptr) return NullArgument("entity");
    if (!View(etag, len, &v)) return BadString("etag");
    entity->entity.set_etag(std::string(v));
    return Ok();
  });
}

int64_t blobtable_entity_timestamp(const blobtable_entity* entity) {
  return entity == nullptr ? 0 : entity->entity.timestamp().time_since_epoch().count();
}
int blobtable_entity_stale(const blobtable_entity* entity) {
  return entity != nullptr && entity->entity.stale();
}

blobtable_code blobtable_entity_set_string(blobtable_entity* entity, const char* name,
                                           size_t name_len, const char* value, size_t len) {
  return Call([&] {
    std::string_view v;
    if (!View(value, len, &v)) return BadString("value");
    return SetProperty(entity, name, name_len, PropertyValue(std::string(v)));
  });
}

blobtable_code blobtable_entity_set_binary(blobtable_entity* entity, const char* name,
                                           size_t name_len, const void* value, size_t len) {
  return Call([&] {
    std::string_view v;
    if (!View(static_cast<const char*>(value), len, &v)) return BadString("value");
    return SetProperty(entity, name, name_len, PropertyValue(Binary{std::string(v)}));
  });
}

blobtable_code blobtable_entity_set_bool(blobtable_entity* entity, const char* name,
                                         size_t name_len, int value) {
  return Call([&] { return SetProperty(entity, name, name_len, PropertyValue(value != 0)); });
}

blobtable_code blobtable_entity_set_datetime(blobtable_entity* entity, const char* name,
                                             size_t name_len, int64_t ticks) {
  return Call(
      [&] { return SetProperty(entity, name, name_len, PropertyValue(DateTime(Ticks(ticks)))); });
}

blobtable_code blobtable_entity_set_double(blobtable_entity* entity, const char* name,
                                           size_t name_len, double value) {
  return Call([&] { return SetProperty(entity, name, name_len, PropertyValue(value)); });
}

blobtable_code blobtable_entity_set_guid(blobtable_entity* entity, const char* name,
                                         size_t name_len, const char* value, size_t len) {
  return Call([&] {
    std::string_view v;
    if (!View(value, len, &v)) return BadString("value");
    return SetProperty(entity, name, name_len, PropertyValue(Guid{std::string(v)}));
  });
}

blobtable_code blobtable_entity_set_int32(blobtable_entity* entity, const char* name,
                                          size_t name_len, int32_t value) {
  return Call([&] { return SetProperty(entity, name, name_len, PropertyValue(value)); });
}

blobtable_code blobtable_entity_set_int64(blobtable_entity* entity, const char* name,
                                          size_t name_len, int64_t value) {
  return Call([&] { return SetProperty(entity, name, name_len, PropertyValue(value)); });
}

blobtable_code blobtable_entity_remove(blobtable_entity* entity, const char* name,
                                       size_t name_len) {
  return Call([&] {
    std::string_view n;
    if (entity == nullptr) return NullArgument("entity");
    if (!View(name, name_len, &n)) return BadString("name");
    if (!entity->entity.Remove(n))
      return Record(Status::NotFound("the entity has no property '" + std::string(n) + "'"));
    return Ok();
  });
}

size_t blobtable_entity_count(const blobtable_entity* entity) {
  return entity == nullptr ? 0 : entity->entity.properties().size();
}

blobtable_code blobtable_entity_property(const blobtable_entity* entity, size_t i,
                                         const char** name, size_t* name_len,
                                         blobtable_type* type) {
  return Call([&] {
    if (entity == nullptr) return NullArgument("entity");
    const auto& properties = entity->entity.properties();
    if (i >= properties.size())
      return Invalid("property " + std::to_string(i) + " of " + std::to_string(properties.size()));
    auto it = std::next(properties.begin(), static_cast<std::ptrdiff_t>(i));
    if (name != nullptr)
      *name = Out(it->first, name_len);
    else if (name_len != nullptr)
      *name_len = it->first.size();
    if (type != nullptr) *type = static_cast<blobtable_type>(it->second.index());
    return Ok();
  });
}

blobtable_code blobtable_entity_type(const blobtable_entity* entity, const char* name,
                                     size_t name_len, blobtable_type* type) {
  return Call([&] {
    std::string_view n;
    if (entity == nullptr) return NullArgument("entity");
    if (type == nullptr) return NullArgument("type");
    if (!View(name, name_len, &n)) return BadString("name");
    const PropertyValue* v = entity->entity.Find(n);
    if (v == nullptr)
      return Record(Status::NotFound("the entity has no property '" + std::string(n) + "'"));
    *type = static_cast<blobtable_type>(v->index());
    return Ok();
  });
}

blobtable_code blobtable_entity_get_string(const blobtable_entity* entity, const char* name,
                                           size_t name_len, const char** value, size_t* len) {
  return Call([&] {
    const PropertyValue* v = nullptr;
    if (value == nullptr) return NullArgument("value");
    if (blobtable_code c = Find<std::string>(entity, name, name_len, &v); c != BLOBTABLE_OK)
      return c;
    *value = Out(std::get<std::string>(*v), len);
    return BLOBTABLE_OK;
  });
}

blobtable_code blobtable_entity_get_binary(const blobtable_entity* entity, const char* name,
                                           size_t name_len, const void** value, size_t* len) {
  return Call([&] {
    const PropertyValue* v = nullptr;
    if (value == nullptr) return NullArgument("value");
    if (blobtable_code c = Find<Binary>(entity, name, name_len, &v); c != BLOBTABLE_OK) return c;
    *value = Out(std::get<Binary>(*v).bytes, len);
    return BLOBTABLE_OK;
  });
}

blobtable_code blobtable_entity_get_bool(const blobtable_entity* entity, const char* name,
                                         size_t name_len, int* value) {
  return Call([&] {
    const PropertyValue* v = nullptr;
    if (value == nullptr) return NullArgument("value");
    if (blobtable_code c = Find<bool>(entity, name, name_len, &v); c != BLOBTABLE_OK) return c;
    *value = std::get<bool>(*v) ? 1 : 0;
    return BLOBTABLE_OK;
  });
}

blobtable_code blobtable_entity_get_datetime(const blobtable_entity* entity, const char* name,
                                             size_t name_len, int64_t* ticks) {
  return Call([&] {
    const PropertyValue* v = nullptr;
    if (ticks == nullptr) return NullArgument("ticks");
    if (blobtable_code c = Find<DateTime>(entity, name, name_len, &v); c != BLOBTABLE_OK) return c;
    *ticks = std::get<DateTime>(*v).time_since_epoch().count();
    return BLOBTABLE_OK;
  });
}

blobtable_code blobtable_entity_get_double(const blobtable_entity* entity, const char* name,
                                           size_t name_len, double* value) {
  return Call([&] { return GetNumber<double>(entity, name, name_len, value); });
}

blobtable_code blobtable_entity_get_guid(const blobtable_entity* entity, const char* name,
                                         size_t name_len, const char** value, size_t* len) {
  return Call([&] {
    const PropertyValue* v = nullptr;
    if (value == nullptr) return NullArgument("value");
    if (blobtable_code c = Find<Guid>(entity, name, name_len, &v); c != BLOBTABLE_OK) return c;
    *value = Out(std::get<Guid>(*v).value, len);
    return BLOBTABLE_OK;
  });
}

blobtable_code blobtable_entity_get_int32(const blobtable_entity* entity, const char* name,
                                          size_t name_len, int32_t* value) {
  return Call([&] { return GetNumber<int32_t>(entity, name, name_len, value); });
}

blobtable_code blobtable_entity_get_int64(const blobtable_entity* entity, const char* name,
                                          size_t name_len, int64_t* value) {
  return Call([&] { return GetNumber<int64_t>(entity, name, name_len, value); });
}

}  // extern "C"
