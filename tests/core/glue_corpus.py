"""The corpus of ``test_glue_record.py``: generated tool calls decided by one guard per policy and mode,
in sequence (so per-session caches are warm, as in a deployment), and what was decided.

``data/glue_record.json`` holds :func:`decisions` as the code before issue 33 item 2 (the call's
glue: verdict memo, clean leaves skipped, rewrite and rebuild) computed it. To record it again on
another commit, from outside any checkout (the current directory comes first on ``sys.path``):
``PYTHONPATH=<that commit's tree>:<this repository>/tests/core python -c "import glue_corpus as g;
g.write()"``.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

from tpguard import Decision, Guard, PolicyKB, PrivateAtom

RECORD = Path(__file__).parent / "data" / "glue_record.json"
HEALTHCARE = Path(__file__).resolve().parents[2] / "examples" / "healthcare_policy.yaml"

_ATOMS = [
    {"id": "name", "type": "person_name", "value": "Laurie Bates", "aliases": ["L. Bates"]},
    {"id": "email", "type": "email", "value": "laurie.bates@example.com"},
    {"id": "street", "type": "street_address", "value": "12 Oak Street"},
    {"id": "card", "type": "card_suffix", "value": "4821", "masked": ["**** 4821"]},
    {"id": "phone", "type": "phone", "value": "415-555-0142"},
    {"id": "cust", "type": "customer_id", "value": "CUS-0048213"},
    {"id": "other", "type": "person_name", "value": "Jose Fernandez"},
    {"id": "diag", "type": "medical", "value": "chest tightness", "variants": ["tight chest"]},
]
TOOLS = [
    {"name": "create_ticket", "purpose": "open a support ticket", "sink": "ticket", "free_text": ["note"]},
    {"name": "update_crm", "purpose": "update the customer record", "sink": "record",
     "free_text": ["comment", "history"]},
    {"name": "send_sms", "purpose": "text the customer", "sink": "notification", "free_text": ["message"]},
]
# every access shape: allowed / forbidden pairs, conditional on fields (path-dependent: never
# memoized), conditional on forms (method-dependent), type rules by tool, purpose and sink
_AUTHS = [
    {"atom": "name", "tool": "create_ticket", "allow": True},
    {"atom": "phone", "tool": "update_crm", "allow": "conditional", "fields": ["contact_phone"]},
    {"atom": "card", "tool": "update_crm", "allow": "conditional", "forms": ["masked"]},
    {"atom": "email", "tool": "send_sms", "allow": False},
    {"atom": "street", "tool": "update_crm", "allow": "conditional", "fields": ["address", "items"],
     "forms": ["exact", "normalized"]},
]
_RULES = [
    {"atom_type": "customer_id", "sink": "ticket", "allow": True},
    {"atom_type": "person_name", "purpose": "update the customer record", "allow": True},
    {"atom_type": "phone", "sink": "notification", "allow": True},
    {"atom_type": "medical", "tool": "create_ticket", "allow": "conditional", "fields": ["note"]},
    {"atom_type": "email", "tool": "update_crm", "allow": "conditional", "fields": ["email", "comment"]},
]

_PIECES = ["Laurie Bates", "laurie.bates@example.com", "12 Oak Street", "12 Oak St.", "card ending 4821",
           "**** 4821", "415-555-0142", "(415) 555-0142", "CUS-0048213", "Jose Fernandez", "Laurie Bats",
           "chest tightness", "tight chest", "L. Bates", "4155550142", "Bates, Laurie", "resend", "the",
           "parcel", "Oak", "refund", "ID", "x1", "2026-12-04", "EMAIL", "[PHONE_1]", "Fernandez Jose"]
_SEPS = [" ", ", ", "\n", "; ", " (", ") ", ": ", ".", " - "]
_FREE = {"create_ticket": ["note"], "update_crm": ["comment", "history"], "send_sms": ["message"],
         "unknown_tool": ["note"]}  # (the unknown tool has no free-text slot: its "note" is structured)
_KEYS = ["contact_phone", "address", "email", "queue", "priority", "customer_id", "due"]
_PLAIN = ["resend", "high", "deliveries", "2026-12-04", "x1", "Oak", "ID"]


def _text(rng: random.Random, n: int) -> str:
    return "".join(rng.choice(_PIECES) + rng.choice(_SEPS) for _ in range(n)).strip()


def _value(rng: random.Random, depth: int, free: bool, tool: str) -> Any:
    r = rng.random()
    if not free and r < 0.97:  # a structured field: mostly plain values (else the whole call blocks)
        return rng.choice(_PLAIN)
    if depth < 2 and r < 0.12:
        return [_value(rng, depth + 1, free, tool) for _ in range(rng.randint(0, 3))]
    if depth < 2 and r < 0.22:
        return _call(rng, depth + 1, rng.randint(1, 3), tool)
    if r < 0.27:
        return rng.choice([None, True, 4821, 415.5, 12])
    if r < 0.55:
        return rng.choice(_PIECES)
    return _text(rng, rng.randint(1, 9))


def _call(rng: random.Random, depth: int, n: int, tool: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for _ in range(n):
        # a key that is an atom now and then (shown as its placeholder in paths and messages)
        r = rng.random()
        free = _FREE[tool]
        key = rng.choice(_PIECES[:6]) if r < 0.025 else rng.choice(free) if r < 0.6 else rng.choice(_KEYS)
        out[key] = _value(rng, depth, key in free, tool)
    return out


def policies() -> dict[str, PolicyKB]:
    return {"synthetic": PolicyKB.from_dict({"atoms": _ATOMS, "tools": TOOLS, "authorizations": _AUTHS,
                                             "rules": _RULES}),
            "healthcare": PolicyKB.from_file(HEALTHCARE)}


def calls(seed: int = 33, n: int = 100) -> list[tuple[str, dict[str, Any]]]:
    rng = random.Random(seed)
    tools = [t["name"] for t in TOOLS] + ["unknown_tool"]
    out = []
    for _ in range(n):
        tool = rng.choice(tools)
        out.append((tool, _call(rng, 0, rng.randint(1, 6), tool)))
    return out


def _shown(value: Any) -> Any:
    return json.loads(json.dumps(value, default=repr))


def _sent(d: Decision, args: Any) -> Any:
    """What the tool receives: ``"as called"`` when it is the caller's own object."""
    return "as called" if d.arguments is args else _shown(d.arguments)


