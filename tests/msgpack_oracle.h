// SPDX-License-Identifier: Apache-2.0
// mp::Walk's items written out, and the same items as msgpack-cxx's object
// tree has them (the oracle), so that a test and the fuzz target msgpack_walk
// can compare the two readers item by item.
#ifndef BLOBTABLE_TESTS_MSGPACK_ORACLE_H_
#define BLOBTABLE_TESTS_MSGPACK_ORACLE_H_

#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "util/macros.h"
#include "util/msgpack_util.h"

namespace blobtable::internal::mp::testing {

// "<path> <kind> <value>": the path as dotted indexes, a double by its bits.
inline std::string Describe(const Path& path, const Item& it) {
  std::string out;
  for (int l = 0; l < path.depth; ++l) out += std::to_string(path.index[l]) + ".";
  out += " " + std::to_string(static_cast<int>(it.kind)) + " ";
  switch (it.kind) {
    case Item::kBool: return out + (it.boolean ? "true" : "false");
    case Item::kUInt: return out + std::to_string(it.u);
    case Item::kInt: return out + std::to_string(it.i);
    case Item::kDouble: {
      uint64_t bits;
      std::memcpy(&bits, &it.d, 8);
      return out + std::to_string(bits);
    }
    case Item::kStr:
    case Item::kBin:
    case Item::kExt: return out + std::string(it.bytes);
    case Item::kArray:
    case Item::kMap: return out + std::to_string(it.size);
    default: return out;
  }
}

inline Result<std::vector<std::string>> ItemsOf(std::string_view bytes) {
  std::vector<std::string> items;
  BT_RETURN_IF_ERROR(Walk(
      bytes, "value", [&](const Path& p, const Item& it) { items.push_back(Describe(p, it)); }));
  return items;
}

inline void Flatten(const msgpack::object& o, Path& path, std::vector<std::string>& out) {
  const Item it = ItemOf(o);
  out.push_back(Describe(path, it));
  if (it.kind != Item::kArray && it.kind != Item::kMap) return;
  path.index[path.depth++] = 0;
  if (it.kind == Item::kArray) {
    for (uint32_t i = 0; i < o.via.array.size; ++i, ++path.index[path.depth - 1])
      Flatten(o.via.array.ptr[i], path, out);
  } else {
    for (uint32_t i = 0; i < o.via.map.size; ++i) {
      Flatten(o.via.map.ptr[i].key, path, out);
      ++path.index[path.depth - 1];
      Flatten(o.via.map.ptr[i].val, path, out);
      ++path.index[path.depth - 1];
    }
  }
  --path.depth;
  Item end;
  end.kind = Item::kEnd;
  out.push_back(Describe(path, end));
}

// msgpack-cxx's reading of `bytes` as Walk's items, or nothing if it refuses
// them (malformed, cut, trailing bytes, or past limits that keep a fuzzed
// length from allocating much). Values nested deeper than Walk's limit are
// also nothing here: Walk refuses them on purpose.
inline std::optional<std::vector<std::string>> OracleItems(std::string_view bytes) {
  const msgpack::unpack_limit limit(/*array=*/1u << 20, /*map=*/1u << 20, /*str=*/1u << 24,
                                    /*bin=*/1u << 24, /*ext=*/1u << 24,
                                    /*depth=*/Path::kMaxDepth);
  try {
    size_t offset = 0;
    auto refer = [](msgpack::type::object_type, size_t, void*) { return true; };
    msgpack::object_handle oh =
        msgpack::unpack(bytes.data(), bytes.size(), offset, refer, nullptr, limit);
    if (offset != bytes.size()) return std::nullopt;
    std::vector<std::string> out;
    Path path;
    Flatten(oh.get(), path, out);
    return out;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

}  // namespace blobtable::internal::mp::testing

#endif  // BLOBTABLE_TESTS_MSGPACK_ORACLE_H_
