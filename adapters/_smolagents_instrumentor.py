"""``SmolagentsInstrumentor``: audit-only spans over unmodified smolagents tools.

Modelled on OpenTelemetry instrumentors (opentelemetry-python-contrib) and OpenInference's
smolagents instrumentor, which wraps ``Tool.__call__`` at class level: ``instrument()`` and
``uninstrument()`` are idempotent, the supported smolagents versions are checked at instrument
time, and ``uninstrument()`` puts back the exact original class attributes.
"""

from __future__ import annotations

import logging
import re
import threading
from collections.abc import Mapping
from importlib import metadata
from typing import Any, ClassVar

from opentelemetry.trace import TracerProvider

from tpguard.guard import Guard
from tpguard.policy import ToolSpec

from ._smolagents_bind import spec_for_tool
from ._smolagents_context import propagate_context, restore_context
from ._smolagents_patches import wrap_execute_tool_call, wrap_process_tool_calls, wrap_tool_call

__all__ = ["SUPPORTED_VERSIONS", "SmolagentsInstrumentor", "UnsupportedVersionError"]

#: Half-open ranges ``[low, high)`` of smolagents versions whose internals this adapter knows.
SUPPORTED_VERSIONS: tuple[tuple[str, str], ...] = (("1.20", "2.0"),)

_log = logging.getLogger("tpguard")
_FINAL_ANSWER = ToolSpec(name="final_answer", purpose="give the final answer to the user",
                         sink="final_response", free_text=("answer",))


class UnsupportedVersionError(RuntimeError):
    """The installed smolagents is outside :data:`SUPPORTED_VERSIONS`."""


def _release(version: str) -> tuple[int, ...]:
    return tuple(int(x) for x in re.findall(r"\d+", version.split("+")[0])[:3])


def check_version(version: str | None = None) -> str:
    """Return the smolagents version, or raise :class:`UnsupportedVersionError`."""
    found = version or metadata.version("smolagents")
    v = _release(found)
    if not any(_release(lo) <= v < _release(hi) for lo, hi in SUPPORTED_VERSIONS):
        ranges = ", ".join(f">={lo},<{hi}" for lo, hi in SUPPORTED_VERSIONS)
        raise UnsupportedVersionError(
            f"tpguard's smolagents instrumentor supports smolagents {ranges}; found {found}. "
            "Pass instrument(skip_dep_check=True) to try anyway.")
    return found


def _as_spec(name: str, value: ToolSpec | Mapping[str, Any]) -> ToolSpec:
    if isinstance(value, ToolSpec):
        return value if value.name == name else value.model_copy(update={"name": name})
    return ToolSpec.model_validate({"name": name, **value})


class SmolagentsInstrumentor:
    """``SmolagentsInstrumentor(guard, tools={name: ToolSpec | dict}).instrument()``.

    Audits every smolagents tool call (one ``execute_tool`` span each, with the tool-call id when
    ``ToolCallingAgent`` provides one) without changing any tool: the guard must be in ``audit``
    mode — use ``@purpose_bound`` to enforce or redact. ``tools`` gives purposes, sinks and free-text
    slots by tool name; a tool not listed there (nor registered on the guard) is audited as an
    unknown tool (sink ``external``), ``final_answer`` as the ``final_response`` sink. Tools wrapped
    by ``@purpose_bound`` keep their own span and are not audited twice. Spans go to
    ``tracer_provider`` when given, else to the guard's provider.

    Only smolagents' local execution is covered: remote executors (``executor_type`` docker, e2b,
    modal, blaxel, wasm …) rebuild tools from source inside a sandbox, outside this process's
    patches, guards and spans.
    """

    _active: ClassVar[SmolagentsInstrumentor | None] = None
    _class_lock: ClassVar[threading.Lock] = threading.Lock()

    def __init__(
        self,
        guard: Guard,
        tools: Mapping[str, ToolSpec | Mapping[str, Any]] | None = None,
        *,
        tracer_provider: TracerProvider | None = None,
    ) -> None:
        if not isinstance(guard, Guard):
            raise TypeError("SmolagentsInstrumentor(guard=...) takes a tpguard.Guard")
        if guard.mode != "audit":
            raise ValueError(
                f"SmolagentsInstrumentor only audits (the guard is in {guard.mode!r} mode); "
                "wrap tools with @purpose_bound to enforce or redact")
        self.guard = guard
        self.tools: dict[str, ToolSpec] = {n: _as_spec(n, v) for n, v in (tools or {}).items()}
        self._tracer_provider = tracer_provider
        self._originals: list[tuple[type, str, Any, Any]] = []  # (owner, attr, original, wrapper)
        self._propagation = False

    @property
    def is_instrumented(self) -> bool:
        return bool(self._originals)

    def spec_for(self, tool: Any) -> ToolSpec:
        """The spec a call to ``tool`` is audited under (never raises)."""
        name = str(getattr(tool, "name", None) or type(tool).__name__)
        spec = self.tools.get(name)
        if spec is None:
            registered = self.guard.tool_spec(name)
            if registered.purpose or registered.sink != "external" or registered.free_text:
                spec = registered
            elif name == _FINAL_ANSWER.name:
                spec = _FINAL_ANSWER
            else:
                try:
                    spec = spec_for_tool(tool, name=name)
                except Exception:
                    spec = ToolSpec(name=name)
        return spec

    def instrument(self, *, skip_dep_check: bool = False) -> None:
        """Patch smolagents (a second call does nothing). One instrumentor may be active at a time."""
        with SmolagentsInstrumentor._class_lock:
            if self._originals:
                return
            active = SmolagentsInstrumentor._active
            if active is not None and active is not self:
                raise RuntimeError("another SmolagentsInstrumentor is active; uninstrument it first")
            if not skip_dep_check:
                check_version()
            from smolagents.agents import ToolCallingAgent
            from smolagents.tools import Tool

            self._patch(Tool, "__call__",
                        lambda f: wrap_tool_call(f, self.guard, self.spec_for, self._tracer_provider))
            self._patch(ToolCallingAgent, "process_tool_calls", wrap_process_tool_calls)
            self._patch(ToolCallingAgent, "execute_tool_call", wrap_execute_tool_call)
            self._propagation = propagate_context()
            SmolagentsInstrumentor._active = self

    def _patch(self, owner: type, attr: str, factory: Any) -> None:
        original = owner.__dict__[attr]
        wrapper = factory(original)
        setattr(owner, attr, wrapper)
        self._originals.append((owner, attr, original, wrapper))

    def uninstrument(self) -> None:
        """Put back the exact original attributes (a second call does nothing)."""
        with SmolagentsInstrumentor._class_lock:
            for owner, attr, original, wrapper in reversed(self._originals):
                if owner.__dict__.get(attr) is wrapper:
                    setattr(owner, attr, original)
                else:  # someone patched on top of us: removing ours would drop theirs
                    _log.warning("tpguard: %s.%s was re-patched after instrument(); left in place",
                                 owner.__qualname__, attr)
            self._originals.clear()
            if self._propagation:
                restore_context()
                self._propagation = False
            if SmolagentsInstrumentor._active is self:
                SmolagentsInstrumentor._active = None
