#include "txn/txn_record.h"

#include "model/blob_naming.h"
#include "util/msgpack_util.h"

namespace blobtable {
namespace {
constexpr char kRecordMagic[] = "bt.txn";
constexpr int kRecordFormat = 1;
constexpr int kRecordFormat2 = 2;

void PackStrings(msgpack::packer<msgpack::sbuffer>& pk, const std::vector<std::string>& v) {
  pk.pack_array(static_cast<uint32_t>(v.size()));
  for (const auto& s : v) pk.pack(s);
}

std::vector<std::string> Strings(const msgpack::object& o, const char* field) {
  const msgpack::object* items = mp::Array(o, 0, field);
  std::vector<std::string> out;
  for (uint32_t i = 0; i < o.via.array.size; ++i) out.push_back(mp::Str(items[i], field));
  return out;
}
}  // namespace

std::string RecordBlobName(std::string_view txn_id) { return kRecordPrefix + std::string(txn_id); }

std::string EncodeRecord(const TxnRecord& r) {
  msgpack::sbuffer buf;
  msgpack::packer<msgpack::sbuffer> pk(&buf);
  if (r.format == kRecordFormat2) {
    pk.pack_array(5);
    pk.pack(std::string_view(kRecordMagic));
    pk.pack(kRecordFormat2);
    pk.pack(r.txn_id);
    pk.pack(static_cast<int>(r.state));
    pk.pack_array(static_cast<uint32_t>(r.writes.size()));
    for (const TxnWrite& w : r.writes) {
      pk.pack_array(2);
      pk.pack(w.blob);
      pk.pack(w.seen_etag);
    }
    return std::string(buf.data(), buf.size());
  }
  pk.pack_array(8);
  pk.pack(std::string_view(kRecordMagic));
  pk.pack(kRecordFormat);
  pk.pack(r.txn_id);
  pk.pack(r.lease_id);
  pk.pack(static_cast<int>(r.state));
  PackStrings(pk, r.locks);
  PackStrings(pk, r.entities);
  pk.pack_array(static_cast<uint32_t>(r.writes.size()));
  for (const TxnWrite& w : r.writes) {
    pk.pack_array(4);
    pk.pack(w.blob);
    pk.pack(static_cast<int>(w.op));
    pk.pack_bin(static_cast<uint32_t>(w.body.size()));
    pk.pack_bin_body(w.body.data(), static_cast<uint32_t>(w.body.size()));
    pk.pack(w.seen_etag);
  }
  return std::string(buf.data(), buf.size());
}

namespace {

// What to do about a damaged record, after what is wrong with it.
Status Damaged(const Status& s, std::string_view blob_name) {
  return Status::Corruption(
      s.message() + ". Whether that transaction committed cannot be told: restore the blob '" +
      std::string(blob_name) + "', or delete it to discard the transaction (whoever meets its "
      "marks then clears them; if it had committed, its writes not yet applied are lost)");
}

TxnState StateOf(const msgpack::object& o) {
  int64_t state = mp::Int(o, "state");
  if (state < 0 || state > 2) throw mp::FormatError{"state out of range"};
  return static_cast<TxnState>(state);
}

void DecodeFormat2(const msgpack::object& o, TxnRecord& r) {
  const msgpack::object* f = mp::Array(o, 5, "record");
  r.txn_id = mp::Str(f[2], "txn_id");
  r.lease_id = r.txn_id;
  r.state = StateOf(f[3]);
  if (r.state == TxnState::kPending) throw mp::FormatError{"a format-2 record is never pending"};
  const msgpack::object* writes = mp::Array(f[4], 0, "writes");
  for (uint32_t i = 0; i < f[4].via.array.size; ++i) {
    const msgpack::object* w = mp::Array(writes[i], 2, "write");
    TxnWrite tw;
    tw.blob = mp::Str(w[0], "blob");
    if (!naming::IsEntityBlobName(tw.blob)) throw mp::FormatError{"a write to a non-entity blob"};
    tw.seen_etag = mp::Str(w[1], "intent_etag");
    r.entities.push_back(tw.blob);
    r.writes.push_back(std::move(tw));
  }
}

}  // namespace

Result<TxnRecord> DecodeRecord(std::string_view body, std::string_view blob_name) {
  std::string what = "transaction record '" + std::string(blob_name) + "'";
  auto oh = mp::Unpack(body, what);
  if (!oh.ok()) return Damaged(oh.status(), blob_name);
  TxnRecord r;
  Status s = mp::Guard(what, [&] {
    const msgpack::object* f = mp::Array(oh->get(), 2, "record");
    if (mp::Str(f[0], "magic") != kRecordMagic) throw mp::FormatError{"not a transaction record"};
    r.format = static_cast<int>(mp::Int(f[1], "format"));
    if (r.format == kRecordFormat2) {
      DecodeFormat2(oh->get(), r);
      return;
    }
    if (r.format != kRecordFormat) throw mp::FormatError{"unknown record format"};
    f = mp::Array(oh->get(), 8, "record");
    r.txn_id = mp::Str(f[2], "txn_id");
    r.lease_id = mp::Str(f[3], "lease_id");
    r.state = StateOf(f[4]);
    r.locks = Strings(f[5], "locks");
    r.entities = Strings(f[6], "entities");
    for (const std::string& e : r.entities)
      if (!naming::IsEntityBlobName(e)) throw mp::FormatError{"a non-entity blob among its entities"};
    const msgpack::object* writes = mp::Array(f[7], 0, "writes");
    for (uint32_t i = 0; i < f[7].via.array.size; ++i) {
      const msgpack::object* w = mp::Array(writes[i], 4, "write");
      TxnWrite tw;
      tw.blob = mp::Str(w[0], "blob");
      // A record names entities of tables, and nothing else, for its
      // resolvers to write.
      if (!naming::IsEntityBlobName(tw.blob)) throw mp::FormatError{"a write to a non-entity blob"};
      int64_t op = mp::Int(w[1], "op");
      if (op != 0 && op != 1) throw mp::FormatError{"write op out of range"};
      tw.op = static_cast<TxnWrite::Op>(op);
      tw.body = mp::Bin(w[2], "body");
      tw.seen_etag = mp::Str(w[3], "seen_etag");
      r.writes.push_back(std::move(tw));
    }
  });
  if (!s.ok()) return Damaged(s, blob_name);
  return r;
}

}  // namespace blobtable
