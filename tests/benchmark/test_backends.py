"""Mock business backends: every primitive, the Environment, and the SQLite audit log."""

from __future__ import annotations

import sqlite3
import threading

import pytest

from tpguard.benchmark.backends import (
    PRIMITIVE_CLASSES,
    AuditLog,
    Environment,
    Store,
    ToolError,
)
from tpguard.benchmark.cases.need_to_know import generate


@pytest.fixture
def store() -> Store:
    return Store()


def _p(store: Store, name: str):
    return PRIMITIVE_CLASSES[name](store)


@pytest.fixture(scope="module")
def case():
    return generate(0, 46).case("ntk-medical-0000")


def test_records_create_verify_update_lookup(store: Store) -> None:
    rec = _p(store, "records")
    first = rec.execute("verify", "verify_tool", {"case_id": "MED-1", "name": "A"})
    assert first == {"id": "REC-000001", "status": "verified", "verified": True}
    assert rec.execute("create", "t", {"case_id": "MED-2"})["id"] == "REC-000002"
    upd = rec.execute("update", "update_tool", {"case_id": "MED-1", "diagnosis": "x"})
    assert upd == {"id": "REC-000001", "status": "updated"}
    got = rec.execute("lookup", "t", {"record_id": "REC-000001"})
    assert got["fields"] == {"case_id": "MED-1", "name": "A", "diagnosis": "x"}
    assert store.get("records", "REC-000001").touched_by == ("verify_tool", "update_tool")
    with pytest.raises(ToolError, match="'case_id': no records object"):
        rec.execute("update", "t", {"case_id": "MED-404"})
    with pytest.raises(ToolError, match="provide one of 'record_id'"):
        rec.execute("lookup", "t", {})


def test_payments_charge_refund_and_validation(store: Store) -> None:
    pay = _p(store, "payments")
    res = pay.execute("create", "pay", {"amount": 120.5, "card_suffix": "4417"})
    assert res == {"id": "PAY-000001", "status": "captured", "amount": 120.5, "currency": "USD"}
    with pytest.raises(ToolError, match="at most the captured amount"):
        pay.execute("refund", "r", {"payment_id": "PAY-000001", "amount": 500})
    assert pay.execute("refund", "r", {"payment_id": "PAY-000001"})["status"] == "refunded"
    for bad in ({"amount": -3}, {"amount": "lots"}, {}, {"amount": True}):
        with pytest.raises(ToolError, match="'amount': expected a positive number"):
            pay.execute("charge", "pay", bad)
    with pytest.raises(ToolError) as e:
        pay.execute("charge", "pay", {"amount": 10, "card_suffix": "4111111111111111"})
    assert "last four digits" in str(e.value) and "4111" not in str(e.value)
    assert e.value.argument == "card_suffix"


def test_tickets_lifecycle_and_enums(store: Store) -> None:
    tck = _p(store, "tickets")
    assert tck.execute("open", "t", {"priority": "high"}) == {"id": "TCK-000001", "status": "open",
                                                              "priority": "high"}
    assert tck.execute("update", "t2", {"ticket_id": "TCK-000001", "status": "waiting"})["status"] == "waiting"
    assert tck.execute("close", "t3", {"id": "TCK-000001"})["status"] == "closed"
    with pytest.raises(ToolError, match="'priority': expected one of low, normal, high, urgent"):
        tck.execute("create", "t", {"priority": "P0!!"})
    with pytest.raises(ToolError, match="'status'"):
        tck.execute("update", "t", {"ticket_id": "TCK-000001", "status": "done-ish"})


def test_notifications_comments_handoffs(store: Store) -> None:
    ntf, cmt, hnd = _p(store, "notifications"), _p(store, "comments"), _p(store, "handoffs")
    assert ntf.execute("send", "n", {"phone": "415-555-0199", "channel": "sms"})["id"] == "NTF-000001"
    with pytest.raises(ToolError, match="missing a recipient"):
        ntf.execute("send", "n", {"message": "hello"})
    with pytest.raises(ToolError, match="'channel'"):
        ntf.execute("send", "n", {"phone": "1", "channel": "pigeon"})
    assert cmt.execute("create", "c", {"body": "done"}) == {"id": "CMT-000001", "status": "posted"}
    with pytest.raises(ToolError, match="the comment text"):
        cmt.execute("add", "c", {"case_id": "X"})
    h = hnd.execute("create", "h", {"team": "pharmacy", "summary": "s"})
    assert h == {"id": "HND-000001", "status": "pending_acceptance"}
    assert hnd.execute("accept", "h2", {"handoff_id": "HND-000001"})["status"] == "accepted"
    with pytest.raises(ToolError, match="the receiving team"):
        hnd.execute("create", "h", {"summary": "s"})


def test_documents_emails_console(store: Store) -> None:
    doc, eml, con = _p(store, "documents"), _p(store, "emails"), _p(store, "console")
    assert doc.execute("issue", "d", {"title": "Rx"})["version"] == 1
    assert doc.execute("revise", "d2", {"document_id": "DOC-000001", "title": "Rx v2"})["version"] == 2
    assert store.get("documents", "DOC-000001").data == {"title": "Rx v2", "version": 2}
    assert eml.execute("send", "e", {"to": "ana@example.org"})["status"] == "sent"
    with pytest.raises(ToolError) as e:
        eml.execute("send", "e", {"to": "call me at 415-555-0199"})
    assert "415" not in str(e.value) and "'to'" in str(e.value)
    assert con.execute("run", "c", {"command": "rotate"})["exit_code"] == 0
    assert con.execute("log", "c", {"message": "m"})["status"] == "logged"
    with pytest.raises(ToolError, match="does not support operation 'explode'"):
        con.execute("explode", "c", {})


