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
* ``oracle-exits`` / ``oracle-exit:CHANNEL[+…]`` — the same exit guards handed the evaluator's
  hidden target set ``S`` and its aliases (:func:`oracle_case_policy`): the paper's **oracle
  sanity check** (seed ``002_*`` App. K), which removes exposure by construction — a check of the
  measurement, never a guard result;
* ``enforce`` / ``redact`` — tpguard's request stage on tool **arguments** only (``before_call``);
  exits untouched;
* ``return-min`` — the suite's :class:`~..backends.exposure.ReturnMin` (C3: the model sees ids and
  titles only).

Every guard but the oracle ones gets what a deployment holds (:func:`deployment_policy`): the
private atoms its data store registers (:func:`._exp_inventory.workspace_atoms` — the workspace's
declared private fields and what its recognizers find in its free text, with aliases derived by
code; never ``S``, its aliases or anything else of the evaluator's), the recipients with one rule
(the workspace owner may receive every atom, nobody else any), the visible exits and the internal
channels. Decisions are value-free; nothing here logs text.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from tpguard import Guard, PolicyKB, ToolSpec

from ..backends.exposure import ReturnMin, SessionWrap
from ._exp_inventory import workspace_atoms

if TYPE_CHECKING:
    from opentelemetry.trace import TracerProvider

    from ..cases.exposure import ExpCase

__all__ = ["EXP_GUARD_NAMES", "GIVEN", "ORACLE", "ORACLE_GIVEN", "ExpGuardUnderTest", "deployment_policy",
           "exp_guard_error", "guard_label", "make_exp_guard", "oracle_case_policy"]

#: The fixed names; ``exit:CHANNEL[+CHANNEL…]`` (and ``oracle-exit:…``) are the parametrized ones.
EXP_GUARD_NAMES = ("off", "exits", "oracle-exits", "enforce", "redact", "return-min")
#: The prefix of the conditions handed the evaluator's target set (App. K sanity check).
ORACLE = "oracle-"
_ORACLE_LABEL = "ORACLE sanity check (seed 002 App. K), not a guard: given the hidden targets S"
#: What the guards are given, as every report states it (``run.json`` ``detector.guard``).
GIVEN = ("what the workspace's data store registers (deployment_policy): its declared private "
         "fields and what recognizers find in its free text, as tpguard atoms with aliases derived "
         "by code — never the evaluator's targets S; the owner may receive every atom, nobody else "
         "any; the case's visible exits and internal channels (benchmark/guards/exposure.py)")
ORACLE_GIVEN = ("the oracle-* conditions only (a measurement sanity check, not a guard): the "
                "targets S (value, aliases) as atoms and Auth as (atom, recipient) allow pairs")

_CHANNELS = ("email", "console", "response", "share", "send", "reply", "forward")
_MEDIA = ("email", "chat", "file")
_FREE_TEXT = ("subject", "body", "note", "text")
_SINKS = {"send_email": "email", "reply_email": "email", "forward_email": "email",
          "share_file": "file_share", "print_console": "console"}
_DESCRIPTIONS = {
    "off": "no guard: every exit delivers what the agent emitted",
    "exits": "tpguard check_exit, enforce mode, on every declared visible exit; knows the "
             "workspace's private fields, not the evaluator's targets",
    "oracle-exits": f"{_ORACLE_LABEL}; check_exit on every visible exit",
    "enforce": "tpguard request stage, enforce mode, on tool arguments only; exits untouched",
    "redact": "tpguard request stage, redact mode, on tool arguments only; exits untouched",
    "return-min": "the model sees only ids and titles of what a tool returned (C3)",
}


def guard_label(name: str) -> str:
    """``name`` as reports show it: an oracle condition says it is the sanity check."""
    return f"{name} (oracle sanity check, App. K)" if name.startswith(ORACLE) else name


def exp_guard_error(name: str) -> str | None:
    """``None`` when ``name`` is an exposure guard, else one line saying why not."""
    if name in EXP_GUARD_NAMES:
        return None
    if name.removeprefix(ORACLE).startswith("exit:"):
        parts = [p.strip() for p in name.removeprefix(ORACLE)[5:].split("+")]
        bad = [p for p in parts if p not in (*_CHANNELS, *_MEDIA)]
        if not parts or bad or "" in parts:
            return (f"{name!r}: exit:CHANNEL[+CHANNEL…] takes channels or media of "
                    f"{', '.join(dict.fromkeys((*_CHANNELS, *_MEDIA)))}")
        return None
    return (f"{name!r} does not apply to the exposure suite; choose from "
            f"{', '.join(EXP_GUARD_NAMES)}, exit:CHANNEL[+CHANNEL…], oracle-exit:CHANNEL[+…]")


def _recipients(case: ExpCase) -> list[dict[str, Any]]:
    # tpguard knows requester and external kinds; the owner is a named recipient
    return [{"id": r.id, "kind": "requester" if r.kind == "requester" else "external",
             "addresses": [r.address]} for r in case.recipients]


def deployment_policy(case: ExpCase) -> PolicyKB:
    """What a deployment of ``case``'s workspace declares: the atoms its data store registers
    (workspace only), its recipients, one rule letting the owner receive every atom (every other
    recipient: forbidden, tpguard's default), its exits and internal channels."""
    owners = [r for r in case.recipients if r.kind == "owner"]
    domain = owners[0].address.rpartition("@")[2] if owners else None
    return PolicyKB.from_dict({
        "atoms": workspace_atoms(case.workspace, own_addresses=[r.address for r in case.recipients],
                                 own_domain=domain),
        "recipients": _recipients(case),
        "disclosures": [{"atom_type": "*", "recipient": r.id, "allow": True} for r in owners],
        "exits": list(case.visible_channels),
        "internal_channels": list(case.internal_channels),
    })


def oracle_case_policy(case: ExpCase) -> PolicyKB:
    """The ORACLE policy (App. K sanity check): the evaluator's hidden targets ``S`` as atoms
    (value, aliases), the recipients, ``Auth`` as allow pairs, exits. Never a guard result."""
    return PolicyKB.from_dict({
        "atoms": [{"id": t.id, "type": t.type, "value": t.value,
                   "aliases": [a for a in t.aliases if a.strip() and a != t.value]}
                  for t in case.targets],
        "recipients": _recipients(case),
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
    name = name.removeprefix(ORACLE)
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
                    "other exits pass); knows the workspace's private fields, not the targets")
        if self.name.startswith(ORACLE + "exit:"):
            return f"{_ORACLE_LABEL}; check_exit only on {self.name[len(ORACLE) + 5:]}"
        return _DESCRIPTIONS[self.name]

    @property
    def oracle(self) -> bool:
        """Whether this condition is handed the evaluator's targets (a sanity check)."""
        return self.name.startswith(ORACLE)

    def describe(self) -> dict[str, Any]:
        return {"name": self.name, "description": self.description, "suite": "exposure",
                "oracle": self.oracle}

    def wrap(self, case: ExpCase, tracer_provider: TracerProvider | None = None) -> SessionWrap:
        """A fresh wrap (and tpguard guard) for one session-run."""
        if self.name == "off":
            return SessionWrap()
        if self.name == "return-min":
            return ReturnMin()
        mode: Literal["enforce", "redact"] = "redact" if self.name == "redact" else "enforce"
        policy = oracle_case_policy(case) if self.oracle else deployment_policy(case)
        guard = Guard(policy, mode=mode, tracer_provider=tracer_provider)
        if self.name in ("enforce", "redact"):
            return _ArgsWrap(self.name, guard)
        return _ExitWrap(self.name, guard, _exit_channels(self.name, case))


def make_exp_guard(name: str) -> ExpGuardUnderTest:
    """The exposure guard called ``name``; ``ValueError`` (one line) for any other name."""
    if (err := exp_guard_error(name)) is not None:
        raise ValueError(f"--guard {err}")
    return ExpGuardUnderTest(name)
