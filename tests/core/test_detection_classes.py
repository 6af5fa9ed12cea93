"""Matching classes of the detector (issue 9 item 4): each with positives and near-miss negatives."""

from __future__ import annotations

import pytest

from tpguard import Detector, PrivateAtom
from tpguard.detect.detector import is_detectable

PHONE = PrivateAtom(id="phone", type="phone", value="415-555-0199")
PIN = PrivateAtom(id="pin", type="card_suffix", value="4417")
RX = PrivateAtom(id="rx", type="prescription_id", value="RX-88213")
IBAN = PrivateAtom(id="iban", type="iban", value="DE89 3704 0044 0532 0130 00")
NAME = PrivateAtom(id="name", type="person_name", value="Maria Gonzalez")
ADDR = PrivateAtom(id="addr", type="shipping_address", value="1600 Pennsylvania Avenue NW")
COND = PrivateAtom(id="cond", type="cardiac_condition", value="atrial fibrillation")
DIAG = PrivateAtom(id="diag", type="medical", value="type 2 diabetes")
DET = Detector([PHONE, PIN, RX, IBAN, NAME, ADDR, COND, DIAG])


def found(text: str, atom: str) -> list[tuple[str, str]]:
    """(matched original text, method) of every finding of ``atom``."""
    return [(text[f.start : f.end], f.method) for f in DET.scan_text(text) if f.atom_id == atom]


class TestDigitSeparators:
    @pytest.mark.parametrize("sep", ["-", "\u2013", "\u2011", "\u2212", " ", "\t", "\n", "\u00a0",
                                     "_", ".", "/", "\u200b", "\u200e", " - ", ") ("])
    def test_any_separator(self, sep: str) -> None:
        text = f"number: 415{sep}555{sep}0199 ok"
        hits = found(text, "phone")
        assert len(hits) == 1 and "0199" in hits[0][0] and hits[0][0].startswith(("415", "(415"))

    def test_no_group_cap(self) -> None:
        numbers = " ".join(f"{i:02d}" for i in range(40))
        assert len(found(f"{numbers} 415 555 0199", "phone")) == 1

    @pytest.mark.parametrize("text", ["415-555-0198", "4155550199123", "1415-555-0199x", "415-555-01999"])
    def test_near_misses(self, text: str) -> None:
        assert found(f"call {text} now", "phone") == []


class TestInternationalPhone:
    @pytest.mark.parametrize("text", ["+14155550199", "tel:+14155550199", "tel:4155550199",
                                      "0014155550199", "+1 415 555 0199", "+1-415-555-0199",
                                      "001 (415) 555-0199"])
    def test_forms(self, text: str) -> None:
        hits = found(f"reach her at {text}.", "phone")
        assert len(hits) == 1 and hits[0][0].endswith("0199")

    def test_e164_atom_found_without_country_code(self) -> None:
        d = Detector([PrivateAtom(id="p", type="phone", value="+44 20 7946 0958")])
        assert len(d.scan_text("ring 20 7946 0958 today")) == 1

    @pytest.mark.parametrize("text", ["+14155550198", "+12344155550199", "5554155550199", "0914155550199"])
    def test_near_misses(self, text: str) -> None:
        assert found(f"reach her at {text}.", "phone") == []


class TestDigitGrouping:
    """A digits-only atom matches only where the text's own grouping agrees (see _digits)."""

    @pytest.mark.parametrize("text", ["$44.17", "4/4/17", "4.4.17", "44-17", "44 17", "14417", "44170"])
    def test_short_atom_never_joins_other_groups(self, text: str) -> None:
        assert found(f"total {text} today", "pin") == []

    @pytest.mark.parametrize("text", ["4417", "**** 4417", "card ending 4417.", "4,417", "x4417"])
    def test_short_atom_positives(self, text: str) -> None:
        assert len(found(f"paid with {text} yes", "pin")) == 1

    @pytest.mark.parametrize("text", ["(415) 555 0199", "415.555.0199", "4155550199", "+1 415 555 0199",
                                      "415 5550199", "41 55 55 01 99"])
    def test_long_atom_any_grouping(self, text: str) -> None:
        assert len(found(f"phone {text}", "phone")) == 1

    def test_atom_grouped_like_the_text(self) -> None:
        d = Detector([PrivateAtom(id="code", type="sort_code", value="12-34-56")])
        assert len(d.scan_text("sort code 12 34 56")) == 1
        assert len(d.scan_text("sort code 123456")) == 1  # one group: the digits as written
        assert d.scan_text("sort code 1234-56") == []
        assert d.scan_text("version 12.3.456") == []


class TestIdentifierSkeleton:
    @pytest.mark.parametrize("text", ["RX88213", "rx 88213", "RX_88213", "RX.88213", "Rx–88213", "(RX-88213)"])
    def test_positives(self, text: str) -> None:
        assert len(found(f"refill {text} today", "rx")) == 1

    @pytest.mark.parametrize("text", ["ARX88213", "RX882134", "RX-882134", "RY88213", "XRX-88213"])
    def test_longer_or_other_ids(self, text: str) -> None:
        assert found(f"refill {text} today", "rx") == []

    def test_iban_without_spaces(self) -> None:
        assert len(found("iban DE89370400440532013000 pls", "iban")) == 1
        assert found("iban DE89370400440532013001 pls", "iban") == []


