"""Redact's second scan looks only for what may be forbidden (issue 33, item 2).

After rewriting, ``redact`` scans the rewritten text again; that scan's fuzzy pass aligns only the
atoms whose fuzzy findings the tool may withhold (``Session.scanner(withheld_by=spec)`` →
``Detector.scan_text(wanted=…)`` → ``FuzzyIndex.scan(wanted=…)``). These tests hold it to the full
re-scan it replaces: per text, the wanted scan is the full scan less other atoms' fuzzy findings
(600 texts); per call, the decision and the rewritten arguments are the ones a guard whose second
scan is a full scan gives (300 calls, in sessions with their own atoms too, placeholders that
complete an atom, typo'd values whose fuzzy findings are and are not forbidden).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any
from unittest import mock

from glue_corpus import TOOLS as _TOOLS  # the same three tools as the recorded corpus
from hypothesis import given, settings
from hypothesis import strategies as st

from tpguard import Decision, Guard, PolicyKB, PrivateAtom
from tpguard.detect.detector import MEMO_LEN, Detector
from tpguard.stages.session import Session

# every access shape (as tests/core/glue_corpus.py): authorized and forbidden atoms and types,
# conditional on fields (path-dependent), conditional on forms with and without ``fuzzy``
_ATOMS = [
    {"id": "name", "type": "person_name", "value": "Laurie Bates", "aliases": ["L. Bates"]},
    {"id": "email", "type": "email", "value": "laurie.bates@example.com"},
    {"id": "email2", "type": "email", "value": "jose.fernandez@example.org"},
    {"id": "street", "type": "street_address", "value": "12 Oak Street"},
    {"id": "card", "type": "card_suffix", "value": "4821"},
    {"id": "phone", "type": "phone", "value": "415-555-0142"},
    {"id": "cust", "type": "customer_id", "value": "CUS-0048213"},
    {"id": "other", "type": "person_name", "value": "Jose Fernandez"},
    {"id": "diag", "type": "medical", "value": "chest tightness radiating", "variants": ["tight chest"]},
    # values a placeholder completes: "[EMAIL_1] Bates Avenue" once the e-mail address is rewritten
    {"id": "desk", "type": "internal", "value": "[EMAIL_1] Bates Avenue"},
    {"id": "desk2", "type": "internal", "value": "Oak Lane [PHONE_1] Depot"},
]
_AUTHS = [
    {"atom": "name", "tool": "create_ticket", "allow": True},
    {"atom": "street", "tool": "create_ticket", "allow": True},
    {"atom": "other", "tool": "send_sms", "allow": "conditional", "forms": ["exact", "fuzzy"]},
    {"atom": "name", "tool": "send_sms", "allow": "conditional", "forms": ["exact", "normalized"]},
    {"atom": "street", "tool": "update_crm", "allow": "conditional", "fields": ["address", "history"],
     "forms": ["exact", "fuzzy"]},
    {"atom": "desk", "tool": "update_crm", "allow": True},
    {"atom": "desk", "tool": "create_ticket", "allow": "conditional", "fields": ["queue"]},
    {"atom": "desk2", "tool": "send_sms", "allow": "conditional", "forms": ["exact"]},
]
_RULES = [
    {"atom_type": "customer_id", "sink": "ticket", "allow": True},
    {"atom_type": "person_name", "purpose": "update the customer record", "allow": True},
    {"atom_type": "email", "tool": "update_crm", "allow": "conditional", "fields": ["comment"]},
    {"atom_type": "medical", "tool": "create_ticket", "allow": "conditional", "fields": ["note"]},
]
POLICY = PolicyKB.from_dict({"atoms": _ATOMS, "tools": _TOOLS, "authorizations": _AUTHS, "rules": _RULES})
#: a session's own atoms: one overrides a policy id, one is new (and fuzzy-eligible)
SESSION_ATOMS = [PrivateAtom(id="other", type="email", value="Jose Fernandez"),
                 PrivateAtom(id="sess-street", type="street_address", value="44 Elm Road Apartment")]

_PIECES = [
    "Laurie Bates", "Laurie Bats", "Lauri Bates", "laurie.bates@example.com", "laurie.bates@exmple.com",
    "jose.fernandez@example.org", "jose.fernandes@example.org", "12 Oak Street", "12 Oak Stret",
    "12 Oak St.", "card ending 4821", "415-555-0142", "CUS-0048213", "Jose Fernandez", "Jose Fernandes",
    "chest tightness radiating", "chest tightnes radiating", "tight chest", "L. Bates",
    "[EMAIL_1] Bates Avenue", "[EMAIL_1] Bates Avenu", "Bates Avenue", "Bates Avenu", "Oak Lane",
    "Depot", "Oak Lane [PHONE_1] Depot", "44 Elm Road Apartment", "44 Elm Rd Apartment", "[EMAIL_2]",
    "resend", "the", "parcel", "refund", "ID", "x1", "2026-12-04",
]
_SEPS = [" ", ", ", "\n", "; ", " (", ") ", ": ", ". ", " - "]
#: an e-mail address right before "Bates Avenue": rewritten, it completes the atom ``desk``
_COMPLETING = ["laurie.bates@example.com Bates Avenue", "laurie.bates@example.com Bates Avenu",
               "Oak Lane 415-555-0142 Depot", "Oak Lane 415-555-0142 Depo"]

_texts = st.lists(st.tuples(st.sampled_from(_PIECES + _COMPLETING), st.sampled_from(_SEPS)),
                  min_size=1, max_size=24).map(lambda parts: "".join(p + s for p, s in parts).strip())

_DETECTOR = Detector(POLICY.atoms)
_INDEX = {a.id: i for i, a in enumerate(_DETECTOR.atoms)}


@settings(max_examples=600, deadline=None)
@given(_texts, st.sets(st.sampled_from(sorted(_INDEX.values()))))
def test_a_wanted_scan_is_the_full_scan_less_other_atoms_fuzzy_findings(text: str, wanted: set[int]) -> None:
    got = _DETECTOR.scan_text(text, path="note", free_text=True, wanted=wanted)
    full = _DETECTOR.scan_text(text, path="note", free_text=True)
    if len(text) <= MEMO_LEN:  # the memo keeps full scans only
        assert got == full
        return
    assert got == [f for f in full if f.method != "fuzzy" or _INDEX[f.atom_id] in wanted]


_FULL_SCANNER = Session.scanner


@contextmanager
def _full_second_scan() -> Iterator[None]:
    """The code before: redact's second scan is a full scan (``withheld_by`` ignored)."""
    with mock.patch.object(Session, "scanner", lambda self, withheld_by=None: _FULL_SCANNER(self)):
        yield


