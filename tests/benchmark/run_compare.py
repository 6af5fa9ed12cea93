"""What two runs of the same configuration must share, whatever executed them (local threads,
worker processes, Ray): their spans without ids, times and the per-process instance id."""

from __future__ import annotations

import json
from pathlib import Path


def stable_spans(out: Path) -> list[str]:
    """The run's spans in a stable order, without what differs by executor or clock."""
    spans = []
    for line in (out / "spans.jsonl").read_text().splitlines():
        s = json.loads(line)
        for k in ("trace_id", "span_id", "parent_span_id", "start_time_unix_nano",
                  "end_time_unix_nano"):
            s.pop(k)
        s["resource"].pop("service.instance.id", None)
        for e in s["events"]:
            e.pop("time_unix_nano")
        spans.append(json.dumps(s, sort_keys=True))
    return sorted(spans)
