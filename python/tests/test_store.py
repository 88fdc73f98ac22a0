# SPDX-License-Identifier: Apache-2.0
"""The store's life: closing, threads sharing it, the GIL released while a
call waits."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

import blobtable


def test_calls_after_close_raise(tmp_path: Path) -> None:
    store = blobtable.open(tmp_path / "s")
    t = store.table("things")
    t.upsert(blobtable.Entity("p", "r"))
    store.close()
    store.close()  # again: nothing
    assert store.closed
    with pytest.raises(blobtable.InvalidArgument, match="closed"):
        t.get("p", "r")
    with pytest.raises(blobtable.InvalidArgument, match="closed"):
        store.table("things")
    with blobtable.open(tmp_path / "s") as again:
        assert again.table("things").get("p", "r").row_key == "r"
        assert again.list_tables() == ["things"]
    assert again.closed


def test_threads_share_one_store(store: blobtable.Store) -> None:
    t = store.table("shared")
    errors: list = []

    def work() -> None:
        try:
            for _ in range(10):
                t.update("c", "n", lambda e: e.__setitem__("n", e.get("n", 0) + 1), retry=1000)
                with pytest.raises(blobtable.NotFound):
                    t.get("c", "absent")
        except BaseException as e:  # reported by the main thread
            errors.append(e)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert errors == []
    assert t.get("c", "n")["n"] == 40


def test_a_waiting_call_lets_other_threads_run(embedded: blobtable.Store) -> None:
    # The main thread holds the lock; another thread waits for it. Had the
    # waiting call kept the GIL, the main thread could not run on to release
    # it, and the waiter would time out (LockTimeout) after 30 s instead.
    lock = embedded.lock("gil")
    started = threading.Event()
    outcome: list = []

    def wait_for_it() -> None:
        started.set()
        try:
            with embedded.lock("gil", timeout=30) as l:
                outcome.append(l.token)
        except blobtable.Error as e:
            outcome.append(e)

    th = threading.Thread(target=wait_for_it)
    th.start()
    started.wait()
    t = embedded.table("meanwhile")
    for i in range(50):  # Python runs here while the other thread waits in C++
        t.upsert(blobtable.Entity("p", str(i)))
    lock.release()
    th.join()
    assert len(outcome) == 1 and isinstance(outcome[0], int) and outcome[0] > lock.token


def test_a_store_closes_when_collected(tmp_path: Path) -> None:
    store = blobtable.open(tmp_path / "s")
    store.table("things").upsert(blobtable.Entity("p", "r"))
    del store  # closed here (CPython frees it at once)
    with blobtable.open(tmp_path / "s") as again:
        assert again.table("things").get("p", "r") is not None
