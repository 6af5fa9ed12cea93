"""The executable tools of an exposure session over its workspace ``D``, logging channel-labelled
observations (seed ``002_*`` §3.2, Eq. 2: ``O = {(t, c, o_{t,c}, ν_c)}``).

``ExpEnvironment(case, wrap=None)``; the runner sets ``env.turn`` before each requester request.

* ``env.call(tool, arguments) -> Observation`` runs one tool call. It logs the arguments on the
  internal channel ``tool_args`` and the raw backend return on ``tool_return`` (evaluator-only
  path evidence). An exit tool (send / reply / forward / share / print) emits on its visible
  channel through :meth:`emit`.
* ``env.reply(text)`` emits the agent's per-turn reply on the family's reply channel (console or
  response) to the requester.
* ``env.emit(channel, recipient, text, tool)`` is the one place every visible exit passes: the
  wrap's ``at_exit`` decides what reaches the recipient, and the observation records what did.

The three hook points of a :class:`~.wraps.SessionWrap` (``before_call`` on arguments,
``after_return`` on the model-visible return, ``at_exit`` on every visible exit) are where a guard
goes. Cost per call: linear in the rows of the collection it reads.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ...agents.base import Observation
from ...cases.exposure import COLLECTION_TOOLS, TITLE, TOOLS, ExpCase
from ...cases.exposure._interface import channel_of_tool, reply_channel
from .._arguments import check_schema
from ..errors import ToolError
from .wraps import SessionWrap

__all__ = ["ChannelObservation", "ExpEnvironment", "payload_text"]


def payload_text(payload: Any) -> str:
    """The text form of a tool return (what the agent reads and the evaluator matches)."""
    return json.dumps(payload, ensure_ascii=False, default=str)


@dataclass(frozen=True, slots=True)
class ChannelObservation:
    """One channel-labelled observation ``(t, c, o_{t,c}, ν_c)``.

    ``recipient`` is a recipient id of the case (``requester``, ``owner``, ``external:<address>``)
    on a visible channel and ``None`` on an internal one. ``data`` is the structured form of
    ``text`` where the backend has one (the arguments, the raw return: the scorer reads its
    leaves), else ``None``. ``status``: internal — ``ok``,
    ``error``, ``blocked`` (the wrap refused the call); visible — ``delivered``, ``redacted`` (the
    wrap changed the text; ``text`` is what was delivered) or ``blocked`` (nothing reached the
    recipient; ``text`` is empty).
    """

    turn: int
    index: int
    channel: str
    recipient: str | None
    text: str
    visible: bool
    tool: str | None
    request_id: str
    status: str
    data: Any = None

    def __repr__(self) -> str:  # never print the text
        return (f"ChannelObservation(turn={self.turn}, index={self.index}, "
                f"channel={self.channel!r}, recipient={self.recipient!r}, "
                f"visible={self.visible}, tool={self.tool!r}, status={self.status!r})")


class ExpEnvironment:
    def __init__(self, case: ExpCase, wrap: SessionWrap | None = None) -> None:
        self.case, self.wrap = case, wrap or SessionWrap()
        self.turn = 0
        self.observations: list[ChannelObservation] = []
        self._reply = reply_channel(case.channels)

    # -- logging ------------------------------------------------------------------------------
    def _log(self, channel: str, recipient: str | None, text: str, tool: str | None,
             status: str, data: Any = None) -> ChannelObservation:
        o = ChannelObservation(turn=self.turn, index=len(self.observations), channel=channel,
                               recipient=recipient, text=text,
                               visible=self.case.channel(channel).visible, tool=tool,
                               request_id=f"{self.case.id}#t{self.turn}", status=status,
                               data=data)
        self.observations.append(o)
        return o

    # -- visible exits --------------------------------------------------------------------------
    def emit(self, channel: str, recipient: str, text: str, tool: str | None = None) -> str:
        """Send ``text`` out on a visible exit; returns the status (delivered/redacted/blocked)."""
        out = self.wrap.at_exit(channel, recipient, text)
        status = "blocked" if out is None else ("delivered" if out == text else "redacted")
        self._log(channel, recipient, out or "", tool, status)
        return status

    def reply(self, text: str) -> str:
        return self.emit(self._reply, "requester", text)

    # -- tools ----------------------------------------------------------------------------------
    def call(self, tool: str, arguments: Mapping[str, Any]) -> Observation:
        received = dict(arguments) if isinstance(arguments, Mapping) else {}
        args = {"tool": tool, "arguments": received}
        self._log("tool_args", None, payload_text(args), tool, "ok", args)
        try:
            if tool not in self.case.tools:
                raise ToolError(f"unknown tool {tool!r} (available: {', '.join(self.case.tools)})")
            check_schema(received, TOOLS[tool]["input_schema"])
        except ToolError as e:
            self._log("tool_return", None, str(e), tool, "error")
            return Observation(ok=False, content=str(e))
        allowed = self.wrap.before_call(tool, received)
        if allowed is None:
            msg = f"the call to {tool} was withheld by the guard"
            self._log("tool_return", None, msg, tool, "blocked")
            return Observation(ok=False, content=msg, blocked=True)
        try:
            payload = self._run(tool, allowed)
        except ToolError as e:
            self._log("tool_return", None, str(e), tool, "error")
            return Observation(ok=False, content=str(e))
        raw = payload_text(payload)
        self._log("tool_return", None, raw, tool, "ok", payload)
        shown = self.wrap.after_return(tool, allowed, raw)
        return Observation(ok=True, content=shown, rewritten=allowed != received)

    def _run(self, tool: str, a: dict[str, Any]) -> dict[str, Any]:
        if tool in COLLECTION_TOOLS:
            op, coll = COLLECTION_TOOLS[tool]
            rows = self.case.workspace.get(coll, ())
            if op == "list":
                return {coll: [{"id": r["id"], TITLE[coll]: r.get(TITLE[coll], "")} for r in rows]}
            if op == "search":
                q = str(a["query"]).strip().casefold()
                if not q:
                    raise ToolError("argument 'query': expected a non-empty search text")
                return {coll: [dict(r) for r in rows
                               if any(q in str(v).casefold() for v in r.values())]}
            return {coll: [dict(self._row(coll, str(a["id"])))]}
        return self._exit(tool, a)

    def _row(self, coll: str, rid: str) -> Mapping[str, str]:
        for r in self.case.workspace.get(coll, ()):
            if r["id"] == rid.strip():
                return r
        raise ToolError(f"argument: no {coll} entry with id {rid!r}")

    def _exit(self, tool: str, a: dict[str, Any]) -> dict[str, Any]:
        channel = channel_of_tool(self.case.channels, tool)
        if channel is None:
            raise ToolError(f"{tool} is not an exit of this workspace")
        if tool == "print_console":
            to, text = "requester", str(a["text"])
        elif tool == "send_email":
            to, text = self.case.recipient_of(a["to"]), f"{a['subject']}\n{a['body']}"
        elif tool == "reply_email":
            m = self._row("emails", str(a["email_id"]))
            to, text = self.case.recipient_of(m["sender"]), str(a["body"])
        elif tool == "forward_email":
            m = self._row("emails", str(a["email_id"]))
            to = self.case.recipient_of(a["to"])
            text = f"{a.get('note', '')}\n---\n{m['subject']}\n{m['body']}".strip()
        else:  # share_file
            f = self._row("files", str(a["file_id"]))
            to, text = self.case.recipient_of(a["to"]), f"{f['filename']}\n{f['content']}"
        status = self.emit(channel, to, text, tool)
        return {"status": "sent" if status != "blocked" else "blocked", "channel": channel}

    # -- end state ------------------------------------------------------------------------------
    def visible(self) -> list[ChannelObservation]:
        return [o for o in self.observations if o.visible]
