"""Taint that stays with its request and costs O(1) amortized (issue 28, item 4)."""

from __future__ import annotations

import logging
import math
from collections.abc import Iterable

import pytest

from tpguard import AcquisitionScope, Guard, PolicyKB, PrivateAtom, ScopeBinding, ToolSpec
from tpguard.detect.detector import Detector

SCOPE = AcquisitionScope(binding=ScopeBinding(atom_keys={"phone": "phone"}))
TOOLS = (ToolSpec(name="query", sink="record", scope=SCOPE),
         ToolSpec(name="post", purpose="post to the forum", sink="external", free_text=("body",)))
ANN_PHONE, BOB_PHONE = "415-555-0101", "415-555-0102"


def make() -> Guard:
    return Guard(PolicyKB(tools=TOOLS), mode="enforce")


def test_outside_a_session_taint_is_refused_never_guard_wide(caplog: pytest.LogCaptureFixture) -> None:
    g = make()
    with caplog.at_level(logging.WARNING, logger="tpguard"):
        d = g.check_result("query", {}, [{"id": "a", "phone": ANN_PHONE}])  # user A, no session
        g.check_result("query", {}, [{"id": "a2", "phone": "415-555-0109"}])
    assert d.allowed
    # user B (no session, or their own) may name the number: it is not a guard-wide atom
    assert g.check("post", {"body": f"call {ANN_PHONE}"}).allowed
    with g.session():
        assert g.check("post", {"body": f"call {ANN_PHONE}"}).allowed
    assert not g.current_session.atoms
    refusals = [r for r in caplog.records if "not registered as tainted atoms" in r.getMessage()]
    assert len(refusals) == 1 and "guard.session()" in refusals[0].getMessage()  # once per tool
    assert ANN_PHONE not in caplog.text


def test_taint_lives_in_its_session_and_ends_with_it() -> None:
    g = make()
    with g.session() as a:
        g.check_result("query", {}, [{"id": "a", "phone": ANN_PHONE}], call_id="c1")
        assert g.check("post", {"body": f"call {ANN_PHONE}"}).blocked
        with g.session() as inner:  # an inner session sees it, and reuses its id for the same value
            g.check_result("query", {}, [{"id": "a", "phone": ANN_PHONE}, {"id": "b", "phone": BOB_PHONE}])
            ids = sorted(x.id for x in inner._own.values())
            assert ids == ["query.phone#2"]  # Bob's: numbered after Ann's #1, never a second #1
            assert g.check("post", {"body": f"call {ANN_PHONE} or {BOB_PHONE}"}).blocked
        assert g.check("post", {"body": f"call {BOB_PHONE}"}).allowed  # the inner one's ended
        assert [x.id for x in a._own.values()] == ["query.phone#1"]
    with g.session():  # user B's request: nothing of A's
        assert g.check("post", {"body": f"call {ANN_PHONE}"}).allowed


def test_registration_is_incremental_not_a_rebuild_per_result() -> None:
    """n results each bring one new atom: the old overlay recompiled every tainted atom on every
    scan after a change (n²/2 atom compilations); levels compile each atom O(log n) times."""
    g = make()
    compiled: list[int] = []

    def overlay(atoms: Iterable[PrivateAtom]) -> Detector:
        atoms = list(atoms)
        compiled.append(len(atoms))
        return Detector(atoms, fuzzy=False)

    g._overlay = overlay  # type: ignore[method-assign]
    n = 600
    with g.session() as sess:
        for i in range(n):
            g.check_result("query", {}, [{"id": f"r{i}", "phone": f"415-{i // 100:03d}-{i % 10000:04d}"}])
        assert g.check("post", {"body": "call 415-005-0599"}).blocked
        assert sum(compiled) <= 12 * n, sum(compiled)  # was n²/2 = 180,000
        levels = sess._overlay[0]  # type: ignore[index]
        assert sum(len(d.atoms) for d in levels) == n
        assert len(levels) <= math.ceil(math.log(n, 4)) + 1  # a scan runs over ~log₄ n detectors
