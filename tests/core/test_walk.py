"""One walk per call: dict keys scanned and shown as placeholders; rewrites rebuilt in one pass."""

from __future__ import annotations

import dataclasses
import json
from collections import namedtuple
from pathlib import Path

import pytest
from pydantic import BaseModel, ConfigDict
from typer.testing import CliRunner

from tpguard import Guard, PolicyKB, PrivateAtom
from tpguard.cli import app
from tpguard.detect._walk import iter_leaves, replace_at, walk
from tpguard.testing import SpanCapture

NAME, PHONE = "Maria Gonzalez", "415-555-0199"


@pytest.fixture
def policy(healthcare_policy_path: Path) -> PolicyKB:
    return PolicyKB.from_file(healthcare_policy_path)


@pytest.mark.parametrize("mode", ["enforce", "redact"])
def test_an_atom_as_a_dict_key_is_found_and_never_echoed(policy: PolicyKB, mode: str) -> None:
    d = Guard(policy, mode=mode).check("team_handoff", {"extra": {NAME: "x"}})  # type: ignore[arg-type]
    assert d.blocked and [f.atom_id for f in d.forbidden] == ["name"]
    assert d.forbidden[0].path == "extra.[PERSON_NAME_1]"
    assert "extra.[PERSON_NAME_1]" in (d.message or "")
    assert "Maria" not in (d.message or "") and "Maria" not in json.dumps(d.to_dict())


def test_children_of_an_atom_key_carry_its_placeholder(policy: PolicyKB) -> None:
    d = Guard(policy, mode="audit").check("team_handoff", {"by_name": {NAME: {"phone": PHONE}}})
    assert {f.path for f in d.findings} == {"by_name.[PERSON_NAME_1]", "by_name.[PERSON_NAME_1].phone"}


def test_audit_span_and_cli_carry_no_raw_key(
    policy: PolicyKB, healthcare_policy_path: Path, tpguard_spans: SpanCapture
) -> None:
    g = Guard(policy, mode="audit", tracer_provider=tpguard_spans.provider, record_arguments="redacted")
    with g.intercept("team_handoff", {"extra": {NAME: "x", "ok": "fine"}}):
        pass
    dump = tpguard_spans.dump()
    assert "Maria" not in dump and "<person_name>" in dump
    attrs = tpguard_spans.tool_spans()[0].attributes or {}
    assert list(attrs["tpguard.forbidden.fields"]) == ["extra.[PERSON_NAME_1]"]
    res = CliRunner().invoke(app, ["check", "-p", str(healthcare_policy_path), "-t", "team_handoff",
                                   "-a", json.dumps({"extra": {NAME: "x"}}), "--json"])
    assert res.exit_code == 1 and "Maria" not in res.output and "[PERSON_NAME_1]" in res.output


def test_redact_rewrites_a_key_inside_a_free_text_slot(policy: PolicyKB) -> None:
    args = {"summary": {NAME: "allergic to penicillin", "note": "call back"}}
    d = Guard(policy, mode="redact").check("team_handoff", args)
    assert d.redacted
    assert d.arguments == {"summary": {"[PERSON_NAME_1]": "allergic to penicillin", "note": "call back"}}
    # the same key where it is structure (not under a free-text slot) blocks
    assert Guard(policy, mode="redact").check("team_handoff", {"extra": {NAME: "x"}}).blocked
    assert args["summary"][NAME] == "allergic to penicillin"  # the caller's object is untouched


def test_redact_blocks_when_rewritten_keys_would_collide(policy: PolicyKB) -> None:
    d = Guard(policy, mode="redact").check("team_handoff", {"summary": {NAME: "a", "maria gonzalez": "b"}})
    assert d.blocked and "same after redaction" in (d.message or "") and "aria" not in (d.message or "")


class Item(BaseModel):
    model_config = ConfigDict(extra="allow")
    summary: str
    qty: int = 1


@dataclasses.dataclass(frozen=True)
class Box:
    summary: str
    tags: tuple[str, ...] = ()


Pair = namedtuple("Pair", "summary other")


