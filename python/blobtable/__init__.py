# SPDX-License-Identifier: Apache-2.0
"""blobtable: an embedded table store on blob storage (docs/python.md).

    import blobtable
    with blobtable.open("./data") as store:
        orders = store.table("orders")
        orders.upsert(blobtable.Entity("customer-42", "order-1", total=99.5))
        for order in orders.query("total gt 50.0"):
            print(order.row_key, order["total"])

Every call that waits (storage, the disk, a lease) releases the GIL, so
threads sharing one Store run their calls side by side.
"""

from __future__ import annotations

import atexit as _atexit
import os as _os
from typing import Any, Callable, Dict, Iterator, List, NamedTuple, Optional, Sequence, Tuple, TypeVar

from . import _blobtable as _ext
from ._types import (Busy, Conflict, Corruption, DateTime, Entity, Error, Guid, Int32, Int64,
                     Internal, InvalidArgument, LeaseLost, LocalIOError, LockTimeout, NotFound,
                     OutcomeUnknown, Unavailable)

__version__: str = _ext.__version__

# At exit, calls in progress on other threads end before the interpreter
# finalizes, and daemon threads start no new one (python/src/module.cc: Exit).
_atexit.register(_ext._quiesce)

__all__ = [
    "open", "Store", "Table", "Query", "Page", "Transaction", "CommittedWrite", "Lock", "Queue",
    "QueueItem", "Counter", "Entity", "Int32", "Int64", "Guid", "DateTime", "Error", "NotFound",
    "Conflict", "Busy", "LockTimeout", "LeaseLost", "Unavailable", "InvalidArgument",
    "Corruption", "LocalIOError", "Internal", "OutcomeUnknown", "__version__",
]

QueueItem = _ext.QueueItem
# An entity given to a write: a blobtable.Entity or a plain dict, handed back.
E = TypeVar("E", bound=Dict[str, Any])


def open(location: "str | _os.PathLike[str]", *, container: Optional[str] = None,
         create_if_missing: bool = True, cache: bool = True,
         cache_dir: "Optional[str | _os.PathLike[str]]" = None, read_policy: str = "fresh",
         max_stale: float = 0.0, request_timeout: Optional[float] = None,
         txn_lease_seconds: Optional[int] = None) -> "Store":
    """Opens a store: a directory (the embedded store, created if missing) or
    an Azure Storage connection string (no request is sent until a call
    needs one).

    container: the container (default "blobtable"). create_if_missing:
    False makes a missing store NotFound. cache, cache_dir, read_policy
    ("fresh", "max-stale" with max_stale seconds, or "offline"): the local
    cache of an Azure store (docs/cache.md). request_timeout: seconds an
    HTTP request may take (30). txn_lease_seconds: the lease of a
    transaction's locks, 15-60 (30).
    Raises InvalidArgument for a bad location or option, LocalIOError if the
    directory cannot be used."""
    return Store(_ext.open(_os.fspath(location), container, create_if_missing, cache,
                           None if cache_dir is None else _os.fspath(cache_dir), read_policy,
                           max_stale, request_timeout, txn_lease_seconds))


class CommittedWrite(NamedTuple):
    """A write of a committed transaction: where, and its new ETag ("" for a delete)."""
    table: str
    partition_key: str
    row_key: str
    etag: str


class Page(List[Entity]):
    """One page of a query: its entities, where the next page starts
    (`continuation`, "" after the last) and whether it came from the cache
    because storage could not be reached (`stale`)."""

    def __init__(self, rows: List[Entity], continuation: str, stale: bool) -> None:
        super().__init__(rows)
        self.continuation = continuation
        self.stale = stale


class Query:
    """A query's rows, read lazily page by page as the iteration goes; it is
    iterated once (InvalidArgument the second time: make another query).
    `continuation` is where the next page starts once one was read ("" when
    the query is over): a later query given it goes on from there, after
    the whole page (rows of that page not iterated yet are skipped)."""

    def __init__(self, fetch: Callable[[str], Tuple[List[Entity], str, bool]],
                 continuation: str) -> None:
        self._fetch = fetch
        self.continuation = continuation
        self._started = False

    def pages(self) -> Iterator[Page]:
        """The pages, one request (or LMDB read) each, fetched as iterated."""
        if self._started:
            raise InvalidArgument("a query is iterated once", "InvalidArgument")
        self._started = True
        while True:
            rows, self.continuation, stale = self._fetch(self.continuation)
            yield Page(rows, self.continuation, stale)
            if not self.continuation:
                return

    def __iter__(self) -> Iterator[Entity]:
        for page in self.pages():
            yield from page