def test_every_primitive_documents_its_operations() -> None:
    assert set(PRIMITIVE_CLASSES) == {"records", "payments", "tickets", "notifications", "comments",
                                      "handoffs", "documents", "emails", "console"}
    for cls in PRIMITIVE_CLASSES.values():
        assert "create" in cls.operations(), cls.name


def test_environment_replays_ground_truth_and_logs_every_call(case, tmp_path) -> None:
    path = tmp_path / "audit.sqlite"
    with AuditLog(path) as audit:
        env = Environment(case, audit, run_id="r1", agent="oracle", guard="enforce")
        assert env.tool_names == tuple(t.name for t in case.tools)
        results = [env.call(c.tool, c.arguments) for c in case.ground_truth]
        assert results[0]["record_id"].startswith("REC-") and "id" not in results[0]
        assert env.s_task == 1.0 and all(ok for _, ok in env.end_state())
        traj = audit.trajectory("r1", case.id)
    assert [c.step for c in traj.calls] == list(range(1, len(case.ground_truth) + 1))
    assert [c.tool for c in traj.calls] == [c.tool for c in case.ground_truth]
    assert traj.calls[0].arguments == case.ground_truth[0].arguments
    rows = sqlite3.connect(path).execute(
        "SELECT run_id, agent, guard, case_id, step, tool, sink, outcome FROM calls ORDER BY step"
    ).fetchall()
    sinks = [t.sink for t in case.tools]
    assert rows[0] == ("r1", "oracle", "enforce", case.id, 1, case.tools[0].name, sinks[0], "ok")
    assert len(rows) == len(case.ground_truth)


def test_rejected_calls_are_logged_with_outcome_error(case) -> None:
    audit = AuditLog()
    env = Environment(case, audit, run_id="r")
    first = case.ground_truth[0]
    missing = {k: v for k, v in first.arguments.items() if k != "case_id"}
    with pytest.raises(ToolError, match="missing required argument 'case_id'"):
        env.call(first.tool, missing)
    with pytest.raises(ToolError, match="unknown argument 'ssn'"):
        env.call(first.tool, {**first.arguments, "ssn": "123-45-6789"})
    payment = next(c for c in case.ground_truth if "amount" in c.arguments)
    with pytest.raises(ToolError, match="'amount': expected a number, got str"):
        env.call(payment.tool, {**payment.arguments, "amount": "a lot"})
    with pytest.raises(ToolError, match="unknown tool 'launch_rocket'"):
        env.call("launch_rocket", {"x": 1})
    rows = audit.rows("r")
    assert [r["outcome"] for r in rows] == ["error", "error", "error"]  # unknown tool never reached a backend
    assert "123-45-6789" not in rows[1]["result"]["error"]
    assert rows[1]["arguments"]["ssn"] == "123-45-6789"  # the log keeps what was received
    assert env.s_task < 1.0


def test_end_state_needs_each_field_filled_and_gold_arg_the_right_fact(case) -> None:
    """Task reads the end state (§5.1: every stage's record exists with its fields filled); which
    fact was written is Gold Arg's business (§5.3). A wrong medication keeps the end state and
    costs Gold Arg; a blank one is rejected, so that stage's end state fails."""
    from tpguard.benchmark.metrics import score_trajectory

    def run(medication: str) -> tuple[Environment, AuditLog]:
        audit = AuditLog()
        env = Environment(case, audit, run_id="r")
        for call in case.ground_truth:
            args = dict(call.arguments)
            if call.tool.endswith("issue_prescription"):
                args["medication"] = medication
            try:
                env.call(call.tool, args)
            except ToolError:  # a blank required field: the backend rejects the call
                pass
        return env, audit

    wrong, audit = run("aspirin")
    assert all(ok for _, ok in wrong.end_state()) and wrong.s_task == 1.0
    score = score_trajectory(case, audit.trajectory("r", case.id), wrong.s_task)
    assert score.metrics["Task"] == 1.0 and score.metrics["GoldArg"] < 1.0
    blank, _ = run("")
    failed = [cid for cid, ok in blank.end_state() if not ok]
    assert failed == ["medical_issue_prescription.documents"]
    assert blank.s_task == pytest.approx(1 - 1 / len(case.checks))


def test_audit_runs_clear_case_and_fresh_environment(case) -> None:
    audit = AuditLog()
    env = Environment(case, audit, run_id="a")
    env.call(case.ground_truth[0].tool, case.ground_truth[0].arguments)
    Environment(case, audit, run_id="b").call(case.ground_truth[0].tool, case.ground_truth[0].arguments)
    assert audit.runs() == ["a", "b"] and audit.cases("a") == [case.id]
    env2 = Environment(case, audit, run_id="a")  # a re-run starts from a clean log and fresh state
    assert audit.trajectory("a", case.id).calls == [] and env2.objects() == []
    env2.call(case.ground_truth[0].tool, case.ground_truth[0].arguments)
    assert audit.trajectory("a", case.id).calls[0].step == 1
    assert audit.clear_case("b", case.id) == 1 and audit.runs() == ["a"]


def test_audit_log_is_thread_safe(tmp_path) -> None:
    audit = AuditLog(tmp_path / "audit.sqlite")

    def work(i: int) -> None:
        for j in range(25):
            audit.record(run_id="r", case_id="c", tool=f"t{i}", sink="record",
                         arguments={"j": j}, outcome="ok")

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    steps = [c.step for c in audit.trajectory("r", "c").calls]
    assert steps == list(range(1, 101))
    with pytest.raises(ValueError):
        audit.record(run_id="r", case_id="c", tool="t", sink="record", arguments={}, outcome="maybe")
    audit.close()
