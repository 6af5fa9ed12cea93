"""No silent skip, nothing unbounded: hostile arguments fail closed in enforce/redact and are
allowed-but-recorded in audit, with a value-free error naming the limit."""

from __future__ import annotations

import collections
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tpguard import Guard, PolicyKB
from tpguard.detect._limits import Limits
from tpguard.testing import SpanCapture

NAME = "Maria Gonzalez"


@pytest.fixture(scope="module")
def policy(healthcare_policy_path: Path) -> PolicyKB:
    return PolicyKB.from_file(healthcare_policy_path)


class BadStr:
    def __str__(self) -> str:
        raise RuntimeError(NAME)

    __repr__ = __str__


def _deep(n: int) -> Any:
    root: list[Any] = []
    cur = root
    for _ in range(n):
        nxt: list[Any] = []
        cur.append(nxt)
        cur = nxt
    cur.append(NAME)
    return root


def _cycle_twice() -> dict[str, Any]:
    d: dict[str, Any] = {"summary": "hello"}
    d["a"] = d
    d["b"] = d
    return d


def _gen() -> Any:
    yield NAME


HOSTILE: dict[str, tuple[Callable[[], Any], str]] = {
    "10 MB string": (lambda: {"summary": "x " * 5_000_000}, "limit:max_text"),
    "10,000-deep nesting": (lambda: {"summary": _deep(10_000)}, "limit:max_depth"),
    "self-referencing dict (twice)": (_cycle_twice, "cycle"),
    "object whose __str__ raises": (lambda: {"summary": BadStr()}, "unreadable:BadStr"),
    "deque": (lambda: {"summary": collections.deque([NAME])}, "unreadable:deque"),
    "generator": (lambda: {"summary": _gen()}, "unreadable:generator"),
    "set": (lambda: {"summary": {NAME}}, "unreadable:set"),
    "5,000-digit integer": (lambda: {"summary": 10**4999}, "unreadable:int"),
    "too many values": (lambda: {"items": list(range(150_000))}, "limit:max_leaves"),
}


@pytest.mark.parametrize("case", list(HOSTILE))
@pytest.mark.parametrize("mode", ["audit", "enforce", "redact"])
def test_hostile_arguments(policy: PolicyKB, case: str, mode: str, tpguard_spans: SpanCapture,
                           caplog: pytest.LogCaptureFixture) -> None:
    make, code = HOSTILE[case]
    args = make()
    g = Guard(policy, mode=mode, tracer_provider=tpguard_spans.provider)  # type: ignore[arg-type]
    start = time.perf_counter()
    with g.intercept("team_handoff", args) as call:
        d = call.decision
    assert time.perf_counter() - start < 20  # no hang
    assert d.error == code
    if mode == "audit":
        assert d.action == "allow" and d.arguments is args
    else:
        assert d.blocked and d.message
        assert "tpguard could not read this call" in d.message
    attrs = tpguard_spans.tool_spans()[0].attributes or {}
    assert attrs["tpguard.error"] == code
    assert NAME not in (d.message or "") and NAME not in caplog.text
    assert NAME not in tpguard_spans.dump()


def test_generator_is_not_consumed(policy: PolicyKB) -> None:
    gen = _gen()
    assert Guard(policy, mode="enforce").check("team_handoff", {"summary": gen}).blocked
    assert next(gen) == NAME


def test_message_names_the_limit(policy: PolicyKB) -> None:
    g = Guard(policy, mode="enforce", limits=Limits(max_depth=3))
    d = g.check("team_handoff", {"summary": [[[["deep"]]]]})
    assert d.blocked and d.error == "limit:max_depth"
    assert "argument nesting deeper than 3 levels" in (d.message or "")
    assert g.check("team_handoff", {"summary": [["ok"]]}).action == "allow"


def test_a_finding_past_the_limit_is_still_recorded_in_audit(policy: PolicyKB) -> None:
    d = Guard(policy, mode="audit", limits=Limits(max_depth=4)).check(
        "team_handoff", {"summary": f"{NAME} again", "deep": _deep(10)})
    assert d.error == "limit:max_depth" and [f.atom_id for f in d.forbidden] == ["name"]


@pytest.mark.parametrize("data", [NAME.encode(), bytearray(NAME.encode()), memoryview(NAME.encode()),
                                  b"\xff\xfe" + NAME.encode() + b"\xc3"])
def test_bytes_are_decoded_and_scanned(policy: PolicyKB, data: Any) -> None:
    d = Guard(policy, mode="enforce").check("team_handoff", {"extra": data})
    assert d.blocked and d.error is None and [f.path for f in d.forbidden] == ["extra"]
    red = Guard(policy, mode="redact").check("team_handoff", {"summary": data})
    assert red.redacted and b"[PERSON_NAME_1]" in bytes(red.arguments["summary"])
    assert NAME.encode() not in bytes(red.arguments["summary"])


def test_shared_subtrees_are_read_each_time(policy: PolicyKB) -> None:
    shared = {"summary": NAME}
    d = Guard(policy, mode="audit").check("team_handoff", {"a": shared, "b": shared})
    assert d.error is None and {f.path for f in d.findings} == {"a.summary", "b.summary"}


def test_limits_are_validated() -> None:
    with pytest.raises(ValueError, match="max_depth"):
        Limits(max_depth=0)
