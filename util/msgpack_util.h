// SPDX-License-Identifier: Apache-2.0
// Safe msgpack decoding helpers: bounded unpacking and typed field access
// that report Corruption instead of throwing, and Walk, a reader that visits
// a value's items in place.
#ifndef BLOBTABLE_UTIL_MSGPACK_UTIL_H_
#define BLOBTABLE_UTIL_MSGPACK_UTIL_H_

#define MSGPACK_NO_BOOST 1
#include <msgpack.hpp>

#include <bit>
#include <cstdint>
#include <cstring>
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

// Throws FormatError "<field> is not <expected>".
[[noreturn]] void FailType(const char* field, const char* expected);

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
  // object accessors above do). The four every decoder calls are inline.
  std::string_view Str(const char* field) const {
    if (kind != kStr) FailType(field, "a string");
    return bytes;
  }
  std::string_view Bin(const char* field) const {
    if (kind != kBin) FailType(field, "binary");
    return bytes;
  }
  int64_t Int(const char* field) const {
    if (kind == kUInt && u <= static_cast<uint64_t>(INT64_MAX)) return static_cast<int64_t>(u);
    if (kind == kInt) return i;
    FailType(field, kind == kUInt ? "a 64-bit signed integer" : "an integer");
  }
  uint64_t UInt(const char* field) const {
    if (kind != kUInt) FailType(field, "an unsigned integer");
    return u;
  }
  bool Bool(const char* field) const;
  double Double(const char* field) const;
  bool IsNil() const { return kind == kNil; }
};

// Object `o` of an Unpack()ed tree as Walk would give it (its elements
// apart), so that the object accessors above and Item's hold the type rules
// once.
Item ItemOf(const msgpack::object& o);

// Where an item lies: `depth` containers enclose it (0: the top value), and
// index[l] is its place in the container at level l (in a map, pair k's key
// is 2k and its value 2k + 1).
struct Path {
  static constexpr int kMaxDepth = 16;
  int depth = 0;
  uint32_t index[kMaxDepth] = {};
  uint32_t Last() const { return depth == 0 ? 0 : index[depth - 1]; }
};

// Messages of Walk's refusals.
inline constexpr const char* kCutShort = "not a whole msgpack value (cut short)";
inline constexpr const char* kNotMsgpack = "not a valid msgpack value";

