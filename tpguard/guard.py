"""The guard: detect atoms in a tool call, decide against the policy, act by mode.

* ``audit``   — record, change nothing;
* ``enforce`` — block a call that carries a forbidden atom, with a message naming the atom *types*
  and argument fields (never the values), so a model can retry with less;
* ``redact``  — rewrite forbidden atoms in free-text slots to typed placeholders (stable within a
  session) and let the call proceed; a forbidden atom in a structured field is blocked.

Over-disclosure is ``O_{j,k} = D(p_j, a_k) · I[A_{j,i(k)} = 0]`` (ToolPrivacyBench, seed ``000_*``
§3.6): the detector gives ``D`` and the policy's resolver gives ``A``. Internal errors fail closed in
enforce/redact and open in audit; either way they are logged (error type only) and recorded.
"""

from __future__ import annotations

import itertools
import logging
from collections import defaultdict
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any, Literal

from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.trace import Span, TracerProvider

from . import __version__
from ._session import Session
from ._walk import iter_leaves, replace_at
from .detection import Detector, Finding
from .errors import GuardViolation
from .pii import PiiDetector
from .policy import PolicyKB, PrivateAtom, ToolSpec
from .redaction import PlaceholderOperator, rewrite_text
from .telemetry.content import ArgumentRecording, ContentPolicy
from .telemetry.spans import record_decision, record_error, start_tool_span

__all__ = ["MODES", "Action", "Decision", "Guard", "Interception", "Mode"]

Mode = Literal["audit", "enforce", "redact"]
Action = Literal["allow", "block", "redact"]
MODES: tuple[str, ...] = ("audit", "enforce", "redact")

_log = logging.getLogger("tpguard")
_ids = itertools.count(1)
_SESSIONS: ContextVar[Mapping[int, Session]] = ContextVar(
    "tpguard_sessions", default=MappingProxyType({})
)


@dataclass(frozen=True, slots=True)
class Decision:
    """What the guard decided for one tool call.

    ``arguments`` are the arguments the tool should receive (rewritten in ``redact`` mode);
    ``message`` is what the agent is told when the call is blocked or rewritten. Neither the message
    nor ``repr(decision)`` contains a private value.
    """

    tool: str
    mode: Mode
    action: Action
    findings: tuple[Finding, ...] = ()
    forbidden: tuple[Finding, ...] = ()
    arguments: Any = field(default=None, repr=False)
    message: str | None = None
    error: str | None = None
    session_id: str | None = None

    @property
    def blocked(self) -> bool:
        return self.action == "block"

    @property
    def redacted(self) -> bool:
        return self.action == "redact"

    @property
    def allowed(self) -> bool:
        return self.action != "block"

    def to_dict(self) -> dict[str, Any]:
        return {
            "tool": self.tool, "mode": self.mode, "action": self.action, "message": self.message,
            "error": self.error, "session_id": self.session_id,
            "findings": [f.to_dict() for f in self.findings],
            "forbidden": [f.to_dict() for f in self.forbidden],
        }


class Interception:
    """One intercepted call in flight (yielded by :meth:`Guard.intercept`)."""

    __slots__ = ("decision", "span")

    def __init__(self, decision: Decision, span: Span) -> None:
        self.decision = decision
        self.span = span

    @property
    def arguments(self) -> Any:
        return self.decision.arguments

    def raise_if_blocked(self) -> None:
        if self.decision.blocked:
            raise GuardViolation(self.decision)


def _describe(findings: Iterable[Finding]) -> tuple[str, str]:
    fs = list(findings)
    types = ", ".join(sorted({f.atom_type for f in fs}))
    fields = ", ".join(sorted({f.path for f in fs}))
    return types, fields


