# SPDX-License-Identifier: Apache-2.0
"""What a fresh-eyes review of the package broke (issue 58), each now as
documented: a closed store raises (never a crash or a deadlock), a daemon
thread inside a call lets the interpreter exit, and the smaller promises."""

from __future__ import annotations

import copy
import datetime as dt
import pickle
import subprocess
import sys
import textwrap
import threading
from pathlib import Path
from typing import List

import pytest

import blobtable

UTC = dt.timezone.utc


@pytest.mark.parametrize("op", ["get", "insert", "replace", "merge", "upsert", "upsert_merge",
                                "delete", "query", "update"])
def test_every_call_on_a_table_of_a_closed_store_raises(tmp_path: Path, op: str) -> None:
    with blobtable.open(tmp_path / "s") as store:
        t = store.table("things")
        t.upsert(blobtable.Entity("p", "r"))
    e = blobtable.Entity("p", "r")
    calls = {"get": lambda: t.get("p", "r"), "insert": lambda: t.insert(e),
             "replace": lambda: t.replace(e, if_match="*"),
             "merge": lambda: t.merge(e, if_match="*"), "upsert": lambda: t.upsert(e),
             "upsert_merge": lambda: t.upsert_merge(e), "delete": lambda: t.delete("p", "r"),
             "query": lambda: list(t.query()), "update": lambda: t.update("p", "r", lambda x: None)}
    with pytest.raises(blobtable.InvalidArgument, match="closed"):
        calls[op]()


def test_threads_calling_a_closed_store_all_raise(tmp_path: Path) -> None:
    store = blobtable.open(tmp_path / "s")
    t = store.table("things")
    store.close()
    raised: List[BaseException] = []

    def call() -> None:
        for _ in range(50):
            try:
                t.get("p", "r")
            except blobtable.InvalidArgument as e:
                raised.append(e)

    threads = [threading.Thread(target=call) for _ in range(4)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert len(raised) == 200


def test_a_table_keeps_its_store_open(tmp_path: Path) -> None:
    blobtable.open(tmp_path / "s").table("things").upsert(blobtable.Entity("p", "r"))
    assert blobtable.open(tmp_path / "s").table("things").get("p", "r").row_key == "r"


def test_the_interpreter_exits_with_daemon_threads_inside_calls(tmp_path: Path) -> None:
    program = textwrap.dedent(f"""
        import threading, blobtable
        store = blobtable.open({str(tmp_path / "s")!r})
        t = store.table("things")
        def work():
            i = 0
            while True:
                t.upsert(blobtable.Entity("p", str(i % 10)))
                list(t.query())
                i += 1
        for _ in range(3):
            threading.Thread(target=work, daemon=True).start()
        t.upsert(blobtable.Entity("p", "main"))
    """)
    for _ in range(3):
        r = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True,
                           timeout=120, env={"PYTHONPATH": str(Path(blobtable.__file__).parents[1])})
        assert r.returncode == 0, r.stderr


def test_abort_is_refused_in_run_transaction(embedded: blobtable.Store) -> None:
    t = embedded.table("aborts")

    def fn(tx: blobtable.Transaction) -> None:
        tx.upsert(t, blobtable.Entity("p", "r"))
        tx.abort()

    with pytest.raises(blobtable.InvalidArgument, match="raise an exception"):
        embedded.run_transaction(fn)
    with pytest.raises(blobtable.NotFound):
        t.get("p", "r")


def test_a_functions_own_error_is_raised_as_it_was(embedded: blobtable.Store) -> None:
    class Mine(blobtable.NotFound):
        pass

    err = Mine("mine", "NotFound")
    err.extra = 42  # type: ignore[attr-defined]

    def fails(_: object) -> None:
        raise err

    t = embedded.table("errors")
    with pytest.raises(Mine) as update:
        t.update("p", "r", fails)
    assert update.value is err
    with pytest.raises(Mine) as txn:
        embedded.run_transaction(fails)
    assert txn.value is err


def test_bytes_likes_are_binary(embedded: blobtable.Store) -> None:
    t = embedded.table("binary")
    t.upsert(blobtable.Entity("p", "r", a=bytearray(b"\x00a"), m=memoryview(b"\x01b")))
    got = t.get("p", "r")
    assert got["a"] == b"\x00a" and got["m"] == b"\x01b" and type(got["a"]) is bytes


def test_a_datetime_keeps_its_100ns_through_python(embedded: blobtable.Store) -> None:
    d = blobtable.DateTime(2026, 1, 1, tzinfo=UTC, ticks_remainder=7)
    assert d.ticks_remainder == 7 and "ticks_remainder=7" in repr(d)
    for same in (copy.copy(d), copy.deepcopy(d), pickle.loads(pickle.dumps(d))):
        assert same == d and same.ticks_remainder == 7
    assert d != dt.datetime(2026, 1, 1, tzinfo=UTC)              # 700 ns apart
    assert (d + dt.timedelta(seconds=1)).ticks_remainder == 0     # arithmetic: microseconds
    assert repr(d.replace(year=2027))                             # no AttributeError
    t = embedded.table("times")
    t.upsert(blobtable.Entity("p", "r", d=d))
    got = t.get("p", "r")
    assert got["d"] == d and got["d"].ticks_remainder == 7
    again = pickle.loads(pickle.dumps(got))
    assert again == got and again["d"].ticks_remainder == 7


