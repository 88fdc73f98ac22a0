// SPDX-License-Identifier: Apache-2.0
// Table::Visit: a query's page handed over row by row as views. On a store
// that reads in place (storage/in_place.h) each unmarked row is decoded
// from the listing where it lies and handed over at once, inside the
// listing: no Entity, no copy of a value. What that path cannot answer
// (a row a transaction marked, a body that is not the entity its name
// says) is left to Query, from that row on, and its entities handed over
// as views: one way to read those rows, Query's.
#include <string>
#include <vector>

#include "blobtable/table.h"
#include "kv/query_plan.h"
#include "kv/store_core.h"
#include "model/entity_codec.h"
#include "txn/recovery.h"
#include "util/macros.h"

namespace blobtable {
namespace {

// Hands `page`'s entities to `visit` as views, adding to `out`.
Status VisitEntities(const QueryPage& page, const EntityVisitor& visit, VisitedPage& out) {
  std::vector<PropertyView> props;
  internal::UserCode user;  // the visitor's calls are the user's own
  for (const Entity& e : page.entities) {
    BT_RETURN_IF_ERROR(visit(internal::ViewOf(e, props)));
    ++out.rows;
  }
  out.continuation = page.continuation;
  out.stale = out.stale || page.stale;
  return Status::OK();
}

// Keeps the selected properties of `props` (sorted), in order; all if none
// are selected.
std::span<const PropertyView> Select(const std::vector<std::string>& select,
                                     std::vector<PropertyView>& props) {
  if (select.empty()) return props;
  size_t kept = 0;
  for (const PropertyView& p : props)
    if (std::find(select.begin(), select.end(), p.name()) != select.end()) props[kept++] = p;
  return std::span<const PropertyView>(props.data(), kept);
}

// One in-place visit: the rows of one page, listing after listing.
class InPlaceVisit {
 public:
  InPlaceVisit(const internal::QueryPlan& plan, const EntityVisitor& visit,
               internal::Counter* scanned)
      : plan_(plan), visit_(visit), scanned_counter_(scanned) {}
  InPlaceVisit(const InPlaceVisit&) = delete;
  InPlaceVisit& operator=(const InPlaceVisit&) = delete;
  ~InPlaceVisit() {  // the rows its listings reached, visited or not
    if (scanned_counter_ != nullptr && scanned_ > 0) scanned_counter_->Add(scanned_);
  }

  // Why the listing stopped early, if it did: the visitor's error, or the
  // first row the in-place path leaves to Query.
  enum class Stop { kNo, kVisitorError, kNeedsQuery, kPageFull, kPastRange };

  // One listed blob.
  Status Add(const internal::BlobInPlace& b) {
    if (!plan_.after.empty() && b.name <= plan_.after) return Status::OK();
    ++scanned_;
    if (plan_.filter) last_listed_.assign(b.name);
    if (internal::HasMark(*b.metadata)) return LeaveToQuery();
    if (plan_.filter) {  // the filter's properties first: most rows of a scan do not match
      auto part = internal::DecodeEntityViewPart(b.data, b.name, plan_.filter_properties, props_);
      if (!part.ok() ||
          !internal::IsBlobOfRow(plan_, b.name, part->partition_key(), part->row_key()))
        return LeaveToQuery();
      if (Status placed = Place(part->row_key()); !placed.ok()) return placed;
      if (skip_) return Status::OK();
      if (!plan_.filter->Matches(*part)) return Status::OK();
    }
    auto row = internal::DecodeEntityView(b.data, b.name, b.etag, props_);
    if (!row.ok() || !internal::IsBlobOfRow(plan_, b.name, row->partition_key(), row->row_key()))
      return LeaveToQuery();
    if (!plan_.filter) {
      if (Status placed = Place(row->row_key()); !placed.ok()) return placed;
      if (skip_) return Status::OK();
    }
    if (page_.rows == plan_.q.top) return Halt(Stop::kPageFull);  // and this row follows
    const EntityView view(row->partition_key(), row->row_key(), row->timestamp(), row->etag(),
                          Select(plan_.q.select, props_));
    if (Status s = visit_(view); !s.ok()) {
      visitor_error_ = std::move(s);
      return Halt(Stop::kVisitorError);
    }
    ++page_.rows;
    last_.assign(b.name);
    return Status::OK();
  }

  Stop stop() const { return stop_; }
  Status& visitor_error() { return visitor_error_; }
  VisitedPage& page() { return page_; }
  const std::string& last() const { return last_; }
  const std::string& last_listed() const { return last_listed_; }

