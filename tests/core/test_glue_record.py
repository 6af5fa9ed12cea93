"""Issue 33, item 2: the call's glue got cheaper — verdicts memoized per session and tool, leaves
the detector already knows clean not scanned again, the rewrite sorted on C keys, the rebuild of a
dict inlined — and every decision, finding, message, redaction and placeholder call is the old one.

``data/glue_record.json`` was recorded on the code before the change (``glue_corpus.py`` says how);
the property tests compare the memoized verdicts with the resolver's own answer, and the rewrite
with the old implementation, on inputs hypothesis writes."""

from __future__ import annotations

import itertools
import json

import pytest
from glue_corpus import RECORD, decisions, policies

from tpguard import Guard, PrivateAtom, ToolSpec
from tpguard.decision import _describe, describe_findings
from tpguard.detect.detector import Finding, new_finding
from tpguard.redaction import Operator, rewrite_text
from tpguard.stages.session import Session

hypothesis = pytest.importorskip("hypothesis")
st = hypothesis.strategies

_RECORD = json.loads(RECORD.read_text())


def test_decisions_are_the_recorded_ones() -> None:
    got = json.loads(json.dumps(decisions(), sort_keys=True))
    assert len(got) == len(_RECORD)
    for old, new in zip(_RECORD, got, strict=True):
        assert new == old, (old["policy"], old["mode"], old["k"], old.get("session"))


def test_the_record_covers_what_the_change_touches() -> None:
    actions = {(r["mode"], r["decision"]["action"]) for r in _RECORD}
    assert {("audit", "allow"), ("enforce", "block"), ("redact", "redact"), ("redact", "block")} <= actions
    methods = {f[3] for r in _RECORD for f in r["decision"]["findings"]}
    assert {"exact", "normalized", "fuzzy", "alias", "masked", "semantic"} <= methods
    # an access conditional on fields (e-mail: path-dependent, never memoized) and one on forms
    # (card: method-dependent) each gave both verdicts for one tool
    for atom in ("email", "card"):
        oks = {f[9] for r in _RECORD if r["policy"] == "synthetic" and r["decision"]["tool"] == "update_crm"
               for f in r["decision"]["findings"] if f[0] == atom}
        assert oks == {True, False}, atom
    assert any("[" in f[2] for r in _RECORD for f in r["decision"]["findings"])  # a key that is an atom
    assert sum(r["placeholder_call"] is not None for r in _RECORD if "placeholder_call" in r) > 20


_POLICY = policies()["synthetic"]
_TOOLS = [*_POLICY.tools, ToolSpec(name="unknown_tool", sink="external")]
# the atoms whose access is conditional (on fields, forms or both) or decided by rules, first
_IDS = ["email", "street", "card", "phone", "name", "cust", "diag", "pii:PHONE_NUMBER", "not-an-atom"]
_METHODS = ["exact", "normalized", "alias", "fuzzy", "masked", "semantic", "pii"]
_PATHS = ["note", "comment", "contact_phone", "address", "items[2].address", "email", "x.email", "history",
          "message"]
_OVERRIDE = PrivateAtom(id="phone", type="customer_id", value="415-555-0142")


@pytest.mark.parametrize("register", [False, True], ids=["warm", "registered-between"])
@pytest.mark.parametrize("spec", _TOOLS, ids=lambda t: t.name)
def test_memoized_verdicts_are_the_resolvers(spec: ToolSpec, register: bool) -> None:
    """Every (atom, method) of the policy — conditional on fields, on forms, by rule, PII, an
    unknown id — decided at one path, then through the warm memo at every other path (and after a
    registration that overrides a policy atom between the two), as a fresh authorizer decides it.
    Exhaustive: the space is small, and a memo wrong for one pair would hide from sampling."""
    guard = Guard(_POLICY, mode="enforce")

    def finding(atom_id: str, method: str, path: str) -> Finding:
        atom_type = "phone_number" if method == "pii" else "person_name"
        return new_finding((atom_id, atom_type, path, method, 0, 4, 1.0, True, 1.0, None))

    for atom_id in _IDS:
        for first_method, first in itertools.product(_METHODS, _PATHS):
            with guard.session() as sess:
                memo, allowed = sess.verdicts(spec)
                allowed(finding(atom_id, first_method, first), first)
                if register:
                    sess.register(_OVERRIDE)
                # a new session inside this one: the same atoms, nothing cached
                fresh = Session(guard._id, guard._base, (), guard._overlay, parent=sess).authorizer(spec)
                for method, path in itertools.product(_METHODS, _PATHS):
                    f = finding(atom_id, method, path)
                    memo, allowed = sess.verdicts(spec)
                    ok = memo.get((atom_id, method))
                    got = allowed(f, path) if ok is None else ok
                    assert got == fresh(f, path), (spec.name, atom_id, first_method, first, method, path)


