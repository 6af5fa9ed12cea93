"""The SQLite audit log: every call a backend received, the single source of truth the evaluator
reads (ToolPrivacyBench §4.6, §6.4–6.5: "backend audit logs record the arguments actually received").

Table ``calls(run_id, agent, guard, case_id, step, tool, sink, arguments, ts, outcome, result)``;
``step`` numbers the calls of one (run, case) 1..K in arrival order. Table ``observations(run_id,
agent, guard, suite, case_id, idx, kind, turn, channel, recipient, visible, status, tool, text)``
holds what the acquisition and exposure suites score — every channel-labelled observation of an
exposure session and the requester's candidates; what an acquisition agent saw, its response and
its probe answer — so a run can be re-scored from it (``tpguard audit --run``). Thread-safe: one connection
guarded by a lock (SQLite serialises writers anyway). The log holds raw arguments by design — it is
the benchmark's sandboxed evidence, not a production trace.
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from ..trajectory import ToolCall, Trajectory

__all__ = ["OBSERVATION_FIELDS", "AuditLog"]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS calls (
    run_id    TEXT NOT NULL,
    agent     TEXT NOT NULL DEFAULT '',
    guard     TEXT NOT NULL DEFAULT '',
    case_id   TEXT NOT NULL,
    step      INTEGER NOT NULL,
    tool      TEXT NOT NULL,
    sink      TEXT NOT NULL,
    arguments TEXT NOT NULL,
    ts        REAL NOT NULL,
    outcome   TEXT NOT NULL CHECK (outcome IN ('ok', 'error')),
    result    TEXT,
    PRIMARY KEY (run_id, case_id, step)
);
CREATE INDEX IF NOT EXISTS calls_run ON calls (run_id, case_id);
CREATE TABLE IF NOT EXISTS observations (
    run_id    TEXT NOT NULL,
    agent     TEXT NOT NULL DEFAULT '',
    guard     TEXT NOT NULL DEFAULT '',
    suite     TEXT NOT NULL,
    case_id   TEXT NOT NULL,
    idx       INTEGER NOT NULL,
    kind      TEXT NOT NULL,
    turn      INTEGER NOT NULL DEFAULT 0,
    channel   TEXT NOT NULL DEFAULT '',
    recipient TEXT,
    visible   INTEGER NOT NULL DEFAULT 0,
    status    TEXT NOT NULL DEFAULT '',
    tool      TEXT,
    text      TEXT NOT NULL,
    PRIMARY KEY (run_id, case_id, idx)
);
"""
#: The columns of one stored observation (``idx`` is assigned in order).
OBSERVATION_FIELDS = ("kind", "turn", "channel", "recipient", "visible", "status", "tool", "text")


def _dumps(value: Any) -> str:
    return json.dumps(value, default=str, ensure_ascii=False)


