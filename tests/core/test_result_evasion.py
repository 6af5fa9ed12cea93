"""Results you cannot slip past (issue 28, item 3): every way a result used to carry another
subject's record, an undated record or a marked passage past the acquisition scope."""

from __future__ import annotations

import json
from typing import Any

import pytest
from pydantic import ValidationError

from tpguard import AcquisitionScope, Guard, PolicyKB, PrivateAtom, ScopeBinding, ToolSpec
from tpguard.stages.results import PARA_WITHHELD, UNAPPLIED
from tpguard.testing import SpanCapture

ANN = {"id": "r1", "patient": "P-1", "name": "Ann Lee", "visit": "2024-03-02"}
BOB = {"id": "r2", "patient": "P-2", "name": "Bob Ray", "visit": "2024-03-05", "diagnosis": "hepatitis B"}
BINDING = ScopeBinding(subject_key="patient", date_key="visit")
SCOPE = AcquisitionScope(subjects=["P-1"], since="2024-01-01", until="2024-12-31", binding=BINDING)
LEAKS = ("Bob Ray", "hepatitis", "P-2")


def guard(mode: str, scope: AcquisitionScope = SCOPE, **kw: Any) -> Guard:
    spec = ToolSpec(name="records", purpose="look up the patient's visits", sink="record", scope=scope)
    return Guard(PolicyKB(tools=(spec,), **kw), mode=mode)  # type: ignore[arg-type]


def without(record: dict[str, Any], key: str, **extra: Any) -> dict[str, Any]:
    return {**{k: v for k, v in record.items() if k != key}, **extra}


def text_of(payload: Any) -> str:
    if isinstance(payload, bytes):
        return payload.decode()
    return payload if isinstance(payload, str) else json.dumps(payload)


# Each result carries Bob's out-of-scope record in a shape the old code did not check.
SLIPS: dict[str, Any] = {
    "subject key spelled Patient": [ANN, without(BOB, "patient", Patient="P-2")],
    "subject key spelled patientId": [ANN, without(BOB, "patient", patientId="P-2")],
    "subject key spelled patient_id": [ANN, without(BOB, "patient", patient_id="P-2")],
    "subject key spelled 'Patient ID'": [ANN, without(BOB, "patient", **{"Patient ID": "P-2"})],
    "no subject key": [ANN, without(BOB, "patient")],
    "no date key under a window": [ANN, without({**BOB, "patient": "P-1"}, "visit")],
    "records below the top level": {"data": {"records": [ANN, BOB]}},
    "a list of lists": [[ANN, BOB]],
    "JSON in a fence": "Here you go:\n```json\n" + json.dumps([ANN, BOB]) + "\n```\nAnything else?",
    "JSON after a BOM": "\ufeff" + json.dumps([ANN, BOB]),
    "JSON after a prefix line": "Found 2 visits:\n" + json.dumps([ANN, BOB]),
    "NDJSON": json.dumps(ANN) + "\n" + json.dumps(BOB) + "\n",
    "JSON as bytes": json.dumps([ANN, BOB]).encode(),
    "CSV": "id,patient,name,visit,diagnosis\nr1,P-1,Ann Lee,2024-03-02,\nr2,P-2,Bob Ray,2024-03-05,hepatitis B\n",
    "markdown table": ("Visits:\n\n| id | patient | name | visit | diagnosis |\n|---|---|---|---|---|\n"
                       "| r1 | P-1 | Ann Lee | 2024-03-02 | |\n| r2 | P-2 | Bob Ray | 2024-03-05 | hepatitis B |\n"
                       "\nThat is all."),
}


@pytest.mark.parametrize("name", SLIPS)
def test_an_out_of_scope_record_cannot_slip_past(name: str) -> None:
    result = SLIPS[name]
    enforce = guard("enforce").check_result("records", {}, result)
    assert enforce.blocked, name
    redact = guard("redact").check_result("records", {}, result)
    assert redact.action == "redact", name
    kept = text_of(redact.arguments)
    assert "Ann Lee" in kept and "Bob Ray" not in kept and "hepatitis" not in kept
    assert type(redact.arguments) is type(result)  # text stays text, bytes stay bytes
    audit = guard("audit").check_result("records", {}, result)
    assert audit.allowed and audit.arguments is result and audit.scope
    for d in (enforce, redact, audit):  # no value in a message or a finding
        dump = json.dumps(d.to_dict(), default=str) if d is not redact else d.message or ""
        assert not any(v in dump for v in ("Bob Ray", "hepatitis")), name


def test_structured_text_is_written_back_as_it_came() -> None:
    g = guard("redact")
    fenced = g.check_result("records", {}, SLIPS["JSON in a fence"]).arguments
    assert fenced == "Here you go:\n```json\n" + json.dumps([ANN]) + "\n```\nAnything else?"
    assert g.check_result("records", {}, SLIPS["NDJSON"]).arguments == json.dumps(ANN)
    assert g.check_result("records", {}, SLIPS["CSV"]).arguments == (
        "id,patient,name,visit,diagnosis\nr1,P-1,Ann Lee,2024-03-02,\n")
    assert g.check_result("records", {}, SLIPS["markdown table"]).arguments == (
        "Visits:\n\n| id | patient | name | visit | diagnosis |\n|---|---|---|---|---|\n"
        "| r1 | P-1 | Ann Lee | 2024-03-02 |  |\n\nThat is all.")
    # in scope: returned exactly as it came, whatever its shape
    for ok in ("Found 1 visit:\n" + json.dumps([ANN]), json.dumps([ANN]).encode()):
        d = guard("enforce").check_result("records", {}, ok)
        assert d.allowed and d.arguments is ok


