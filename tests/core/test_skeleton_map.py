"""The skeleton offset map (``tpguard.detect._digits``): every skeleton character maps back to the same
character of the normalized text, for ASCII and non-ASCII texts alike (the map is built by a
keep-mask, not by the separator regex, so the two must agree exactly); the cursor that locates a
scan's hits without the map agrees with it for any order of look-ups."""

from __future__ import annotations

from collections.abc import Callable

from hypothesis import given, settings
from hypothesis import strategies as st

from tpguard import PrivateAtom, ToolSpec
from tpguard.detect._digits import _LOCATE_STEPS, _Locator, _skeleton, _skeleton_map
from tpguard.detect._normalize import normalize

_ALPHABET = st.sampled_from(list("0123456789 abRX-_./:,()[]+#'\u2013\u2011\u00a0\u200b\té\x00\ud800"))


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=_ALPHABET, max_size=60))
def test_every_skeleton_character_maps_back_to_itself(text: str) -> None:
    norm = normalize(text)
    skel = _skeleton(norm)
    if not skel:
        return
    positions = _skeleton_map(norm)
    assert len(positions) == len(skel)
    assert "".join(norm.text[i] for i in positions) == skel
    assert positions == sorted(set(positions))


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=_ALPHABET, max_size=80), st.lists(st.floats(0, 1), min_size=1, max_size=12))
def test_the_locator_agrees_with_the_map_in_any_order(text: str, picks: list[float]) -> None:
    norm = normalize(text)
    skel = _skeleton(norm)
    if not skel:
        return
    positions = _skeleton_map(normalize(text))  # a map built apart: the locator must not reuse it
    locate = _Locator(norm).at
    for x in picks:  # forwards and backwards, repeats included
        i = min(int(x * len(skel)), len(skel) - 1)
        assert locate(i) == positions[i]


def test_the_locator_falls_back_to_the_map_on_a_text_dense_with_separators() -> None:
    text = "1" + "-" * 5000 + "2 and 3" + "- " * 3000 + "4"
    norm = normalize(text)
    loc = _Locator(norm)
    skel = _skeleton(norm)
    assert skel.startswith("12and3") and skel.endswith("4")
    assert loc.at(len(skel) - 1) == len(norm.text) - 1
    assert loc.map is not None  # more than _LOCATE_STEPS blocks: the map was built once
    assert [loc.at(i) for i in range(4)] == [0, 5001, 5003, 5004] and _LOCATE_STEPS < 64


def test_phone_after_non_ascii_text_is_redacted_at_its_own_offsets(
    redact_body: Callable[[PrivateAtom, str], str],
) -> None:
    phone = PrivateAtom(id="p", type="phone", value="415-555-0199")
    out = redact_body(phone, "Grüße — café – call +1 (415)\u00a0555\u20110199 today")
    assert "555" not in out and out.startswith("Grüße — café – call ") and out.endswith(" today")


def test_span_attributes_of_a_spec_follow_the_spec_not_its_id() -> None:
    from tpguard.telemetry import _attributes as A
    from tpguard.telemetry.spans import _spec_attributes

    for i in range(50):  # specs freed and re-made: ids get reused, attributes must not be
        spec = ToolSpec(name=f"tool{i}", purpose=f"purpose {i}", sink="external")
        for openinference in (False, True):
            attrs = _spec_attributes(spec, openinference)
            assert attrs[A.GEN_AI_TOOL_NAME] == f"tool{i}" and attrs[A.TPGUARD_PURPOSE] == f"purpose {i}"
            assert (A.OPENINFERENCE_TOOL_NAME in attrs) is openinference
        del spec
