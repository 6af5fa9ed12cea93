"""The need-to-know generator: determinism, scale (Table 5), domains (Table B.12), annotation."""

from __future__ import annotations

import hashlib
from collections import Counter

import pytest

from tpguard.benchmark.cases.need_to_know import DOMAINS, KINDS, generate
from tpguard.benchmark.cases.need_to_know._build import WRITTEN_SINKS
from tpguard.benchmark.cli._stats import suite_stats

TABLE_B12 = [
    "Charity aid", "Coding", "Credit-card risk", "Customer dispute", "E-commerce after-sales",
    "Employee offboarding", "Employee onboarding", "Expense", "Finance", "Government service",
    "Hiring", "Housing rental", "Insurance claim", "IT helpdesk", "Legal contract",
    "Logistics and shipping", "Medical", "Procurement", "Scholarship", "Student counseling",
    "Tax filing", "Telecom service", "Travel booking",
]
OPERATIONAL = {"workflow_status", "next_step"}


def _digest(suite, path) -> str:
    suite.write_jsonl(path)
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture(scope="module")
def suite():
    return generate(0)


def test_same_seed_gives_identical_jsonl_and_other_seed_differs(suite, tmp_path) -> None:
    fresh = generate.__wrapped__(0)  # bypass the in-process cache: a real second generation
    assert fresh is not suite
    assert _digest(suite, tmp_path / "a.jsonl") == _digest(fresh, tmp_path / "b.jsonl")
    other = generate(1, 46)
    assert _digest(other, tmp_path / "c.jsonl") != _digest(generate(0, 46), tmp_path / "d.jsonl")
    assert [c.task for c in other] != [c.task for c in suite.cases[:46]]


def test_scale_matches_table_5_thresholds(suite) -> None:
    stats = suite_stats(suite)
    assert stats["cases"] >= 1150 and stats["domains"] >= 23
    assert stats["avg_tools_per_case"] >= 5.5 and stats["avg_atoms_per_case"] >= 6.5
    assert stats["field_tool_pairs"] == stats["authorized"] + stats["forbidden"]
    assert stats["forbidden"] > stats["authorized"] > 0


def test_the_23_domains_of_table_b12(suite) -> None:
    assert sorted(d.label for d in DOMAINS) == sorted(TABLE_B12)
    assert Counter(c.domain for c in suite) == dict.fromkeys(TABLE_B12, 50)
    for d in DOMAINS:
        assert len(d.stages) == 6 and len(d.phrasings) >= 3
        names = [s.stage for s in d.stages]
        assert names[0] == "registration" and d.stages[-1].sink == "handoff"


def test_variation_optional_and_reordered_stages_and_phrasings(suite) -> None:
    meta = [c.metadata for c in suite]
    assert 0.35 < sum(m["extra_stage"] for m in meta) / len(meta) < 0.65
    assert sum(m["reordered"] for m in meta) > 300
    med = [c for c in suite if c.domain == "Medical"]
    assert len({c.metadata["phrasing"] for c in med}) == 3
    with_extra = next(c for c in suite if c.metadata["extra_stage"])
    optional = [s for s in with_extra.workflow if s.optional]
    assert len(optional) == 1
    assert not any(r.tool == optional[0].tool for r in with_extra.required)  # optional: not required
    assert len({tuple(t.name for t in c.tools) for c in med}) >= 3  # orders and extra stage differ


def test_atoms_carry_aliases_variants_masked_and_severity(suite) -> None:
    case = suite.case("ntk-medical-0000")
    name = case.policy.atom("name")
    assert any(a.startswith(("Mr. ", "Ms. ", "Mrs. ")) for a in name.aliases)
    assert any(a[1:3] == ". " for a in name.aliases)  # "M. Gonzalez"
    card = case.policy.atom("card")
    assert card.masked and card.masked[0].endswith(card.value)
    assert case.policy.atom("symptom").variants  # lay paraphrase
    by_type: dict[str, set[float]] = {}
    for c in suite:
        for a in c.atoms:
            by_type.setdefault(a.type, set()).add(a.severity)
            assert a.value in c.task  # the task states every atom
    assert all(len(s) == 1 for s in by_type.values())  # severity is a property of the type
    assert by_type["api_key"] == {3} and by_type["workflow_status"] == {0.5}
    categories = {KINDS[t].category for t in by_type}
    assert len(categories - {"Operational"}) >= 30  # Tables B.13–B.14 categories covered


