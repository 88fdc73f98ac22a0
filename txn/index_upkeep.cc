// SPDX-License-Identifier: Apache-2.0
#include "txn/index_upkeep.h"

#include <algorithm>
#include <set>
#include <vector>

#include "model/blob_naming.h"
#include "model/entity_codec.h"
#include "model/key_rules.h"
#include "model/index_entries.h"
#include "model/index_naming.h"
#include "txn/atomic_commit.h"
#include "txn/entity_access.h"
#include "txn/txn_context.h"
#include "util/macros.h"
#include "util/parallel.h"

namespace blobtable::internal {
namespace {

using Kind = Intent::Kind;
using Expect = Intent::Expect;

constexpr char kDefinitionsProperty[] = "definitions";

// Looks at the version of `i`'s entity committed now, for the commit to plan
// on (Intent::looked).
Status LookAt(const TxnContext& core, Intent& i) {
  auto version = LookCommitted(*core.blobs, i.blob);
  if (!version.ok()) return version.status().WithContext(i.Describe());
  i.looked = std::move(*version);
  return Status::OK();
}

// The entity an intent leaves: none for a delete; its entity for a put; for
// a merge, its properties over what was read.
std::optional<Entity> AfterWrite(const Intent& i) {
  if (i.kind == Kind::kDelete) return std::nullopt;
  if (i.kind == Kind::kMerge && i.read_found && i.read_entity) {
    Entity merged = *i.read_entity;
    for (const auto& [name, value] : i.entity.properties()) merged.Set(name, value);
    return merged;
  }
  return i.entity;
}

std::optional<Entity> BeforeWrite(const Intent& i) {
  if (i.read_found && i.read_entity) return *i.read_entity;
  return std::nullopt;
}

std::string EntryAbout(const IndexSpec& spec, const Entity& entry, const Intent& of) {
  std::vector<PropertyValue> values;
  for (const std::string& p : spec.properties)
    if (const PropertyValue* v = entry.Find(p)) values.push_back(*v);
  return DescribeIndexValues(spec, values) + " of " + of.Describe();
}

// Conflict: the value `about` (an entry's, "index I (...) of <entity>") is
// held by entity `holder`.
Status HeldBy(const std::string& about, const naming::EntityKey& holder) {
  const size_t of = about.find(" of ");
  return Status::Conflict(about.substr(0, of) + " is already held by entity (PartitionKey " +
                          QuotedForMessage(holder.partition_key) + ", RowKey " +
                          QuotedForMessage(holder.row_key) + "), so" + about.substr(of + 3) +
                          " cannot hold it too");
}

// Builds the entry writes of one transaction: first every entry its writes
// take away, then every entry they make (an entry one write takes away and
// another makes, as when two entities swap a unique value, is one put).
class UpkeepPlan {
 public:
  explicit UpkeepPlan(TxnBuffer& b) : b_(b) {}

  // Keeps `schema` alive with the plan: the entries planned point into it,
  // and the store's copy may be replaced by another thread meanwhile.
  Status Add(const std::string& table, std::shared_ptr<const TableSchema> schema,
             std::vector<Intent*>& writes) {
    schemas_.push_back(schema);
    for (const IndexDefinition& d : schema->indexes) {
      if (d.state == IndexState::kDropping) continue;
      for (Intent* i : writes) {
        BT_ASSIGN_OR_RETURN(std::optional<Entity> before, Entry(table, d.spec, BeforeWrite(*i)));
        BT_ASSIGN_OR_RETURN(std::optional<Entity> after, Entry(table, d.spec, AfterWrite(*i)));
        if (before && after && SameKeys(*before, *after)) {
          if (!before->SameContent(*after))
            puts_.push_back({&d.spec, std::move(*after), i, true, ""});
          continue;
        }
        if (before) deletes_.push_back({&d.spec, std::move(*before), i, false, ""});
        if (after) puts_.push_back({&d.spec, std::move(*after), i, false, ""});
      }
    }
    return Status::OK();
  }

