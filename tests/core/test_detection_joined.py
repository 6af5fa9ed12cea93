"""Words run together (issue 28, item 6): a multi-word value written without its spaces, or with
some of its words joined, is found at every stage; nothing else is."""

from __future__ import annotations

import pytest

from tpguard import Detector, Guard, PolicyKB, PrivateAtom, ToolSpec
from tpguard.detect._forms import _joined

NAME = PrivateAtom(id="name", type="person_name", value="Maria Gonzalez")
PLAN = PrivateAtom(id="plan", type="insurance", value="Blue Shield PPO")
COND = PrivateAtom(id="cond", type="medical", value="hepatitis B")
ADDR = PrivateAtom(id="addr", type="shipping_address", value="1600 Pennsylvania Avenue NW")
PIN = PrivateAtom(id="pin", type="card_suffix", value="4417")
PHONE = PrivateAtom(id="phone", type="phone", value="415-555-0199")
RX = PrivateAtom(id="rx", type="prescription_id", value="RX 88213")
DET = Detector([NAME, PLAN, COND, ADDR, PIN, PHONE, RX])


def found(text: str) -> list[tuple[str, str, str]]:
    return [(f.atom_id, text[f.start : f.end], f.method) for f in DET.scan_text(text)]


@pytest.mark.parametrize(("text", "atom", "span"), [
    ("patient MariaGonzalez arrived", "name", "MariaGonzalez"),
    ("patient mariagonzalez arrived", "name", "mariagonzalez"),
    ("patient GonzalezMaria arrived", "name", "GonzalezMaria"),       # swapped and joined
    ("covered by BlueShield PPO since May", "plan", "BlueShield PPO"),
    ("covered by Blue ShieldPPO", "plan", "Blue ShieldPPO"),
    ("covered by BlueShieldPPO.", "plan", "BlueShieldPPO"),
    ("diagnosed with hepatitisB last year", "cond", "hepatitisB"),
    ("ship to 1600PennsylvaniaAvenue NW", "addr", "1600PennsylvaniaAvenue NW"),
    ("ship to 1600pennsylvaniaavenuenw", "addr", "1600pennsylvaniaavenuenw"),
    ("user=Maria%20Gonzalez&alt=MariaGonzalez", "name", "MariaGonzalez"),
])
def test_joined_words_are_found(text: str, atom: str, span: str) -> None:
    assert (atom, span, "normalized") in found(text)


@pytest.mark.parametrize("text", [
    "MariaGonzalezRuiz called",            # a longer word: no token boundary
    "xMariaGonzalez",
    "BlueShield plan renewed",              # not the value (PPO missing)
    "hepatitisBC screening",                # another word
    "hepatitis bacteria in the sample",
    "Maria and Gonzalez met",               # the words apart, with another between
    "a blueshieldppoint",
    "MariaGonzales called",                 # a typo *and* joined: out of scope (docs/detection.md)
])
def test_near_misses_stay_clean(text: str) -> None:
    assert [a for a, _, m in found(text) if m != "fuzzy"] == []


def test_joined_forms_are_bounded() -> None:
    assert _joined("maria gonzalez") == ("mariagonzalez",)
    assert set(_joined("blue shield ppo")) == {"blueshield ppo", "blue shieldppo", "blueshieldppo"}
    assert len(_joined("a1 bb cc dd")) == 7  # every subset of the three spaces
    assert _joined("one two three four five six") == ("onetwothreefourfivesix",)  # only all joined
    assert _joined("ab c") == ()  # too short once joined: would match ordinary words
    assert _joined("415 555 0199") == () and _joined("de89 3704 0044") == ()  # the skeleton's business


class TestDigitByDigit:
    @pytest.mark.parametrize("text", ["card 4 4 1 7 charged", "4 4 1 7", "ending in 4 4 1 7."])
    def test_spaced_suffix_found(self, text: str) -> None:
        assert [(a, s) for a, s, _ in found(text)] == [("pin", "4 4 1 7")]

    @pytest.mark.parametrize("text", ["scores 3 4 4 1 7 today", "scores 4 4 1 7 2 today", "v4.4.1.7",
                                      "4-4-1-7", "44 17", "4 41 7", "1 2 3 4 4 1 7 8 9"])
    def test_ordinary_digit_runs_stay_clean(self, text: str) -> None:
        assert [a for a, _, _ in found(text) if a == "pin"] == []


def test_every_stage_sees_joined_words() -> None:
    tool = ToolSpec(name="crm_note", purpose="note", sink="comment", free_text=("note",))
    guard = Guard(PolicyKB(atoms=(NAME, COND), tools=(tool,)), mode="enforce")
    assert guard.check(tool, {"note": "MariaGonzalez has hepatitisB"}).blocked
    assert guard.check_exit("final_response", None, "She has hepatitisB.").blocked
    result = guard.check_result(tool, {}, "record: MariaGonzalez, hepatitisB")
    assert {f.atom_id for f in result.findings} == {"name", "cond"}