def test_authorization_is_tool_purpose_first(suite) -> None:
    for case in suite.cases[:230]:
        res = case.policy.resolver()
        structured = {(f.atom, f.tool) for f in case.required}
        context = set(case.metadata["context_atoms"])
        for a in case.atoms:
            for t in case.tools:
                acc = res.access(a, t)
                if a.id in context:
                    assert acc.state == "forbidden"  # distractors: no tool needs them
                if (a.id, t.name) in structured:
                    assert acc.permits(next(r.field for r in case.required
                                            if (r.atom, r.tool) == (a.id, t.name)))
                if t.sink in ("handoff", "ticket") and acc.state != "forbidden":
                    assert a.severity < 3  # minimal-necessary: no high-severity fact downstream
        for t in case.tools:
            if t.sink == "handoff":
                allowed = {a.type for a in case.atoms if res.access(a, t).state != "forbidden"}
                assert OPERATIONAL <= allowed


def test_rules_agree_with_explicit_pairs_and_conditionals_exist(suite) -> None:
    case = suite.case("ntk-medical-0000")
    card = case.policy.access("card", "medical_process_payment")
    assert card.state == "conditional" and card.fields == ("card_suffix",)
    assert card.permits("card_suffix") and not card.permits("note")
    rule_sinks = {(r.atom_type, r.sink) for r in case.policy.rules}
    assert ("workflow_status", "handoff") in rule_sinks and ("card_suffix", "payment") in rule_sinks


def test_workflow_checks_transitions_and_ground_truth(suite) -> None:
    types = Counter(t.type for c in suite for t in c.transitions)
    for expected in ("record → ticket", "ticket → handoff", "document → notification",
                     "processing → summary"):
        assert types[expected] > 0, expected
    case = suite.case("ntk-insurance-claim-0000")
    assert [g.tool for g in case.ground_truth] == [t.name for t in case.tools]
    assert {c.tool for c in case.checks} == {s.tool for s in case.workflow if not s.optional}
    payment = next(c for c in case.checks if c.primitive == "payments")
    # the end state: the object exists for the case with its fields filled (facts are Gold Arg)
    assert payment.expect["amount"] == "$nonempty" and payment.expect["case_id"].startswith("CLM-")
    for call in case.ground_truth:
        spec = case.tool(call.tool)
        written = sum(1 for s in spec.free_text if s in call.arguments)
        # minimal free text: one slot on coordination tools, optional notes left empty
        assert written == (1 if spec.sink in WRITTEN_SINKS else 0), call.tool


def test_verification_lookups_and_payment_capture_have_no_free_text(suite) -> None:
    """Table 3's ``verify_identity`` has no free-text slot; nor do lookups and payment capture."""
    kinds: Counter[str] = Counter()
    for case in suite:
        for tool in case.tools:
            bare = tool.name.split("_", 1)[1]
            if bare.startswith(("verify_", "lookup_")) or tool.sink == "payment":
                assert tool.free_text == (), tool.name
                assert not any(k in tool.free_text for k in tool.input_schema["properties"])
                kinds[tool.sink] += 1
            else:
                assert len(tool.free_text) >= 1, tool.name
    assert kinds["payment"] > 500 and kinds["record"] > 1000
    messages = [c for case in suite for c in case.checks if "$atom:next" in c.expect.values()]
    assert len(messages) > 900  # notifications still carry the minimal next-step message
