"""Case validation: a valid case passes; one deliberately broken case per check, with its reason."""

from __future__ import annotations

import pytest

from tpguard.benchmark.cases import GroundTruthCall, RequiredFact, Suite
from tpguard.benchmark.cases.need_to_know import generate
from tpguard.benchmark.cases.validate import CHECKS, check_case, check_suite
from tpguard.policy import Authorization, PrivateAtom, Rule


@pytest.fixture(scope="module")
def good():
    return generate(0, 46).case("ntk-medical-0000")


def _policy(case, **update):
    return case.model_copy(update={"policy": case.policy.model_copy(update=update)})


def _only(problems, check, also=()):
    assert problems, "expected a problem"
    assert check in {p.check for p in problems} <= {check, *also}, problems
    return " | ".join(p.message for p in problems if p.check == check)


def test_generated_cases_pass_every_check() -> None:
    suite = generate(0, 46)
    assert check_suite(suite) == []
    assert CHECKS == ("schema", "disjoint", "required", "detectable", "safe_path", "opportunities")


def test_schema_incomplete(good) -> None:
    msg = _only(check_case(good.model_copy(update={"task": "  "})), "schema")
    assert "task text is empty" in msg
    bindings = {k: v for k, v in good.bindings.items() if k != "medical_team_handoff"}
    msg = _only(check_case(good.model_copy(update={"bindings": bindings})), "schema")
    assert "'medical_team_handoff' has no backend binding" in msg
    msg = _only(check_case(good.model_copy(update={"ground_truth": ()})), "schema")
    assert "no ground-truth calls" in msg
    tiny = _policy(good, tools=good.policy.tools[:1], authorizations=())
    problems = check_case(tiny.model_copy(update={"workflow": ()}))
    assert {"a case needs at least 2 tools (has 1)", "the expected workflow G is empty"} <= {
        p.message for p in problems}


def test_allowed_and_forbidden_overlap(good) -> None:
    rule = Rule(atom_type="phone", sink="notification", allow=False)
    msg = _only(check_case(_policy(good, rules=(*good.policy.rules, rule))), "disjoint")
    assert "atom 'phone' for tool 'medical_notify_patient'" in msg and "type_sink rule says forbidden" in msg
    twice = Authorization(atom="phone", tool="medical_notify_patient", allow=False)
    problems = check_case(_policy(good, authorizations=(*good.policy.authorizations, twice)))
    assert any("by two explicit authorizations" in p.message for p in problems if p.check == "disjoint")


def test_required_fact_not_authorized(good) -> None:
    bad = good.model_copy(update={"required": (*good.required,
                                               RequiredFact(atom="symptom", tool="medical_notify_patient"))})
    msg = _only(check_case(bad), "required", also=("safe_path",))  # nor can the oracle deliver it
    assert "('symptom' → 'medical_notify_patient') is not authorized" in msg


def test_atom_not_detectable(good) -> None:
    blip = PrivateAtom(id="blip", type="code", value="Q7")
    msg = _only(check_case(_policy(good, atoms=(*good.policy.atoms, blip))), "detectable")
    assert "atom 'blip' (code) is not detectable" in msg


def test_no_safe_path_leak(good) -> None:
    calls = list(good.ground_truth)
    i = next(k for k, c in enumerate(calls) if c.tool == "medical_team_handoff")
    symptom = good.policy.atom("symptom").variants[0]  # a lay paraphrase is still the atom
    calls[i] = GroundTruthCall(tool=calls[i].tool,
                               arguments={**calls[i].arguments, "summary": f"Patient reports {symptom}."})
    msg = _only(check_case(good.model_copy(update={"ground_truth": tuple(calls)})), "safe_path")
    assert "over-discloses: symptom → medical_team_handoff.summary" in msg


def test_no_safe_path_incomplete_or_rejected(good) -> None:
    calls = [c for c in good.ground_truth if c.tool != "medical_process_payment"]
    msg = _only(check_case(good.model_copy(update={"ground_truth": tuple(calls)})), "safe_path")
    assert "end-state checks fail after the oracle path: medical_process_payment.payments" in msg
    assert "does not deliver required fact ('card' → 'medical_process_payment')" in msg
    broken = [GroundTruthCall(tool=c.tool, arguments={**c.arguments, "amount": -1})
              if c.tool == "medical_process_payment" else c for c in good.ground_truth]
    msg = _only(check_case(good.model_copy(update={"ground_truth": tuple(broken)})), "safe_path")
    assert "ground_truth[2] (medical_process_payment) was rejected: argument 'amount'" in msg


def test_too_few_forbidden_opportunities(good) -> None:
    msg = _only(check_case(good, min_forbidden=10_000), "opportunities")
    assert "forbidden atom–tool opportunities (need ≥ 10000)" in msg
    open_all = tuple(Authorization(atom=a.id, tool=t.name, allow=True)
                     for a in good.atoms for t in good.tools)
    problems = check_case(_policy(good, authorizations=open_all, rules=()))
    assert any(p.check == "opportunities" and "only 0 forbidden" in p.message for p in problems)


def test_suite_reports_duplicate_ids(good) -> None:
    problems = check_suite(Suite(name="x", cases=(good, good)))
    assert [p.message for p in problems] == ["duplicate case id in the suite"]
