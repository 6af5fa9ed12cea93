"""Feedback an agent can act on after a block (issue 31), and the ``enforce`` escalation.

Why (``docs/threat-model.md`` § "Feedback after a block"): after ``enforce`` withholds a call, a
small model copies *its own last call* — which still holds the withheld value — rather than acting
on the refusal's words. What works is changing what the model sees as its own last call: the
adapter rewrites the blocked call in the agent's memory to its :class:`PlaceholderCall` (each
withheld value replaced by its session placeholder, ``[HOME_ADDRESS_1]``), tells the model so in
one short sentence (:meth:`PlaceholderCall.rewrite_message`), and records the rewrite on the
call's span (:func:`record_rewrite`). Nothing here holds a value: paths, atom types and
placeholders only.

:class:`Refusals` is the state of ``Guard(mode="enforce", escalate="redact")`` — block first; when
the agent sends the same tool the same withheld types again, rewrite (as ``redact``) instead.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from opentelemetry.trace import Span

from ..detect.detector import Finding
from ..telemetry import _attributes as A

if TYPE_CHECKING:
    from .session import Session

__all__ = ["Change", "PlaceholderCall", "Refusals", "continue_message", "record_escalation", "record_rewrite"]

_SHOWN = 6  # argument parts named in a message; the rest are counted


@dataclass(frozen=True, slots=True)
class Change:
    """One argument part of a blocked call: its path, the withheld atom types and their placeholders."""

    path: str
    types: tuple[str, ...]
    placeholders: tuple[str, ...]

    def phrase(self) -> str:
        what = " and ".join(self.types)
        return f"the {what} in {self.path} with {', '.join(self.placeholders)}"


@dataclass(frozen=True, slots=True)
class PlaceholderCall:
    """A blocked call in its value-free form: ``arguments`` with each withheld value replaced by
    its session placeholder (the same ones ``redact`` would send), and the parts that changed."""

    tool: str
    arguments: Any
    changes: tuple[Change, ...]

    @property
    def types(self) -> tuple[str, ...]:
        return tuple(sorted({t for c in self.changes for t in c.types}))

    @property
    def paths(self) -> tuple[str, ...]:
        return tuple(c.path for c in self.changes)

    def _parts(self) -> str:
        shown = [c.phrase() for c in self.changes[:_SHOWN]]
        more = len(self.changes) - _SHOWN
        return "; ".join(shown) + (f"; and {more} more" if more > 0 else "")

    def rewrite_message(self) -> str:
        """What the model reads when the adapter rewrote its call in memory: short, action first."""
        return (f"tpguard replaced {self._parts()} in your call above, because {self.tool} does not "
                "need them; send that call again exactly as it is now.")

    def fix_message(self) -> str:
        """What the model reads when its memory could not be rewritten: which parts to change."""
        return (f"To call {self.tool}, replace {self._parts()}; change nothing else and send the "
                "call again.")


def continue_message(tools: Sequence[str]) -> str:
    """The turn an adapter adds after a model turn whose calls were withheld (``tools``: their
    names, in call order), so the model goes on instead of ending its turn.

    Why: a small model reads an error tool message as the end of the road. Qwen2.5-Coder-1.5B,
    given a LangChain conversation ending on a refusal, replied with zero tokens in 2 of 2 recorded
    single blocks (rewritten or not), and with a summary claiming the work was done after five
    parallel blocks; the same conversations with this turn appended resent the withheld call
    (``docs/real-models.md``, "LangChain: a turn after the refusal"; the wording is the one measured
    there). smolagents sends every tool result, a refusal included, as a user message. Value-free:
    tool names only."""
    if len(tools) == 1:
        return ("The last call was withheld. Continue the workflow: resend it as the tool message "
                "says, then go on with the remaining steps.")
    names = ", ".join(dict.fromkeys(tools))
    return (f"{len(tools)} of the last calls were withheld ({names}). Continue the workflow: resend "
            "only those, as their tool messages say.")


def placeholder_call(tool: str, arguments: Any, forbidden: Iterable[Finding],
                     placeholder: Callable[[Finding], str]) -> PlaceholderCall:
    """The :class:`PlaceholderCall` of ``tool``'s ``arguments`` (already rewritten) from the
    forbidden findings of the original call. O(findings)."""
    by_path: dict[str, tuple[dict[str, None], dict[str, None]]] = {}
    for f in forbidden:
        types, labels = by_path.setdefault(f.path, ({}, {}))
        types[f.atom_type] = None
        labels[placeholder(f)] = None
    changes = tuple(Change(p, tuple(sorted(t)), tuple(sorted(labels)))
                    for p, (t, labels) in sorted(by_path.items()))
    return PlaceholderCall(tool, arguments, changes)


def record_rewrite(span: Span, call: PlaceholderCall, where: str) -> None:
    """A ``tpguard.call_rewritten`` event on the blocked call's span: the adapter rewrote the call
    in the agent's memory (``where``: ``langchain-messages``, ``smolagents-memory``). Value-free."""
    try:
        if span.is_recording():
            span.add_event(A.TPGUARD_CALL_REWRITTEN_EVENT, {
                A.REWRITE_WHERE: where, A.REWRITE_PATHS: list(call.paths),
                A.REWRITE_ATOM_TYPES: list(call.types)})
    except Exception:  # recording must not break the call
        pass


def record_escalation(span: Span, requested: str, decided: str) -> None:
    """A ``tpguard.escalated`` event: a call ``requested`` mode would block was decided in
    ``decided`` mode (``Guard(escalate=...)``), because it repeats a refused one."""
    try:
        if span.is_recording():
            span.add_event(A.TPGUARD_ESCALATED_EVENT, {A.ESCALATION_FROM: requested,
                                                       A.ESCALATION_TO: decided})
    except Exception:
        pass


class Refusals:
    """Which withheld atom types each tool was refused, per session. ``repeat`` is O(types).

    Kept per :class:`~tpguard.stages.session.Session` (weakly: a finished request's record goes with
    it). Outside a ``guard.session()`` the guard's default session holds them, guard-wide —
    open a session per request when escalating."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._seen: weakref.WeakKeyDictionary[Session, dict[str, set[str]]] = weakref.WeakKeyDictionary()

    def repeat(self, session: Session, tool: str, types: Iterable[str]) -> bool:
        """True when ``tool`` was already refused every one of ``types`` in ``session``; else
        record them and return False."""
        wanted = set(types)
        with self._lock:
            seen = self._seen.setdefault(session, {})
            prior = seen.get(tool)
            if prior is not None and wanted <= prior:
                return True
            seen.setdefault(tool, set()).update(wanted)
            return False
