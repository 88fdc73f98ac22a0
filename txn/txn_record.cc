// SPDX-License-Identifier: Apache-2.0
#include "txn/txn_record.h"

#include "model/blob_naming.h"
#include "util/msgpack_util.h"

namespace blobtable::internal {
namespace {
constexpr char kRecordMagic[] = "bt.txn";
constexpr int kProtocolOneFormat = 1;
constexpr int kRecordFormatTwo = 2;  // committed or aborted; no locks, no met
constexpr int kRecordFormat = 3;
constexpr char kMarkerMagic[] = "bt.pending";
constexpr int kMarkerFormat = 1;

// What to do about a damaged record, after what is wrong with it.
Status Damaged(const Status& s, std::string_view blob_name) {
  return Status::Corruption(
      s.message() + ". Whether that transaction committed cannot be told: restore the blob '" +
      std::string(blob_name) +
      "', or delete it to discard the transaction (whoever meets its "
      "intents then undoes them; if it had committed, its writes not yet applied are lost)");
}

Status ProtocolOneRefused(std::string_view what) {
  return Status::Corruption(
      std::string(what) +
      " was left by blobtable's first commit protocol, which this version no "
      "longer reads. Settle it with the release that wrote it (`blobtable recover`, which "
      "finishes or undoes every transaction it left), then open the store with this one");
}

}  // namespace

std::string RecordBlobName(std::string_view txn_id) { return kRecordPrefix + std::string(txn_id); }

bool CommitsIntent(const TxnRecord& record, std::string_view blob, std::string_view etag) {
  if (record.state != TxnState::kCommitted) return false;
  for (const TxnWrite& w : record.writes)
    if (w.blob == blob) return w.intent_etag == etag;
  return false;
}

std::string EncodeRecord(const TxnRecord& r) {
  msgpack::sbuffer buf;
  msgpack::packer<msgpack::sbuffer> pk(&buf);
  pk.pack_array(7);
  pk.pack(std::string_view(kRecordMagic));
  pk.pack(kRecordFormat);
  pk.pack(r.txn_id);
  pk.pack(static_cast<int>(r.state));
  pk.pack_array(static_cast<uint32_t>(r.writes.size()));
  for (const TxnWrite& w : r.writes) {
    pk.pack_array(2);
    pk.pack(w.blob);
    pk.pack(w.intent_etag);
  }
  pk.pack(r.locks);
  pk.pack(r.met);
  return std::string(buf.data(), buf.size());
}

Result<TxnRecord> DecodeRecord(std::string_view body, std::string_view blob_name) {
  std::string what = "transaction record '" + std::string(blob_name) + "'";
  auto oh = mp::Unpack(body, what);
  if (!oh.ok()) return Damaged(oh.status(), blob_name);
  TxnRecord r;
  bool protocol_one = false;
  Status s = mp::Guard(what, [&] {
    const msgpack::object* f = mp::Array(oh->get(), 2, "record");
    if (mp::Str(f[0], "magic") != kRecordMagic) throw mp::FormatError{"not a transaction record"};
    const int64_t format = mp::Int(f[1], "format");
    if (format == kProtocolOneFormat) {
      protocol_one = true;
      return;
    }
    if (format != kRecordFormat && format != kRecordFormatTwo)
      throw mp::FormatError{"unknown record format"};
    f = mp::Array(oh->get(), format == kRecordFormat ? 7 : 5, "record");
    r.txn_id = mp::Str(f[2], "txn_id");
    const int64_t state = mp::Int(f[3], "state");
    if (state != static_cast<int>(TxnState::kCommitted) &&
        state != static_cast<int>(TxnState::kAborted) &&
        !(format == kRecordFormat && state == static_cast<int>(TxnState::kPending)))
      throw mp::FormatError{"state out of range"};
    r.state = static_cast<TxnState>(state);
    const msgpack::object* writes = mp::Array(f[4], 0, "writes");
    for (uint32_t i = 0; i < f[4].via.array.size; ++i) {
      const msgpack::object* w = mp::Array(writes[i], 2, "write");
      TxnWrite tw;
      tw.blob = mp::Str(w[0], "blob");
      // A record names entities of tables, and nothing else, for whoever
      // finishes it to write.
      if (!naming::IsEntityBlobName(tw.blob)) throw mp::FormatError{"a write to a non-entity blob"};
      tw.intent_etag = mp::Str(w[1], "intent_etag");
      r.writes.push_back(std::move(tw));
    }
    if (format == kRecordFormatTwo) {
      // A writer that went first named the entity it met as the only write.
      if (r.state == TxnState::kAborted && !r.writes.empty()) r.met = r.writes.front().blob;
      return;
    }
    const msgpack::object* locks = mp::Array(f[5], 0, "locks");
    for (uint32_t i = 0; i < f[5].via.array.size; ++i) {
      std::string lock = mp::Str(locks[i], "lock");
      // Recover reads the leases of what a record names as its locks.
      if (!naming::IsLockBlobName(lock)) throw mp::FormatError{"a lock that is not a lock blob"};
      r.locks.push_back(std::move(lock));
    }
    r.met = mp::Str(f[6], "met");
  });
  if (protocol_one) return ProtocolOneRefused(what);
  if (!s.ok()) return Damaged(s, blob_name);
  return r;
}

std::string MarkerBlobName(std::string_view txn_id) { return kMarkerPrefix + std::string(txn_id); }

std::string EncodeMarker(const TxnMarker& m) {
  msgpack::sbuffer buf;
  msgpack::packer<msgpack::sbuffer> pk(&buf);
  pk.pack_array(4);
  pk.pack(std::string_view(kMarkerMagic));
  pk.pack(kMarkerFormat);
  pk.pack(m.txn_id);
  pk.pack(m.blobs);
  return std::string(buf.data(), buf.size());
}

Result<TxnMarker> DecodeMarker(std::string_view body, std::string_view blob_name) {
  const std::string what = "transaction marker '" + std::string(blob_name) + "'";
  TxnMarker m;
  Status s = mp::Walk(body, what, [&](const mp::Path& p, const mp::Item& it) {
    if (p.depth == 0) {
      if (it.kind == mp::Item::kArray && it.size < 4)
        throw mp::FormatError{"marker is not long enough"};
      if (it.kind != mp::Item::kArray && it.kind != mp::Item::kEnd)
        throw mp::FormatError{"marker is not an array"};
    } else if (p.depth == 1 && p.Last() == 0 && it.Str("magic") != kMarkerMagic) {
      throw mp::FormatError{"not a transaction marker"};
    } else if (p.depth == 1 && p.Last() == 1 && it.Int("format") != kMarkerFormat) {
      throw mp::FormatError{"unknown marker format"};
    } else if (p.depth == 1 && p.Last() == 2) {
      m.txn_id = std::string(it.Str("txn_id"));
    } else if (p.depth == 1 && p.Last() == 3 && it.kind != mp::Item::kArray &&
               it.kind != mp::Item::kEnd) {
      throw mp::FormatError{"blobs is not an array"};
    } else if (p.depth == 2 && p.index[0] == 3) {
      std::string blob(it.Str("blob"));
      // Only entities of tables: Recover settles what a marker names.
      if (!naming::IsEntityBlobName(blob)) throw mp::FormatError{"names a non-entity blob"};
      m.blobs.push_back(std::move(blob));
    }
  });
  if (!s.ok()) return s;
  return m;
}

bool IsProtocolOneRecord(std::string_view body) {
  auto oh = mp::Unpack(body, "record");
  if (!oh.ok()) return false;
  bool one = false;
  (void)mp::Guard("record", [&] {
    const msgpack::object* f = mp::Array(oh->get(), 2, "record");
    one = mp::Str(f[0], "magic") == kRecordMagic && mp::Int(f[1], "format") == kProtocolOneFormat;
  });
  return one;
}

Status RefuseProtocolOneMark(const BlobProperties& p, std::string_view blob) {
  for (const char* mark : {kProtocolOneIntentMetadata, kProtocolOneReservationMetadata}) {
    auto it = p.metadata.find(mark);
    if (it != p.metadata.end())
      return ProtocolOneRefused("blob '" + std::string(blob) + "' (its mark '" + mark +
                                "' of transaction " + it->second + ")");
  }
  return Status::OK();
}

}  // namespace blobtable::internal