def test_arguments_are_checked(tmp_path: Path, embedded: blobtable.Store) -> None:
    for lease in (-1, 5, 61, 2**40):
        with pytest.raises(blobtable.InvalidArgument, match="txn_lease_seconds"):
            blobtable.open(tmp_path / "s", txn_lease_seconds=lease)
    t = embedded.table("args")
    t.upsert(blobtable.Entity("p", "r", total=1.0, other=2))
    assert list(t.query(select="total"))[0].keys() == {"PartitionKey", "RowKey", "total"}
    with pytest.raises(blobtable.InvalidArgument, match="page_size"):
        t.query(page_size=0)
    with pytest.raises(blobtable.InvalidArgument, match="retry"):
        t.update("p", "r", lambda e: None, retry=0)
    with pytest.raises(TypeError):
        embedded.queue("jobs").put(5)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        blobtable.Int32(2.7)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="PartitionKey given twice"):
        blobtable.Entity("p", "r", PartitionKey="q")

    class NoOffset(dt.tzinfo):
        def utcoffset(self, d: object) -> None:
            return None

    with pytest.raises(ValueError, match="naive"):
        t.upsert(blobtable.Entity("p", "r", d=dt.datetime(2020, 1, 1, tzinfo=NoOffset())))


# ---- The third review (issue 58): what it broke, each now as documented ----

def test_a_queue_of_a_closed_store_raises(tmp_path: Path) -> None:
    store = blobtable.open(tmp_path / "s")
    q = store.queue("jobs")
    q.put(b"before")
    item = q.take()
    assert item is not None
    store.close()
    for call in (lambda: q.put(b"after"), q.take, lambda: q.complete(item),
                 lambda: q.abandon(item), lambda: q.extend(item)):
        with pytest.raises(blobtable.InvalidArgument, match="closed"):
            call()
    with blobtable.open(tmp_path / "s") as again:
        # Nothing was put after the close: the item taken before comes back once visible.
        assert again.queue("jobs").take() is None


def test_an_update_whose_function_closes_the_store_writes_nothing(tmp_path: Path) -> None:
    store = blobtable.open(tmp_path / "s")
    t = store.table("things")
    t.upsert(blobtable.Entity("p", "a", n=1))

    def closes(e: blobtable.Entity) -> None:
        store.close()
        e["n"] = 999

    with pytest.raises(blobtable.InvalidArgument, match="closed"):
        t.update("p", "a", closes)
    with blobtable.open(tmp_path / "s") as again:
        assert again.table("things").get("p", "a")["n"] == 1


def test_a_with_block_after_abort_or_a_handled_failed_commit_ends_quietly(
        embedded: blobtable.Store) -> None:
    t = embedded.table("things")
    with embedded.transaction() as tx:
        tx.insert(t, blobtable.Entity("p", "dropped"))
        tx.abort()
    with pytest.raises(blobtable.NotFound):
        t.get("p", "dropped")
    t.upsert(blobtable.Entity("p", "a", n=1))
    with embedded.transaction() as tx:
        a = tx.get(t, "p", "a")
        t.upsert(blobtable.Entity("p", "a", n=2))  # under it
        a["n"] = 3
        tx.replace(t, a)
        with pytest.raises(blobtable.Conflict):
            tx.commit()
    assert t.get("p", "a")["n"] == 2


def test_an_int32_written_then_changed_is_written_as_int32(embedded: blobtable.Store) -> None:
    t = embedded.table("things")
    e = t.insert(blobtable.Entity("p", "r", n=blobtable.Int32(1), m=5))
    assert e.int32_names == frozenset({"n"})
    e["n"] += 1  # a plain int now
    t.replace(e)
    assert [x.row_key for x in t.query(filter="n eq 2")] == ["r"]  # Int32, not 2L
    e["n"] = 1 << 40  # beyond Int32: Int64, and no longer named
    t.replace(e)
    assert "n" not in t.get("p", "r").int32_names


def test_a_counter_refuses_what_is_not_an_int64(embedded: blobtable.Store) -> None:
    c = embedded.counter("hits")
    with pytest.raises(OverflowError):
        c.add(1 << 63)
    with pytest.raises(TypeError):
        c.add(1.5)  # type: ignore[arg-type]
    assert c.add((1 << 63) - 1) == (1 << 63) - 1
    with pytest.raises(blobtable.InvalidArgument):
        list(embedded.table("things").query(page_size=True))


def test_storage_answers_are_passed_on(azurite: str) -> None:
    wrong = azurite.replace("UseDevelopmentStorage=true;",
                            "AccountName=devstoreaccount1;AccountKey=" + "QUFB" * 22 + ";")
    with blobtable.open(wrong) as store:
        with pytest.raises(blobtable.InvalidArgument) as raised:
            store.table("things").upsert(blobtable.Entity("p", "r"))
    assert raised.value.http_status == 403
    assert raised.value.storage_code == "AuthorizationFailure"
