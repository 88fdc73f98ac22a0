# SPDX-License-Identifier: Apache-2.0
"""The type mapping (docs/python.md#types): every EDM type round-trips
exactly, and the int rule."""

from __future__ import annotations

import datetime as dt
import math
import uuid
from typing import Iterator

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import blobtable

UTC = dt.timezone.utc


def roundtrip(table: blobtable.Table, name: str, value: object) -> object:
    table.upsert(blobtable.Entity("p", "r", {name: value}))
    return table.get("p", "r")[name]


def test_every_type_round_trips(store: blobtable.Store) -> None:
    t = store.table("types")
    g = uuid.UUID("3f2504e0-4f89-11d3-9a0c-0305e82c3301")
    when = dt.datetime(2020, 2, 29, 23, 59, 58, 999999, tzinfo=UTC)
    e = blobtable.Entity("p", "r", s="caf\u00e9 \x00 nul", b=b"\x00\x01\xff", t=True, d=when,
                         x=-0.1, g=g, i=blobtable.Int32(-2**31), l=2**63 - 1)
    t.insert(e)
    assert e.etag and e.timestamp is not None and e.timestamp.tzinfo is not None
    got = t.get("p", "r")
    assert got == {"PartitionKey": "p", "RowKey": "r", "s": "caf\u00e9 \x00 nul",
                   "b": b"\x00\x01\xff", "t": True, "d": when, "x": -0.1, "g": g,
                   "i": -2**31, "l": 2**63 - 1}
    assert type(got["t"]) is bool and type(got["l"]) is int and type(got["g"]) is uuid.UUID
    assert got.etag == e.etag and got.partition_key == "p" and got.row_key == "r"
    assert got.int32_names == frozenset({"i"})


def test_an_int_read_as_int32_is_written_back_as_int32(embedded: blobtable.Store) -> None:
    t = embedded.table("ints")
    t.upsert(blobtable.Entity("p", "r", n=blobtable.Int32(5), m=5))
    e = t.get("p", "r")
    e["n"] += 1        # a plain int now, but the entity read n as Int32
    e["m"] += 1
    e["big"] = 2**31   # a plain int that no Int32 holds
    t.replace(e)
    back = t.get("p", "r")
    assert back.int32_names == frozenset({"n"})
    assert back["n"] == 6 and back["m"] == 6 and back["big"] == 2**31
    # Once it outgrows Int32, it is stored as Int64.
    back["n"] = 2**40
    t.replace(back)
    assert t.get("p", "r").int32_names == frozenset()
    # Int64 forces Int64 even where Int32 was read.
    t.upsert(blobtable.Entity("p", "q", n=blobtable.Int32(1)))
    e = t.get("p", "q")
    e["n"] = blobtable.Int64(2)
    t.replace(e)
    assert t.get("p", "q").int32_names == frozenset()


def test_wrappers_keep_what_python_types_cannot(embedded: blobtable.Store) -> None:
    t = embedded.table("wrappers")
    # A Guid in uppercase stays uppercase (a uuid.UUID would be lowercase).
    upper = blobtable.Guid("3F2504E0-4F89-11D3-9A0C-0305E82C3301")
    got = roundtrip(t, "g", upper)
    assert type(got) is blobtable.Guid and got == upper
    # 100-ns ticks below a microsecond survive in a blobtable.DateTime.
    fine = blobtable.DateTime._from(dt.datetime(2001, 1, 1, tzinfo=UTC), 7)
    got = roundtrip(t, "d", fine)
    assert isinstance(got, blobtable.DateTime) and got.ticks_remainder == 7
    assert got == fine
    # A time zone other than UTC is the same instant, read back in UTC.
    plus2 = dt.datetime(2001, 1, 1, 12, tzinfo=dt.timezone(dt.timedelta(hours=2)))
    assert roundtrip(t, "d", plus2) == dt.datetime(2001, 1, 1, 10, tzinfo=UTC)


def test_values_with_no_edm_type_are_refused(embedded: blobtable.Store) -> None:
    t = embedded.table("refused")
    with pytest.raises(ValueError, match="naive"):
        t.upsert(blobtable.Entity("p", "r", d=dt.datetime(2001, 1, 1)))
    with pytest.raises(TypeError, match="None"):
        t.upsert(blobtable.Entity("p", "r", x=None))
    with pytest.raises(TypeError, match="list"):
        t.upsert(blobtable.Entity("p", "r", x=[1]))
    with pytest.raises(OverflowError):
        t.upsert(blobtable.Entity("p", "r", x=2**63))
    with pytest.raises(OverflowError):
        blobtable.Int32(2**31)
    with pytest.raises(blobtable.InvalidArgument, match="PartitionKey"):
        t.upsert({"RowKey": "r"})
    with pytest.raises(blobtable.InvalidArgument):  # outside 1601-9999
        t.upsert(blobtable.Entity("p", "r", d=dt.datetime(1500, 1, 1, tzinfo=UTC)))
    with pytest.raises(blobtable.NotFound):
        t.get("p", "r")  # nothing was written


def test_a_plain_dict_is_an_entity(embedded: blobtable.Store) -> None:
    t = embedded.table("dicts")
    d = {"PartitionKey": "p", "RowKey": "r", "n": 1}
    assert t.insert(d) is d
    assert t.get("p", "r")["n"] == 1


# Values hypothesis draws for each type, within what the store holds.
edm_values = st.one_of(
    st.text(max_size=200),
    st.binary(max_size=300),
    st.booleans(),
    st.floats(allow_nan=False),
    st.integers(min_value=-2**63, max_value=2**63 - 1),
    st.builds(blobtable.Int32, st.integers(min_value=-2**31, max_value=2**31 - 1)),
    st.datetimes(min_value=dt.datetime(1601, 1, 1), max_value=dt.datetime(9999, 12, 31),
                 timezones=st.just(UTC)),
    st.uuids(),
)


@pytest.fixture(scope="module")
def shared_table(tmp_path_factory: pytest.TempPathFactory) -> Iterator[blobtable.Table]:
    with blobtable.open(tmp_path_factory.mktemp("h") / "store") as s:
        yield s.table("prop")


@settings(max_examples=80, deadline=None)
@given(props=st.dictionaries(st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,20}", fullmatch=True)
                             .filter(lambda n: n not in ("PartitionKey", "RowKey", "Timestamp",
                                                         "ETag")),
                             edm_values, max_size=8))
def test_any_properties_round_trip(shared_table: blobtable.Table, props: dict) -> None:
    rk = uuid.uuid4().hex
    shared_table.upsert(blobtable.Entity("p", rk, props))
    got = shared_table.get("p", rk)
    assert {k: v for k, v in got.items() if k not in ("PartitionKey", "RowKey")} == props
    for k, v in props.items():
        if isinstance(v, bool) or not isinstance(v, int):
            assert type(got[k]) is type(v)
        assert (k in got.int32_names) == isinstance(v, blobtable.Int32)
        if isinstance(v, float) and v == 0:
            assert math.copysign(1, got[k]) == math.copysign(1, v)  # -0.0 stays -0.0
