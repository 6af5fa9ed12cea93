"""Request narrowing, taint, limits on results and spans of the acquisition stage (issue 10)."""

from __future__ import annotations

import json
import time

import pytest

from tpguard import AcquisitionScope, Guard, Limits, PolicyKB, ScopeBinding
from tpguard.testing import SpanCapture

BINDING = ScopeBinding(subject_arg="patient_id", source_arg="table", part_arg="sheet",
                       since_arg="since", until_arg="until", subject_key="patient",
                       atom_keys={"phone": "phone"})
SCOPE = AcquisitionScope(sources=["visits"], fields=["name", "phone"], subjects=["P-1"],
                         parts=["Q1"], since="2024-01-01", until="2024-03-31", binding=BINDING)
SCHEMA = {"type": "object", "properties": {"fields": {"type": "array", "items": {"type": "string"}},
                                           "patient_id": {"type": "string"}}}
POLICY = PolicyKB.from_dict({
    "tools": [{"name": "query", "purpose": "look up the patient", "sink": "record", "schema": SCHEMA},
              {"name": "notify", "purpose": "tell the patient", "sink": "notification",
               "free_text": ["message"]},
              {"name": "post", "purpose": "post to the forum", "sink": "external",
               "free_text": ["body"]}],
    "rules": [{"atom_type": "phone", "sink": "notification", "allow": True}],
})


def make(mode: str, spans: SpanCapture | None = None) -> Guard:
    return Guard(POLICY, mode=mode, tracer_provider=spans.provider if spans else None)  # type: ignore[arg-type]


@pytest.mark.parametrize("mode", ["enforce", "redact"])
def test_broad_requests_are_narrowed(mode: str) -> None:
    g = make(mode)
    with g.session(scopes={"query": SCOPE}):
        d = g.check("query", {"table": "visits", "fields": "*", "sheet": "all", "since": "2000-01-01"})
    assert d.action == "redact" and d.narrowed
    assert d.arguments == {"table": "visits", "fields": ["name", "phone"], "patient_id": "P-1",
                           "sheet": "Q1", "since": "2024-01-01", "until": "2024-03-31"}
    assert d.message and "narrowed" in d.message and "P-1" not in d.message
    assert {f.dimension for f in d.scope} == {"subject", "part", "field", "window"}
    # fields beyond the purpose are dropped; fields within it are kept as asked
    with g.session(scopes={"query": SCOPE}):
        d = g.check("query", {"table": "visits", "patient_id": "P-1", "sheet": "Q1",
                              "since": "2024-02-01", "until": "2024-02-28", "fields": "name, ssn"})
    assert d.arguments["fields"] == ["name"] and [f.dimension for f in d.scope] == ["field"]


@pytest.mark.parametrize(("arguments", "reason"), [
    ({"table": "payroll"}, "source outside this task's scope (allowed: visits)"),
    ({"table": "visits", "patient_id": "P-2"}, "subject outside this task's scope"),
    ({"table": "visits", "sheet": "Q4"}, "part outside this task's scope (allowed: Q1)"),
    ({"table": "visits", "since": "2023-01-01", "until": "2023-06-30"}, "outside this task's time window"),
])
def test_out_of_scope_requests_are_refused_with_an_agent_readable_message(arguments: dict, reason: str) -> None:
    g = make("enforce")
    with g.session(scopes={"query": SCOPE}):
        d = g.check("query", arguments)
    assert d.blocked and d.message is not None and reason in d.message
    assert d.message.startswith("tpguard withheld this call to query (purpose: look up the patient)")
    assert "P-2" not in d.message and "payroll" not in d.message
    audit = make("audit")
    with audit.session(scopes={"query": SCOPE}):
        a = audit.check("query", arguments)
    assert a.allowed and a.arguments == arguments and a.scope  # recorded, unchanged


@pytest.mark.parametrize("empty", ["sources", "subjects", "parts"])
@pytest.mark.parametrize("mode", ["enforce", "redact"])
def test_a_tool_the_task_needs_nothing_from_is_refused_without_inviting_another_call(
        empty: str, mode: str) -> None:
    """A scope that allows no source, subject or part: no call to the tool can be in scope, so
    the message must not say "call it again within this task's scope" (a 1.5B model resent
    that call until its steps ran out; docs/real-models.md)."""
    scope = SCOPE.model_copy(update={empty: ()})
    g = make(mode)
    for arguments in ({"table": "visits", "patient_id": "P-1", "sheet": "Q1"}, {}, {"patient_id": "all"}):
        with g.session(scopes={"query": scope}):
            d = g.check("query", arguments)
        assert d.blocked and d.message == (
            "tpguard withheld this call to query (purpose: look up the patient): this task needs "
            "nothing from query. Do not call query again for this task; go on with the other tools.")
    audit = make("audit")
    with audit.session(scopes={"query": scope}):
        a = audit.check("query", {"table": "visits", "patient_id": "P-1"})
    assert a.allowed and a.scope  # recorded, unchanged


