# SPDX-License-Identifier: Apache-2.0
"""The Python side of blobtable's types: entities, the EDM wrappers and the
exceptions (docs/python.md#types and #errors). The extension module
(blobtable._blobtable) builds and reads these."""

from __future__ import annotations

import datetime as _dt
import operator as _operator
import uuid as _uuid
from typing import Any, Dict, FrozenSet, Iterable, Mapping, Optional, Tuple

__all__ = [
    "Entity", "Int32", "Int64", "Guid", "DateTime",
    "Error", "NotFound", "Conflict", "Busy", "LockTimeout", "LeaseLost", "Unavailable",
    "InvalidArgument", "Corruption", "LocalIOError", "Internal", "OutcomeUnknown",
]


class _SizedInt(int):
    """An int of an EDM integer type: `bits` wide, signed."""

    __slots__ = ()
    bits = 64

    def __new__(cls, value: Any = 0) -> "_SizedInt":
        # operator.index: an int or what stands for one, never a float or a str.
        v = int.__new__(cls, _operator.index(value))
        if not -(2 ** (cls.bits - 1)) <= v < 2 ** (cls.bits - 1):
            raise OverflowError(f"{int(v)} is outside {cls.__name__}'s range")
        return v

    def __repr__(self) -> str:
        return f"{type(self).__name__}({int(self)})"


class Int32(_SizedInt):
    """An int stored as Edm.Int32 (-2**31 .. 2**31-1)."""

    __slots__ = ()
    bits = 32


class Int64(_SizedInt):
    """An int stored as Edm.Int64 (what a plain int is stored as, unless the
    entity read that property as Int32)."""

    __slots__ = ()
    bits = 64


class Guid(str):
    """An Edm.Guid given as its text: how a GUID is read back when its text is
    not uuid.UUID's own (uppercase hex), so that writing it again stores the
    very same text. A uuid.UUID is stored as a Guid too."""

    __slots__ = ()

    def __repr__(self) -> str:
        return f"Guid({str.__repr__(self)})"


class DateTime(_dt.datetime):
    """An aware datetime that keeps Edm.DateTime's 100-ns resolution:
    `ticks_remainder` (0-9) is the part below a microsecond. Made as a
    datetime is, with `ticks_remainder=` as a keyword; read back where that
    part is not 0. Equal only to a datetime of the same instant to the
    100 ns (a plain datetime's remainder is 0); arithmetic and replace()
    give the remainder 0 (they work in microseconds)."""

    __slots__ = ("_ticks_remainder",)
    _ticks_remainder: int

    def __new__(cls, *args: Any, ticks_remainder: int = 0, **kwargs: Any) -> "DateTime":
        if not 0 <= _operator.index(ticks_remainder) <= 9:
            raise ValueError("ticks_remainder must be 0-9")
        d = super().__new__(cls, *args, **kwargs)
        d._ticks_remainder = ticks_remainder
        return d

    @property
    def ticks_remainder(self) -> int:
        """The 100-ns ticks below its microsecond, 0-9."""
        return getattr(self, "_ticks_remainder", 0)

    @classmethod
    def _from(cls, when: _dt.datetime, remainder: int) -> "DateTime":
        return cls(when.year, when.month, when.day, when.hour, when.minute, when.second,
                   when.microsecond, tzinfo=when.tzinfo, ticks_remainder=remainder)

    def __reduce_ex__(self, protocol: Any) -> Any:  # pickle, copy: the remainder travels too
        plain = _dt.datetime(self.year, self.month, self.day, self.hour, self.minute,
                             self.second, self.microsecond, tzinfo=self.tzinfo, fold=self.fold)
        return (DateTime._from, (plain, self.ticks_remainder))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, _dt.datetime):
            return NotImplemented
        theirs = other.ticks_remainder if isinstance(other, DateTime) else 0
        return _dt.datetime.__eq__(self, other) and self.ticks_remainder == theirs

    def __ne__(self, other: object) -> bool:
        equal = self.__eq__(other)
        return equal if equal is NotImplemented else not equal

    def __hash__(self) -> int:
        plain = _dt.datetime.__hash__(self)
        return plain if self.ticks_remainder == 0 else hash((plain, self.ticks_remainder))

    def __repr__(self) -> str:
        return f"blobtable.DateTime({self.isoformat()!r}, ticks_remainder={self.ticks_remainder})"


