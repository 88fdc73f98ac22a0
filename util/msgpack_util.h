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

}  // namespace blobtable::internal::mp

#endif  // BLOBTABLE_UTIL_MSGPACK_UTIL_H_
