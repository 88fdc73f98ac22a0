# SPDX-License-Identifier: Apache-2.0
"""Transactions from Python: the context manager, conflicts, run_transaction."""

from __future__ import annotations

import pytest

import blobtable


def test_a_transaction_commits_on_leaving_the_block(store: blobtable.Store) -> None:
    accounts, log = store.table("accounts"), store.table("log")
    with store.transaction() as tx:
        tx.insert(accounts, blobtable.Entity("acct", "a", n=10))
        tx.insert(accounts, blobtable.Entity("acct", "b", n=10))
        tx.insert(log, blobtable.Entity("log", "1"))
    assert tx.committed is not None and len(tx.committed) == 3
    assert tx.committed[2].table == "log" and tx.committed[2].etag
    assert accounts.get("acct", "a")["n"] == 10


def test_an_exception_aborts_it(store: blobtable.Store) -> None:
    t = store.table("aborted")
    with pytest.raises(RuntimeError):
        with store.transaction() as tx:
            tx.insert(t, blobtable.Entity("p", "r"))
            raise RuntimeError("stop")
    with pytest.raises(blobtable.NotFound):
        t.get("p", "r")


def test_a_read_that_changed_fails_the_commit(store: blobtable.Store) -> None:
    t = store.table("conflicts")
    t.upsert(blobtable.Entity("acct", "a", n=1))
    tx = store.transaction()
    a = tx.get(t, "acct", "a")
    a["n"] = 0
    tx.replace(t, a)
    t.upsert(blobtable.Entity("acct", "a", n=5))   # behind the transaction's back
    with pytest.raises(blobtable.Conflict):
        tx.commit()
    assert t.get("acct", "a")["n"] == 5
    with pytest.raises(blobtable.InvalidArgument):
        tx.insert(t, blobtable.Entity("x", "y"))    # over


def test_run_transaction_returns_what_the_function_returns(store: blobtable.Store) -> None:
    t = store.table("moves")
    t.upsert(blobtable.Entity("acct", "a", n=10))
    t.upsert(blobtable.Entity("acct", "b", n=10))

    def move(tx: blobtable.Transaction) -> int:
        a, b = tx.get(t, "acct", "a"), tx.get(t, "acct", "b")
        a["n"] -= 3
        b["n"] += 3
        tx.replace(t, a)
        tx.replace(t, b)
        return a["n"]

    assert store.run_transaction(move) == 7
    assert t.get("acct", "b")["n"] == 13

    def boom(tx: blobtable.Transaction) -> None:
        tx.upsert(t, blobtable.Entity("acct", "c"))
        raise KeyError("gone")

    with pytest.raises(KeyError):
        store.run_transaction(boom)
    with pytest.raises(blobtable.NotFound):
        t.get("acct", "c")
