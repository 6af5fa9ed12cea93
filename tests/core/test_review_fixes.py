"""Regressions found by the end-of-session review of issue 28's stages.

- a result whose dict *key* holds an atom: the finding path shows the key's placeholder, so the
  value reaches neither ``Decision.findings`` nor the span (the request and exit stages already
  masked keys);
- a recipient argument that is one long run without ``@`` is read in linear time (the address
  pattern was retried from every position);
- markup read as rendered does not compare every rendered finding with every written one;
- the memory rewrite of a blocked call keeps no raw key beside its placeholder.
"""

from __future__ import annotations

import re
import time

from tpguard import Detector, Guard, PolicyKB, PrivateAtom, ToolSpec
from tpguard.adapters._rewrite import changed_leaves, placed_arguments
from tpguard.policy.exposure import _ADDRESS
from tpguard.stages.exits import read_as_shown
from tpguard.testing import SpanCapture

EMAIL = PrivateAtom(id="email", type="email", value="ann.lee@example.org")
CARD = PrivateAtom(id="card", type="card_suffix", value="4417")
TOOL = ToolSpec(name="lookup", purpose="look up an order", sink="record")


def test_a_result_key_that_holds_an_atom_is_shown_as_its_placeholder() -> None:
    capture = SpanCapture()
    guard = Guard(PolicyKB(atoms=(EMAIL,), tools=(TOOL,)), mode="audit", tracer_provider=capture.provider)
    with guard.session(), guard.intercept("lookup", {}) as call:
        call.check_result({"ann.lee@example.org": {"orders": 2}})
        decision = call.result_decision
    assert decision is not None
    assert decision.findings, "the key's atom is found"
    assert all("ann.lee" not in f.path for f in decision.findings)
    assert any("[EMAIL" in f.path for f in decision.findings)
    [span] = capture.tool_spans()
    assert "ann.lee" not in repr(dict(span.attributes or {})), "no value through a path into the span"


def test_a_long_recipient_run_without_an_address_is_linear() -> None:
    assert _ADDRESS.findall("Ann <ann@x.org>, bob@y.com") == ["ann@x.org", "bob@y.com"]
    # the unanchored pattern took ~1.4 s on 20k characters and grew quadratically
    started = time.process_time()
    assert _ADDRESS.findall("a" * 200_000) == []
    assert time.process_time() - started < 1.0


def test_rendered_findings_are_merged_without_a_pairwise_walk() -> None:
    compared = 0

    class Counting(list):  # a written finding list that counts how often it is walked
        def __iter__(self):  # type: ignore[no-untyped-def]
            nonlocal compared
            compared += 1
            return super().__iter__()

    detector = Detector((CARD,))
    text = "<td>4417</td>" * 2000

    def scan(t: str, path: str, free: bool) -> list:  # type: ignore[type-arg]
        return Counting(detector.scan_text(t, path=path, free_text=free))

    found = read_as_shown(scan)(text, "", True)
    assert len(found) == 2000 and compared <= 3


def test_the_placeholder_call_replaces_a_renamed_key_in_place() -> None:
    original = {"to_id": "7", "ann.lee@example.org": "hi", "note": "call 4417"}
    checked = {"ann.lee@example.org": "hi", "note": "call 4417"}
    placeholder = {"[EMAIL_1]": "hi", "note": "call [CARD_SUFFIX_1]"}
    placed = placed_arguments(original, checked, placeholder)
    assert placed == {"to_id": "7", "[EMAIL_1]": "hi", "note": "call [CARD_SUFFIX_1]"}
    assert list(placed) == ["to_id", "[EMAIL_1]", "note"]
    assert not any(re.search("ann.lee", k) for k in placed)
    assert ("ann.lee@example.org", "[EMAIL_1]") in list(changed_leaves(original, placed))


def test_a_field_name_that_is_a_value_is_named_by_position() -> None:
    from tpguard import AcquisitionScope

    scope = AcquisitionScope(fields=("note",))
    spec = ToolSpec(name="lookup", purpose="look up an order", sink="record", scope=scope)
    guard = Guard(PolicyKB(tools=(spec,)), mode="enforce")
    text = "note,DOB 1980-01-01,ann.lee@example.org\nfollow-up,x,y\n"
    decision = guard.check_result("lookup", {}, text)
    said = " ".join([decision.message or "", *(f.path for f in decision.scope)])
    assert "1980" not in said and "ann.lee" not in said
    assert "#2" in said and decision.action in ("redact", "block")