 private:
  // Sets skip_ for a row outside the range; stops at the end of a partition's range.
  Status Place(std::string_view rk) {
    const internal::RowPlace place = internal::PlaceRow(plan_.q, rk);
    skip_ = place != internal::RowPlace::kIn;
    if (place == internal::RowPlace::kAfter && plan_.q.partition_key)
      return Halt(Stop::kPastRange);  // nothing later matches
    return Status::OK();
  }
  // A row this path cannot answer: Query answers from it with the room
  // left; on a full page, the next page starts at it (Query, asked for no
  // rows, would refuse top 0).
  Status LeaveToQuery() {
    return Halt(page_.rows == plan_.q.top ? Stop::kPageFull : Stop::kNeedsQuery);
  }
  Status Halt(Stop why) {
    stop_ = why;
    return Status::Internal("visit stopped");  // ends the listing; stop() says why
  }

  const internal::QueryPlan& plan_;
  const EntityVisitor& visit_;
  std::vector<PropertyView> props_;
  VisitedPage page_;
  std::string last_, last_listed_;
  Status visitor_error_;
  Stop stop_ = Stop::kNo;
  bool skip_ = false;
  internal::Counter* scanned_counter_;
  uint64_t scanned_ = 0;
};

}  // namespace

Result<VisitedPage> Table::Visit(const QueryOptions& options, const EntityVisitor& visit) const {
  return VisitRows(options, visit, /*check_values=*/false);
}

Result<VisitedPage> Table::VisitRows(const QueryOptions& options, const EntityVisitor& visit,
                                     bool check_values) const {
  return internal::MeteredCall(
      core_.get(), internal::OpKind::kQuery, name_, [&]() -> Result<VisitedPage> {
        BT_RETURN_IF_ERROR(Usable());
        if (!visit)
          return Status::InvalidArgument("table " + name_ + ", visit: no visitor function");
        VisitedPage out;
        if (core_->in_place == nullptr) {
          auto page = Query(options);
          if (!page.ok()) return page.status();
          BT_RETURN_IF_ERROR(VisitEntities(*page, visit, out));
          return out;
        }
        auto planned = internal::PlanQuery(name_, true, core_->options.cache.read_policy, options);
        if (!planned.ok()) return planned.status();
        internal::QueryPlan& plan = *planned;
        if (plan.nothing) return out;

        InPlaceVisit rows(plan, visit, internal::RowsScannedCounter(core_.get()));
        using Stop = InPlaceVisit::Stop;
        int pages = 0;
        for (;;) {
          auto next_marker = [&] {
            // Once a listing, not a row: nothing but the decoding and the
            // visitor runs in it, and the visitor's calls are the user's own.
            internal::UserCode user;
            return core_->in_place->ListInPlace(
                plan.list,
                check_values ? internal::InPlaceData::kChecked : internal::InPlaceData::kAsItLies,
                [&](const internal::BlobInPlace& b) { return rows.Add(b); });
          }();
          if (rows.stop() == Stop::kVisitorError) return std::move(rows.visitor_error());
          if (rows.stop() == Stop::kNeedsQuery) {
            // Query answers from the first row this path could not, with the room left.
            QueryOptions rest = options;
            rest.top = plan.q.top - static_cast<int>(rows.page().rows);  // 1 or more
            if (!rows.last().empty())
              rest.continuation = internal::ContinuationAfter(plan, rows.last());
            auto page = Query(rest);
            if (!page.ok()) return page.status();
            BT_RETURN_IF_ERROR(VisitEntities(*page, visit, rows.page()));
            return std::move(rows.page());
          }
          if (rows.stop() == Stop::kPageFull) {
            rows.page().continuation = internal::ContinuationAfter(plan, rows.last());
            break;
          }
          if (rows.stop() == Stop::kPastRange) break;
          if (!next_marker.ok())
            return next_marker.status().WithContext("table " + name_ + ", query");
          ListPage marker;  // what NextListPage reads of a page
          marker.next_marker = *std::move(next_marker);
          auto next = NextListPage(plan.list, marker, &pages);
          if (!next.ok()) return next.status().WithContext("table " + name_ + ", query");
          if (!*next) break;
          if (plan.filter && !rows.last_listed().empty()) {
            // A filtered page holds the matches of one listing, as Query's does.
            rows.page().continuation = internal::ContinuationAfter(plan, rows.last_listed());
            break;
          }
        }
        return std::move(rows.page());
      });
}

}  // namespace blobtable
