"""The acquisition stage in the core: every scope dimension on results, per mode (issue 10)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tpguard import AcquisitionScope, Guard, PolicyKB, PrivateAtom, ScopeBinding, ToolSpec
from tpguard.stages.results import PARA_WITHHELD, PART_WITHHELD

RECORDS = [
    {"id": "r1", "patient": "P-1", "name": "Ann Lee", "phone": "415-555-0101",
     "diagnosis": "asthma", "visit": "2024-03-02"},
    {"id": "r2", "patient": "P-2", "name": "Bob Ray", "phone": "415-555-0102",
     "diagnosis": "hepatitis B", "visit": "2024-03-05"},
    {"id": "r3", "patient": "P-1", "name": "Ann Lee", "phone": "415-555-0101",
     "diagnosis": "influenza", "visit": "2023-01-09"},
    {"id": "r4", "patient": "P-1", "name": "Ann Lee", "phone": "415-555-0101",
     "diagnosis": "CONFIDENTIAL - psychiatric referral", "visit": "2024-04-01"},
]
BINDING = ScopeBinding(subject_key="patient", date_key="visit", source_key="source",
                       part_key="sheet", part_pattern=r"^## (?P<part>.+)$")
DOC = ("Clinic handbook\n\n## Visit summary\nAnn came in for asthma.\n\n"
       "CONFIDENTIAL: Ann disclosed a psychiatric history.\n\nFollow up in 2 weeks.\n"
       "## Billing\nCard on file ends 4417.\n")


def guard(mode: str, scope: AcquisitionScope, **kw: Any) -> Guard:
    spec = ToolSpec(name="records", purpose="look up the patient's visits", sink="record", scope=scope)
    return Guard(PolicyKB(tools=(spec,), **kw), mode=mode)  # type: ignore[arg-type]


# (scope fields, result, what redact keeps, dimension)
CASES: dict[str, tuple[dict[str, Any], Any, Any, str]] = {
    "fields": ({"fields": ["name", "visit"]}, RECORDS[0],
               {"id": "r1", "patient": "P-1", "name": "Ann Lee", "visit": "2024-03-02"}, "field"),
    "subjects": ({"subjects": ["P-1"]}, RECORDS[:2], RECORDS[:1], "subject"),
    "window": ({"since": "2024-01-01", "until": "2024-12-31"}, RECORDS[:3:2], RECORDS[:1], "window"),
    "parts": ({"parts": ["Visits"]}, [{"id": "a", "sheet": "Visits"}, {"id": "b", "sheet": "Salaries"}],
              [{"id": "a", "sheet": "Visits"}], "part"),
    "source": ({"sources": ["ehr"]}, [{"id": "a", "source": "EHR"}, {"id": "b", "source": "hr_db"}],
               [{"id": "a", "source": "EHR"}], "source"),
    "confidential": ({}, [RECORDS[0], RECORDS[3]], [RECORDS[0]], "confidential"),
}


@pytest.mark.parametrize("name", CASES)
def test_each_dimension_per_mode(name: str) -> None:
    fields, result, kept, dimension = CASES[name]
    scope = AcquisitionScope(binding=BINDING, **fields)
    audit = guard("audit", scope).check_result("records", {}, result)
    assert audit.stage == "result" and audit.action == "allow" and audit.arguments is result
    assert {f.dimension for f in audit.scope} == {dimension}
    redact = guard("redact", scope).check_result("records", {}, result)
    assert redact.action == "redact" and redact.arguments == kept
    assert redact.message is not None and redact.message.startswith("tpguard removed")
    enforce = guard("enforce", scope).check_result("records", {}, result)
    assert enforce.blocked and enforce.message and "outside this task's scope" in enforce.message
    for d in (audit, redact, enforce):  # no value ever reaches a message or a finding description
        text = json.dumps(d.to_dict())
        for value in ("Bob Ray", "415-555-0102", "hepatitis", "psychiatric", "Salaries"):
            assert value not in text, (name, value)
    # an in-scope result passes every mode untouched
    ok = guard("enforce", scope).check_result("records", {}, kept)
    assert ok.action == "allow" and ok.arguments is kept and not ok.scope


def test_text_parts_and_confidential_paragraphs() -> None:
    scope = AcquisitionScope(parts=["Visit summary"], binding=BINDING)
    d = guard("redact", scope).check_result("records", {"path": "handbook.docx"}, DOC)
    assert d.action == "redact"
    assert d.arguments == ("Clinic handbook\n\n## Visit summary\nAnn came in for asthma.\n\n"
                           f"{PARA_WITHHELD}\n\nFollow up in 2 weeks.\n{PART_WITHHELD}\n")
    assert sorted(f.dimension for f in d.scope) == ["confidential", "part"]
    audit = guard("audit", scope).check_result("records", {}, DOC)
    assert audit.arguments == DOC and len(audit.scope) == 2
    assert guard("enforce", scope).check_result("records", {}, DOC).blocked
    # confidential=True admits marked items
    lax = AcquisitionScope(parts=["Visit summary", "Billing"], confidential=True, binding=BINDING)
    assert guard("redact", lax).check_result("records", {}, DOC).arguments == DOC


def test_out_of_scope_source_refuses_the_whole_result() -> None:
    scope = AcquisitionScope(sources=["visits.xlsx"], binding=ScopeBinding(source_arg="path"))
    args = {"path": "salaries.xlsx"}
    for mode in ("enforce", "redact"):
        d = guard(mode, scope).check_result("records", args, "Name,Salary\nAnn,90000\n")
        assert d.blocked and d.message and "1 items of another source" in d.message
        assert "90000" not in d.message and "salaries" not in d.message
    audit = guard("audit", scope).check_result("records", args, "x")
    assert audit.allowed and [f.dimension for f in audit.scope] == ["source"]


def test_json_text_results_are_filtered_as_records() -> None:
    scope = AcquisitionScope(subjects=["P-1"], fields=["name"], binding=BINDING)
    d = guard("redact", scope).check_result("records", {}, json.dumps(RECORDS[:2]))
    kept = [{"id": "r1", "patient": "P-1", "name": "Ann Lee", "visit": "2024-03-02"}]  # + structural keys
    assert json.loads(d.arguments) == kept
    # a result wrapped in an object: the list under a root key is the record set
    wrapped = {"count": 2, "records": RECORDS[:2]}
    d = guard("redact", scope).check_result("records", {}, wrapped)
    assert d.arguments == {"count": 2, "records": kept}


def test_out_of_scope_atoms_in_text_become_placeholders() -> None:
    atoms = (PrivateAtom(id="name", type="person_name", value="Ann Lee"),
             PrivateAtom(id="card", type="card_suffix", value="4417"))
    scope = AcquisitionScope(atoms=["person_name"])
    g = guard("redact", scope, atoms=atoms)
    d = g.check_result("records", {}, "Ann Lee paid with the card ending 4417.")
    assert d.arguments == "Ann Lee paid with the card ending [CARD_SUFFIX_1]."
    assert [f.atom_id for f in d.forbidden] == ["card"] and [f.dimension for f in d.scope] == ["atom"]


def test_session_scope_overrides_the_policy_scope_and_nests() -> None:
    g = guard("redact", AcquisitionScope(subjects=["P-2"], binding=BINDING))
    assert g.check_result("records", {}, RECORDS[:2]).arguments == [RECORDS[1]]
    with g.session(scopes={"records": {"subjects": ["P-1"], "binding": {"subject_key": "patient"}}}):
        with g.session():
            assert g.check_result("records", {}, RECORDS[:2]).arguments == [RECORDS[0]]


def test_unscoped_tools_only_record_provenance() -> None:
    atoms = (PrivateAtom(id="name", type="person_name", value="Ann Lee"),)
    g = Guard(PolicyKB(atoms=atoms), mode="enforce")
    with g.session() as sess:
        d = g.check_result("lookup", {}, {"who": "Ann Lee"}, call_id="c9")
        assert d.action == "allow" and [f.atom_id for f in d.findings] == ["name"]
        assert [tuple(p) for p in sess.provenance("name")] == [("lookup", "c9")]


def test_internal_errors_fail_closed_and_open() -> None:
    scope = AcquisitionScope(binding=BINDING)

    class Boom(dict):  # a result whose items raise when read
        def items(self):  # type: ignore[override]
            raise RuntimeError("x")

    enforce = guard("enforce", scope).check_result("records", {}, Boom(a=1))
    assert enforce.blocked and enforce.error
    assert guard("audit", scope).check_result("records", {}, Boom(a=1)).allowed
