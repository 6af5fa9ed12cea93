"""No slow path (issue 28, item 7): text written to be slow costs what any text costs.

Guards by counting work, never by the clock (the machine is shared): each recipe of the
adversarial series (``tpguard bench perf``) must not make the detection core repeat work per
occurrence — a fuzzy alignment per repeated window, an Auth verdict per repeated atom, a token
decode per repeated escape — and the column paths for many hits must find exactly what the per-hit
loops find.
"""

from __future__ import annotations

from typing import Any

import pytest

from tpguard import Detector, Guard, PolicyKB, PrivateAtom, ToolSpec
from tpguard.detect import _bulk, _fuzzy_index, _norm_builder
from tpguard.detect._normalize import normalize
from tpguard.policy import exposure
from tpguard.stages import session as _session

NAME = PrivateAtom(id="name", type="person_name", value="Maria Gonzalez")
PLAN = PrivateAtom(id="plan", type="insurance", value="Blue Shield PPO")
CARD = PrivateAtom(id="card", type="card_suffix", value="4417")
PHONE = PrivateAtom(id="phone", type="phone", value="415-555-0199")
ATOMS = (NAME, PLAN, CARD, PHONE)
TOOL = ToolSpec(name="export", purpose="export", sink="document", free_text=("note",))
N = 3000


def _typos(n: int) -> str:
    base = "Maria Gonzalez"
    return "; ".join(base[:i % 14] + "xyz"[i % 3] + base[i % 14 + 1 :] for i in range(n) if i % 14 != 5)


class _Counting:
    def __init__(self, fn: Any) -> None:
        self.fn, self.calls = fn, 0

    def __call__(self, *a: Any, **k: Any) -> Any:
        self.calls += 1
        return self.fn(*a, **k)


@pytest.mark.parametrize("text", ["Blue Shield " * N, "Gonzalez, Maria; " * N, _typos(N), "Maria Gonzalez " * N],
                         ids=["near_miss", "swapped", "typos", "exact"])
def test_fuzzy_aligns_each_distinct_window_once(monkeypatch: pytest.MonkeyPatch, text: str) -> None:
    ratio = _Counting(_fuzzy_index.fuzz.ratio)
    monkeypatch.setattr(_fuzzy_index.fuzz, "ratio", ratio)
    found = Detector(ATOMS).scan_text(text)
    assert ratio.calls <= 200  # was one alignment (or three) per occurrence: thousands
    if "Gonzalez" in text and "Blue" not in text:
        assert len([f for f in found if f.atom_id == "name"]) >= N // 2  # and nothing is lost


@pytest.mark.parametrize(("text", "span", "original"),
                         [("4\u200d4\u200d1\u200d7 " * N, (5, 9), "4\u200d4\u200d1\u200d7"),
                          ("４４１７５５５０１９９\u3000" * N, (4, 8), "５５５０")], ids=["zero_width", "fullwidth"])
def test_invisible_marks_and_fullwidth_digits_take_no_token_loop(monkeypatch: pytest.MonkeyPatch, text: str,
                                                                 span: tuple[int, int], original: str) -> None:
    def refuse(self: Any) -> Any:
        raise AssertionError("the per-token path ran")

    monkeypatch.setattr(_norm_builder._Builder, "run", refuse)
    norm = normalize(text)
    assert norm.text.startswith(("4417 4417 ", "44175550199 44175550199 "))
    s, e = norm.to_original(*span)
    assert text[s:e] == original


@pytest.mark.parametrize("text", ["Maria%20Gonzalez%2C%20" * N, "Maria&#32;Gonzalez&amp; " * N,
                                  "Mari\u0301a Gonza\u0301lez " * N], ids=["percent", "entities", "combining"])
def test_each_distinct_escape_or_accent_is_decoded_once(monkeypatch: pytest.MonkeyPatch, text: str) -> None:
    replacement = _Counting(_norm_builder._Builder.replacement)
    monkeypatch.setattr(_norm_builder._Builder, "replacement", lambda self, *a: replacement(self, *a))
    normalize(text)
    assert replacement.calls <= 10


@pytest.mark.parametrize("text", ["4417 " * N, "MARIA GONZALEZ, " * N, "4417\t" * N + "x4417 y 14417",
                                  "Maria Gonzalez,4417 " * N, "maría 4417 " * N, "4\u200d4\u200d1\u200d7 " * N,
                                  "Mari\u200ba Gonzalez\u200b; " * N],
                         ids=["digits", "upper", "tabs", "mixed", "non_ascii", "marks_cut", "marks_in_names"])
def test_column_paths_find_what_the_loops_find(monkeypatch: pytest.MonkeyPatch, text: str) -> None:
    det = Detector(ATOMS)
    bulk = det.scan_text(text)
    monkeypatch.setattr(_bulk, "BULK", 10**9)
    assert bulk == Detector(ATOMS).scan_text(text) and len(bulk) >= N


def test_one_verdict_per_atom_at_every_stage(monkeypatch: pytest.MonkeyPatch) -> None:
    guard = Guard(PolicyKB(atoms=ATOMS, tools=(TOOL,)), mode="enforce")
    text = "card 4417, call 415-555-0199; " * N
    auth = _Counting(exposure.Exposure.auth)
    monkeypatch.setattr(exposure.Exposure, "auth", lambda self, *a, **k: auth(self, *a, **k))
    exit_decision = guard.check_exit("final_response", None, text)
    assert exit_decision.blocked and len(exit_decision.findings) == 2 * N
    # one verdict per atom (2), plus the block message's "who may not receive it" (at most one
    # per distinct atom and recipient) — never one per occurrence
    assert auth.calls <= 4
    provenance = _Counting(_session.Session.record_provenance)
    monkeypatch.setattr(_session.Session, "record_provenance", lambda self, *a: provenance(self, *a))
    with guard.session():  # provenance is kept only in a request's session (issue 28, item 4)
        result = guard.check_result(TOOL, {}, text)
    assert len(result.findings) == 2 * N and provenance.calls == 2
    decision = guard.check(TOOL, {"note": text})
    assert decision.blocked and len(decision.forbidden) == 2 * N


def test_verdicts_from_columns_equal_the_generic_rebuild() -> None:
    from tpguard.detect.detector import new_finding

    found = Detector(ATOMS).scan_text("4417 " * N)
    assert isinstance(found, _bulk.Columns) and found.columns is not None
    fast = _bulk.with_verdicts(found, lambda f: False, new_finding)
    assert fast == _bulk.with_verdicts(list(found), lambda f: False, new_finding)
    assert len(fast) == N and {f.authorized for f in fast} == {False}
    found.sort(key=lambda f: -f.start)  # a changed list drops its columns: they would be stale
    assert found.columns is None
    assert _bulk.with_verdicts(found, lambda f: True, new_finding)[0].start == fast[-1].start
