// SPDX-License-Identifier: Apache-2.0
#include "blobtable/entity_view.h"
#include "model/entity_codec.h"

#include <algorithm>
#include <string>

namespace blobtable {

PropertyView::PropertyView(std::string_view name, const PropertyValue& value)
    : name_(name), type_(static_cast<EdmType>(value.index())) {
  std::visit(
      [&](const auto& v) {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, std::string>)
          bytes_ = v;
        else if constexpr (std::is_same_v<T, Binary>)
          bytes_ = v.bytes;
        else if constexpr (std::is_same_v<T, Guid>)
          bytes_ = v.value;
        else if constexpr (std::is_same_v<T, DateTime>)
          integer_ = v.time_since_epoch().count();
        else if constexpr (std::is_same_v<T, double>)
          number_ = v;
        else
          integer_ = static_cast<int64_t>(v);  // bool, int32_t, int64_t
      },
      value);
}

PropertyValue PropertyView::ToValue() const {
  switch (type_) {
    case EdmType::kString: return std::string(bytes_);
    case EdmType::kBinary: return Binary{std::string(bytes_)};
    case EdmType::kBoolean: return integer_ != 0;
    case EdmType::kDateTime: return DateTime(Ticks(integer_));
    case EdmType::kDouble: return number_;
    case EdmType::kGuid: return Guid{std::string(bytes_)};
    case EdmType::kInt32: return static_cast<int32_t>(integer_);
    case EdmType::kInt64: return integer_;
  }
  return std::string();  // unreachable: every EdmType is handled
}

const PropertyView* EntityView::Find(std::string_view name) const {
  auto it =
      std::lower_bound(properties_.begin(), properties_.end(), name,
                       [](const PropertyView& p, std::string_view n) { return p.name() < n; });
  return it != properties_.end() && it->name() == name ? &*it : nullptr;
}

Entity EntityView::ToEntity() const {
  Entity e;
  internal::CopyViewInto(*this, e);
  return e;
}

}  // namespace blobtable