class Entity(Dict[str, Any]):
    """An entity: a dict of its properties, with its keys as the items
    "PartitionKey" and "RowKey" (as azure-data-tables has them), and what
    storage said of it as attributes: etag, timestamp (an aware UTC
    datetime) and stale (read from the cache without reaching storage).

    Types (docs/python.md#types): str, bytes, bool, float, int, datetime
    (aware), uuid.UUID, and the wrappers Int32, Int64, Guid, DateTime.
    An int is stored as Int64, unless the entity read that property as Int32
    and it still fits, or it is an Int32."""

    __slots__ = ("etag", "_ticks", "stale", "_int32")
    etag: Optional[str]
    _ticks: Optional[int]  # the Timestamp, in 100-ns ticks since 1970
    stale: bool
    _int32: Optional[FrozenSet[str]]

    def __init__(self, partition_key: Optional[str] = None, row_key: Optional[str] = None,
                 properties: Optional[Mapping[str, Any] | Iterable[Tuple[str, Any]]] = None,
                 **more: Any) -> None:
        super().__init__()
        if isinstance(partition_key, Mapping) and row_key is None and properties is None:
            partition_key, properties = None, partition_key  # Entity({...})
        if properties is not None:
            self.update(properties)
        if more:
            self.update(more)
        for item, key in (("PartitionKey", partition_key), ("RowKey", row_key)):
            if key is None:
                continue
            if item in self and self[item] != key:
                raise ValueError(f"{item} given twice: {key!r} and {self[item]!r}")
            self[item] = key
        self.etag = None
        self._ticks = None
        self.stale = False
        self._int32 = None

    @property
    def timestamp(self) -> Optional[_dt.datetime]:
        """When storage last wrote it (an aware UTC datetime; None before)."""
        return None if self._ticks is None else _datetime_of_ticks(self._ticks)

    @property
    def partition_key(self) -> str:
        """The item "PartitionKey"."""
        return str(self["PartitionKey"])

    @property
    def row_key(self) -> str:
        """The item "RowKey"."""
        return str(self["RowKey"])

    @property
    def int32_names(self) -> FrozenSet[str]:
        """The properties read as Int32 (written back as Int32 while they fit)."""
        return self._int32 or frozenset()

    def copy(self) -> "Entity":
        """A copy: its items, etag, timestamp and Int32 names (the values shared)."""
        e = Entity()
        e.update(self)
        e.etag, e._ticks, e.stale, e._int32 = self.etag, self._ticks, self.stale, self._int32
        return e

    def __repr__(self) -> str:
        return f"Entity({dict.__repr__(self)}, etag={self.etag!r})"


class Error(Exception):
    """A failure of blobtable: `code` ("NotFound", "Conflict", ...) says what
    to do next (docs/api.md#errors), `message` what happened; an answer from
    storage also has its `storage_code` ("ConditionNotMet") and
    `http_status` (412)."""

    code = "Error"

    def __init__(self, message: str, code: Optional[str] = None, http_status: int = 0,
                 storage_code: str = "") -> None:
        super().__init__(message)
        self.message = message
        if code is not None:
            self.code = code
        self.http_status = http_status
        self.storage_code = storage_code

    def __str__(self) -> str:
        text = f"{self.code}: {self.message}"
        if self.storage_code or self.http_status:
            parts = [p for p in (self.storage_code, self.http_status and f"HTTP {self.http_status}") if p]
            text += " [" + ", ".join(parts) + "]"
        return text

    @property
    def retryable(self) -> bool:
        """True if the same call may succeed when tried again (Status::IsRetryable)."""
        return self.code in ("Conflict", "Busy", "LockTimeout", "LeaseLost", "Unavailable")


class NotFound(Error, LookupError):
    """No such entity, table, index or item. Retrying will not help."""
    code = "NotFound"


class Conflict(Error):
    """An ETag condition failed, or the entity exists: read again and retry."""
    code = "Conflict"


class Busy(Error):
    """Held by someone else right now: retry later."""
    code = "Busy"


class LockTimeout(Error):
    """A lock was not had within its timeout."""
    code = "LockTimeout"


class LeaseLost(Error):
    """The caller's own lease is gone: abandon what it was doing under it."""
    code = "LeaseLost"


class Unavailable(Error):
    """Storage could not be reached, or failed transiently: retryable."""
    code = "Unavailable"


class InvalidArgument(Error, ValueError):
    """A bad argument or setting, or credentials storage refused."""
    code = "InvalidArgument"


class Corruption(Error):
    """Stored data could not be decoded."""
    code = "Corruption"


class LocalIOError(Error, OSError):
    """A local I/O or database failure (disk full, permissions): Status's IOError."""
    code = "IOError"


class Internal(Error):
    """A bug in blobtable."""
    code = "Internal"


class OutcomeUnknown(Error):
    """A commit that may or may not have happened: read what it wrote (or
    Store.recover()), then decide. Never retried blindly."""
    code = "OutcomeUnknown"


# Status's code names to the exception raised for each (the extension module
# looks them up here).
ERRORS = {cls.code: cls for cls in (NotFound, Conflict, Busy, LockTimeout, LeaseLost, Unavailable,
                                     InvalidArgument, Corruption, LocalIOError, Internal,
                                     OutcomeUnknown)}

EPOCH = _dt.datetime(1970, 1, 1, tzinfo=_dt.timezone.utc)


def _datetime_of_ticks(ticks: int) -> _dt.datetime:
    """100-ns ticks since 1970 as a UTC datetime (a DateTime below a microsecond)."""
    micros, remainder = divmod(ticks, 10)
    when = EPOCH + _dt.timedelta(microseconds=micros)
    return DateTime._from(when, remainder) if remainder else when
UUID = _uuid.UUID