@pytest.mark.parametrize(("subject", "alone"), [
    ("Ann Lee (P-1)", True), ("p-1, Ann Lee", True), ("P-10", False), ("XP-1", False), ("P-2", False),
])
def test_a_subject_with_text_around_an_in_scope_subject_is_told_to_give_it_alone(
        subject: str, alone: bool) -> None:
    g = make("enforce")
    with g.session(scopes={"query": SCOPE}):
        d = g.check("query", {"table": "visits", "patient_id": subject, "sheet": "Q1"})
    assert d.blocked and d.message is not None
    assert ("must be the subject alone (its id or its name)" in d.message) is alone
    assert ("names a subject outside this task's scope" in d.message) is not alone
    assert "Call query again within this task's scope." in d.message
    assert "P-1" not in d.message and "Ann" not in d.message  # no subject is ever named


def test_atom_first_seen_in_a_result_is_tainted_and_then_purpose_bound() -> None:
    other_phone = "415-555-0102"
    g = make("enforce")
    with g.session(scopes={"query": SCOPE}) as sess:
        assert g.check("post", {"body": f"call {other_phone}"}).allowed  # not an atom yet
        result = [{"id": "r1", "patient": "P-1", "name": "Ann", "phone": other_phone}]
        assert g.check_result("query", {"patient_id": "P-1"}, result, call_id="call_7").allowed
        [atom] = [a for a in sess.atoms if a.type == "phone"]
        assert atom.id == "query.phone#1" and other_phone not in atom.id
        assert [tuple(p) for p in sess.provenance(atom.id)] == [("query", "call_7")]
        blocked = g.check("post", {"body": f"call {other_phone}"})
        assert blocked.blocked and [f.atom_id for f in blocked.forbidden] == ["query.phone#1"]
        assert other_phone not in (blocked.message or "")
        assert g.check("notify", {"message": f"we will call {other_phone}"}).allowed  # phone → notification
        # the same value arriving again keeps its id and gains a provenance
        g.check_result("query", {"patient_id": "P-1"}, result, call_id="call_8")
        assert [a.id for a in sess.atoms if a.type == "phone"] == ["query.phone#1"]
        assert [p.call_id for p in sess.provenance(atom.id)] == ["call_7", "call_8"]


def test_results_past_the_limits_are_refused_not_waved_through() -> None:
    limits = Limits(max_text=1_000)
    big = "x" * 2_000
    for mode in ("enforce", "redact"):
        g = Guard(POLICY, mode=mode, limits=limits)  # type: ignore[arg-type]
        with g.session(scopes={"query": SCOPE}):
            d = g.check_result("query", {}, big)
        assert d.blocked and d.error == "limit:max_text" and big not in (d.message or "")
    g = Guard(POLICY, mode="audit", limits=limits)
    with g.session(scopes={"query": SCOPE}):
        d = g.check_result("query", {}, big)
    assert d.allowed and d.error == "limit:max_text" and d.arguments is big


def test_one_span_covers_request_and_result_without_values() -> None:
    spans = SpanCapture()
    g = make("redact", spans)
    rows = [{"id": f"r{i}", "patient": "P-1" if i % 3 == 0 else f"Q-{i}", "name": f"Name{i} Doe",
             "phone": f"415-555-{1000 + i}", "ssn": f"123-45-{6000 + i}"} for i in range(9)]
    with g.session(scopes={"query": SCOPE}):
        with g.intercept("query", {"table": "visits", "fields": "*"}, call_id="c1") as call:
            assert call.arguments["fields"] == ["name", "phone"]
            seen = call.check_result(json.dumps(rows))
    assert [r["id"] for r in json.loads(seen)] == ["r0", "r3", "r6"]
    assert all("ssn" not in r for r in json.loads(seen))
    [span] = spans.tool_spans()
    attrs = span.attributes
    assert attrs["tpguard.decision"] == "redact" and attrs["tpguard.result.decision"] == "redact"
    assert set(attrs["tpguard.scope.dimensions"]) >= {"field", "subject"}
    assert list(attrs["tpguard.result.scope.dimensions"]) == ["field", "subject"]
    assert attrs["tpguard.result.scope.count"] == 6 + 3
    assert [e.name for e in span.events].count("tpguard.result.finding") == 9
    dump = spans.dump()
    for row in rows:
        for value in (row["phone"], row["ssn"], row["name"]):
            assert value not in dump


def test_a_100kb_record_set_is_checked_in_one_linear_pass() -> None:
    rows = [{"id": f"r{i}", "patient": f"P-{i % 50}", "name": f"Person {i}", "phone": f"415-555-{i:04d}",
             "notes": "routine visit, no findings " * 3} for i in range(800)]
    text = json.dumps(rows)
    assert len(text) > 100_000
    g = make("redact")
    with g.session(scopes={"query": SCOPE}):
        g.check_result("query", {}, text)  # warm the overlay
        start = time.perf_counter()
        d = g.check_result("query", {}, text)
        elapsed = time.perf_counter() - start
    assert len(json.loads(d.arguments)) == 16
    assert elapsed < 2.0, elapsed  # generous on a shared 2-core machine; measured ~0.1 s
