// SPDX-License-Identifier: Apache-2.0
#include "util/msgpack_util.h"

namespace blobtable::internal::mp {

Result<msgpack::object_handle> Unpack(std::string_view data, const What& what) {
  // Limits: arrays and maps of blobtable formats stay far below these; strings
  // and binaries are bounded by the 1 MiB entity limit with margin for raw
  // blobs stored through the BlobStore API.
  const msgpack::unpack_limit limit(/*array=*/1u << 20, /*map=*/1u << 16, /*str=*/64u << 20,
                                    /*bin=*/256u << 20, /*ext=*/1u << 10, /*depth=*/32);
  try {
    size_t offset = 0;
    // Strings and binaries point into `data` rather than being copied into
    // the handle's zone: the accessors copy what they keep, and callers
    // keep `data` for as long as the handle.
    auto refer = [](msgpack::type::object_type, size_t, void*) { return true; };
    msgpack::object_handle oh =
        msgpack::unpack(data.data(), data.size(), offset, refer, nullptr, limit);
    if (offset != data.size())
      return Status::Corruption(what.str() + ": trailing bytes after the msgpack value");
    return oh;
  } catch (const std::exception& e) {
    return Status::Corruption(what.str() + ": not a valid msgpack value (" + e.what() + ")");
  }
}

void FailType(const char* field, const char* expected) {
  throw FormatError{std::string(field) + " is not " + expected};
}

const msgpack::object* Array(const msgpack::object& o, uint32_t min_size, const char* field) {
  if (o.type != msgpack::type::ARRAY) FailType(field, "an array");
  if (o.via.array.size < min_size) FailType(field, "long enough");
  return o.via.array.ptr;
}

Item ItemOf(const msgpack::object& o) {
  Item it;
  switch (o.type) {
    case msgpack::type::NIL: break;
    case msgpack::type::BOOLEAN:
      it.kind = Item::kBool;
      it.boolean = o.via.boolean;
      break;
    case msgpack::type::POSITIVE_INTEGER:
      it.kind = Item::kUInt;
      it.u = o.via.u64;
      break;
    case msgpack::type::NEGATIVE_INTEGER:
      it.kind = Item::kInt;
      it.i = o.via.i64;
      break;
    case msgpack::type::FLOAT32:
    case msgpack::type::FLOAT64:
      it.kind = Item::kDouble;
      it.d = o.via.f64;
      break;
    case msgpack::type::STR:
      it.kind = Item::kStr;
      it.bytes = std::string_view(o.via.str.ptr, o.via.str.size);
      break;
    case msgpack::type::BIN:
      it.kind = Item::kBin;
      it.bytes = std::string_view(o.via.bin.ptr, o.via.bin.size);
      break;
    case msgpack::type::EXT:  // its type byte, then its data, as Walk has it
      it.kind = Item::kExt;
      it.bytes = std::string_view(o.via.ext.ptr, o.via.ext.size + 1);
      break;
    case msgpack::type::ARRAY:
      it.kind = Item::kArray;
      it.size = o.via.array.size;
      break;
    case msgpack::type::MAP:
      it.kind = Item::kMap;
      it.size = o.via.map.size;
      break;
  }
  return it;
}

std::string Str(const msgpack::object& o, const char* field) {
  return std::string(ItemOf(o).Str(field));
}
std::string Bin(const msgpack::object& o, const char* field) {
  return std::string(ItemOf(o).Bin(field));
}
int64_t Int(const msgpack::object& o, const char* field) { return ItemOf(o).Int(field); }
uint64_t UInt(const msgpack::object& o, const char* field) { return ItemOf(o).UInt(field); }
bool Bool(const msgpack::object& o, const char* field) { return ItemOf(o).Bool(field); }
double Double(const msgpack::object& o, const char* field) { return ItemOf(o).Double(field); }

bool Item::Bool(const char* field) const {
  if (kind != kBool) FailType(field, "a boolean");
  return boolean;
}

double Item::Double(const char* field) const {
  // Integers are accepted too: other msgpack writers store integral doubles so.
  if (kind == kUInt) return static_cast<double>(u);
  if (kind == kInt) return static_cast<double>(i);
  if (kind != kDouble) FailType(field, "a double");
  return d;
}

}  // namespace blobtable::internal::mp