def _names(select: "Optional[Sequence[str] | str]") -> Optional[List[str]]:
    """$select's names: a str is one name (not its letters)."""
    if select is None:
        return None
    return [select] if isinstance(select, str) else list(select)


def _check_page_size(page_size: int) -> None:
    if isinstance(page_size, bool) or not isinstance(page_size, int) or not 1 <= page_size <= 1000:
        raise InvalidArgument(f"page_size {page_size!r} is outside 1..1000", "InvalidArgument")


class Table:
    """A table of a store (Azure table-name rules; a table exists once it
    holds an entity). Safe to share between threads."""

    __slots__ = ("_t", "_store")

    def __init__(self, ext: _ext.Table, store: "Store") -> None:
        self._t = ext
        self._store = store  # kept: a table keeps its store open

    @property
    def name(self) -> str:
        """The table's name, as given to Store.table."""
        return self._t.name

    def get(self, partition_key: str, row_key: str) -> Entity:
        """The entity; raises NotFound if there is none."""
        return self._t.get(partition_key, row_key)

    def insert(self, entity: E) -> E:
        """Inserts it (Conflict if it exists); gives `entity` its new etag and
        timestamp, and returns it."""
        return self._t.insert(entity)

    def replace(self, entity: E, *, if_match: Optional[str] = None) -> E:
        """Replaces every property. if_match: an ETag, "*" for any version, or
        None for the entity's own etag. NotFound if missing, Conflict on an
        ETag mismatch."""
        return self._t.replace(entity, if_match)

    def merge(self, entity: E, *, if_match: Optional[str] = None) -> E:
        """Sets the given properties, keeping the others; conditions as replace."""
        return self._t.merge(entity, if_match)

    def upsert(self, entity: E) -> E:
        """Inserts or replaces, unconditionally."""
        return self._t.upsert(entity)

    def upsert_merge(self, entity: E) -> E:
        """Inserts or merges, unconditionally."""
        return self._t.upsert_merge(entity)

    def delete(self, partition_key: str, row_key: str, *, if_match: str = "*") -> None:
        """Deletes it; if_match an ETag (Conflict if it changed) or "*". NotFound if missing."""
        self._t.delete(partition_key, row_key, if_match)

    def query(self, filter: Optional[str] = None, *,
              select: "Optional[Sequence[str] | str]" = None,
              partition_key: Optional[str] = None, row_key_from: Optional[str] = None,
              row_key_to: Optional[str] = None, row_key_prefix: Optional[str] = None,
              page_size: int = 1000, continuation: str = "") -> Query:
        """The entities that match, in (PartitionKey, RowKey) order: a $filter
        (docs/api.md#filters), the properties to return, one partition, a
        RowKey range (both ends inclusive) or prefix; pages of page_size
        rows (1-1000). Lazy: nothing is read until it is iterated."""
        sel = _names(select)
        t = self._t
        _check_page_size(page_size)
        return Query(lambda c: t.query_page(filter, sel, partition_key, row_key_from, row_key_to,
                                            row_key_prefix, page_size, c), continuation)

    def query_index(self, index: str, *, equal: Sequence[Any] = (), low: Any = None,
                    high: Any = None, select: "Optional[Sequence[str] | str]" = None,
                    page_size: int = 1000, continuation: str = "") -> Query:
        """The entities secondary index `index` finds (docs/indexes.md): those
        whose first indexed properties equal `equal`, then whose next one is
        within [low, high] (either may be None). Lazy, as query."""
        sel = _names(select)
        eq = list(equal)
        t = self._t
        _check_page_size(page_size)
        return Query(lambda c: t.index_page(index, eq, low, high, sel, page_size, c), continuation)

    def update(self, partition_key: str, row_key: str, fn: Callable[[Entity], Optional[Dict[str, Any]]],
               *, retry: int = 10) -> Entity:
        """Read-modify-write: reads the entity (or starts an empty one with
        these keys, its etag None), calls fn on it (fn changes it in place or
        returns another), and writes it back at the ETag read, running it all
        again when another writer got there first (up to `retry` attempts,
        1-1000). An exception fn raises stops it and is raised as it was
        (none is retried). Returns the entity as written."""
        return self._t.update(partition_key, row_key, fn, retry)

    def __repr__(self) -> str:
        return f"Table({self.name!r})"


