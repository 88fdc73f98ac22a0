// SPDX-License-Identifier: Apache-2.0
// Entity views: an entity seen where it lies, without copying it into an
// Entity. Table::Visit hands each row of a query to a function as an
// EntityView; on the embedded store the view points into the store's page
// (no allocation, no copy of a value), elsewhere into an Entity the query
// read. Either way a view, and every string_view it gives, is valid only
// during the call that receives it: copy what must outlive it (ToEntity,
// PropertyView::ToValue, or std::string of a view).
//
// Thread-safety: views are read-only; a view is used by the thread it was
// handed to.
#ifndef BLOBTABLE_ENTITY_VIEW_H_
#define BLOBTABLE_ENTITY_VIEW_H_

#include <cstdint>
#include <span>
#include <string_view>

#include "blobtable/entity.h"
#include "blobtable/export.h"

namespace blobtable {

// One property: its name, its type and its value as stored.
class BLOBTABLE_EXPORT PropertyView {
 public:
  PropertyView() = default;
  // A view of `value` (which must outlive the view).
  PropertyView(std::string_view name, const PropertyValue& value);
  // Made by the library from stored bytes: `bytes` for String, Binary and
  // Guid; `integer` for Boolean (0/1), DateTime (ticks), Int32 and Int64;
  // `number` for Double.
  PropertyView(std::string_view name, EdmType type, std::string_view bytes, int64_t integer,
               double number)
      : name_(name), bytes_(bytes), integer_(integer), number_(number), type_(type) {}

  std::string_view name() const { return name_; }
  EdmType type() const { return type_; }

  // The value, read as its type says. Each accessor answers for its own
  // types only; asked of another type it returns an empty view, 0, false.
  //   String, Guid: text()   Binary: bytes()   Boolean: boolean()
  //   Int32, Int64: integer()   Double: number()   DateTime: date_time()
  std::string_view text() const {
    return type_ == EdmType::kString || type_ == EdmType::kGuid ? bytes_ : std::string_view();
  }
  std::string_view bytes() const { return type_ == EdmType::kBinary ? bytes_ : std::string_view(); }
  bool boolean() const { return type_ == EdmType::kBoolean && integer_ != 0; }
  int64_t integer() const {
    return type_ == EdmType::kInt32 || type_ == EdmType::kInt64 ? integer_ : 0;
  }
  double number() const { return type_ == EdmType::kDouble ? number_ : 0.0; }
  DateTime date_time() const { return DateTime(Ticks(type_ == EdmType::kDateTime ? integer_ : 0)); }

  // A copy of the value, as Entity holds it.
  PropertyValue ToValue() const;

 private:
  std::string_view name_;
  std::string_view bytes_;
  int64_t integer_ = 0;
  double number_ = 0;
  EdmType type_ = EdmType::kString;
};

// One entity: keys, Timestamp, ETag and properties in name order. What
// Table::Visit and Table::GetView hand over has passed the checks a decoded
// Entity passes (docs/data-model.md, "Stored form").
class BLOBTABLE_EXPORT EntityView {
 public:
  EntityView() = default;
  // `properties` sorted by name, without duplicates.
  EntityView(std::string_view partition_key, std::string_view row_key, DateTime timestamp,
             std::string_view etag, std::span<const PropertyView> properties)
      : partition_key_(partition_key),
        row_key_(row_key),
        etag_(etag),
        timestamp_(timestamp),
        properties_(properties) {}

  std::string_view partition_key() const { return partition_key_; }
  std::string_view row_key() const { return row_key_; }
  std::string_view etag() const { return etag_; }
  DateTime timestamp() const { return timestamp_; }
  std::span<const PropertyView> properties() const { return properties_; }
  // True if the entity came from the cache without being validated, as
  // Entity::stale() says (only under a ReadPolicy that allows it).
  bool stale() const { return stale_; }
  void set_stale(bool stale) { stale_ = stale; }

  // The property called `name`, or null if the entity has none.
  const PropertyView* Find(std::string_view name) const;

  // A copy of the whole entity, ETag and Timestamp included.
  Entity ToEntity() const;

 private:
  std::string_view partition_key_, row_key_, etag_;
  DateTime timestamp_{};
  std::span<const PropertyView> properties_;
  bool stale_ = false;
};

}  // namespace blobtable

#endif  // BLOBTABLE_ENTITY_VIEW_H_
