# SPDX-License-Identifier: Apache-2.0
"""One store, many languages (issue 58): entities of every type written from
Python read the same by the CLI and by C++, and back; transactions from
Python threads and C++ processes on the same rows keep the total; a lock
Python holds is waited for by the CLI's `lock`."""

from __future__ import annotations

import base64
import datetime as dt
import json
import os
import random
import subprocess
import threading
import uuid
from pathlib import Path
from typing import Dict, List

import pytest

import blobtable

UTC = dt.timezone.utc
CLI = os.environ.get("BLOBTABLE_CLI", "")
HELPER = os.environ.get("BLOBTABLE_INTEROP_HELPER", "")

pytestmark = pytest.mark.skipif(not CLI or not HELPER,
                                reason="run by CTest, which names the CLI and the C++ helper")


def cli(store: str, *args: str, stdin: str = "") -> subprocess.CompletedProcess:
    return subprocess.run([CLI, "--store", store, *args], input=stdin, text=True,
                          capture_output=True, timeout=120)


def dump(store: str, table: str, pk: str, rk: str) -> Dict[str, tuple]:
    """The entity as the C++ API reads it: {name: (type, value text)}."""
    r = subprocess.run([HELPER, "dump", store, table, pk, rk], text=True, capture_output=True,
                       timeout=120)
    assert r.returncode == 0, r.stderr
    return {name: (t, v) for name, t, v in (line.split(" ", 2) for line in r.stdout.splitlines())}


EVERY = {
    "s": "caf\u00e9 \x00 nul",
    "b": b"\x00\x01\xff",
    "t": True,
    "d": blobtable.DateTime._from(dt.datetime(2021, 1, 1, 0, 0, 0, 123456, tzinfo=UTC), 7),
    "x": -0.1,
    "g": uuid.UUID("3f2504e0-4f89-11d3-9a0c-0305e82c3301"),
    "i": blobtable.Int32(-7),
    "l": 2**40,
}


