# SPDX-License-Identifier: Apache-2.0
"""Lock, queue and counter from Python."""

from __future__ import annotations

import pytest

import blobtable


def test_a_lock_has_a_growing_token_and_excludes_others(store: blobtable.Store) -> None:
    with store.lock("job", owner="me") as lock:
        first = lock.token
        assert first > 0 and lock.held
        lock.check()
        with pytest.raises(blobtable.LockTimeout):
            store.lock("job", timeout=0)
    assert not lock.held
    with pytest.raises(blobtable.LeaseLost):
        lock.check()
    with store.lock("job", timeout=1) as again:
        assert again.token > first


def test_a_queue_delivers_and_completes(store: blobtable.Store) -> None:
    q = store.queue("jobs")
    ids = {q.put(b"\x00payload"): b"\x00payload", q.put("text"): b"text"}
    first, second = q.take(), q.take()   # takers spread over the oldest items: any order
    assert first is not None and second is not None
    assert {first.id: first.body, second.id: second.body} == ids
    assert first.dequeue_count == 1 and q.take() is None
    q.extend(first)
    q.complete(first)
    q.abandon(second)                    # back at once
    again = q.take()
    assert again is not None and again.id == second.id and again.dequeue_count == 2
    q.complete(again)
    assert q.take() is None


def test_a_counter_adds(store: blobtable.Store) -> None:
    c = store.counter("visits")
    assert c.add(5) == 5 and c.add() == 6 and c.value == 6


def test_an_item_goes_back_only_to_its_own_queue(store: blobtable.Store) -> None:
    jobs, other = store.queue("work"), store.queue("other")
    jobs.put(b"x")
    item = jobs.take()
    assert item is not None and item.queue == "work"
    with pytest.raises(blobtable.InvalidArgument, match="work"):
        other.complete(item)
    jobs.complete(item)


def test_durations_beyond_ten_years_are_refused(embedded: blobtable.Store) -> None:
    for bad in (1e18, float("inf"), float("nan"), -1.0):
        with pytest.raises(blobtable.InvalidArgument, match="timeout"):
            embedded.lock("forever", timeout=bad)
