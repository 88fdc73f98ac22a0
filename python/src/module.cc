// SPDX-License-Identifier: Apache-2.0
// blobtable._blobtable: the Python extension over the public C++ API
// (docs/python.md). Every call that may wait (storage, leases, the disk)
// releases the GIL; the package (python/blobtable/) adds the Pythonic parts.
#include <pybind11/functional.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <memory>
#include <mutex>
#include <cmath>
#include <condition_variable>
#include <exception>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "blobtable/counter.h"
#include "blobtable/lock.h"
#include "blobtable/queue.h"
#include "blobtable/store.h"
#include "python/src/convert.h"

namespace blobtable::python {
namespace {

using StorePtr = std::shared_ptr<const Store>;

// A store and whether it was closed: shared by the handles made from it, so
// a call after close() raises instead of reaching a destroyed Store.
class StoreState {
 public:
  StoreState(StorePtr store, TransactionOptions txn) : store_(std::move(store)), txn_(txn) {}
  // The store, for one call (the call keeps it alive); raises once closed.
  // Needs the GIL (raising makes a Python exception, whose making may run
  // Python code and so let another thread in: never under the mutex).
  StorePtr Get() const {
    StorePtr store;
    {
      std::lock_guard<std::mutex> lock(mu_);
      store = store_;
    }
    if (!store) Raise(Status::InvalidArgument("the store is closed"));
    return store;
  }
  // What its transactions are begun with (open's txn_lease_seconds).
  const TransactionOptions& txn() const { return txn_; }
  // Takes the store out; the caller waits for its background finishing.
  StorePtr Close() {
    std::lock_guard<std::mutex> lock(mu_);
    return std::move(store_);
  }
  bool closed() const {
    std::lock_guard<std::mutex> lock(mu_);
    return !store_;
  }

 private:
  mutable std::mutex mu_;
  StorePtr store_;
  const TransactionOptions txn_;
};
using State = std::shared_ptr<StoreState>;

// Runs `call` without the GIL (it may wait on storage, a lease or the
// disk) and returns what it returned; raising needs the GIL back, so the
// caller checks the result after.
// The interpreter's exit. CPython ends a thread that asks for the GIL once
// it is finalizing by unwinding its stack, which through C++ frames is
// std::terminate: a daemon thread inside a call at exit aborted the
// process. So an atexit handler (Quiesce, registered by the package) marks
// the exit and waits until no thread is inside a call (calls in progress
// end as they would; their threads go back to Python before finalizing
// starts); a thread that starts a call after that (a daemon thread) never
// returns from it: it sleeps until the process ends. The thread that runs
// the exit goes on (closing stores as the interpreter collects them).
class Exit {
 public:
  // Entering a call, with the GIL: parks forever once the exit began.
  void Enter() {
    std::unique_lock<std::mutex> lock(mu_);
    // A call made from inside another (a callback's) goes on: the exit
    // waits for the outer one.
    if (exiting_ && std::this_thread::get_id() != exiter_ && depth_ == 0) {
      lock.unlock();
      PyEval_SaveThread();
      for (;;) std::this_thread::sleep_for(std::chrono::hours(1));
    }
    ++inside_;
    ++depth_;
  }
  void Leave() {
    std::lock_guard<std::mutex> lock(mu_);
    --depth_;
    if (--inside_ == 0) idle_.notify_all();
  }
  // The atexit handler: waits, without the GIL, for the calls in progress
  // on other threads.
  void Quiesce() {
    PyThreadState* state = PyEval_SaveThread();
    {
      std::unique_lock<std::mutex> lock(mu_);
      exiting_ = true;
      exiter_ = std::this_thread::get_id();
      idle_.wait(lock, [&] { return inside_ == 0; });
    }
    PyEval_RestoreThread(state);
  }

