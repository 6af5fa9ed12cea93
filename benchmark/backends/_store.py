"""One SQLite table holding every business object of one (run, case): the backends' state.

Each primitive (records, tickets, …) stores its objects here with a readable id (``TCK-000123``),
the tool that created it, every tool that touched it, a status and the received fields as JSON.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from dataclasses import dataclass
from typing import Any

__all__ = ["BusinessObject", "Store"]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS objects (
    primitive TEXT NOT NULL,
    id        TEXT PRIMARY KEY,
    seq       INTEGER NOT NULL,
    tool      TEXT NOT NULL,
    touched   TEXT NOT NULL,
    status    TEXT NOT NULL,
    data      TEXT NOT NULL,
    step      INTEGER NOT NULL
)
"""


@dataclass(frozen=True)
class BusinessObject:
    """A stored object: ``data`` holds the fields the backend received (merged over updates)."""

    primitive: str
    id: str
    tool: str
    touched_by: tuple[str, ...]
    status: str
    data: dict[str, Any]


def _dumps(value: Any) -> str:
    return json.dumps(value, default=str, sort_keys=True)


class Store:
    """A per-case SQLite database (in memory by default); safe to share between threads."""

    def __init__(self, path: str = ":memory:") -> None:
        self._db = sqlite3.connect(path, check_same_thread=False)
        self._lock = threading.RLock()
        with self._lock:
            self._db.execute(_SCHEMA)
            self._db.commit()

    def insert(self, primitive: str, prefix: str, tool: str, status: str, data: dict[str, Any],
               step: int = 0) -> BusinessObject:
        with self._lock:
            seq = 1 + self._db.execute(
                "SELECT COUNT(*) FROM objects WHERE primitive = ?", (primitive,)
            ).fetchone()[0]
            oid = f"{prefix}-{seq:06d}"
            self._db.execute(
                "INSERT INTO objects VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (primitive, oid, seq, tool, _dumps([tool]), status, _dumps(data), step),
            )
            self._db.commit()
        return BusinessObject(primitive, oid, tool, (tool,), status, dict(data))

    def get(self, primitive: str, oid: str) -> BusinessObject | None:
        with self._lock:
            row = self._db.execute(
                "SELECT primitive, id, tool, touched, status, data FROM objects "
                "WHERE primitive = ? AND id = ?", (primitive, oid),
            ).fetchone()
        return _row(row) if row else None

    def find(self, primitive: str, **where: str) -> list[BusinessObject]:
        """Objects of ``primitive`` whose fields equal ``where`` (newest first)."""
        return [o for o in reversed(self.all(primitive))
                if all(str(o.data.get(k)) == v for k, v in where.items())]

    def all(self, primitive: str | None = None) -> list[BusinessObject]:
        sql = "SELECT primitive, id, tool, touched, status, data FROM objects"
        args: tuple[str, ...] = ()
        if primitive is not None:
            sql, args = sql + " WHERE primitive = ?", (primitive,)
        with self._lock:
            rows = self._db.execute(sql + " ORDER BY primitive, seq", args).fetchall()
        return [_row(r) for r in rows]

    def update(self, obj: BusinessObject, tool: str, *, status: str | None = None,
               data: dict[str, Any] | None = None) -> BusinessObject:
        merged = {**obj.data, **(data or {})}
        touched = obj.touched_by if tool in obj.touched_by else (*obj.touched_by, tool)
        new_status = status or obj.status
        with self._lock:
            self._db.execute(
                "UPDATE objects SET status = ?, data = ?, touched = ? WHERE id = ?",
                (new_status, _dumps(merged), _dumps(list(touched)), obj.id),
            )
            self._db.commit()
        return BusinessObject(obj.primitive, obj.id, obj.tool, touched, new_status, merged)

    def close(self) -> None:
        with self._lock:
            self._db.close()


def _row(row: tuple[Any, ...]) -> BusinessObject:
    primitive, oid, tool, touched, status, data = row
    return BusinessObject(primitive, oid, tool, tuple(json.loads(touched)), status, json.loads(data))
