"""``records.jsonl``: one record (τ, U, L) per agent × guard × case (seed ``000_*`` §4.8).

The file is append-only. A re-run of a key (an errored case-run retried, or ``--force``) appends a
new record; when reading, **the last record of a key wins** (:func:`latest_records`), so the file
is always safe to append to and never rewritten. :func:`iter_records` is the raw file order, every
line, superseded ones included. Appends are thread-safe; a torn last line (an interrupted run) is
skipped when reading and ended before the next append.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from ..metrics import CaseScore
from ._errors import record_error

__all__ = ["RecordKey", "RecordWriter", "iter_records", "latest_records", "load_scores",
           "record_key"]

RecordKey = tuple[str, str, str, str, int]


def record_key(r: dict[str, Any]) -> RecordKey:
    """``(agent, guard, suite, case_id, seed)`` — what one record measures."""
    return (r["agent"], r["guard"], r["suite"], r["case_id"], int(r.get("seed", 0)))


def iter_records(path: Path) -> Iterator[dict[str, Any]]:
    """Every record in file order (superseded ones too); a torn line is skipped."""
    if not path.exists():
        return
    with path.open(encoding="utf-8") as fh:
        for line in fh:
            line = line.strip()
            if not line:
                continue
            try:
                rec = json.loads(line)
            except json.JSONDecodeError:
                continue
            if isinstance(rec, dict) and "case_id" in rec:
                yield rec


def dedupe(records: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """The last record of every key, in the order keys first appeared."""
    latest: dict[RecordKey, dict[str, Any]] = {}
    for r in records:
        latest[record_key(r)] = r  # dict keeps the first insertion position, the last value
    return list(latest.values())


def latest_records(path: Path) -> list[dict[str, Any]]:
    """What the run directory holds now: the last record of every key."""
    return dedupe(iter_records(path))


def load_scores(path: Path) -> list[CaseScore]:
    """Scores of the current records that were measured (errored case-runs excluded)."""
    return [CaseScore.from_dict(r["score"]) for r in latest_records(path)
            if record_error(r) is None and r.get("score")]


class RecordWriter:
    """Appends records; ``done`` holds the keys a resumed run skips.

    ``retry_errors`` (default) leaves errored keys out of ``done`` so they run again; ``force``
    leaves every key out (all re-run, the new records supersede the old).
    """

    def __init__(self, path: Path, *, retry_errors: bool = True, force: bool = False) -> None:
        self.path = path
        current = [] if force else latest_records(path)
        self.done: set[RecordKey] = {record_key(r) for r in current
                                     if not (retry_errors and record_error(r) is not None)}
        self.retried: set[RecordKey] = {record_key(r) for r in current} - self.done
        self._lock = threading.Lock()
        if path.exists() and path.stat().st_size and not _ends_with_newline(path):
            with path.open("a", encoding="utf-8") as fh:  # end a torn line before appending
                fh.write("\n")

    def write(self, record: dict[str, Any]) -> None:
        line = json.dumps(record, ensure_ascii=False, default=str) + "\n"
        with self._lock, self.path.open("a", encoding="utf-8") as fh:
            fh.write(line)
            self.done.add(record_key(record))


def _ends_with_newline(path: Path) -> bool:
    with path.open("rb") as fh:
        fh.seek(-1, 2)
        return fh.read(1) == b"\n"