class TestDecoding:
    @pytest.mark.parametrize("text", ["Maria%20Gonzalez", "Maria&#32;Gonzalez", "Maria&nbsp;Gonzalez",
                                      "Maria&#x20;Gonzalez", "%4Daria%20Gonzalez", "MARIA%20gonzalez"])
    def test_encoded_name(self, text: str) -> None:
        hits = found(f"q={text}&x=1", "name")
        assert len(hits) == 1 and hits[0][0] == text  # the span covers the escapes as written

    def test_entities_and_percent_in_numbers(self) -> None:
        assert len(found("to=415%2D555%2D0199", "phone")) == 1
        assert len(found("&lt;b&gt;415-555-0199&lt;/b&gt;", "phone")) == 1

    @pytest.mark.parametrize("text", ["Maria%20Gonzalo", "Maria%2520Gonzalez", "100%AB Gonzalez"])
    def test_near_misses(self, text: str) -> None:
        assert [m for _, m in found(text, "name") if m != "fuzzy"] == []


class TestConfusables:
    @pytest.mark.parametrize("text", ["M\u0430ria Gonz\u0430lez", "Mari\u0430 G\u043enzalez",
                                      "M\u0430ri\u0430 G\u03bfnz\u0430lez", "ＭＡＲＩＡ ＧＯＮＺＡＬＥＺ",
                                      "\u041c\u0430ria Gonzalez"])
    def test_homoglyphs(self, text: str) -> None:
        hits = found(f"patient {text} arrived", "name")
        assert hits == [(text, "normalized")]

    def test_other_script_digits(self) -> None:
        assert len(found("card \u0664\u0664\u0661\u0667", "pin")) == 1

    def test_near_miss(self) -> None:
        assert found("patient M\u0430ri\u0430 G\u043enz\u0430lo arrived", "name") == []


class TestNameOrder:
    @pytest.mark.parametrize("text", ["Gonzalez, Maria", "GONZALEZ, Maria", "Gonzalez Maria"])
    def test_swapped(self, text: str) -> None:
        assert len(found(f"patient {text} arrived", "name")) == 1

    def test_only_for_name_like_values(self) -> None:
        assert found("fibrillation, atrial", "cond") == []  # lower case: not a person's name
        assert found("patient Gonzalez, Mariana arrived", "name") == []


class TestFuzzy:
    def test_every_occurrence(self) -> None:
        text = "Maria Gonzalez called; later Maria Gonzales called again, then Mria Gonzalez."
        hits = found(text, "name")
        assert [m for _, m in hits] == ["exact", "fuzzy", "fuzzy"]
        assert [t for t, _ in hits] == ["Maria Gonzalez", "Maria Gonzales", "Mria Gonzalez"]

    @pytest.mark.parametrize("text", ["Mraia Gonzalez", "Naria Gonzalez", "Maria Gomzalez",
                                      "Maria Gonzalezz"])
    def test_typo_anywhere(self, text: str) -> None:
        assert [m for _, m in found(f"patient {text} arrived", "name")] == ["fuzzy"]

    def test_eligibility_by_shape_not_type_name(self) -> None:
        assert [m for _, m in found("ship to 1600 Pensylvania Avenue NW", "addr")] == ["fuzzy"]
        assert [m for _, m in found("history of atrial fibrilation", "cond")] == ["fuzzy"]

    @pytest.mark.parametrize(("text", "atom"), [("type 1 diabetes", "diag"), ("RX-88214", "rx"),
                                                ("Mariana Gonzalo-Ruiz", "name"),
                                                ("1601 Pennsylvania Avenue NW", "addr")])
    def test_near_misses(self, text: str, atom: str) -> None:
        assert found(f"note: {text}.", atom) == []

    def test_many_atoms_same_answer(self) -> None:
        filler = [PrivateAtom(id=f"n{i}", type="person_name", value=f"Person{i:05d} Surname{i % 97:02d}x")
                  for i in range(3000)]
        emails = [PrivateAtom(id=f"e{i}", type="email", value=f"user{i}@gmail.com") for i in range(200)]
        big = Detector([*filler, *emails, NAME])
        hits = [(f.atom_id, f.method) for f in big.scan_text("write to Maria Gonzales at gmail.com")]
        assert hits == [("name", "fuzzy")]


@pytest.mark.parametrize(("value", "ok"), [("Y", False), ("ab", False), ("12", False), ("Ann", True),
                                           ("4417", True), (" a\u200b ", False), ("ＡＢ", False)])
def test_is_detectable(value: str, ok: bool) -> None:
    assert is_detectable(value) is ok
    d = Detector([PrivateAtom(id="x", type="t", value=value)])
    assert (d.undetectable == ()) is ok


def test_norm_argument_is_used_and_offsets_are_original() -> None:
    from tpguard.detect._normalize import normalize

    text = "a\t\tMaria\n Gonzalez %2B 415\u2011555\u20110199"
    norm = normalize(text)
    with_norm = DET.scan_text(text, norm=norm)
    assert with_norm == DET.scan_text(text)
    assert {text[f.start : f.end] for f in with_norm} == {"Maria\n Gonzalez", "415\u2011555\u20110199"}