def _shown(d: Decision | Any) -> Any:
    if not isinstance(d, Decision):
        return None if d is None else json.loads(json.dumps([d.arguments, repr(d.changes)], default=repr))
    rec = d.to_dict()
    rec["session_id"] = None
    return json.loads(json.dumps([rec, d.arguments], default=repr))


_FREE = {"create_ticket": "note", "update_crm": "comment", "send_sms": "message"}
_calls = st.tuples(
    st.sampled_from([*sorted(_FREE), "update_crm-history"]),
    st.lists(_texts, min_size=1, max_size=3),
    st.sampled_from([None, "ID x1", "CUS-0048213", "Laurie Bates"]),
    st.booleans(),
)

# one guard per side for the whole run, so their sessions' placeholders and caches stay in step
_NEW, _OLD = Guard(POLICY, mode="redact"), Guard(POLICY, mode="redact")


def _arguments(tool: str, texts: list[str], structured: str | None) -> tuple[str, dict[str, Any]]:
    if tool == "update_crm-history":
        return "update_crm", {"history": texts, "comment": texts[0], "customer_id": structured}
    args: dict[str, Any] = {_FREE[tool]: texts[0], "items": [{_FREE[tool]: t} for t in texts[1:]]}
    if structured is not None:
        args["queue"] = structured
    return tool, args


def _decide(guard: Guard, tool: str, args: dict[str, Any], in_session: bool) -> list[Any]:
    def both() -> list[Any]:
        return [_shown(guard.check(tool, args)), _shown(guard.placeholder_call(tool, args))]

    if not in_session:
        return both()
    with guard.session(SESSION_ATOMS, session_id="s"):
        return both()


@settings(max_examples=300, deadline=None)
@given(_calls)
def test_redact_decides_as_with_a_full_second_scan(call: tuple[str, list[str], str | None, bool]) -> None:
    tool, args = _arguments(*call[:3])
    got = _decide(_NEW, tool, args, call[3])
    with _full_second_scan():
        want = _decide(_OLD, tool, args, call[3])
    assert got == want


def test_the_cases_that_matter_occur() -> None:
    """A placeholder that completes an atom is rewritten in a second round, and the second scan
    skips an authorized atom's fuzzy finding that a full scan would align — both as before."""
    note = "Reach Laurie Bats at laurie.bates@example.com Bates Avenue about parcel 12 Oak Stret, please."
    guard = Guard(POLICY, mode="redact")
    d = guard.check("create_ticket", {"note": note})
    assert d.redacted
    assert d.arguments["note"] == "Reach Laurie Bats at [INTERNAL_1] about parcel 12 Oak Stret, please."
    with _full_second_scan():
        old = Guard(POLICY, mode="redact").check("create_ticket", {"note": note})
    assert _shown(old) == _shown(d)
    # the first rewrite, scanned again: the full scan finds the authorized name's and street's
    # fuzzy occurrences, the wanted scan only the forbidden atom the placeholder completed
    first = "Reach Laurie Bats at [EMAIL_1] Bates Avenue about parcel 12 Oak Stret, please."
    sess = guard.current_session
    spec = guard.tool_spec("create_ticket")
    full = sess.scanner()(first, "note", True)
    wanted = sess.scanner(spec)(first, "note", True)
    assert {(f.atom_id, f.method) for f in full} - {(f.atom_id, f.method) for f in wanted} == {
        ("name", "fuzzy"), ("street", "fuzzy")}
    assert [f for f in wanted if f.atom_id == "desk"] == [f for f in full if f.atom_id == "desk"] != []