def test_rebuild_keeps_shapes_and_shares_what_did_not_change(policy: PolicyKB) -> None:
    untouched = {"deep": ["keep"]}
    args = {
        "items": [Item(summary=f"for {NAME}", secret_note=f"call {PHONE}")],  # type: ignore[call-arg]
        "box": Box(summary=f"{NAME} ok", tags=("a",)),
        "pair": Pair(f"x {PHONE}", "y"),
        "raw": {"summary": f"{NAME}".encode()},
        "other": untouched,
    }
    g = Guard(policy, mode="audit")
    d = g.check("team_handoff", args)
    assert {f.path for f in d.findings} >= {"items[0].summary", "items[0].secret_note", "box.summary",
                                            "pair[0]", "raw.summary"}
    red = Guard(policy, mode="redact").check(
        "team_handoff", {k: v for k, v in args.items() if k in ("box", "raw", "other")})
    assert red.redacted
    out = red.arguments
    assert out["box"] == Box(summary="[PERSON_NAME_1] ok", tags=("a",))
    assert out["raw"] == {"summary": b"[PERSON_NAME_1]"} and out["other"] is untouched


def test_table_paths_and_compat_helpers() -> None:
    args = {"a": [1, {"b": "x"}], "c": (True, None, 2.5)}
    table = walk(args, free_text=("b",))
    values = [(leaf.path, leaf.text, leaf.free_text) for leaf in table.leaves if not leaf.is_key]
    assert values == [("a[0]", "1", False), ("a[1].b", "x", True), ("c[2]", "2.50", False)]
    assert [leaf.text for leaf in table.leaves if leaf.is_key] == ["a", "c", "b"]
    assert list(iter_leaves(args)) == [("a[0]", "a", "1"), ("a[1].b", "b", "x"), ("c[2]", "c", "2.50")]
    assert replace_at(args, {"a[1].b": "y"}) == {"a": [1, {"b": "y"}], "c": (True, None, 2.5)}
    assert args["a"][1] == {"b": "x"}


def test_redact_of_ten_thousand_leaves_is_linear(policy: PolicyKB) -> None:
    g = Guard(policy, mode="redact")
    args = {"items": [{"summary": f"item {i} for {NAME}"} for i in range(10_000)]}
    d = g.check("team_handoff", args)
    assert d.redacted and sum(f.atom_id == "name" for f in d.forbidden) == 10_000
    assert "and 9990 more" in (d.message or "")  # messages stay short
    assert d.arguments["items"][9_999]["summary"] == "item 9999 for [PERSON_NAME_1]"


def test_keys_known_clean_are_left_out_of_the_table_but_not_out_of_the_call(
    policy: PolicyKB, tpguard_spans: SpanCapture,
) -> None:
    # A key the base layer already scanned clean is not a leaf again (it would only be scanned
    # again); the call is rebuilt, rendered and decided exactly as on the first, full walk.
    g = Guard(policy, mode="redact", tracer_provider=tpguard_spans.provider, record_arguments="redacted")
    args = {"summary": f"call {PHONE} today", "priority": 2, "urgent": True}
    first = g.check("team_handoff", args)
    clean = g.current_session.known_clean()
    assert clean is not None and "summary" in clean and "priority" in clean and "never seen" not in clean
    table = walk(args, ("summary",), clean=clean)
    assert [leaf.text for leaf in table.leaves] == [f"call {PHONE} today", "2"]  # values only
    assert table.rebuild({0: "call [PHONE_1] today"}) == {**args, "summary": "call [PHONE_1] today"}
    assert json.loads(json.dumps(table.jsonable({}))) == {**args, "priority": 2}
    for _ in range(2):
        with g.intercept("team_handoff", args) as call:
            pass
        assert call.decision.to_dict() == first.to_dict()
        assert call.decision.arguments == {**args, "summary": "call [PHONE_1] today"}
    a, b = (s.attributes or {} for s in tpguard_spans.tool_spans())
    assert a["tpguard.arguments"] == b["tpguard.arguments"] and '"summary"' in a["tpguard.arguments"]


def test_a_key_clean_for_the_policy_is_still_scanned_for_session_atoms(policy: PolicyKB) -> None:
    g = Guard(policy, mode="enforce")
    assert g.check("team_handoff", {"Ana Reyes": "x"}).allowed  # the key is now known clean …
    assert g.current_session.known_clean() is not None
    with g.session(atoms=[PrivateAtom(id="guest", type="person_name", value="Ana Reyes")]) as s:
        assert s.known_clean() is None  # … for the policy only: an overlay scans every key
        d = g.check("team_handoff", {"Ana Reyes": "x"})
    assert d.blocked and d.forbidden[0].path == "[PERSON_NAME_1]"