class AuditLog:
    """``AuditLog("runs/audit.sqlite")`` (or ``":memory:"``); use as a context manager or ``close()``."""

    def __init__(self, path: str | Path = ":memory:") -> None:
        self.path = str(path)
        if self.path != ":memory:":
            Path(self.path).parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(self.path, check_same_thread=False, timeout=30)
        self._lock = threading.Lock()
        with self._lock:
            if self.path != ":memory:":
                self._db.execute("PRAGMA journal_mode=WAL")
            self._db.executescript(_SCHEMA)
            self._db.commit()

    def __enter__(self) -> AuditLog:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        with self._lock:
            self._db.close()

    # -- writing ------------------------------------------------------------------------------
    def record(self, *, run_id: str, case_id: str, tool: str, sink: str, arguments: Any,
               outcome: str, result: Any = None, agent: str = "", guard: str = "",
               ts: float | None = None) -> int:
        """Append one received call; returns its step (1-based within the run and case). ``ts``
        (default: now) is when the backend received it — a Ray driver copying a worker's rows
        keeps the worker's time."""
        if outcome not in ("ok", "error"):
            raise ValueError("outcome must be 'ok' or 'error'")
        received = time.time() if ts is None else ts
        with self._lock:
            step = 1 + self._db.execute(
                "SELECT COALESCE(MAX(step), 0) FROM calls WHERE run_id = ? AND case_id = ?",
                (run_id, case_id),
            ).fetchone()[0]
            self._db.execute(
                "INSERT INTO calls VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (run_id, agent, guard, case_id, step, tool, sink, _dumps(arguments), received,
                 outcome, None if result is None else _dumps(result)),
            )
            self._db.commit()
        return step

    def record_observations(self, *, run_id: str, case_id: str, suite: str,
                            observations: Iterable[Mapping[str, Any]], agent: str = "",
                            guard: str = "") -> int:
        """Replace the stored observations of one (run, case) by ``observations`` (mappings with
        :data:`OBSERVATION_FIELDS`; ``kind`` and ``text`` required), in order; returns how many."""
        rows = [(run_id, agent, guard, suite, case_id, i, str(o["kind"]), int(o.get("turn") or 0),
                 str(o.get("channel") or ""), o.get("recipient"), int(bool(o.get("visible"))),
                 str(o.get("status") or ""), o.get("tool"), str(o["text"] or ""))
                for i, o in enumerate(observations)]
        with self._lock:
            self._db.execute("DELETE FROM observations WHERE run_id = ? AND case_id = ?",
                             (run_id, case_id))
            self._db.executemany(
                "INSERT INTO observations VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", rows)
            self._db.commit()
        return len(rows)

    def observations(self, run_id: str | None = None, case_id: str | None = None
                     ) -> list[dict[str, Any]]:
        """The stored observations (all, of one run, or of one (run, case)), in order."""
        where, args = [], []
        for col, val in (("run_id", run_id), ("case_id", case_id)):
            if val is not None:
                where.append(f"{col} = ?")
                args.append(val)
        sql = ("SELECT run_id, agent, guard, suite, case_id, idx, kind, turn, channel, recipient, "
               "visible, status, tool, text FROM observations"
               + (" WHERE " + " AND ".join(where) if where else "")
               + " ORDER BY run_id, case_id, idx")
        with self._lock:
            cur = self._db.execute(sql, args)
            names = [d[0] for d in cur.description]
            raw = cur.fetchall()
        out = [dict(zip(names, r, strict=True)) for r in raw]
        for o in out:
            o["visible"] = bool(o["visible"])
        return out

    def clear_case(self, run_id: str, case_id: str) -> int:
        """Forget every call of one (run, case) so it can be re-run; returns how many were removed."""
        with self._lock:
            cur = self._db.execute("DELETE FROM calls WHERE run_id = ? AND case_id = ?",
                                   (run_id, case_id))
            self._db.commit()
        return cur.rowcount

    # -- reading ------------------------------------------------------------------------------
    def trajectory(self, run_id: str, case_id: str) -> Trajectory:
        """``τ`` of one (run, case): the calls the backends received, steps 1..K in order."""
        with self._lock:
            rows = self._db.execute(
                "SELECT step, tool, arguments, outcome, result FROM calls "
                "WHERE run_id = ? AND case_id = ? ORDER BY step", (run_id, case_id),
            ).fetchall()
        calls = [ToolCall(step=i, tool=tool, arguments=json.loads(args), outcome=outcome,
                          result=None if result is None else json.loads(result))
                 for i, (_step, tool, args, outcome, result) in enumerate(rows, start=1)]
        return Trajectory(case_id=case_id, calls=calls)

    def runs(self) -> list[str]:
        with self._lock:
            rows = self._db.execute("SELECT DISTINCT run_id FROM calls ORDER BY run_id").fetchall()
        return [r[0] for r in rows]

    def cases(self, run_id: str) -> list[str]:
        with self._lock:
            rows = self._db.execute(
                "SELECT DISTINCT case_id FROM calls WHERE run_id = ? ORDER BY case_id", (run_id,)
            ).fetchall()
        return [r[0] for r in rows]

    def rows(self, run_id: str | None = None) -> list[dict[str, Any]]:
        """Every logged call as a dict (``arguments``/``result`` decoded), for reports and tests."""
        sql = ("SELECT run_id, agent, guard, case_id, step, tool, sink, arguments, ts, outcome, "
               "result FROM calls")
        args: tuple[str, ...] = ()
        if run_id is not None:
            sql, args = sql + " WHERE run_id = ?", (run_id,)
        with self._lock:
            cur = self._db.execute(sql + " ORDER BY run_id, case_id, step", args)
            names = [d[0] for d in cur.description]
            raw = cur.fetchall()
        out = []
        for r in raw:
            row = dict(zip(names, r, strict=True))
            row["arguments"] = json.loads(row["arguments"])
            row["result"] = None if row["result"] is None else json.loads(row["result"])
            out.append(row)
        return out
