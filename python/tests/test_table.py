# SPDX-License-Identifier: Apache-2.0
"""Table operations from Python, on both backends: conditional writes and
their errors, queries page by page, index queries, read-modify-write."""

from __future__ import annotations

import pytest

import blobtable


def test_conditional_writes_and_their_errors(store: blobtable.Store) -> None:
    t = store.table("writes")
    e = blobtable.Entity("p", "r", n=1, keep="yes")
    t.insert(e)
    with pytest.raises(blobtable.Conflict) as conflict:
        t.insert(blobtable.Entity("p", "r"))
    assert conflict.value.code == "Conflict" and conflict.value.retryable
    stale = e.copy()
    e["n"] = 2
    t.replace(e)                       # at its own ETag
    with pytest.raises(blobtable.Conflict):
        t.replace(stale)               # that ETag is gone
    t.merge(blobtable.Entity("p", "r", n=3), if_match="*")
    got = t.get("p", "r")
    assert got["n"] == 3 and got["keep"] == "yes"
    t.upsert(blobtable.Entity("p", "r", n=4))
    assert "keep" not in t.get("p", "r")
    t.upsert_merge(blobtable.Entity("p", "r", extra=True))
    assert t.get("p", "r")["extra"] is True
    with pytest.raises(blobtable.Conflict):
        t.delete("p", "r", if_match='"0x0"')
    t.delete("p", "r")
    with pytest.raises(blobtable.NotFound) as missing:
        t.get("p", "r")
    assert isinstance(missing.value, LookupError)
    with pytest.raises(blobtable.NotFound):
        t.replace(e, if_match="*")
    with pytest.raises(blobtable.InvalidArgument) as bad:
        store.table("no such name!")
    assert isinstance(bad.value, ValueError) and "no such name" in str(bad.value)


def test_queries_read_lazily_page_by_page(store: blobtable.Store) -> None:
    t = store.table("query")
    for i in range(25):
        t.upsert(blobtable.Entity("a" if i < 15 else "b", f"r{i:03}", i=i,
                                  color="red" if i % 3 == 0 else "blue"))
    assert [e["i"] for e in t.query(page_size=10)] == list(range(25))
    q = t.query(page_size=10)
    pages = q.pages()
    first = next(pages)
    assert len(first) == 10 and first.continuation and q.continuation == first.continuation
    rest = t.query(page_size=10, continuation=first.continuation)
    assert [e["i"] for e in rest] == list(range(10, 25)) and rest.continuation == ""
    # A Python int is an Int64: a filter compares it with an Int64 literal (3L).
    red = t.query("color eq 'red' and i ge 3L", select=["i"], partition_key="a",
                  row_key_from="r000", row_key_to="r012")
    rows = list(red)
    assert [e["i"] for e in rows] == [3, 6, 9, 12] and all("color" not in e for e in rows)
    assert len(list(t.query(row_key_prefix="r01"))) == 10
    with pytest.raises(blobtable.InvalidArgument, match="filter"):
        list(t.query("i eq"))


def test_index_queries(store: blobtable.Store) -> None:
    t = store.table("indexed")
    for i in range(12):
        t.upsert(blobtable.Entity("p", f"r{i:03}", i=blobtable.Int32(i),
                                  color="red" if i % 2 == 0 else "blue"))
    store.create_index("indexed", "bycolor", ["color", "i"])
    t.upsert(blobtable.Entity("q", "r100", i=blobtable.Int32(100), color="red"))
    assert len(list(t.query_index("bycolor", equal=["red"]))) == 7
    assert [e["i"] for e in t.query_index("bycolor", equal=["red"], low=3, high=9)] == [4, 6, 8]
    with pytest.raises(blobtable.NotFound):
        store.drop_index("indexed", "nope")
    store.drop_index("indexed", "bycolor", wait=True)


def test_update_reads_modifies_and_writes(store: blobtable.Store) -> None:
    t = store.table("updates")

    def add_one(e: blobtable.Entity) -> None:
        e["n"] = e.get("n", 0) + 1

    for _ in range(3):
        t.update("c", "n", add_one)
    assert t.update("c", "n", add_one)["n"] == 4

    class Stop(Exception):
        pass

    def fails(e: blobtable.Entity) -> None:
        raise Stop("mine")

    with pytest.raises(Stop, match="mine"):   # the function's own exception, as it was
        t.update("c", "n", fails)

    def busy(e: blobtable.Entity) -> None:
        raise blobtable.Busy("try later")

    with pytest.raises(blobtable.Busy):       # retried (retryable), then given up
        t.update("c", "n", busy, retry=2)
    assert t.get("c", "n")["n"] == 4
