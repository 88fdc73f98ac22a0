// SPDX-License-Identifier: Apache-2.0
#include "txn/intent.h"

#include "util/macros.h"
#include "util/msgpack_util.h"
#include "util/stored_format.h"

namespace blobtable::internal {
namespace {
constexpr char kIntentMagic[] = "bt.intent";
constexpr int kIntentFormat = 1;

void PackBin(msgpack::packer<msgpack::sbuffer>& pk, const std::string& s) {
  pk.pack_bin(static_cast<uint32_t>(s.size()));
  pk.pack_bin_body(s.data(), static_cast<uint32_t>(s.size()));
}
}  // namespace

std::string EncodeIntent(const EntityIntent& i) {
  msgpack::sbuffer buf;
  msgpack::packer<msgpack::sbuffer> pk(&buf);
  pk.pack_array(11);
  pk.pack(std::string_view(kIntentMagic));
  pk.pack(kIntentFormat);
  pk.pack(i.txn_id);
  pk.pack(i.lock);
  pk.pack(i.prev_exists);
  pk.pack(i.prev_etag);
  PackBin(pk, i.prev_body);
  pk.pack(i.next_exists);
  PackBin(pk, i.next_body);
  pk.pack(i.reads_only);
  pk.pack(i.prev_same);
  return std::string(buf.data(), buf.size());
}

Result<EntityIntent> DecodeIntent(std::string_view body, std::string_view blob) {
  const std::string what = "transaction intent in '" + std::string(blob) + "'";
  BT_ASSIGN_OR_RETURN(msgpack::object_handle oh, mp::Unpack(body, what));
  EntityIntent i;
  BT_RETURN_IF_ERROR(mp::Guard(what, [&] {
    const msgpack::object* f = mp::Array(oh.get(), 9, "intent");
    if (mp::Str(f[0], "magic") != kIntentMagic) throw mp::FormatError{"not an intent"};
    if (mp::Int(f[1], "format") != kIntentFormat) throw mp::FormatError{"unknown intent format"};
    i.txn_id = mp::Str(f[2], "txn_id");
    i.lock = mp::Str(f[3], "lock");
    i.prev_exists = mp::Bool(f[4], "prev_exists");
    i.prev_etag = mp::Str(f[5], "prev_etag");
    i.prev_body = mp::Bin(f[6], "prev_body");
    i.next_exists = mp::Bool(f[7], "next_exists");
    i.next_body = mp::Bin(f[8], "next_body");
    if (oh.get().via.array.size >= 11) {
      i.reads_only = mp::Bool(f[9], "reads_only");
      i.prev_same = mp::Str(f[10], "prev_same");
    }
    if (i.txn_id.empty()) throw mp::FormatError{"no transaction id"};
  }));
  return i;
}

std::string PrewritingTransaction(const BlobProperties& p) {
  auto it = p.metadata.find(kPrewriteMetadata);
  return it == p.metadata.end() ? "" : it->second;
}

}  // namespace blobtable::internal
