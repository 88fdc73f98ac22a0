// SPDX-License-Identifier: Apache-2.0
// Safe msgpack decoding helpers: bounded unpacking and typed field access
// that reports Corruption instead of throwing.
#ifndef BLOBTABLE_UTIL_MSGPACK_UTIL_H_
#define BLOBTABLE_UTIL_MSGPACK_UTIL_H_

#define MSGPACK_NO_BOOST 1
#include <msgpack.hpp>

#include <string>
#include <string_view>

#include "blobtable/status.h"

namespace blobtable::internal::mp {

// Names what is decoded in error messages: "kind 'name'", or just `kind`.
// Built into a string only when a message needs it (decoding is hot).
struct What {
  // Implicit on purpose: a plain name converts.
  What(std::string_view whole) : kind(whole) {}
  What(const char* whole) : kind(whole) {}
  What(const std::string& whole) : kind(whole) {}
  What(std::string_view k, std::string_view n) : kind(k), name(n), named(true) {}
  std::string str() const {
    return named ? std::string(kind) + " '" + std::string(name) + "'" : std::string(kind);
  }
  std::string_view kind, name;
  bool named = false;
};

// Unpacks `data` with limits sized for blobtable's own formats, so that a
// corrupt length field cannot make it allocate gigabytes. Corruption (naming
// `what`) on malformed input or trailing bytes. The handle's strings and
// binaries point into `data`: it must outlive the handle.
Result<msgpack::object_handle> Unpack(std::string_view data, const What& what);

// Thrown by the accessors below; caught and turned into Corruption at the
// decoder's boundary by Guard().
struct FormatError {
  std::string message;
};

const msgpack::object* Array(const msgpack::object& o, uint32_t min_size, const char* field);
std::string Str(const msgpack::object& o, const char* field);
std::string Bin(const msgpack::object& o, const char* field);
int64_t Int(const msgpack::object& o, const char* field);
uint64_t UInt(const msgpack::object& o, const char* field);
bool Bool(const msgpack::object& o, const char* field);
double Double(const msgpack::object& o, const char* field);

// Runs `fn` and maps FormatError (and msgpack's own exceptions) to
// Corruption("<what>: <problem>").
template <typename Fn>
Status Guard(const What& what, Fn&& fn) {
  try {
    fn();
    return Status::OK();
  } catch (const FormatError& e) {
    return Status::Corruption(what.str() + ": " + e.message);
  } catch (const std::exception& e) {
    return Status::Corruption(what.str() + ": " + e.what());
  }
}

// One value met by Walk: a scalar, or the start of an array or a map (its
// elements follow as their own items). Strings, binaries and extensions
// point into the walked data.
struct Item {
  // kEnd: the end of the array or map at the item's path (after its elements).
  enum Kind : uint8_t { kNil, kBool, kUInt, kInt, kDouble, kStr, kBin, kExt, kArray, kMap, kEnd };
  Kind kind = kNil;
  bool boolean = false;
  uint64_t u = 0;          // kUInt
  int64_t i = 0;           // kInt (negative)
  double d = 0;            // kDouble (float32 widened)
  std::string_view bytes;  // kStr, kBin, kExt
  uint32_t size = 0;       // kArray: elements; kMap: pairs