  // An index build's batch: the entries of entities as they are, checked
  // unchanged at commit (`checks`: kCheck intents on them, read).
  Status AddBuilt(const std::string& table, const IndexSpec& spec,
                  const std::vector<Intent*>& checks) {
    for (Intent* i : checks) {
      BT_ASSIGN_OR_RETURN(std::optional<Entity> entry, Entry(table, spec, BeforeWrite(*i)));
      if (entry) puts_.push_back({&spec, std::move(*entry), i, false, ""});
    }
    return Status::OK();
  }

  // Buffers the entry writes, reading each new unique entry first.
  Status Buffer() {
    std::set<std::string> taken_away;
    for (Planned& p : deletes_) {
      BT_ASSIGN_OR_RETURN(Intent * e, EntryIntent(p));
      e->kind = Kind::kDelete;
      e->expect = Expect::kAny;
      taken_away.insert(e->blob);
    }
    std::vector<Intent*> claims;
    for (Planned& p : puts_) {
      BT_ASSIGN_OR_RETURN(Intent * e, EntryIntent(p));
      if (e->kind == Kind::kPut) {  // two writes of the transaction make one entry
        auto first = EntityOfEntry(e->entity);
        return HeldBy(p.about, first.ok() ? *first : naming::EntityKey{});
      }
      e->kind = Kind::kPut;
      e->expect = Expect::kAny;
      e->entity = std::move(p.entry);
      if (p.spec->unique && !p.same_entry && taken_away.count(e->blob) == 0) claims.push_back(e);
    }
    // A unique value is claimed by the entry's absence, read now and
    // checked again at commit: a holder found now is named. Beside the
    // claims, every other entry the commit protocol would read first (one
    // round, not two).
    std::vector<Intent*> looks;
    if (!CommitsAtomically(b_))
      for (auto& [blob, i] : b_.intents)
        if (i.upkeep && !i.read && std::find(claims.begin(), claims.end(), &i) == claims.end())
          looks.push_back(&i);
    std::vector<Result<Entity>> read(claims.size(), Status::Internal("not read"));
    std::vector<Status> looked(looks.size());
    ParallelFor(claims.size() + looks.size(), b_.core->CommitWidth(), [&](size_t k) {
      if (k < claims.size()) {
        read[k] = ReadIntoIntent(*b_.core, *claims[k]);
        return;
      }
      looked[k - claims.size()] = LookAt(*b_.core, *looks[k - claims.size()]);
    });
    for (const Status& s : looked) BT_RETURN_IF_ERROR(s);
    for (size_t k = 0; k < claims.size(); ++k) {
      if (read[k].status().IsNotFound()) continue;
      if (!read[k].ok()) return read[k].status();
      auto holder = EntityOfEntry(*read[k]);
      if (!holder.ok()) return holder.status().WithContext(claims[k]->about);
      const PropertyValue* pk = claims[k]->entity.Find(kEntryPartitionKey);
      const PropertyValue* rk = claims[k]->entity.Find(kEntryRowKey);
      if (pk && rk && std::get<std::string>(*pk) == holder->partition_key &&
          std::get<std::string>(*rk) == holder->row_key)
        continue;  // its own entry, found where it was not expected: rewritten
      return HeldBy(claims[k]->about, *holder);
    }
    return Status::OK();
  }

 private:
  struct Planned {
    const IndexSpec* spec;
    Entity entry;
    const Intent* of;
    bool same_entry;  // rewritten in place: the entity holds it already
    std::string about;
  };

  static Result<std::optional<Entity>> Entry(const std::string& table, const IndexSpec& spec,
                                             const std::optional<Entity>& entity) {
    if (!entity) return std::optional<Entity>();
    return EntryOf(table, spec, *entity);
  }
  static bool SameKeys(const Entity& a, const Entity& b) {
    return a.partition_key() == b.partition_key() && a.row_key() == b.row_key();
  }