def test_keys_match_like_fields_but_an_exact_spelling_wins() -> None:
    # `patient` is the bound key; `patient_name` is a weaker variant, ignored when `patient` is there
    rec = {**ANN, "patient_name": "Ann Lee"}
    assert guard("enforce").check_result("records", {}, [rec]).allowed
    # a nested record inherits the subject and date of the record it lies in
    nested = {"patient": "P-1", "visit": "2024-03-02", "labs": [{"test": "HbA1c", "value": "6.1"}]}
    assert guard("enforce").check_result("records", {}, [nested]).allowed
    # a wrapper that names the subject and holds dated events (get_history's shape)
    history = {"patient": "P-1", "events": [{"patient": "P-1", "visit": "2024-02-01"},
                                            {"patient": "P-1", "visit": "2023-02-01"}]}
    d = guard("redact").check_result("records", {}, history)
    assert d.arguments == {"patient": "P-1", "events": [{"patient": "P-1", "visit": "2024-02-01"}]}
    # fields: a nested record set under an admitted field is kept whole; other fields are not
    scope = AcquisitionScope(fields=["labs"], binding=ScopeBinding(subject_key="patient"))
    d = guard("redact", scope).check_result("records", {}, [{**nested, "ssn": "123-45-6789"}])
    assert d.arguments == [{"patient": "P-1", "labs": nested["labs"]}]


def test_a_scope_that_cannot_be_applied_is_said_and_fails_closed() -> None:
    prose = "Bob Ray (P-2) was seen on 2024-03-05 for hepatitis B."
    for mode in ("enforce", "redact"):
        d = guard(mode).check_result("records", {}, prose)
        assert d.blocked and d.error == UNAPPLIED and d.message
        assert "subject, window" in d.message and not any(v in d.message for v in LEAKS)
    audit = guard("audit").check_result("records", {}, prose)
    assert audit.allowed and audit.error == UNAPPLIED
    assert {f.dimension for f in audit.scope} == {"subject", "window"}
    # a tool that declares its results as text: only parts, markers and atoms apply
    text_tool = SCOPE.model_copy(update={"binding": BINDING.model_copy(update={"results": "text"})})
    d = guard("enforce", text_tool).check_result("records", {}, prose)
    assert d.allowed and d.error is None
    # nothing to hold (an empty result) is not an error; a scope without record dimensions neither
    assert guard("enforce").check_result("records", {}, "").allowed
    assert guard("enforce", AcquisitionScope()).check_result("records", {}, prose).allowed


def test_unapplied_is_on_the_span() -> None:
    spans = SpanCapture()
    spec = ToolSpec(name="records", purpose="look up", sink="record", scope=SCOPE)
    g = Guard(PolicyKB(tools=(spec,)), mode="enforce", tracer_provider=spans.provider)
    with g.intercept("records", {}) as call:
        call.check_result("free text about someone")
    [span] = spans.tool_spans()
    assert tuple(span.attributes["tpguard.result.error"]) == (UNAPPLIED,)
    assert span.attributes["tpguard.result.decision"] == "block"


@pytest.mark.parametrize("marker", ["Confidential: psychiatric referral", "confidential - psychiatric",
                                    "ＣＯＮＦＩＤＥＮＴＩＡＬ: psychiatric", "CONFI\u200bDENTIAL: psychiatric"])
def test_markers_match_case_insensitively_after_normalization(marker: str) -> None:
    scope = AcquisitionScope(binding=BINDING)
    d = guard("redact", scope).check_result("records", {}, [ANN, {**ANN, "id": "r9", "notes": marker}])
    assert d.arguments == [ANN]
    text = f"Summary.\n\n{marker}\n\nFollow up."
    assert guard("redact", scope).check_result("records", {}, text).arguments == (
        f"Summary.\n\n{PARA_WITHHELD}\n\nFollow up.")
    # a word that only contains a marker is not one
    assert guard("enforce", scope).check_result("records", {}, "nonconfidential notes").allowed


def test_atom_keys_are_matched_like_fields() -> None:
    g = Guard(PolicyKB(tools=(ToolSpec(name="records", sink="record"),
                              ToolSpec(name="post", sink="external", free_text=("body",)))), mode="enforce")
    scope = AcquisitionScope(binding=ScopeBinding(atom_keys={"phone": "phone"}))
    with g.session(scopes={"records": scope}) as sess:
        g.check_result("records", {}, [{"Phone": "415-555-0102"}, {"phone_Number": "x"}, {"PHONE": "415-555-0103"}])
        assert sorted(a.type for a in sess.atoms) == ["phone", "phone"]
        assert g.check("post", {"body": "call 415-555-0102"}).blocked


def test_part_pattern_must_compile() -> None:
    with pytest.raises(ValidationError, match="a valid regular expression"):
        ScopeBinding(part_pattern="^## (?P<part>.+$")
    atoms = (PrivateAtom(id="n", type="person_name", value="Ann Lee"),)
    assert guard("enforce", SCOPE, atoms=atoms)  # a policy with a good pattern still loads


@pytest.mark.parametrize("text", ["[" * 200_000, "{\"a\": " * 50_000, "```\n" * 50_000,
                                  "| a |\n|---|---|\n" * 20_000, "x\n[" * 50_000],
                         ids=["brackets", "nested objects", "fences", "separators", "line-start brackets"])
def test_hostile_text_is_read_without_an_internal_error(text: str) -> None:
    d = guard("enforce").check_result("records", {}, text)
    assert d.blocked and d.error == UNAPPLIED  # withheld because it holds no record, not by a crash