 private:
  std::mutex mu_;
  std::condition_variable idle_;
  int inside_ = 0;
  bool exiting_ = false;
  std::thread::id exiter_;
  static thread_local int depth_;  // this thread's calls in progress, one inside another
};
thread_local int Exit::depth_ = 0;

Exit& TheExit() {
  static Exit* exit = new Exit();  // never destroyed: threads may use it at the end
  return *exit;
}

// The GIL released for a call into the library, taken back at its end.
class GilReleased {
 public:
  GilReleased() {
    TheExit().Enter();
    state_ = PyEval_SaveThread();
  }
  ~GilReleased() {
    PyEval_RestoreThread(state_);
    TheExit().Leave();
  }
  GilReleased(const GilReleased&) = delete;
  GilReleased& operator=(const GilReleased&) = delete;

 private:
  PyThreadState* state_ = nullptr;
};

// The GIL taken by a thread blobtable calls back on (inside a call: the
// exit waits for it).
using GilTaken = py::gil_scoped_acquire;

template <typename Call>
auto WithoutGil(Call&& call) {
  GilReleased released;
  return call();
}

// An exception a caller's Python function raised (or a C++ one met while
// calling it), kept while blobtable unwinds its own call, raised after.
class Pending {
 public:
  // The function's last failure (an attempt after it that succeeded clears it).
  void Keep(std::exception_ptr e) { error_ = std::move(e); }
  void Clear() { error_ = nullptr; }
  // Raises it, as it was, if the call failed: what blobtable made of it
  // (a retryable blobtable.Error retried, then given up) is the same failure.
  void RethrowIfFailed(bool failed) {
    if (failed && error_) std::rethrow_exception(std::exchange(error_, nullptr));
  }

 private:
  std::exception_ptr error_;
};

// Runs `body` (a call into Python, with the GIL) for blobtable: a
// blobtable.Error becomes its Status (retried if retryable); any other
// exception is kept in `pending` and stops the call (Internal).
template <typename Body>
Status CallBack(Pending* pending, Body&& body) {
  try {
    body();
    pending->Clear();
    return Status::OK();
  } catch (py::error_already_set& e) {
    // Kept as it is (a blobtable.Error subclass of the caller's, its
    // attributes and notes), and told to blobtable by its code.
    pending->Keep(std::make_exception_ptr(e));
    std::shared_ptr<py::error_already_set> other;
    return StatusOfPythonError(e, &other);
  } catch (...) {
    pending->Keep(std::current_exception());
    return Status::Internal("the function raised");
  }
}

class PyTable {
 public:
  PyTable(State state, Table table) : state_(std::move(state)), table_(std::move(table)) {}
  const std::string& name() const { return table_.name(); }
  // The table for one call, with the GIL held: raises once the store is
  // closed; `store` keeps it open until the call ends.
  const Table& table(StorePtr* store) const {
    *store = state_->Get();
    return table_;
  }
  const State& state() const { return state_; }