  Result<Intent*> EntryIntent(Planned& p) {
    const std::string table = naming::IndexTableName(p.of->table, p.spec->name);
    BT_ASSIGN_OR_RETURN(std::string blob,
                        naming::EntityBlobName(table, p.entry.partition_key(), p.entry.row_key()));
    p.about = EntryAbout(*p.spec, p.entry, *p.of);
    Intent& i = b_.intents[blob];
    if (i.blob.empty()) {
      i.table = table;
      i.pk = p.entry.partition_key();
      i.rk = p.entry.row_key();
      i.blob = blob;
      // One lock for all of an index's entries, partition "" of the index's
      // table (a stripe of it, as any lock): a new value needs no lock blob
      // of its own (none created, none left behind), since a lock only says
      // that the coordinator is at work (L2) and an entry is fenced by its
      // intent. Like every stripe it is taken before any entity or entry
      // (D1: stripes first in the commit's order).
      BT_ASSIGN_OR_RETURN(i.lock, naming::LockBlobName(table, ""));
      i.upkeep = true;
      i.about = p.about;
      i.order = b_.next_order++;
    }
    return &i;
  }

  TxnBuffer& b_;
  std::vector<std::shared_ptr<const TableSchema>> schemas_;  // what `spec`s point into
  std::vector<Planned> deletes_, puts_;
};

}  // namespace

Result<SchemaCopy> ReadSchema(const TxnContext& core, std::string_view table) {
  BT_ASSIGN_OR_RETURN(std::string blob, naming::SchemaBlobName(table));
  SchemaCopy copy;
  copy.read_at = core.clock->Steady();
  auto stored = ReadVisibleEntity(core, blob, "", naming::kSchemaRowKey, ReadPolicy::Validate());
  if (stored.status().IsNotFound()) {
    copy.schema = std::make_shared<TableSchema>();
    return copy;
  }
  if (!stored.ok())
    return stored.status().WithContext("table " + std::string(table) +
                                       ": reading its index definitions");
  BT_ASSIGN_OR_RETURN(TableSchema schema, SchemaOf(*stored, table));
  copy.schema = std::make_shared<TableSchema>(std::move(schema));
  copy.etag = stored->etag();
  return copy;
}

Result<TableSchema> SchemaOf(const Entity& stored, std::string_view table) {
  const PropertyValue* bytes = stored.Find(kDefinitionsProperty);
  if (bytes == nullptr || !std::holds_alternative<Binary>(*bytes))
    return Status::Corruption("table " + std::string(table) +
                              ": its index definitions hold no definitions");
  auto schema = DecodeTableSchema(std::get<Binary>(*bytes).bytes);
  if (!schema.ok())
    return schema.status().WithContext("table " + std::string(table) + ": index definitions");
  return *std::move(schema);
}

bool SameUpkeep(const TableSchema& a, const TableSchema& b) {
  // What writers maintain: each index's spec and state, not a build's place.
  auto without_places = [](TableSchema s) {
    for (IndexDefinition& d : s.indexes) d.built_through.clear();
    return EncodeTableSchema(s);
  };
  return without_places(a) == without_places(b);
}

Entity SchemaEntity(const TableSchema& schema) {
  Entity e("", naming::kSchemaRowKey);
  e.Set(kDefinitionsProperty, Binary{EncodeTableSchema(schema)});
  return e;
}

Result<SchemaCopy> SchemaCache::Current(const TxnContext& core, std::string_view table,
                                        std::optional<std::chrono::milliseconds> max_age) {
  if (naming::IsHiddenTable(table)) {  // an index's or the definitions' own table
    static const auto kNone = std::make_shared<const TableSchema>();
    const SteadyTime now = core.clock->Steady();
    return SchemaCopy{kNone, "", now, now + times_.max_age};
  }
  const std::string key = naming::SchemaTableName(table);
  std::optional<SchemaCopy> kept;
  {
    std::lock_guard<std::mutex> guard(mu_);
    auto it = copies_.find(key);
    if (it != copies_.end()) kept = it->second;
  }
  if (kept) {
    const auto age = core.clock->Steady() - kept->read_at;
    if (age < max_age.value_or(times_.fresh)) return *kept;
    if (!max_age && age < times_.max_age / 2 && RefreshLater(core, std::string(table)))
      return *kept;
  }
  return ReadAndKeep(core, table);
}

Result<SchemaCopy> SchemaCache::ReadAndKeep(const TxnContext& core, std::string_view table) {
  const std::string key = naming::SchemaTableName(table);
  uint64_t forgotten = 0;
  {
    std::lock_guard<std::mutex> guard(mu_);
    forgotten = forgets_[key];
  }
  BT_ASSIGN_OR_RETURN(SchemaCopy copy, ReadSchema(core, table));
  copy.deadline = copy.read_at + times_.max_age;
  std::lock_guard<std::mutex> guard(mu_);
  if (forgets_[key] != forgotten) return copy;  // read before a change: not kept
  SchemaCopy& kept = copies_[key];
  if (copy.read_at >= kept.read_at) kept = copy;
  return copy;
}

bool SchemaCache::RefreshLater(const TxnContext& core, const std::string& table) {
  if (!core.finisher || !core.schemas) return false;
  {
    std::lock_guard<std::mutex> guard(mu_);
    if (!refreshing_.insert(naming::SchemaTableName(table)).second) return true;  // on its way
  }
  // The job keeps what it reads through, not the finisher that runs it.
  auto context = std::make_shared<TxnContext>(core);
  context->finisher = nullptr;
  core.finisher->Submit([context, table] {
    (void)context->schemas->ReadAndKeep(*context, table);  // else read by the next write
    std::lock_guard<std::mutex> guard(context->schemas->mu_);
    context->schemas->refreshing_.erase(naming::SchemaTableName(table));
  });
  return true;
}

void SchemaCache::Forget(std::string_view table) {
  std::lock_guard<std::mutex> guard(mu_);
  const std::string key = naming::SchemaTableName(table);
  copies_.erase(key);
  ++forgets_[key];  // a read under way when it was called is not kept
}

bool SchemaCache::Holds(std::string_view table) {
  if (naming::IsHiddenTable(table)) return true;  // none to read (Current)
  std::lock_guard<std::mutex> guard(mu_);
  return copies_.count(naming::SchemaTableName(table)) != 0;
}

namespace {

// The entity `i` writes, as the look taken at it (`i.looked`) found it: read
// by the transaction now, as ReadIntoIntent would have read it.
Status ReadFromLook(Intent& i) {
  CommittedVersion v = std::move(*i.looked);
  i.looked.reset();
  std::optional<Entity> entity;
  if (v.exists) {
    VisibleVersion visible{std::move(v.body), v.etag, v.handles, /*stale=*/false};
    BT_ASSIGN_OR_RETURN(entity, DecodeVisible(std::move(visible), i.blob, i.pk, i.rk, nullptr));
  }
  i.read = true;
  i.read_found = v.exists;
  i.read_etag = v.exists ? v.etag : "";
  i.read_handles = v.exists ? v.handles : "";
  i.read_entity = std::move(entity);
  return Status::OK();
}

// Where the store keeps no copy of a written table's definitions (a
// short-lived process's first transaction), reads them, and beside them
// looks at every entity the commit would look at a round later (those the
// transaction has not read: txn/prewrite_commit.cc, Look): one round, not
// two (issue 57, goal 4). The commit point still comes within the copies'
// deadline (CheckSchemaAge), as when they were read first.
Status ReadDefinitionsBesideLooks(TxnBuffer& b,
                                  const std::map<std::string, std::vector<Intent*>>& by_table) {
  std::vector<std::string> tables;
  for (const auto& [key, writes] : by_table)
    if (!b.core->schemas->Holds(writes[0]->table)) tables.push_back(writes[0]->table);
  if (tables.empty()) return Status::OK();
  std::vector<Intent*> looks;
  if (!CommitsAtomically(b))  // the embedded batch reads in-process, at once
    for (auto& [blob, i] : b.intents)
      if (!i.upkeep && !i.read && !i.looked) looks.push_back(&i);
  std::vector<Status> done(tables.size() + looks.size());
  ParallelFor(done.size(), b.core->CommitWidth(), [&](size_t k) {
    if (k < tables.size()) {
      done[k] = b.core->schemas->Current(*b.core, tables[k]).status();
      return;
    }
    done[k] = LookAt(*b.core, *looks[k - tables.size()]);
  });
  for (const Status& s : done) BT_RETURN_IF_ERROR(s);
  return Status::OK();
}

}  // namespace

Status AddIndexUpkeep(TxnBuffer& b) {
  std::map<std::string, std::vector<Intent*>> by_table;
  for (auto& [blob, i] : b.intents)
    if (i.writes() && !i.upkeep && !naming::IsHiddenTable(i.table))
      by_table[naming::SchemaTableName(i.table)].push_back(&i);
  if (b.core->schemas == nullptr) return Status::OK();
  BT_RETURN_IF_ERROR(ReadDefinitionsBesideLooks(b, by_table));
  UpkeepPlan plan(b);
  for (auto& [key, writes] : by_table) {
    BT_ASSIGN_OR_RETURN(SchemaCopy copy, b.core->schemas->Current(*b.core, writes[0]->table));
    b.schema_etags[writes[0]->table] = copy.etag;
    b.schemas_followed[writes[0]->table] = copy.schema;
    if (!b.schema_deadline || copy.deadline < *b.schema_deadline) b.schema_deadline = copy.deadline;
    if (!copy.schema->Maintained()) continue;
    // What each write replaces: read now unless the transaction read it,
    // or it is an insert through the commit protocol, which expects nothing
    // there: planned on that (its intent's put is If-None-Match "*", so an
    // entity found there fails the commit, Conflict), it is one round trip
    // less, its new entries looked up at once after.
    std::vector<Intent*> unread;
    const bool protocol = !CommitsAtomically(b);
    for (Intent* i : writes) {
      if (i->read) continue;
      if (protocol && i->kind == Kind::kPut && i->expect == Expect::kAbsent)
        i->looked = CommittedVersion{};
      else if (i->looked)  // looked at beside the definitions: that is its read
        BT_RETURN_IF_ERROR(ReadFromLook(*i));
      else
        unread.push_back(i);
    }
    std::vector<Status> read(unread.size());
    ParallelFor(unread.size(), b.core->CommitWidth(), [&](size_t k) {
      Status s = ReadIntoIntent(*b.core, *unread[k]).status();
      read[k] = s.IsNotFound() ? Status::OK() : s;
    });
    for (const Status& s : read) BT_RETURN_IF_ERROR(s);
    BT_RETURN_IF_ERROR(plan.Add(writes[0]->table, copy.schema, writes));
  }
  return plan.Buffer();
}

Status StillUnindexed(const TxnContext& core, std::string_view table, SteadyTime* deadline,
                      bool* indexed) {
  if (core.clock->Steady() <= *deadline || core.schemas == nullptr) return Status::OK();
  BT_ASSIGN_OR_RETURN(SchemaCopy copy,
                      core.schemas->Current(core, table, std::chrono::milliseconds(0)));
  if (copy.schema->Maintained()) {
    *indexed = true;
    return Status::Conflict("the table has an index now");
  }
  *deadline = copy.deadline;
  return Status::OK();
}

Status CommitBuilt(const std::shared_ptr<const TxnContext>& core, const std::string& table,
                   const IndexSpec& spec, const std::vector<Entity>& entities,
                   const std::string& schema_etag, bool* raced) {
  *raced = false;
  TxnBuffer b;
  b.core = core;
  // `e` as read at `etag` (`read`), or only its keys (checked as it is
  // found at commit).
  auto check = [&](const std::string& t, const Entity& e, const std::string& etag,
                   bool read) -> Result<Intent*> {
    BT_ASSIGN_OR_RETURN(std::string blob,
                        naming::EntityBlobName(t, e.partition_key(), e.row_key()));
    Intent& i = b.intents[blob];
    i.table = t;
    i.pk = e.partition_key();
    i.rk = e.row_key();
    i.blob = blob;
    BT_ASSIGN_OR_RETURN(i.lock, naming::LockBlobName(t, i.pk));
    i.kind = Kind::kCheck;
    i.expect = Expect::kETag;
    i.etag = etag;
    if (read) {
      i.read = true;
      i.read_found = true;
      i.read_etag = etag;
      i.read_entity = e;
    }
    i.order = b.next_order++;
    return &i;
  };
  // The definitions, unchanged: a drop or another change stops the batch.
  BT_RETURN_IF_ERROR(
      check(naming::SchemaTableName(table), Entity("", naming::kSchemaRowKey), schema_etag, false)
          .status());
  std::vector<Intent*> checks;
  for (const Entity& e : entities) {
    BT_ASSIGN_OR_RETURN(Intent * i, check(table, e, e.etag(), true));
    checks.push_back(i);
  }
  UpkeepPlan plan(b);
  BT_RETURN_IF_ERROR(plan.AddBuilt(table, spec, checks));
  BT_RETURN_IF_ERROR(plan.Buffer());
  if (!std::any_of(b.intents.begin(), b.intents.end(),
                   [](const auto& kv) { return kv.second.writes(); }))
    return Status::OK();  // no entity of the batch is in the index
  auto committed = CommitBuffer(b);
  if (committed.ok()) return Status::OK();
  // A value held by another entity was answered above (HeldBy); a failed
  // check here is a change since the page was read, or a claim raced.
  *raced = committed.status().IsConflict() || committed.status().IsNotFound();
  return committed.status();
}

Status CheckSchemaAge(TxnBuffer& b, SteadyTime now) {
  if (!b.schema_deadline || now <= *b.schema_deadline) return Status::OK();
  // Read long ago: still the definitions followed, or the commit is refused.
  SteadyTime oldest = now;
  for (const auto& [table, etag] : b.schema_etags) {
    BT_ASSIGN_OR_RETURN(SchemaCopy copy,
                        b.core->schemas->Current(*b.core, table, std::chrono::milliseconds(0)));
    if (copy.etag != etag) return SchemaChanged(b, table);
    oldest = std::min(oldest, copy.read_at);
  }
  b.schema_deadline = oldest + b.core->schemas->times().max_age;
  return Status::OK();
}

Result<std::vector<SchemaRead>> SchemaReads(const TxnBuffer& b) {
  std::vector<SchemaRead> reads;
  for (const auto& [table, etag] : b.schema_etags) {
    Intent i;
    i.table = naming::SchemaTableName(table);
    i.rk = naming::kSchemaRowKey;
    BT_ASSIGN_OR_RETURN(i.blob, naming::SchemaBlobName(table));
    if (b.intents.count(i.blob) != 0) continue;  // written here: its own write is checked
    i.kind = Intent::Kind::kCheck;
    i.read = true;
    i.read_found = !etag.empty();
    i.read_etag = etag;
    i.about = "table " + table + ", its index definitions";
    auto followed = b.schemas_followed.find(table);
    reads.push_back({table, std::move(i),
                     followed != b.schemas_followed.end() && followed->second != nullptr
                         ? followed->second
                         : std::make_shared<TableSchema>()});
  }
  return reads;
}

Status SchemaChanged(TxnBuffer& b, const std::string& table) {
  b.schema_changed = true;
  if (b.core->schemas != nullptr) b.core->schemas->Forget(table);  // the next read is fresh
  return Status::Conflict("table " + table +
                          ": its index definitions changed while the transaction was "
                          "committed; nothing was committed: run it again");
}

}  // namespace blobtable::internal
