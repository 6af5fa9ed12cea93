"""Guards under comparison on the ``exposure`` suite (issue 11 item 4, seed ``002_*`` §5.2–5.4).

Each guard is a :class:`~..backends.exposure.SessionWrap` handed to ``run_session(wrap=...)``;
one fresh wrap (and tpguard :class:`~tpguard.Guard`) per session-run:

* ``off`` — the pass-through;
* ``exit:CHANNEL[+CHANNEL…]`` — an **outlet-local** exit guard: tpguard ``check_exit`` in enforce
  mode on those channels only (``email`` also names every channel whose medium is e-mail, so
  ``exit:email`` guards ``send``/``reply``/``forward`` in the business family) — the paper's
  e-mail guard, to reproduce displacement;
* ``exits`` — tpguard ``check_exit`` (enforce) on **every** declared visible exit, including the
  agent's per-turn reply;
* ``enforce`` / ``redact`` — tpguard's request stage on tool **arguments** only (``before_call``);
  exits untouched;
* ``return-min`` — the suite's :class:`~..backends.exposure.ReturnMin` (C3: the model sees ids and
  titles only).

The tpguard guards get the case as a deployment would declare it (:func:`case_policy`): the
targets as :class:`~tpguard.PrivateAtom` (value and aliases), the recipients, ``Auth`` as
``(atom, recipient)`` allow pairs (everything else is forbidden, as the paper's primary contract),
the visible exits and the internal channels. Decisions are value-free; nothing here logs text.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from tpguard import Guard, PolicyKB, ToolSpec

from ..backends.exposure import ReturnMin, SessionWrap

if TYPE_CHECKING:
    from opentelemetry.trace import TracerProvider

    from ..cases.exposure import ExpCase

__all__ = ["EXP_GUARD_NAMES", "ExpGuardUnderTest", "case_policy", "exp_guard_error",
           "make_exp_guard"]

#: The fixed names; ``exit:CHANNEL[+CHANNEL…]`` is the parametrized one.
EXP_GUARD_NAMES = ("off", "exits", "enforce", "redact", "return-min")
_CHANNELS = ("email", "console", "response", "share", "send", "reply", "forward")
_MEDIA = ("email", "chat", "file")
_FREE_TEXT = ("subject", "body", "note", "text")
_SINKS = {"send_email": "email", "reply_email": "email", "forward_email": "email",
          "share_file": "file_share", "print_console": "console"}
_DESCRIPTIONS = {
    "off": "no guard: every exit delivers what the agent emitted",
    "exits": "tpguard check_exit, enforce mode, on every declared visible exit (Auth from the case)",
    "enforce": "tpguard request stage, enforce mode, on tool arguments only; exits untouched",
    "redact": "tpguard request stage, redact mode, on tool arguments only; exits untouched",
    "return-min": "the model sees only ids and titles of what a tool returned (C3)",
}


def exp_guard_error(name: str) -> str | None:
    """``None`` when ``name`` is an exposure guard, else one line saying why not."""
    if name in EXP_GUARD_NAMES:
        return None
    if name.startswith("exit:"):
        parts = [p.strip() for p in name[5:].split("+")]
        bad = [p for p in parts if p not in (*_CHANNELS, *_MEDIA)]
        if not parts or bad or "" in parts:
            return (f"{name!r}: exit:CHANNEL[+CHANNEL…] takes channels or media of "
                    f"{', '.join(dict.fromkeys((*_CHANNELS, *_MEDIA)))}")
        return None
    return (f"{name!r} does not apply to the exposure suite; choose from "
            f"{', '.join(EXP_GUARD_NAMES)}, exit:CHANNEL[+CHANNEL…]")


def case_policy(case: ExpCase) -> PolicyKB:
    """The case as tpguard's policy: atoms (value, aliases), recipients, Auth allow pairs, exits."""
    return PolicyKB.from_dict({
        "atoms": [{"id": t.id, "type": t.type, "value": t.value,
                   "aliases": [a for a in t.aliases if a.strip() and a != t.value]}
                  for t in case.targets],
        # tpguard knows requester and external kinds; the owner is a named recipient whose Auth
        # pairs authorize every target (its kind matters only to kind rules, of which there are none)
        "recipients": [{"id": r.id, "kind": "requester" if r.kind == "requester" else "external",
                        "addresses": [r.address]} for r in case.recipients],
        "disclosures": [{"atom": t, "recipient": r, "allow": True}
                        for r, row in sorted(case.auth.items()) for t, ok in sorted(row.items())
                        if ok],
        "exits": list(case.visible_channels),
        "internal_channels": list(case.internal_channels),
    })