 private:
  State state_;
  Table table_;
};

// Runs `call` (returning Result<Entity>) on `entity` without the GIL, and
// gives the Python entity the ETag and Timestamp it was stored with.
template <typename Call>
py::object Write(py::handle entity, Call&& call) {
  Entity e = ToEntity(entity);
  Result<Entity> stored = WithoutGil([&] { return call(e); });
  if (!stored.ok()) Raise(stored.status());
  TakeStored(entity, *stored);
  return py::reinterpret_borrow<py::object>(entity);
}

std::optional<std::string> OptionalString(const py::object& v) {
  if (v.is_none()) return std::nullopt;
  return v.cast<std::string>();
}

QueryOptions MakeQuery(const py::object& filter, const py::object& select,
                       const py::object& partition_key, const py::object& row_key_from,
                       const py::object& row_key_to, const py::object& row_key_prefix,
                       int page_size, const std::string& continuation) {
  QueryOptions q;
  if (!filter.is_none()) q.filter = filter.cast<std::string>();
  if (!select.is_none()) q.select = select.cast<std::vector<std::string>>();
  q.partition_key = OptionalString(partition_key);
  q.row_key_from = OptionalString(row_key_from);
  q.row_key_to = OptionalString(row_key_to);
  q.row_key_prefix = OptionalString(row_key_prefix);
  q.top = page_size;
  q.continuation = continuation;
  return q;
}

// A page as Python: (list of entities, continuation, stale).
py::tuple PageOf(QueryPage&& page) {
  py::list rows(page.entities.size());
  NameCache names;
  for (size_t i = 0; i < page.entities.size(); ++i) rows[i] = FromEntity(page.entities[i], &names);
  return py::make_tuple(rows, page.continuation, page.stale);
}

// A page of a query: its rows seen in place (Table::Visit: no Entity is
// built) and made Python's as they come, the GIL taken for each row and
// released while the library reads (storage, the disk).
py::tuple VisitPage(const Table& table, const QueryOptions& q) {
  py::list rows;
  NameCache names;
  Pending pending;
  auto visit = [&](const EntityView& row) -> Status {
    GilTaken gil;
    return CallBack(&pending, [&] { rows.append(FromView(row, &names)); });
  };
  Result<VisitedPage> page = WithoutGil([&] { return table.Visit(q, EntityVisitor(visit)); });
  pending.RethrowIfFailed(!page.ok());
  VisitedPage visited = Take(std::move(page));
  return py::make_tuple(rows, visited.continuation, visited.stale);
}

IndexQuery MakeIndexQuery(const py::object& equal, const py::object& low, const py::object& high) {
  IndexQuery q;
  if (!equal.is_none())
    for (py::handle v : equal) q.equal.push_back(ToValue("equal", v, false));
  if (!low.is_none()) q.from = ToValue("from", low, false);
  if (!high.is_none()) q.to = ToValue("to", high, false);
  return q;
}

// `retry`: attempts in all, 1..1000 (RetryPolicy's bounds).
RetryPolicy Policy(int max_attempts) {
  if (max_attempts < 1 || max_attempts > 1000)
    Raise(Status::InvalidArgument("retry " + std::to_string(max_attempts) +
                                  " is outside 1..1000 attempts"));
  RetryPolicy p;
  p.max_attempts = max_attempts;
  return p;
}

// A transaction: begun by Store.transaction(), or lent to a function by
// Store.run_transaction (then only for that call).
class PyTxn {
 public:
  PyTxn(State state, Transaction txn) : state_(std::move(state)), owned_(std::move(txn)) {
    txn_ = &*owned_;
  }
  PyTxn(State state, Transaction* lent) : state_(std::move(state)), txn_(lent), lent_(true) {}

  // The transaction, while it takes operations: raises once it is over, or
  // its store closed.
  Transaction& txn() {
    if (txn_ == nullptr)
      Raise(Status::InvalidArgument(lent_ ? "the transaction lent to the function is over"
                                          : "the transaction was committed or aborted"));
    state_->Get();
    return *txn_;
  }
  // A table given to it, for one buffered operation (raises once that
  // table's store is closed; one of another store is refused by the library).
  static const Table& TableOf(const PyTable& table) {
    StorePtr open;
    return table.table(&open);
  }
  void EndLoan() { txn_ = nullptr; }
  bool lent() const { return lent_; }
  // Committed (or a commit failed) or aborted: it takes nothing more.
  bool over() const { return txn_ == nullptr; }

  py::list Commit() {
    if (lent_) Raise(Status::InvalidArgument("run_transaction commits the transaction it lends"));
    Transaction& t = txn();
    StorePtr open = state_->Get();
    Result<std::vector<CommittedWrite>> written = WithoutGil([&] { return t.Commit(); });
    txn_ = nullptr;  // committed or failed, it takes nothing more
    return Written(Take(std::move(written)));
  }
  void Abort() {
    if (lent_)
      Raise(Status::InvalidArgument(
          "run_transaction decides the transaction it lends: raise an exception in the "
          "function to stop it, nothing of it written"));
    if (txn_ != nullptr) {
      txn_->Abort();
      txn_ = nullptr;
    }
  }
  static py::list Written(const std::vector<CommittedWrite>& writes) {
    py::list out;
    for (const CommittedWrite& w : writes)
      out.append(py::make_tuple(w.table, w.partition_key, w.row_key, w.etag));
    return out;
  }