class Guard:
    """``Guard(policy, mode="enforce")`` — one per deployment; thread- and async-safe.

    ``policy`` is a :class:`PolicyKB`, a path to a policy file, or ``None`` (tools and atoms
    registered later). Spans go to ``tracer_provider`` (default: the global provider).
    """

    def __init__(
        self,
        policy: PolicyKB | str | Path | None = None,
        *,
        mode: Mode = "audit",
        fuzzy: bool = True,
        pii: PiiDetector | None = None,
        record_arguments: ArgumentRecording | None = None,
        allow_raw_arguments: bool = False,
        hash_key: bytes | str | None = None,
        tracer_provider: TracerProvider | None = None,
    ) -> None:
        if mode not in MODES:
            raise ValueError(f"mode must be one of {', '.join(MODES)} (got {mode!r})")
        if isinstance(policy, str | Path):
            policy = PolicyKB.from_file(policy)
        self.mode: Mode = mode
        self.policy: PolicyKB = policy or PolicyKB()
        self._id = next(_ids)
        self._fuzzy = fuzzy
        self._pii = pii
        self._tools: dict[str, ToolSpec] = {t.name: t for t in self.policy.tools}
        self._content = ContentPolicy(record_arguments, allow_raw=allow_raw_arguments, hash_key=hash_key)
        provider = tracer_provider or trace.get_tracer_provider()
        self._tracer = provider.get_tracer("tpguard", __version__)
        self._default = Session(self._id, self.policy, (), self._detector, session_id="default")

    def __repr__(self) -> str:
        return f"Guard(mode={self.mode!r}, atoms={len(self.policy.atoms)}, tools={len(self._tools)})"

    def _detector(self, atoms: Iterable[PrivateAtom]) -> Detector:
        return Detector(atoms, fuzzy=self._fuzzy, pii=self._pii)

    @property
    def recording(self) -> ArgumentRecording:
        return self._content.mode

    # -- tools and atoms ----------------------------------------------------------------------
    def add_tool(self, spec: ToolSpec) -> ToolSpec:
        """Register (or replace) a tool's purpose, sink and free-text slots."""
        self._tools[spec.name] = spec
        return spec

    def has_tool(self, name: str) -> bool:
        """Whether a spec was registered for ``name`` (from the policy or :meth:`add_tool`)."""
        return name in self._tools

    def tool_spec(self, tool: str | ToolSpec) -> ToolSpec:
        """The registered spec; an unknown tool is an ``external`` sink with no stated purpose."""
        if isinstance(tool, ToolSpec):
            return tool
        spec = self._tools.get(tool)
        return spec if spec is not None else ToolSpec(name=tool, sink="external")

    def register(self, *atoms: PrivateAtom) -> None:
        """Add atoms learned mid-session (to the current session, else guard-wide)."""
        self._session().register(*atoms)

    @contextmanager
    def session(
        self, atoms: Iterable[PrivateAtom] = (), *, session_id: str | None = None
    ) -> Iterator[Session]:
        """Bind one request's atoms to the current context (threads and asyncio tasks isolated)."""
        base = self._session().policy
        sess = Session(self._id, base, atoms, self._detector, session_id=session_id)
        token = _SESSIONS.set({**_SESSIONS.get(), self._id: sess})
        try:
            yield sess
        finally:
            _SESSIONS.reset(token)

    def _session(self) -> Session:
        return _SESSIONS.get().get(self._id) or self._default

    @property
    def current_session(self) -> Session:
        return self._session()

    # -- deciding -----------------------------------------------------------------------------
    def check(self, tool: str | ToolSpec, arguments: Any, *, mode: Mode | None = None) -> Decision:
        """Decide one call. Never raises: an internal error fails closed (open in ``audit``).

        ``mode`` overrides the guard's mode for this call (an observe-only hook passes ``audit``).
        """
        spec = self.tool_spec(tool)
        mode = mode or self.mode
        try:
            return self._check(spec, arguments, mode)
        except Exception as e:  # the guard must never crash the agent
            kind = type(e).__qualname__
            _log.error("tpguard: internal error (%s) while checking a call to %s", kind, spec.name)
            if mode == "audit":
                return Decision(spec.name, mode, "allow", arguments=arguments, error=kind)
            msg = (f"tpguard could not check this call to {spec.name} ({kind}) and withheld it. "
                   "Try again with fewer personal details.")
            return Decision(spec.name, mode, "block", arguments=arguments, message=msg, error=kind)

    def _check(self, spec: ToolSpec, arguments: Any, mode: Mode) -> Decision:
        sess = self._session()
        raw = sess.detector.scan(arguments, spec.free_text)
        if not raw:
            return Decision(spec.name, mode, "allow", arguments=arguments, session_id=sess.id)
        resolver, cache = sess.resolver, sess.access_cache
        tool_key = (spec.name, spec.purpose, spec.sink)
        findings = []
        for f in raw:
            if f.method == "pii":  # unregistered PII: only type rules forbid it
                acc = resolver.access(PrivateAtom(id=f.atom_id, type=f.atom_type, value="-"), spec)
                ok = acc.level == "default" or acc.permits(f.path, f.method)
            else:
                cached = cache.get((f.atom_id, tool_key))
                if cached is None:
                    cached = cache[(f.atom_id, tool_key)] = resolver.access(f.atom_id, spec)
                ok = cached.permits(f.path, f.method)
            findings.append(Finding(*f[:-1], ok))
        forbidden = tuple(f for f in findings if not f.authorized)
        found = tuple(findings)
        if not forbidden or mode == "audit":
            return Decision(spec.name, mode, "allow", found, forbidden, arguments, session_id=sess.id)
        structured = [f for f in forbidden if not f.free_text]
        if mode == "enforce" or structured:
            return Decision(spec.name, mode, "block", found, forbidden, arguments,
                            message=self._block_message(spec, forbidden), session_id=sess.id)
        rewritten = self._redact(sess, arguments, forbidden)
        types, fields = _describe(forbidden)
        msg = f"tpguard replaced {types} in {fields} with placeholders before calling {spec.name}."
        return Decision(spec.name, mode, "redact", found, forbidden, rewritten, message=msg,
                        session_id=sess.id)

    @staticmethod
    def _block_message(spec: ToolSpec, forbidden: Iterable[Finding]) -> str:
        types, fields = _describe(forbidden)
        purpose = f" (purpose: {spec.purpose})" if spec.purpose else ""
        return (f"tpguard withheld this call to {spec.name}{purpose}: it does not need {types}, "
                f"found in {fields}. Call {spec.name} again without them — leave them out or "
                "refer to them generically.")

    @staticmethod
    def _redact(sess: Session, arguments: Any, forbidden: Iterable[Finding]) -> Any:
        by_path: dict[str, list[Finding]] = defaultdict(list)
        for f in forbidden:
            by_path[f.path].append(f)
        op = PlaceholderOperator(sess.placeholder)
        if type(arguments) is dict and all(type(arguments.get(p)) is str for p in by_path):
            rewritten = dict(arguments)  # flat call: rewrite the slots in a shallow copy
            for path, found in by_path.items():
                rewritten[path] = rewrite_text(arguments[path], found, op)
            return rewritten
        replacements = {
            path: rewrite_text(text, by_path[path], op)
            for path, _, text in iter_leaves(arguments)
            if path in by_path
        }
        return replace_at(arguments, replacements)

    # -- intercepting -------------------------------------------------------------------------
    @contextmanager
    def intercept(
        self, tool: str | ToolSpec, arguments: Any, *, call_id: str | None = None,
        tracer_provider: TracerProvider | None = None, mode: Mode | None = None,
    ) -> Iterator[Interception]:
        """Check a call inside its ``execute_tool {tool}`` span; run the tool inside the block.

        The span ends when the block exits; an exception from the block is recorded by type only.
        ``tracer_provider`` overrides the guard's own for this call (an instrumentor's provider);
        ``mode`` overrides the guard's mode (an observe-only callback records ``audit``).
        """
        spec = self.tool_spec(tool)
        tracer = (self._tracer if tracer_provider is None
                  else tracer_provider.get_tracer("tpguard", __version__))
        span = start_tool_span(tracer, spec, call_id)
        token = otel_context.attach(trace.set_span_in_context(span))
        try:
            decision = self.check(spec, arguments, mode=mode)
            try:
                record_decision(span, decision, arguments, self._content,
                                self._session().atom_value, spec.free_text)
            except Exception as e:  # recording must not break the call
                _log.error("tpguard: could not record a span (%s)", type(e).__qualname__)
            yield Interception(decision, span)
        except GuardViolation:
            raise
        except BaseException as e:
            record_error(span, e)
            raise
        finally:
            otel_context.detach(token)
            span.end()