  // The typed views below throw FormatError naming `field` (as the
  // object accessors above do).
  std::string_view Str(const char* field) const;
  std::string_view Bin(const char* field) const;
  int64_t Int(const char* field) const;
  uint64_t UInt(const char* field) const;
  bool Bool(const char* field) const;
  double Double(const char* field) const;
  bool IsNil() const { return kind == kNil; }
};

// Where an item lies: `depth` containers enclose it (0: the top value), and
// index[l] is its place in the container at level l (in a map, pair k's key
// is 2k and its value 2k + 1).
struct Path {
  static constexpr int kMaxDepth = 16;
  int depth = 0;
  uint32_t index[kMaxDepth] = {};
  uint32_t Last() const { return depth == 0 ? 0 : index[depth - 1]; }
};

// Walk's adapter from msgpack's visitor to a handler.
template <typename Handler>
class WalkVisitor : public msgpack::null_visitor {
 public:
  explicit WalkVisitor(Handler& h) : h_(h) {}
  bool visit_nil() { return Emit(Item{}); }
  bool visit_boolean(bool v) {
    return Emit(Of(Item::kBool, [&](Item& i) { i.boolean = v; }));
  }
  bool visit_positive_integer(uint64_t v) {
    return Emit(Of(Item::kUInt, [&](Item& i) { i.u = v; }));
  }
  bool visit_negative_integer(int64_t v) {
    return Emit(Of(Item::kInt, [&](Item& i) { i.i = v; }));
  }
  bool visit_float32(float v) {
    return Emit(Of(Item::kDouble, [&](Item& i) { i.d = v; }));
  }
  bool visit_float64(double v) {
    return Emit(Of(Item::kDouble, [&](Item& i) { i.d = v; }));
  }
  bool visit_str(const char* p, uint32_t n) { return Emit(Bytes(Item::kStr, p, n)); }
  bool visit_bin(const char* p, uint32_t n) { return Emit(Bytes(Item::kBin, p, n)); }
  bool visit_ext(const char* p, uint32_t n) { return Emit(Bytes(Item::kExt, p, n)); }
  bool start_array(uint32_t n) { return Open(Item::kArray, n); }
  bool start_array_item() { return Next(); }
  bool end_array() { return Close(); }
  bool start_map(uint32_t n) { return Open(Item::kMap, n); }
  bool start_map_key() { return Next(); }
  bool start_map_value() { return Next(); }
  bool end_map() { return Close(); }
  void parse_error(size_t, size_t) { error_ = "not a valid msgpack value"; }
  void insufficient_bytes(size_t, size_t) { error_ = "not a whole msgpack value (cut short)"; }
  const char* error() const { return error_; }

 private:
  template <typename Set>
  static Item Of(Item::Kind kind, Set set) {
    Item i;
    i.kind = kind;
    set(i);
    return i;
  }
  static Item Bytes(Item::Kind kind, const char* p, uint32_t n) {
    return Of(kind, [&](Item& i) { i.bytes = std::string_view(p, n); });
  }
  bool Emit(const Item& item) {
    h_(path_, item);
    return true;
  }
  bool Open(Item::Kind kind, uint32_t n) {
    Emit(Of(kind, [&](Item& i) { i.size = n; }));
    if (path_.depth == Path::kMaxDepth) {
      error_ = "nested too deep";
      return false;
    }
    path_.index[path_.depth++] = UINT32_MAX;  // the first Next() makes it 0
    return true;
  }
  bool Next() {
    ++path_.index[path_.depth - 1];
    return true;
  }
  bool Close() {
    --path_.depth;
    return Emit(Of(Item::kEnd, [](Item&) {}));
  }

  Handler& h_;
  Path path_;
  const char* error_ = "stopped";
};

// Walks the one msgpack value `data` holds in order, calling
// `handler(const Path&, const Item&)` for each item (and kEnd after each
// container's elements), without building an
// object tree or copying anything. The handler throws FormatError to refuse
// what it meets. Corruption naming `what` for malformed msgpack, nesting
// deeper than Path::kMaxDepth, trailing bytes, or the handler's error.
template <typename Handler>
Status Walk(std::string_view data, const What& what, Handler&& handler) {
  WalkVisitor<Handler> visitor(handler);
  size_t offset = 0;
  bool parsed = false;
  Status s =
      Guard(what, [&] { parsed = msgpack::parse(data.data(), data.size(), offset, visitor); });
  if (!s.ok()) return s;
  if (!parsed) return Status::Corruption(what.str() + ": " + visitor.error());
  if (offset != data.size())
    return Status::Corruption(what.str() + ": trailing bytes after the msgpack value");
  return Status::OK();
}

}  // namespace blobtable::internal::mp

#endif  // BLOBTABLE_UTIL_MSGPACK_UTIL_H_