 private:
  State state_;
  std::optional<Transaction> owned_;
  Transaction* txn_ = nullptr;
  bool lent_ = false;
};

// A lock held: it keeps its store alive (it renews through it). Collected
// while held, it is released then, without the GIL (a request).
struct PyLock {
  StorePtr store;
  std::unique_ptr<Lock> lock;
  ~PyLock() {
    GilReleased released;
    lock.reset();
    store.reset();
  }
};

// A queue: it keeps its store alive, and raises once that store is closed.
struct PyQueue {
  State state;
  StorePtr store;
  WorkQueue queue;
  // The queue, for one call (with the GIL): raises once its store is closed.
  const WorkQueue& Get() const {
    state->Get();
    return queue;
  }
};

// An item taken, and the queue it was taken from.
struct PyQueueItem {
  QueueItem item;
  std::string queue;
};

// The item, if it is `q`'s (another queue would look for it under its own
// name and find it gone).
QueueItem& ItemOf(const PyQueue& q, PyQueueItem& i) {
  if (i.queue != q.queue.name())
    Raise(Status::InvalidArgument("the item was taken from queue '" + i.queue + "', not '" +
                                  q.queue.name() + "'"));
  return i.item;
}

void BindTable(py::module_& m) {
  py::class_<PyTable>(m, "Table")
      .def_property_readonly("name", &PyTable::name)
      .def("get",
           [](const PyTable& t, const std::string& pk, const std::string& rk) {
             StorePtr open;
             const Table& table = t.table(&open);
             Result<Entity> e = WithoutGil([&] { return table.Get(pk, rk); });
             return FromEntity(Take(std::move(e)));
           })
      .def("insert",
           [](const PyTable& t, py::handle e) {
             StorePtr open;
             const Table& table = t.table(&open);
             return Write(e, [&](const Entity& x) { return table.Insert(x); });
           })
      .def("replace",
           [](const PyTable& t, py::handle e, const py::object& if_match) {
             std::optional<std::string> m = OptionalString(if_match);
             StorePtr open;
             const Table& table = t.table(&open);
             return Write(
                 e, [&](const Entity& x) { return m ? table.Replace(x, *m) : table.Replace(x); });
           })
      .def("merge",
           [](const PyTable& t, py::handle e, const py::object& if_match) {
             std::optional<std::string> m = OptionalString(if_match);
             StorePtr open;
             const Table& table = t.table(&open);
             return Write(e,
                          [&](const Entity& x) { return m ? table.Merge(x, *m) : table.Merge(x); });
           })
      .def("upsert",
           [](const PyTable& t, py::handle e) {
             StorePtr open;
             const Table& table = t.table(&open);
             return Write(e, [&](const Entity& x) { return table.Upsert(x); });
           })
      .def("upsert_merge",
           [](const PyTable& t, py::handle e) {
             StorePtr open;
             const Table& table = t.table(&open);
             return Write(e, [&](const Entity& x) { return table.UpsertMerge(x); });
           })
      .def("delete",
           [](const PyTable& t, const std::string& pk, const std::string& rk,
              const std::string& if_match) {
             StorePtr open;
             const Table& table = t.table(&open);
             Status s = WithoutGil([&] { return table.Delete(pk, rk, if_match); });
             Check(s);
           })
      .def("query_page",
           [](const PyTable& t, const py::object& filter, const py::object& select,
              const py::object& pk, const py::object& from, const py::object& to,
              const py::object& prefix, int page_size, const std::string& continuation) {
             QueryOptions q =
                 MakeQuery(filter, select, pk, from, to, prefix, page_size, continuation);
             StorePtr open;
             return VisitPage(t.table(&open), q);
           })
      .def("index_page",
           [](const PyTable& t, const std::string& index, const py::object& equal,
              const py::object& low, const py::object& high, const py::object& select,
              int page_size, const std::string& continuation) {
             IndexQuery iq = MakeIndexQuery(equal, low, high);
             QueryOptions q = MakeQuery(py::none(), select, py::none(), py::none(), py::none(),
                                        py::none(), page_size, continuation);
             StorePtr open;
             const Table& table = t.table(&open);
             Result<QueryPage> page = WithoutGil([&] { return table.QueryIndex(index, iq, q); });
             return PageOf(Take(std::move(page)));
           })
      .def("update", [](const PyTable& t, const std::string& pk, const std::string& rk,
                        const py::function& fn, int max_attempts) {
        StorePtr open;
        const Table& table = t.table(&open);
        Pending pending;
        auto apply = [&](Entity& e, bool exists) -> Status {
          GilTaken gil;
          return CallBack(&pending, [&] {
            py::object current = FromEntity(e);
            if (!exists) current.attr("etag") = py::none();
            py::object result = fn(current);
            e = ToEntity(result.is_none() ? current : result);
          });
        };
        // The function may close the store: then nothing is written.
        auto apply_open = [&](Entity& e, bool exists) -> Status {
          Status applied = apply(e, exists);
          if (applied.ok() && t.state()->closed())
            return Status::InvalidArgument("the store is closed");
          return applied;
        };
        const RetryPolicy policy = Policy(max_attempts);  // may raise: with the GIL
        Result<Entity> written =
            WithoutGil([&] { return table.Update(pk, rk, UpdateFn(apply_open), policy); });
        pending.RethrowIfFailed(!written.ok());
        return FromEntity(Take(std::move(written)));
      });
}

void BindTransaction(py::module_& m) {
  py::class_<PyTxn>(m, "Transaction")
      .def("get",
           [](PyTxn& tx, const PyTable& t, const std::string& pk, const std::string& rk) {
             Transaction& txn = tx.txn();
             StorePtr open;
             const Table& table = t.table(&open);
             Result<Entity> e = WithoutGil([&] { return txn.Get(table, pk, rk); });
             return FromEntity(Take(std::move(e)));
           })
      .def("insert", [](PyTxn& tx, const PyTable& t,
                        py::handle e) { Check(tx.txn().Insert(PyTxn::TableOf(t), ToEntity(e))); })
      .def("replace",
           [](PyTxn& tx, const PyTable& t, py::handle e, const py::object& if_match) {
             Entity x = ToEntity(e);
             auto m = OptionalString(if_match);
             Check(m ? tx.txn().Replace(PyTxn::TableOf(t), x, *m)
                     : tx.txn().Replace(PyTxn::TableOf(t), x));
           })
      .def("merge",
           [](PyTxn& tx, const PyTable& t, py::handle e, const py::object& if_match) {
             Entity x = ToEntity(e);
             auto m = OptionalString(if_match);
             Check(m ? tx.txn().Merge(PyTxn::TableOf(t), x, *m)
                     : tx.txn().Merge(PyTxn::TableOf(t), x));
           })
      .def("upsert", [](PyTxn& tx, const PyTable& t,
                        py::handle e) { Check(tx.txn().Upsert(PyTxn::TableOf(t), ToEntity(e))); })
      .def("upsert_merge",
           [](PyTxn& tx, const PyTable& t, py::handle e) {
             Check(tx.txn().UpsertMerge(PyTxn::TableOf(t), ToEntity(e)));
           })
      .def("delete",
           [](PyTxn& tx, const PyTable& t, const std::string& pk, const std::string& rk,
              const std::string& if_match) {
             Check(tx.txn().Delete(PyTxn::TableOf(t), pk, rk, if_match));
           })
      .def("check",
           [](PyTxn& tx, const PyTable& t, const std::string& pk, const std::string& rk,
              const std::string& etag) { Check(tx.txn().Check(PyTxn::TableOf(t), pk, rk, etag)); })
      .def("commit", &PyTxn::Commit)
      .def("abort", &PyTxn::Abort)
      .def_property_readonly("lent", &PyTxn::lent)
      .def_property_readonly("over", &PyTxn::over);
}

void BindCoordination(py::module_& m) {
  py::class_<PyLock>(m, "Lock")
      .def_property_readonly("token", [](const PyLock& l) { return l.lock->token(); })
      .def_property_readonly("name", [](const PyLock& l) { return l.lock->name(); })
      .def_property_readonly("held", [](const PyLock& l) { return l.lock->held(); })
      .def("check",
           [](const PyLock& l) {
             if (l.lock->held()) return;
             Status why = l.lock->status();
             Check(why.ok() ? Status::LeaseLost("lock '" + l.lock->name() +
                                                "' is not held: released, or its lease ran out")
                            : why);
           })
      .def("release", [](PyLock& l) {
        Status s = WithoutGil([&] { return l.lock->Release(); });
        Check(s);
      });
  py::class_<PyQueueItem>(m, "QueueItem",
                          "An item taken from a queue: complete, abandon or extend it there.")
      .def_property_readonly(
          "id", [](const PyQueueItem& i) { return i.item.id; }, "Its id, as put returned it.")
      .def_property_readonly(
          "body", [](const PyQueueItem& i) { return py::bytes(i.item.body); }, "Its body.")
      .def_property_readonly(
          "dequeue_count", [](const PyQueueItem& i) { return i.item.dequeue_count; },
          "How many times it was taken, this time included.")
      .def_property_readonly(
          "queue", [](const PyQueueItem& i) { return i.queue; }, "The queue it was taken from.")
      .def("__repr__", [](const PyQueueItem& i) {
        return "QueueItem(id=" + i.item.id + ", queue=" + i.queue +
               ", dequeue_count=" + std::to_string(i.item.dequeue_count) + ")";
      });
  py::class_<PyQueue>(m, "Queue")
      .def_property_readonly("name", [](const PyQueue& q) { return q.queue.name(); })
      .def("put",
           [](const PyQueue& q, const py::bytes& body) {
             std::string b = body;
             const WorkQueue& queue = q.Get();
             Result<std::string> id = WithoutGil([&] { return queue.Enqueue(b); });
             return Take(std::move(id));
           })
      .def("take",
           [](const PyQueue& q) -> py::object {
             const WorkQueue& queue = q.Get();
             Result<std::optional<QueueItem>> item = WithoutGil([&] { return queue.Dequeue(); });
             std::optional<QueueItem> taken = Take(std::move(item));
             if (!taken) return py::none();
             return py::cast(PyQueueItem{std::move(*taken), q.queue.name()});
           })
      .def("complete",
           [](const PyQueue& q, PyQueueItem& i) {
             QueueItem& item = ItemOf(q, i);
             const WorkQueue& queue = q.Get();
             Check(WithoutGil([&] { return queue.Complete(item); }));
           })
      .def("abandon",
           [](const PyQueue& q, PyQueueItem& i) {
             QueueItem& item = ItemOf(q, i);
             const WorkQueue& queue = q.Get();
             Check(WithoutGil([&] { return queue.Abandon(item); }));
           })
      .def("extend", [](const PyQueue& q, PyQueueItem& i) {
        QueueItem& item = ItemOf(q, i);
        const WorkQueue& queue = q.Get();
        Check(WithoutGil([&] { return queue.Extend(&item); }));
      });
}

class PyStore {
 public:
  PyStore(StorePtr store, TransactionOptions txn)
      : state_(std::make_shared<StoreState>(std::move(store), txn)) {}
  ~PyStore() { Close(); }
  const State& state() const { return state_; }
  StorePtr Get() const { return state_->Get(); }
  // Closes it: later calls (of any handle made from it) raise; the commits'
  // background finishing is waited for here, without the GIL.
  void Close() {
    StorePtr store = state_->Close();
    if (!store) return;
    GilReleased released;
    store->WaitForFinishing();
    store.reset();  // destroyed here unless a call in flight or a lock still holds it
  }