def test_every_type_reads_the_same_in_python_the_cli_and_cpp(tmp_path: Path) -> None:
    where = str(tmp_path / "store")
    with blobtable.open(where) as store:
        store.table("interop").upsert(blobtable.Entity("p", "py", EVERY))
    # C++: each property, of its type, exactly.
    seen = dump(where, "interop", "p", "py")
    ticks = (EVERY["d"] - blobtable._types.EPOCH) // dt.timedelta(microseconds=1) * 10 + 7
    assert seen == {
        "s": ("Edm.String", EVERY["s"].encode().hex()), "b": ("Edm.Binary", "0001ff"),
        "t": ("Edm.Boolean", "true"), "d": ("Edm.DateTime", str(ticks)),
        "x": ("Edm.Double", seen["x"][1]), "g": ("Edm.Guid", str(EVERY["g"])),
        "i": ("Edm.Int32", "-7"), "l": ("Edm.Int64", str(2**40))}
    assert float.fromhex(seen["x"][1]) == -0.1
    # The CLI: Azure Tables' JSON, its annotations naming the types.
    r = cli(where, "get", "interop", "p", "py", "--format", "json")
    assert r.returncode == 0, r.stderr
    j = json.loads(r.stdout)
    assert j["s"] == EVERY["s"] and j["t"] is True and j["i"] == -7
    assert base64.b64decode(j["b"]) == EVERY["b"] and j["b@odata.type"] == "Edm.Binary"
    assert j["l"] == str(2**40) and j["l@odata.type"] == "Edm.Int64"
    assert j["x"] == -0.1 and j["x@odata.type"] == "Edm.Double"
    assert j["g"] == str(EVERY["g"]) and j["g@odata.type"] == "Edm.Guid"
    assert j["d@odata.type"] == "Edm.DateTime" and j["d"].startswith("2021-01-01T00:00:00.1234567")
    # And back: what the CLI and C++ write, Python reads as the same values.
    j["RowKey"] = "cli"
    del j["odata.etag"], j["Timestamp"]
    r = cli(where, "put", "interop", "--mode", "upsert", stdin=json.dumps(j))
    assert r.returncode == 0, r.stderr
    r = subprocess.run([HELPER, "write", where, "interop", "p", "cpp"], capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    with blobtable.open(where) as store:
        t = store.table("interop")
        from_cli = t.get("p", "cli")
        assert {k: v for k, v in from_cli.items() if k != "RowKey"} == \
            {k: v for k, v in dict(EVERY, PartitionKey="p").items()}
        assert from_cli["d"].ticks_remainder == 7 and from_cli.int32_names == {"i"}
        from_cpp = t.get("p", "cpp")
        assert from_cpp["g"] == blobtable.Guid("3F2504E0-4F89-11D3-9A0C-0305E82C3301")
        assert from_cpp["i"] == -7 and from_cpp["l"] == 2**40 and from_cpp["b"] == b"\x00\x01\xff"
        assert from_cpp["d"] == EVERY["d"] and from_cpp["d"].ticks_remainder == 7
        # Written back from Python unchanged, C++ reads what it wrote.
        before = dump(where, "interop", "p", "cpp")
        t.replace(from_cpp)
    assert dump(where, "interop", "p", "cpp") == before


def test_transactions_from_python_and_cpp_keep_the_total(store: blobtable.Store,
                                                         location: tuple) -> None:
    where, options = location
    env = dict(os.environ)
    if options:  # Azurite: the test's own container, and a cache of the helper's own
        env["INTEROP_CONTAINER"] = options["container"]
        env["INTEROP_CACHE"] = options["cache_dir"] + "-cpp"
    bank = store.table("bank")
    for a in range(10):
        bank.upsert(blobtable.Entity("acct", f"a{a}", balance=100))
    procs = [subprocess.Popen([HELPER, "bank", where, "30", str(seed)], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, env=env) for seed in (1, 2)]
    errors: List[BaseException] = []

    def transfers(seed: int) -> None:
        rng = random.Random(seed)
        try:
            for _ in range(30):
                src = rng.randrange(10)
                dst = (src + 1 + rng.randrange(9)) % 10
                amount = 1 + rng.randrange(5)

                def move(tx: blobtable.Transaction) -> None:
                    a, b = tx.get(bank, "acct", f"a{src}"), tx.get(bank, "acct", f"a{dst}")
                    a["balance"] -= amount
                    b["balance"] += amount
                    tx.replace(bank, a)
                    tx.replace(bank, b)

                store.run_transaction(move, retry=1000)
        except BaseException as e:  # reported below
            errors.append(e)

    threads = [threading.Thread(target=transfers, args=(s,)) for s in (3, 4)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    for p in procs:
        out, err = p.communicate(timeout=300)
        assert p.returncode == 0, err
        assert out == "transfers: 30\n"
    assert errors == []
    balances = [bank.get("acct", f"a{a}")["balance"] for a in range(10)]
    assert sum(balances) == 1000, balances


def test_a_lock_python_holds_is_waited_for_by_the_cli(tmp_path: Path) -> None:
    where = str(tmp_path / "store")
    with blobtable.open(where) as store:
        lock = store.lock("nightly")
        waiter = subprocess.Popen(
            [CLI, "--store", where, "lock", "nightly", "--timeout", "120", "--",
             "sh", "-c", 'echo "token $BLOBTABLE_LOCK_TOKEN"'],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        # It cannot have the lock while Python holds it: still waiting, or
        # (had it got it) it would have printed a token no larger than ours.
        store.table("meanwhile").upsert(blobtable.Entity("p", "r"))
        assert waiter.poll() is None
        token = lock.token
        lock.release()
        out, err = waiter.communicate(timeout=120)
        assert waiter.returncode == 0, err
        assert out.startswith("token ") and int(out.split()[1]) > token