// ReadItem (below) for every tag, out of line.
[[gnu::noinline]] inline const char* ReadAnyItem(const char* p, const char* end, Item& it,
                                                 const char*& error) {
  auto cut = [&]() -> const char* {
    error = kCutShort;
    return nullptr;
  };
  auto need = [&](uint64_t n) { return static_cast<uint64_t>(end - p) >= n; };
  auto big = [&](int bytes) {  // an unsigned big-endian field of 1, 2, 4 or 8 bytes
    static_assert(std::endian::native == std::endian::little, "swaps for a little-endian host");
    uint64_t v = 0;
    switch (bytes) {
      case 1: v = static_cast<unsigned char>(*p); break;
      case 2: {
        uint16_t w;
        std::memcpy(&w, p, 2);
        v = __builtin_bswap16(w);
        break;
      }
      case 4: {
        uint32_t w;
        std::memcpy(&w, p, 4);
        v = __builtin_bswap32(w);
        break;
      }
      default: std::memcpy(&v, p, 8); v = __builtin_bswap64(v);
    }
    p += bytes;
    return v;
  };
  auto bytes = [&](Item::Kind kind, uint64_t n) -> const char* {  // n bytes at p
    if (!need(n)) return cut();
    it.kind = kind;
    it.bytes = std::string_view(p, n);
    return p + n;
  };
  // A length field of `len_bytes`, then that many bytes (+ an extension's type).
  auto sized = [&](Item::Kind kind, int len_bytes, uint32_t extra) -> const char* {
    if (!need(len_bytes)) return cut();
    return bytes(kind, big(len_bytes) + extra);
  };
  auto number = [&](Item::Kind kind, int width) -> const char* {
    if (!need(width)) return cut();
    const uint64_t raw = big(width);
    it.kind = kind;
    if (kind == Item::kUInt) {
      it.u = raw;
    } else if (kind == Item::kDouble && width == 4) {
      float f;
      const auto bits = static_cast<uint32_t>(raw);
      std::memcpy(&f, &bits, 4);
      it.d = f;
    } else if (kind == Item::kDouble) {
      std::memcpy(&it.d, &raw, 8);
    } else {  // signed: sign-extend from the field's top bit
      const int shift = 64 - 8 * width;
      const int64_t v = static_cast<int64_t>(raw << shift) >> shift;
      if (v >= 0) {
        it.kind = Item::kUInt;
        it.u = static_cast<uint64_t>(v);
      } else {
        it.i = v;
      }
    }
    return p;
  };
  // An array's or a map's header: its size in the tag (len_bytes 0) or after.
  auto container = [&](Item::Kind kind, int len_bytes, uint32_t size) -> const char* {
    if (!need(len_bytes)) return cut();
    it.kind = kind;
    it.size = len_bytes == 0 ? size : static_cast<uint32_t>(big(len_bytes));
    return p;
  };
  if (p == end) return cut();
  const auto b = static_cast<unsigned char>(*p++);
  if (b <= 0x7f) {  // positive fixint
    it.kind = Item::kUInt;
    it.u = b;
    return p;
  }
  if (b >= 0xe0) {  // negative fixint
    it.kind = Item::kInt;
    it.i = static_cast<int8_t>(b);
    return p;
  }
  if ((b & 0xe0) == 0xa0) return bytes(Item::kStr, b & 0x1f);
  if ((b & 0xf0) == 0x90) return container(Item::kArray, 0, b & 0x0f);
  if ((b & 0xf0) == 0x80) return container(Item::kMap, 0, b & 0x0f);
  switch (b) {
    case 0xc0: it.kind = Item::kNil; return p;
    case 0xc2:
    case 0xc3:
      it.kind = Item::kBool;
      it.boolean = b == 0xc3;
      return p;
    case 0xc4: return sized(Item::kBin, 1, 0);
    case 0xc5: return sized(Item::kBin, 2, 0);
    case 0xc6: return sized(Item::kBin, 4, 0);
    case 0xc7: return sized(Item::kExt, 1, 1);  // an extension's bytes: its type, then its data
    case 0xc8: return sized(Item::kExt, 2, 1);
    case 0xc9: return sized(Item::kExt, 4, 1);
    case 0xca: return number(Item::kDouble, 4);
    case 0xcb: return number(Item::kDouble, 8);
    case 0xcc: return number(Item::kUInt, 1);
    case 0xcd: return number(Item::kUInt, 2);
    case 0xce: return number(Item::kUInt, 4);
    case 0xcf: return number(Item::kUInt, 8);
    case 0xd0: return number(Item::kInt, 1);
    case 0xd1: return number(Item::kInt, 2);
    case 0xd2: return number(Item::kInt, 4);
    case 0xd3: return number(Item::kInt, 8);
    case 0xd4: return bytes(Item::kExt, 1 + 1);
    case 0xd5: return bytes(Item::kExt, 1 + 2);
    case 0xd6: return bytes(Item::kExt, 1 + 4);
    case 0xd7: return bytes(Item::kExt, 1 + 8);
    case 0xd8: return bytes(Item::kExt, 1 + 16);
    case 0xd9: return sized(Item::kStr, 1, 0);
    case 0xda: return sized(Item::kStr, 2, 0);
    case 0xdb: return sized(Item::kStr, 4, 0);
    case 0xdc: return container(Item::kArray, 2, 0);
    case 0xdd: return container(Item::kArray, 4, 0);
    case 0xde: return container(Item::kMap, 2, 0);
    case 0xdf: return container(Item::kMap, 4, 0);
    default: error = kNotMsgpack; return nullptr;  // 0xc1, never used
  }
}