class Transaction:
    """Writes to several entities, partitions and tables that commit
    atomically (docs/transactions.md). Reads through it are recorded: the
    commit fails with Conflict if one of them changed. Used as a context
    manager it commits on leaving the block and aborts on an exception."""

    def __init__(self, ext: _ext.Transaction, store: "Store") -> None:
        self._t = ext
        self._store = store  # kept open while the transaction is
        self.committed: Optional[List[CommittedWrite]] = None

    def get(self, table: Table, partition_key: str, row_key: str) -> Entity:
        """Reads it through the transaction: the commit fails with Conflict if it changes meanwhile (NotFound now: the commit fails if it appears)."""
        return self._t.get(table._t, partition_key, row_key)

    def insert(self, table: Table, entity: E) -> None:
        """Buffers an insert (the commit fails with Conflict if it exists)."""
        self._t.insert(table._t, entity)

    def replace(self, table: Table, entity: E, *, if_match: Optional[str] = None) -> None:
        """Buffers a replace at `if_match` (an ETag, "*", or None for the entity's own)."""
        self._t.replace(table._t, entity, if_match)

    def merge(self, table: Table, entity: E, *, if_match: Optional[str] = None) -> None:
        """Buffers a merge, conditions as replace."""
        self._t.merge(table._t, entity, if_match)

    def upsert(self, table: Table, entity: E) -> None:
        """Buffers an unconditional insert-or-replace."""
        self._t.upsert(table._t, entity)

    def upsert_merge(self, table: Table, entity: E) -> None:
        """Buffers an unconditional insert-or-merge."""
        self._t.upsert_merge(table._t, entity)

    def delete(self, table: Table, partition_key: str, row_key: str, *, if_match: str = "*") -> None:
        """Buffers a delete at `if_match` (an ETag or "*"; the commit fails with NotFound if it is missing)."""
        self._t.delete(table._t, partition_key, row_key, if_match)

    def check(self, table: Table, partition_key: str, row_key: str, etag: str) -> None:
        """Commit only if this entity still has this ETag (nothing is written to it)."""
        self._t.check(table._t, partition_key, row_key, etag)

    def commit(self) -> List[CommittedWrite]:
        """Commits every write or none. OutcomeUnknown: it may or may not have
        happened (read what it wrote, or Store.recover(), then decide)."""
        self.committed = [CommittedWrite(*w) for w in self._t.commit()]
        return self.committed

    def abort(self) -> None:
        """Drops it: nothing of it is written; in a `with` block, leaving the
        block then commits nothing. (In run_transaction's function, raise an
        exception instead: abort is refused there.)"""
        self._t.abort()

    def __enter__(self) -> "Transaction":
        return self

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        # Over already (aborted, committed, or a commit that raised and was
        # handled in the block): nothing more to do.
        if self._t.lent or self._t.over:
            return
        if exc_type is None:
            self.commit()
        else:
            self.abort()


class Lock:
    """A lock held (docs/coordination.md): renewed in the background until
    released; `token` is its fencing token, larger than any earlier holder's.
    As a context manager it is released on leaving the block."""

    def __init__(self, ext: _ext.Lock) -> None:
        self._l = ext  # it keeps the store's machinery running while held

    @property
    def token(self) -> int:
        """The fencing token of this acquisition: larger than every earlier holder's."""
        return self._l.token

    @property
    def name(self) -> str:
        """The lock's name."""
        return self._l.name

    @property
    def held(self) -> bool:
        """True while this process may assume it holds the lock."""
        return self._l.held

    def check(self) -> None:
        """Raises LeaseLost (with why) unless it is still held."""
        self._l.check()

    def release(self) -> None:
        """Releases it (again: nothing happens)."""
        self._l.release()

    def __enter__(self) -> "Lock":
        return self

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        self.release()


