"""``records.jsonl``: one record (τ, U, L) per agent × guard × case (seed ``000_*`` §4.8).

Appends are thread-safe; a re-run reads the finished keys and skips them (resumable).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ..metrics import CaseScore

__all__ = ["RecordKey", "RecordWriter", "iter_records", "load_scores", "record_key"]

RecordKey = tuple[str, str, str, str, int]


def record_key(r: dict[str, Any]) -> RecordKey:
    return (r["agent"], r["guard"], r["suite"], r["case_id"], int(r.get("seed", 0)))


def iter_records(path: Path) -> Iterator[dict[str, Any]]:
    """Records in file order; a torn last line (an interrupted run) is skipped."""
    if not path.exists():
        return
    with path.open(encoding="utf-8") as fh:
        for line in fh:
            line = line.strip()
            if not line:
                continue
            try:
                yield json.loads(line)
            except json.JSONDecodeError:
                continue


def load_scores(path: Path) -> list[CaseScore]:
    return [CaseScore.from_dict(r["score"]) for r in iter_records(path) if r.get("score")]


class RecordWriter:
    def __init__(self, path: Path) -> None:
        self.path = path
        self.done: set[RecordKey] = {record_key(r) for r in iter_records(path)}
        self._lock = threading.Lock()
        if path.exists() and path.stat().st_size and not path.read_bytes().endswith(b"\n"):
            with path.open("a", encoding="utf-8") as fh:  # end a torn line before appending
                fh.write("\n")

    def write(self, record: dict[str, Any]) -> None:
        line = json.dumps(record, ensure_ascii=False, default=str) + "\n"
        with self._lock, self.path.open("a", encoding="utf-8") as fh:
            fh.write(line)
            self.done.add(record_key(record))
