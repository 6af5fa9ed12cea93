"""Disclosure detector: every method with positives and near-miss negatives, nested arguments."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from pydantic import BaseModel

from tpguard import Detector, PrivateAtom

PHONE = PrivateAtom(id="phone", type="phone", value="415-555-0199")
NAME = PrivateAtom(id="name", type="person_name", value="Maria Gonzalez",
                   aliases=("Ms. Gonzalez",))
DIAG = PrivateAtom(id="diag", type="medical", value="type 2 diabetes",
                   variants=("high blood sugar",))
KEY = PrivateAtom(id="key", type="api_key", value="sk-live-4f9a8b7c6d5e")
SUFFIX = PrivateAtom(id="suffix", type="card_suffix", value="4417", masked=("**** 4417",))
AMOUNT = PrivateAtom(id="amount", type="financial", value="$1,250.00")
DET = Detector([PHONE, NAME, DIAG, KEY, SUFFIX, AMOUNT])


def methods(text: str, atom: str | None = None) -> list[str]:
    return [f.method for f in DET.scan_text(text) if atom is None or f.atom_id == atom]


def test_exact_alias_semantic_masked() -> None:
    assert methods("call 415-555-0199 now", "phone") == ["exact"]
    assert methods("spoke to Ms. Gonzalez today", "name") == ["alias"]
    assert methods("patient has high blood sugar", "diag") == ["semantic"]
    assert methods("card **** 4417 charged", "suffix") == ["masked"]


@pytest.mark.parametrize(
    "text",
    ["(415) 555-0199", "415.555.0199", "+1 415 555 0199", "４１５－５５５－０１９９", "4155550199",
     "+1-415-555-0199"],
)
def test_phone_formats_match_digits_only(text: str) -> None:
    found = DET.scan_text(f"reach her at {text}.")
    assert [f.atom_id for f in found] == ["phone"]
    assert found[0].method in ("exact", "normalized")


@pytest.mark.parametrize(
    "text",
    ["MARIA GONZALEZ", "maria\u00a0gonzalez", "Maria\u200b Gonzalez", "Maria   \n Gonzalez",
     "ＭＡＲＩＡ ＧＯＮＺＡＬＥＺ"],
)
def test_normalized_case_width_zero_width_and_spaces(text: str) -> None:
    found = [f for f in DET.scan_text(f"Patient {text} arrived") if f.atom_id == "name"]
    assert len(found) == 1 and found[0].method == "normalized"
    # the span points at the original text, so redaction rewrites exactly what was written
    original = f"Patient {text} arrived"
    assert original[found[0].start : found[0].end].replace("\u200b", "").split()[0].casefold() in (
        "maria", "ｍａｒｉａ".casefold())


def test_regrouped_date_times() -> None:
    when = PrivateAtom(id="when", type="appointment_time", value="2026-12-26 13:45")
    d = Detector([when])
    for text in ("at 2026 12 26 13:45", "at 2026.12.26.13:45", "at 2026/12/26 13.45"):
        assert [f.atom_id for f in d.scan_text(text)] == ["when"], text
    assert d.scan_text("at 2026-12-26 13:46") == []


def test_numbers_in_structured_fields_and_amounts() -> None:
    assert [f.atom_id for f in DET.scan({"phone": 4155550199})] == ["phone"]
    assert [f.atom_id for f in DET.scan({"amount": 1250.0})] == ["amount"]
    assert [f.atom_id for f in DET.scan({"amount": "1250.00 USD"})] == ["amount"]


@pytest.mark.parametrize(
    ("text", "atom"),
    [
        ("ref 14417", "suffix"),  # a longer number containing the digits
        ("annual 44170 total", "suffix"),
        ("call 415-555-0198", "phone"),  # one digit off is another number
        ("4155550199123", "phone"),
        ("history of type 1 diabetes", "diag"),  # fuzzy must not cross a digit
        ("key sk-live-4f9a8b7c6d5f", "key"),  # a different secret one character off
        ("Mariana Gonzalo-Ruiz", "name"),
    ],
)
def test_near_misses_do_not_match(text: str, atom: str) -> None:
    assert methods(text, atom) == []


def test_fuzzy_catches_typos_in_word_like_atoms() -> None:
    found = [f for f in DET.scan_text("Patient Maria Gonzales needs a refill") if f.atom_id == "name"]
    assert [f.method for f in found] == ["fuzzy"] and 0.88 <= found[0].score < 1
    assert methods("diagnosed with type 2 diabetis", "diag") == ["fuzzy"]
    assert Detector([NAME], fuzzy=False).scan_text("Maria Gonzales") == []


@pytest.mark.parametrize("text", [
    "Ms. Gonzalez wrote; Maria Gonzales called",        # an alias elsewhere
    "Gonzalez, Maria wrote; Maria Gonzales called",     # the name swapped elsewhere
    "Maria Gonzalez wrote; Maria Gonzales called",      # the value itself elsewhere
])
def test_a_typo_beside_another_form_of_the_atom_is_its_own_finding(text: str) -> None:
    # The fuzzy pass aligns no candidate of an atom whose exact occurrences account for all its
    # places; only occurrences of the value itself place a candidate, so only they may count.
    found = [f for f in DET.scan_text(text) if f.atom_id == "name"]
    assert [text[f.start : f.end] for f in found][-1] == "Maria Gonzales"
    assert found[-1].method == "fuzzy" and len(found) == 2


def test_token_boundaries() -> None:
    ann = PrivateAtom(id="ann", type="person_name", value="Ann")
    d = Detector([ann])
    assert d.scan_text("annual report for Annie") == []
    assert [f.start for f in d.scan_text("Dear Ann, hi ann.")] == [5, 13]


class Item(BaseModel):
    comment: str
    qty: int = 1


@dataclasses.dataclass
class Contact:
    phone: str
    extra: Any = None


def test_nested_arguments_report_paths_and_free_text() -> None:
    args = {
        "items": [Item(comment="ok"), Item(comment="x"), Item(comment="for Maria Gonzalez")],
        "contact": Contact(phone="(415) 555-0199", extra=("a", {"deep": ["sk-live-4f9a8b7c6d5e"]})),
        "note": "card ending 4417",
        "none": None, "flag": True, "n": 3.5,
    }
    found = {(f.atom_id, f.path, f.free_text) for f in DET.scan(args, free_text_slots={"comment", "note"})}
    assert found == {
        ("name", "items[2].comment", True),
        ("phone", "contact.phone", False),
        ("key", "contact.extra[1].deep[0]", False),
        ("suffix", "note", True),
    }


def test_one_finding_per_occurrence_and_repeats_counted() -> None:
    text = "Maria Gonzalez (Ms. Gonzalez) — Maria Gonzalez again"
    found = [f for f in DET.scan_text(text) if f.atom_id == "name"]
    assert [f.method for f in found] == ["exact", "alias", "exact"]
    assert [text[f.start : f.end] for f in found] == ["Maria Gonzalez", "Ms. Gonzalez", "Maria Gonzalez"]


def test_finding_repr_has_no_value() -> None:
    f = DET.scan_text("call 415-555-0199")[0]
    assert "415" not in repr(f) and "415" not in str(f.to_dict())


def test_many_atoms_same_answers() -> None:
    filler = [PrivateAtom(id=f"a{i}", type="account_id", value=f"ACC-{i:06d}") for i in range(5000)]
    big = Detector([*filler, PHONE, NAME])
    found = big.scan_text("Maria Gonzalez, 415 555 0199, ACC-004321")
    assert sorted(f.atom_id for f in found) == ["a4321", "name", "phone"]


def test_undetectable_atoms_are_reported() -> None:
    d = Detector([PrivateAtom(id="x", type="flag", value="Y")])
    assert d.undetectable == ("x",)


def test_pii_findings_offline() -> None:
    pytest.importorskip("presidio_analyzer")
    from tpguard.detect.presidio import PiiDetector

    d = Detector([PHONE], pii=PiiDetector())
    found = d.scan({"note": "call 415-555-0199 or write to jane.roe@example.org"}, free_text_slots={"note"})
    by_method = {f.method: f for f in found}
    assert by_method["exact"].atom_id == "phone"
    assert by_method["pii"].atom_id == "pii:EMAIL_ADDRESS" and by_method["pii"].atom_type == "email_address"
    assert len(found) == 2  # the registered phone is not reported twice


def test_many_addresses_on_one_street_only_the_number_written_is_found() -> None:
    # 30 atoms share the words "David Wells"; the fuzzy index drops those whose number is not
    # around the place before aligning anything — the one written (exact or typo'd) is found.
    streets = [PrivateAtom(id=f"a{n}", type="street_address", value=f"{n} David Wells")
               for n in range(3950, 3980)]
    det = Detector(streets)
    exact = [(f.atom_id, f.method) for f in det.scan_text("ship it to 3968 David Wells, thanks")]
    assert exact == [("a3968", "exact")]
    typo = [(f.atom_id, f.method) for f in det.scan_text("ship it to 3968 Davd Wells, thanks")]
    assert typo == [("a3968", "fuzzy")]
    both = det.scan_text("3968 David Wells, or was it 3971 Davud Wells?")
    assert [(f.atom_id, f.method) for f in both] == [("a3968", "exact"), ("a3971", "fuzzy")]
    assert not det.scan_text("ship it to 4000 Davd Wells")  # no atom has that number