class Queue:
    """A work queue (docs/coordination.md#work-queue): an item taken is hidden
    from other takers for `visibility` seconds, and comes back unless
    completed or extended."""

    def __init__(self, ext: _ext.Queue, store: "Store") -> None:
        self._q = ext
        self._store = store

    @property
    def name(self) -> str:
        """The queue's name."""
        return self._q.name

    def put(self, body: "bytes | bytearray | memoryview | str") -> str:
        """Adds an item (at most 4 MiB; a str as UTF-8); its id."""
        if isinstance(body, str):
            return self._q.put(body.encode())
        if not isinstance(body, (bytes, bytearray, memoryview)):
            raise TypeError(f"a queue item's body is bytes or str, not {type(body).__name__}")
        return self._q.put(bytes(body))

    def take(self) -> Optional[QueueItem]:
        """A visible item (older ones first), or None."""
        return self._q.take()

    def complete(self, item: QueueItem) -> None:
        """Done: deleted. LeaseLost if its time ran out (it comes back)."""
        self._q.complete(item)

    def abandon(self, item: QueueItem) -> None:
        """Gives it back at once."""
        self._q.abandon(item)

    def extend(self, item: QueueItem) -> None:
        """Another `visibility` seconds of holding it."""
        self._q.extend(item)


class Counter:
    """A counter (docs/coordination.md#counter): atomic additions."""

    def __init__(self, store: "Store", name: str) -> None:
        self._store = store
        self._s = store._s
        self.name = name

    def add(self, delta: int = 1) -> int:
        """Adds delta (an int within Int64); the value after."""
        if isinstance(delta, bool) or not isinstance(delta, int):
            raise TypeError(f"a counter adds an int, not {type(delta).__name__}")
        if not -(1 << 63) <= delta < (1 << 63):
            raise OverflowError(f"{delta} is beyond Int64")
        return self._s.counter_add(self.name, delta)

    def get(self) -> int:
        """Its value now (0 before the first add)."""
        return self._s.counter_get(self.name)

    @property
    def value(self) -> int:
        """The same as get()."""
        return self.get()


class Store:
    """An open store. Thread-safe: threads may share it and its tables.
    Closes on close(), at the end of a `with` block, or when collected,
    after the background finishing of its commits."""

    def __init__(self, ext: _ext.Store) -> None:
        self._s = ext

    def table(self, name: str) -> Table:
        """Table `name` (InvalidArgument for a bad name)."""
        return Table(self._s.table(name), self)

    def list_tables(self) -> List[str]:
        """The tables that hold an entity, by name (lowercase), sorted."""
        return self._s.list_tables()

    def transaction(self) -> Transaction:
        """A new transaction (use it in a `with` block)."""
        return Transaction(self._s.begin(), self)

    def run_transaction(self, fn: Callable[[Transaction], Any], *, retry: int = 10) -> Any:
        """Runs fn in a new transaction and commits it; when fn or the commit
        fails with Conflict, Busy, LockTimeout or LeaseLost (nothing
        committed), runs it again in a fresh one after a backoff, up to
        `retry` attempts. Returns what fn returned. fn must not commit."""
        result, _, _ = self._s.run_transaction(lambda t: fn(Transaction(t, self)), retry)
        return result

    def create_index(self, table: str, name: str, properties: Sequence[str], *,
                     unique: bool = False, covered: Sequence[str] = ()) -> None:
        """Creates secondary index `name` over `properties` and builds it
        online (docs/indexes.md). Conflict if `unique` finds a duplicate."""
        self._s.create_index(table, name, list(properties), unique, list(covered))

    def drop_index(self, table: str, name: str, *, wait: bool = False) -> None:
        """Drops it (its entries deleted in the background unless wait)."""
        self._s.drop_index(table, name, wait)

    def lock(self, name: str, *, timeout: float = 30.0, lease_seconds: int = 30,
             owner: str = "") -> Lock:
        """Takes lock `name`, waiting up to `timeout` seconds (LockTimeout)."""
        return Lock(self._s.lock(name, timeout, lease_seconds, owner))

    def queue(self, name: str, *, visibility: int = 30) -> Queue:
        """Work queue `name`; an item taken is hidden for `visibility` seconds (15-60)."""
        return Queue(self._s.queue(name, visibility), self)

    def counter(self, name: str) -> Counter:
        """Counter `name` (made by its first add)."""
        return Counter(self, name)

    def recover(self) -> int:
        """Finishes or undoes transactions whose coordinators died; how many."""
        return self._s.recover()

    def close(self) -> None:
        """Closes it (again: nothing happens); calls made after raise InvalidArgument."""
        self._s.close()

    @property
    def closed(self) -> bool:
        """True once close() was called (or the store was collected)."""
        return self._s.closed

    def __enter__(self) -> "Store":
        return self

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        self.close()