def _compact(d: Decision) -> dict[str, Any]:
    """``d.to_dict()`` with each finding as the list of its fields (the record stays small)."""
    rec = d.to_dict()
    for key in ("findings", "forbidden"):
        rec[key] = [list(f.values()) for f in rec[key]]
    return rec


def decisions() -> list[dict[str, Any]]:
    """Every call decided in every mode by one guard per (policy, mode), outside and inside a
    session that registers an atom half-way (its verdicts must be new ones)."""
    out = []
    todo = calls()
    for pname, policy in policies().items():
        for mode in ("audit", "enforce", "redact"):
            guard = Guard(policy, mode=mode)  # type: ignore[arg-type]
            for k, (tool, args) in enumerate(todo):
                d = guard.check(tool, args)
                out.append({"policy": pname, "mode": mode, "k": k, "decision": _compact(d),
                            "arguments": _sent(d, args)})
            with guard.session([PrivateAtom(id="sess-card", type="card_suffix", value="4821")]) as sess:
                for k, (tool, args) in enumerate(todo[:40]):
                    if k == 20:  # a registration mid-session overrides a policy id: fresh verdicts
                        sess.register(PrivateAtom(id="name", type="customer_id", value="Laurie Bates"))
                    d = guard.check(tool, args)
                    rec = _compact(d)
                    rec["session_id"] = None  # random per session
                    out.append({"policy": pname, "mode": mode, "k": k, "session": True, "decision": rec,
                                "arguments": _sent(d, args)})
                    pc = guard.placeholder_call(tool, args)
                    out[-1]["placeholder_call"] = None if pc is None else [_shown(pc.arguments), repr(pc.changes)]
    return out


def write() -> None:
    RECORD.write_text(json.dumps(decisions(), separators=(",", ":"), sort_keys=True) + "\n")