// Reads the item that starts at `p` (before `end`) into `it`: a scalar with
// its bytes, or the header of an array or a map. Returns where the next item
// starts, or nullptr with `error` set. Signed encodings of values >= 0 read
// as kUInt, as msgpack-cxx's objects have them. Inline: Walk's and Reader's
// hot loops. The tags most items of blobtable's formats have (a small
// integer, a short string, a short array) are read here, as ReadAnyItem
// reads them; the rest there.
inline const char* ReadItem(const char* p, const char* end, Item& it, const char*& error) {
  if (p != end) {
    const auto b = static_cast<unsigned char>(*p);
    if (b <= 0x7f) {  // positive fixint
      it.kind = Item::kUInt;
      it.u = b;
      return p + 1;
    }
    if ((b & 0xf0) == 0x90) {  // fixarray
      it.kind = Item::kArray;
      it.size = b & 0x0f;
      return p + 1;
    }
    const uint32_t n = b & 0x1f;
    if ((b & 0xe0) == 0xa0 && static_cast<size_t>(end - p) > n) {  // a whole fixstr
      it.kind = Item::kStr;
      it.bytes = std::string_view(p + 1, n);
      return p + 1 + n;
    }
  }
  return ReadAnyItem(p, end, it, error);
}

// Reads a msgpack value's items in order, for a decoder that knows the
// format it reads: no handler and no path, so each item costs what reading
// it costs (Walk's dispatch cost about as much again). Each call reads the
// next item; a malformed or cut value, or an item not of the asked type,
// throws FormatError (run the decoder inside Guard). Strings and binaries
// point into `data`, which must outlive what is read from it.
class Reader {
 public:
  explicit Reader(std::string_view data) : p_(data.data()), end_(data.data() + data.size()) {}

  Item Next() {
    Item it;
    const char* error = nullptr;
    const char* next = ReadItem(p_, end_, it, error);
    if (next == nullptr) throw FormatError{error};
    p_ = next;
    return it;
  }
  // The typed reads below take the one-byte tags most items have (a short
  // string, a small integer, a short array) without building an Item, and
  // the rest through Next(): the same answers either way.
  // An array's header: its size. "<field> is not an array" otherwise.
  uint32_t Array(const char* field) {
    if (p_ != end_ && (static_cast<unsigned char>(*p_) & 0xf0) == 0x90)
      return static_cast<unsigned char>(*p_++) & 0x0f;
    return Container(Item::kArray, field, "an array");
  }
  uint32_t Map(const char* field) { return Container(Item::kMap, field, "a map"); }
  std::string_view Str(const char* field) {
    const size_t left = static_cast<size_t>(end_ - p_);
    if (left != 0) {
      const auto b = static_cast<unsigned char>(*p_);
      if ((b & 0xe0) == 0xa0 && left > (b & 0x1fu)) return Take(1, b & 0x1f);
      if (b == 0xd9 && left >= 2 && left - 2 >= Byte(1)) return Take(2, Byte(1));
    }
    return Next().Str(field);
  }
  std::string_view Bin(const char* field) {
    const size_t left = static_cast<size_t>(end_ - p_);
    if (left >= 2 && *p_ == '\xc4' && left - 2 >= Byte(1)) return Take(2, Byte(1));
    if (left >= 3 && *p_ == '\xc5') {
      const size_t n = Byte(1) << 8 | Byte(2);
      if (left - 3 >= n) return Take(3, n);
    }
    return Next().Bin(field);
  }
  int64_t Int(const char* field) {
    const size_t left = static_cast<size_t>(end_ - p_);
    if (left != 0 && Byte(0) <= 0x7f) return static_cast<unsigned char>(*p_++);
    if (left >= 9 && (*p_ == '\xcf' || *p_ == '\xd3')) {  // 8 bytes, unsigned or signed
      uint64_t v;
      std::memcpy(&v, p_ + 1, 8);
      v = __builtin_bswap64(v);
      if (*p_ == '\xd3' || v <= static_cast<uint64_t>(INT64_MAX)) {
        p_ += 9;
        return static_cast<int64_t>(v);
      }
    }
    return Next().Int(field);
  }
  uint64_t UInt(const char* field) {
    if (p_ != end_ && static_cast<unsigned char>(*p_) <= 0x7f)
      return static_cast<unsigned char>(*p_++);
    return Next().UInt(field);
  }
  // Skips `n` whole values, containers with everything in them; nesting
  // deeper than Path::kMaxDepth below them is refused, as Walk refuses it.
  void Skip(uint64_t n) {
    if (n != 0) SkipSome(n);
  }
  // Throws unless the whole value has been read.
  void ExpectEnd() const {
    if (p_ != end_) throw FormatError{"trailing bytes after the msgpack value"};
  }