 private:
  State state_;
};

// Seconds as a Python float, as milliseconds: finite, within 0..10 years
// (kMaxDuration), or InvalidArgument naming `what`.
std::chrono::milliseconds Millis(double seconds, const char* what) {
  if (!std::isfinite(seconds) || seconds < 0 || seconds * 1000 > double(kMaxDuration.count()))
    Raise(Status::InvalidArgument(std::string(what) + " must be 0..10 years in seconds"));
  return std::chrono::milliseconds(static_cast<int64_t>(seconds * 1000));
}

ReadPolicy ParsePolicy(const std::string& mode, double max_stale_seconds) {
  if (mode == "fresh") return ReadPolicy::Fresh();
  if (mode == "offline") return ReadPolicy::Offline();
  if (mode == "max-stale") return ReadPolicy::MaxStale(Millis(max_stale_seconds, "max_stale"));
  Raise(Status::InvalidArgument("read policy '" + mode + "' is none of fresh, max-stale, offline"));
}

std::unique_ptr<PyStore> Open(const std::string& location, const py::object& container,
                              bool create_if_missing, bool cache, const py::object& cache_dir,
                              const std::string& read_policy, double max_stale,
                              const py::object& request_timeout,
                              const py::object& txn_lease_seconds) {
  StoreOptions o;
  if (!container.is_none()) o.container = container.cast<std::string>();
  o.create_if_missing = create_if_missing;
  o.cache.enabled = cache;
  if (!cache_dir.is_none()) o.cache.directory = py::str(cache_dir).cast<std::string>();
  o.cache.read_policy = ParsePolicy(read_policy, max_stale);
  if (!request_timeout.is_none()) {
    o.azure.request_timeout = Millis(request_timeout.cast<double>(), "request_timeout");
    if (o.azure.request_timeout.count() == 0)
      Raise(Status::InvalidArgument("request_timeout must be at least a millisecond"));
  }
  TransactionOptions txn;
  if (!txn_lease_seconds.is_none()) {
    int64_t lease = txn_lease_seconds.cast<int64_t>();
    if (lease < 15 || lease > 60)
      Raise(Status::InvalidArgument("txn_lease_seconds " + std::to_string(lease) +
                                    " is outside 15..60"));
    txn.lease_seconds = o.txn_lease_seconds = static_cast<int>(lease);
  }
  auto store = WithoutGil([&] { return Store::Open(location, o); });
  return std::make_unique<PyStore>(StorePtr(Take(std::move(store))), txn);
}

void BindStore(py::module_& m) {
  m.def("open", &Open, py::arg("location"), py::arg("container") = py::none(),
        py::arg("create_if_missing") = true, py::arg("cache") = true,
        py::arg("cache_dir") = py::none(), py::arg("read_policy") = "fresh",
        py::arg("max_stale") = 0.0, py::arg("request_timeout") = py::none(),
        py::arg("txn_lease_seconds") = py::none());
  py::class_<PyStore>(m, "Store")
      .def("close", &PyStore::Close)
      .def_property_readonly("closed", [](const PyStore& s) { return s.state()->closed(); })
      .def("table",
           [](const PyStore& s, const std::string& name) {
             StorePtr store = s.Get();
             return PyTable(s.state(), Take(store->OpenTable(name)));
           })
      .def("list_tables",
           [](const PyStore& s) {
             StorePtr store = s.Get();
             return Take(WithoutGil([&] { return store->ListTables(); }));
           })
      .def("recover",
           [](const PyStore& s) {
             StorePtr store = s.Get();
             return Take(WithoutGil([&] { return store->Recover(); }));
           })
      .def("begin",
           [](const PyStore& s) {
             StorePtr store = s.Get();
             return std::make_unique<PyTxn>(s.state(), Take(store->Begin(s.state()->txn())));
           })
      .def("run_transaction",
           [](const PyStore& s, const py::function& fn, int max_attempts) {
             StorePtr store = s.Get();
             Pending pending;
             py::object result = py::none();
             auto run = [&](Transaction& t) -> Status {
               GilTaken gil;
               // Python owns the lent handle (fn may keep it); it is ended
               // when the call returns, so a kept one raises.
               auto* lent = new PyTxn(s.state(), &t);
               py::object handle = py::cast(lent, py::return_value_policy::take_ownership);
               Status status = CallBack(&pending, [&] { result = fn(handle); });
               lent->EndLoan();
               return status;
             };
             int attempts = 0;
             const RetryPolicy policy = Policy(max_attempts);  // may raise: with the GIL
             auto written = WithoutGil([&] {
               return store->RunTransaction(Store::TransactionFn(run), policy, s.state()->txn(),
                                            &attempts);
             });
             pending.RethrowIfFailed(!written.ok());
             return py::make_tuple(result, PyTxn::Written(Take(std::move(written))), attempts);
           })
      .def("create_index",
           [](const PyStore& s, const std::string& table, const std::string& name,
              const std::vector<std::string>& properties, bool unique,
              const std::vector<std::string>& covered) {
             StorePtr store = s.Get();
             IndexSpec spec{name, properties, unique, covered};
             Check(WithoutGil([&] { return store->CreateIndex(table, spec); }));
           })
      .def("drop_index",
           [](const PyStore& s, const std::string& table, const std::string& name, bool wait) {
             StorePtr store = s.Get();
             DropIndexOptions o;
             o.wait = wait;
             Check(WithoutGil([&] { return store->DropIndex(table, name, o); }));
           })
      .def("lock",
           [](const PyStore& s, const std::string& name, double timeout, int lease_seconds,
              const std::string& owner) {
             StorePtr store = s.Get();
             LockOptions o;
             o.timeout = Millis(timeout, "timeout");
             o.lease_seconds = lease_seconds;
             o.owner = owner;
             auto lock = WithoutGil([&] { return Lock::Acquire(*store, name, o); });
             auto held = std::make_unique<PyLock>();
             held->lock = Take(std::move(lock));
             held->store = store;
             return held;
           })
      .def("queue",
           [](const PyStore& s, const std::string& name, int visibility_seconds) {
             StorePtr store = s.Get();
             QueueOptions o;
             o.visibility_seconds = visibility_seconds;
             return std::make_unique<PyQueue>(
                 PyQueue{s.state(), store, Take(WorkQueue::Open(*store, name, o))});
           })
      .def("counter_add",
           [](const PyStore& s, const std::string& name, int64_t delta) {
             StorePtr store = s.Get();
             Counter counter = Take(Counter::Open(*store, name));
             return Take(WithoutGil([&] { return counter.Add(delta); }));
           })
      .def("counter_get", [](const PyStore& s, const std::string& name) {
        StorePtr store = s.Get();
        Counter counter = Take(Counter::Open(*store, name));
        return Take(WithoutGil([&] { return counter.Get(); }));
      });
}

}  // namespace
}  // namespace blobtable::python

PYBIND11_MODULE(_blobtable, m) {
  blobtable::python::InitConversions();
  m.doc() = "blobtable's extension module; use the blobtable package.";
  m.attr("__version__") = BLOBTABLE_VERSION;
  m.def(
      "_quiesce", [] { blobtable::python::TheExit().Quiesce(); },
      "At the interpreter's exit: waits for the calls in progress (registered by the package).");
  blobtable::python::BindTable(m);
  blobtable::python::BindTransaction(m);
  blobtable::python::BindCoordination(m);
  blobtable::python::BindStore(m);
}