def _spec(tool: str) -> ToolSpec:
    from ..cases.exposure import TOOLS

    schema = TOOLS[tool]["input_schema"]
    return ToolSpec(name=tool, sink=_SINKS.get(tool, "external"), input_schema=schema,
                    free_text=tuple(f for f in _FREE_TEXT if f in schema.get("properties", {})))


class _ExitWrap(SessionWrap):
    """``check_exit`` (enforce) on ``channels``; every other exit passes."""

    def __init__(self, name: str, guard: Guard, channels: frozenset[str]) -> None:
        self.name, self.guard, self.channels = name, guard, channels

    def at_exit(self, channel: str, recipient: str, text: str) -> str | None:
        if channel not in self.channels:
            return text
        d = self.guard.check_exit(channel, recipient, text)
        if d.blocked:
            return None
        return d.payload if d.redacted and isinstance(d.payload, str) else text


class _ArgsWrap(SessionWrap):
    """tpguard's request stage on tool arguments (``None`` withholds the call)."""

    def __init__(self, name: str, guard: Guard) -> None:
        self.name, self.guard = name, guard

    def before_call(self, tool: str, arguments: dict[str, Any]) -> dict[str, Any] | None:
        d = self.guard.check(_spec(tool), arguments)
        if d.blocked:
            return None
        return dict(d.arguments) if d.redacted else arguments


def _exit_channels(name: str, case: ExpCase) -> frozenset[str]:
    """``exit:email+console`` → the case's visible channels named so or of that medium."""
    if name == "exits":
        return frozenset(case.visible_channels)
    wanted = {p.strip() for p in name[5:].split("+")}
    return frozenset(c.name for c in case.channels
                     if c.visible and (c.name in wanted or c.medium in wanted))


@dataclass(frozen=True)
class ExpGuardUnderTest:
    """One named exposure guard (see the module docstring)."""

    name: str

    @property
    def description(self) -> str:
        if self.name.startswith("exit:"):
            return (f"tpguard check_exit, enforce mode, only on {self.name[5:]} (outlet-local: "
                    "other exits pass)")
        return _DESCRIPTIONS[self.name]

    def describe(self) -> dict[str, Any]:
        return {"name": self.name, "description": self.description, "suite": "exposure"}

    def wrap(self, case: ExpCase, tracer_provider: TracerProvider | None = None) -> SessionWrap:
        """A fresh wrap (and tpguard guard) for one session-run."""
        if self.name == "off":
            return SessionWrap()
        if self.name == "return-min":
            return ReturnMin()
        mode: Literal["enforce", "redact"] = "redact" if self.name == "redact" else "enforce"
        guard = Guard(case_policy(case), mode=mode, tracer_provider=tracer_provider)
        if self.name in ("enforce", "redact"):
            return _ArgsWrap(self.name, guard)
        return _ExitWrap(self.name, guard, _exit_channels(self.name, case))


def make_exp_guard(name: str) -> ExpGuardUnderTest:
    """The exposure guard called ``name``; ``ValueError`` (one line) for any other name."""
    if (err := exp_guard_error(name)) is not None:
        raise ValueError(f"--guard {err}")
    return ExpGuardUnderTest(name)