 private:
  void SkipSome(uint64_t n) {
    uint64_t outer[Path::kMaxDepth];  // what is left of each enclosing container
    int depth = 0;
    for (;;) {
      if (n == 0) {
        if (depth == 0) return;
        n = outer[--depth];
        continue;
      }
      --n;
      const Item it = Next();
      if (it.kind != Item::kArray && it.kind != Item::kMap) continue;
      if (depth == Path::kMaxDepth) throw FormatError{"nested too deep"};
      outer[depth++] = n;
      n = it.kind == Item::kMap ? uint64_t{it.size} * 2 : it.size;
    }
  }
  size_t Byte(size_t at) const { return static_cast<unsigned char>(p_[at]); }
  // The `n` bytes after a `header`-byte tag (known to be there).
  std::string_view Take(size_t header, size_t n) {
    const std::string_view s(p_ + header, n);
    p_ += header + n;
    return s;
  }
  uint32_t Container(Item::Kind kind, const char* field, const char* what) {
    const Item it = Next();
    if (it.kind != kind) throw FormatError{std::string(field) + " is not " + what};
    return it.size;
  }

  const char* p_;
  const char* const end_;
};

// Walks the one msgpack value `data` holds in order, calling
// `handler(const Path&, const Item&)` for each item (and kEnd after each
// container's elements), without building an object tree, allocating or
// copying anything. The handler throws FormatError to refuse what it meets.
// Corruption naming `what` for malformed msgpack, nesting deeper than
// Path::kMaxDepth, trailing bytes, or the handler's error.
//
// The reader is ours, not msgpack-cxx's visitor parser (which writers still
// use to pack): that parser's state machine cost about 90 instructions an
// item and allocated its stack on every parse, the largest share of a local
// get (docs/performance.md). tests/msgpack_walk_test.cc holds it to
// msgpack-cxx's reading of every type code; the fuzz target msgpack_walk to
// its reading of any bytes.
template <typename Handler>
Status Walk(std::string_view data, const What& what, Handler&& handler) {
  Path path;
  uint64_t left[Path::kMaxDepth];  // items still to come in each open container
  const char* p = data.data();
  const char* const end = p + data.size();
  const char* error = nullptr;
  Status s = Guard(what, [&] {
    for (;;) {
      if (path.depth > 0) {
        const int level = path.depth - 1;
        if (left[level] == 0) {  // the container ends
          --path.depth;
          Item closing;
          closing.kind = Item::kEnd;
          handler(path, closing);
          if (path.depth == 0) return;
          continue;
        }
        --left[level];
        ++path.index[level];
      }
      Item it;
      p = ReadItem(p, end, it, error);
      if (p == nullptr) return;
      handler(path, it);
      if (it.kind == Item::kArray || it.kind == Item::kMap) {
        if (path.depth == Path::kMaxDepth) {
          error = "nested too deep";
          return;
        }
        left[path.depth] = it.kind == Item::kMap ? uint64_t{it.size} * 2 : it.size;
        path.index[path.depth++] = UINT32_MAX;  // the first element makes it 0
      } else if (path.depth == 0) {
        return;  // a scalar at the top: the whole value
      }
    }
  });
  if (!s.ok()) return s;
  if (error != nullptr) return Status::Corruption(what.str() + ": " + error);
  if (p != end) return Status::Corruption(what.str() + ": trailing bytes after the msgpack value");
  return Status::OK();
}

}  // namespace blobtable::internal::mp

#endif  // BLOBTABLE_UTIL_MSGPACK_UTIL_H_
