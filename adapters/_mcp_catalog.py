"""What the proxy knows about one upstream MCP server's tools: specs, pins and hidden tools.

A :class:`ToolCatalog` is shared by every session to the same upstream (HTTP sessions share it), so
a tool's first definition is pinned once per proxy process. Each ``tools/list`` page passes
:meth:`ToolCatalog.learn`:

* the tool's :class:`~tpguard.policy.ToolSpec` is the one given to the proxy (``specs``), else the
  guard's (its policy's tools), else the server's ``defaults`` (purpose and sink), else the
  **unknown tool** (sink ``external``, no purpose — the same default as the Python adapters), with
  the listed description and input schema filled in where the spec has none;
* the definition (description, input and output schema) is pinned on first sight; a later listing
  that differs under the same name marks the tool **changed** (a "rug pull"): recorded in audit,
  refused in enforce and redact for the rest of the process;
* with ``hide_unknown``, a tool that has no spec is dropped from the listing and refused if called.

Cost: O(size of the listing) per page (one canonical JSON dump and hash per tool).
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from tpguard.guard import Guard
from tpguard.policy import ToolSpec

__all__ = ["Resolved", "ToolCatalog"]

_log = logging.getLogger("tpguard")

#: why a call is refused before the guard reads its arguments
REASON_CHANGED = "tool_changed"
REASON_HIDDEN = "unknown_tool_hidden"


@dataclass(frozen=True, slots=True)
class Resolved:
    """The spec a call is checked against, and a refusal reason the call gets whatever it holds."""

    spec: ToolSpec
    known: bool
    refusal: str | None = None


def fingerprint(tool: Mapping[str, Any]) -> str:
    """A hash of what a model reads about a tool: its description and input/output schemas."""
    shown = {k: tool.get(k) for k in ("description", "inputSchema", "outputSchema")}
    return hashlib.sha256(json.dumps(shown, sort_keys=True, default=str).encode()).hexdigest()


class ToolCatalog:
    """The tools of one upstream server as the proxy learned them (see the module docstring)."""

    def __init__(self, guard: Guard, specs: Mapping[str, ToolSpec] | None = None, *,
                 hide_unknown: bool = False, server: str = "upstream",
                 defaults: Mapping[str, Any] | None = None) -> None:
        self.guard = guard
        self.defaults = dict(defaults) if defaults else None
        self.server = server
        self.hide_unknown = hide_unknown
        self._given: dict[str, ToolSpec] = dict(specs or {})
        self._learned: dict[str, ToolSpec] = {}
        self._pins: dict[str, str] = {}
        self.changed: set[str] = set()

    @property
    def listed(self) -> bool:
        """Whether any listing was learned yet (a call before one makes the proxy list first)."""
        return bool(self._pins)

    def known(self, name: str) -> bool:
        return name in self._given or self.guard.has_tool(name) or self.defaults is not None

    def base_spec(self, name: str) -> ToolSpec:
        given = self._given.get(name)
        if given is not None:
            return given
        if self.defaults is not None and not self.guard.has_tool(name):
            return ToolSpec(name=name, **self.defaults)
        return self.guard.tool_spec(name)

    def learn(self, tools: Iterable[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
        """Learn one ``tools/list`` page; return the tools a client may see (unknown ones dropped
        when ``hide_unknown``)."""
        shown: list[Mapping[str, Any]] = []
        for tool in tools:
            name = tool.get("name")
            if not isinstance(name, str) or not name:
                continue  # not a tool the client could call by name; it passes through as listed
            self._pin(name, tool)
            self._learned[name] = self._spec(name, tool)
            if self.hide_unknown and not self.known(name):
                continue
            shown.append(tool)
        return shown

    def _pin(self, name: str, tool: Mapping[str, Any]) -> None:
        mark = fingerprint(tool)
        pinned = self._pins.setdefault(name, mark)
        if pinned != mark and name not in self.changed:
            self.changed.add(name)
            verb = "allowed (audit)" if self.guard.mode == "audit" else "refused from now on"
            _log.warning("tpguard: MCP tool %s of %s changed its description or schema since it was "
                         "first listed; calls to it are %s", name, self.server, verb)

    def _spec(self, name: str, tool: Mapping[str, Any]) -> ToolSpec:
        spec = self.base_spec(name)
        update: dict[str, Any] = {}
        description, schema = tool.get("description"), tool.get("inputSchema")
        if not spec.description and isinstance(description, str):
            update["description"] = description
        if spec.input_schema is None and isinstance(schema, Mapping):
            update["input_schema"] = dict(schema)
        return spec.model_copy(update=update) if update else spec

    def resolve(self, name: str) -> Resolved:
        """The spec for a call to ``name`` and, if the call is refused whatever it holds, why."""
        spec = self._learned.get(name) or self.base_spec(name)
        known = self.known(name)
        if name in self.changed and self.guard.mode != "audit":
            return Resolved(spec, known, REASON_CHANGED)
        if self.hide_unknown and not known:
            return Resolved(spec, known, REASON_HIDDEN)
        return Resolved(spec, known)
