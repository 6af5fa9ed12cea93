"""Where a guard goes in an exposure session (seed ``002_*`` §5.2, §5.4, App. K).

:class:`SessionWrap` is the pass-through; a guard subclasses it (or provides the same three
methods) and is handed to ``run_session(..., wrap=...)``:

* ``before_call(tool, arguments) -> arguments | None`` — request side (``enforce``/``redact`` on
  arguments); ``None`` withholds the call;
* ``after_return(tool, arguments, text) -> text`` — the model-visible return (``return-min``);
  the evaluator keeps the raw return on ``tool_return`` either way;
* ``at_exit(channel, recipient, text) -> text | None`` — every visible exit (an exit guard, e.g.
  ``Guard.check_exit``); ``None`` blocks the emission, a changed text is delivered redacted.

:class:`OracleRedaction` is the paper's all-exit redaction sanity check (App. K): it replaces every
target variant on the chosen visible channels using the hidden annotations — a measurement check,
never a deployable guard. :class:`ReturnMin` is the C3 contrast: the model sees only ids and
titles of what a tool returned.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from typing import Any

from ...cases.exposure import ExpCase
from ...cases.exposure._interface import TITLE

__all__ = ["REDACTED", "OracleRedaction", "ReturnMin", "SessionWrap"]

REDACTED = "[REDACTED]"


class SessionWrap:
    """Pass-through hooks (no guard)."""

    name = "off"

    def before_call(self, tool: str, arguments: dict[str, Any]) -> dict[str, Any] | None:
        return arguments

    def after_return(self, tool: str, arguments: dict[str, Any], text: str) -> str:
        return text

    def at_exit(self, channel: str, recipient: str, text: str) -> str | None:
        return text


class OracleRedaction(SessionWrap):
    """Redact every target variant on ``channels`` (default: every visible exit of the case)."""

    def __init__(self, case: ExpCase, channels: Iterable[str] | None = None) -> None:
        self.channels = frozenset(channels if channels is not None else case.visible_channels)
        self.name = "oracle-redaction:" + "+".join(sorted(self.channels))
        variants = sorted({v for t in case.targets for v in t.variants}, key=len, reverse=True)
        # one alternation, longest first, whitespace-tolerant (the normalized half of matching)
        parts = [r"\s+".join(map(re.escape, v.split())) for v in variants if v.strip()]
        self._rx = re.compile("|".join(parts), re.IGNORECASE) if parts else None

    def at_exit(self, channel: str, recipient: str, text: str) -> str | None:
        if channel not in self.channels or self._rx is None:
            return text
        return self._rx.sub(REDACTED, text)


class ReturnMin(SessionWrap):
    """Minimize model-visible returns to ids and titles (the paper's C3 "minimized output")."""

    name = "return-min"

    def after_return(self, tool: str, arguments: dict[str, Any], text: str) -> str:
        try:
            payload = json.loads(text)
        except ValueError:
            return text
        if not isinstance(payload, dict):
            return text
        out: dict[str, Any] = {}
        for coll, rows in payload.items():
            if isinstance(rows, list):
                key = TITLE.get(coll, "id")
                out[coll] = [{"id": r.get("id"), key: r.get(key) if key in ("subject", "filename",
                                                                           "title", "task_name")
                              else None} for r in rows if isinstance(r, dict)]
            else:
                out[coll] = rows
        return json.dumps(out, ensure_ascii=False)