class _Tag(Operator):
    name = "tag"

    def replacement(self, finding: Finding) -> str:
        return f"<{finding.atom_id}>"


def _old_rewrite(text: str, findings: list[Finding], operator: Operator) -> str:
    spans = sorted(findings, key=lambda f: (f.start, -f.end))  # the code before the change
    merged: list[tuple[int, int, Finding]] = []
    for f in spans:
        if merged and f.start < merged[-1][1]:
            s, e, first = merged[-1]
            merged[-1] = (s, max(e, f.end), first)
        else:
            merged.append((f.start, f.end, f))
    out, pos = [], 0
    for s, e, f in merged:
        out += [text[pos:s], operator.replacement(f)]
        pos = e
    return "".join([*out, text[pos:]])


_span = st.tuples(st.integers(0, 30), st.integers(1, 8), st.sampled_from("abcdef"))


@hypothesis.settings(max_examples=300, deadline=None)
@hypothesis.given(st.lists(_span, max_size=12))
def test_the_rewrite_is_the_old_one(spans: list) -> None:
    """Same text whatever the overlaps — equal spans of different atoms included (the first one
    in the findings' order names the placeholder, as before)."""
    text = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGH"
    fs = [new_finding((atom, "t", "note", "exact", s, s + n, 1.0, True, 1.0, False)) for s, n, atom in spans]
    assert rewrite_text(text, fs, _Tag()) == _old_rewrite(text, fs, _Tag())


_typed = st.tuples(st.sampled_from(["email", "phone", "card_suffix", "person_name"]),
                   st.sampled_from(["note", "items[0].comment", "a.[EMAIL_1]", "x", "y", "z"]))


@hypothesis.settings(max_examples=200, deadline=None)
@hypothesis.given(st.lists(st.lists(_typed, min_size=1, max_size=40), min_size=1, max_size=6))
def test_described_findings_are_recomputed_ones(lists: list) -> None:
    """The remembered description of a list of findings is the one computed afresh, whatever came
    before (long lists, more than ten fields, the same types in other fields)."""
    for pairs in lists + lists:  # each list twice: the second answer comes from the memory
        fs = [new_finding(("a", t, p, "exact", 0, 1, 1.0, True, 1.0, False)) for t, p in pairs]
        assert describe_findings(fs) == _describe(fs) == describe_findings(iter(fs))


def test_a_registration_racing_the_verdict_table_leaves_no_stale_pair() -> None:
    """register() between verdicts() reading its table and storing a new pair: the pair (built on
    the replaced access cache) must not outlive the registration — the next call decides anew."""
    guard = Guard(_POLICY, mode="enforce")
    spec = _POLICY.tool("create_ticket")
    f = new_finding(("phone", "phone", "note", "exact", 0, 4, 1.0, True, 1.0, None))
    with guard.session() as sess:
        assert sess.authorizer(spec)(f, "note") is False  # a phone may not reach a ticket: cached
        real = sess._authorizer

        def racing(spec_: ToolSpec, cache: dict) -> object:
            sess.register(_OVERRIDE)  # now a customer id, which a ticket may carry
            return real(spec_, cache)

        sess._authorizer = racing  # type: ignore[method-assign]
        sess.verdicts(spec)
        del sess._authorizer
        memo, allowed = sess.verdicts(spec)
        ok = memo.get(("phone", "exact"))
        assert (allowed(f, "note") if ok is None else ok) is True
