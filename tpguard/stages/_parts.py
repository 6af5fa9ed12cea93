"""A text result's parts and paragraphs against an acquisition scope (:mod:`tpguard.stages.results`).

A part starts at a line matching the binding's ``part_pattern`` (its name: the ``part`` group, else
the first group, else the match); a part whose name the scope does not allow, or whose header
carries a confidentiality marker, is replaced by :data:`PART_WITHHELD`, and a paragraph (blank-line
separated) carrying a marker by :data:`PARA_WITHHELD`. O(text) per text.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator
from typing import TYPE_CHECKING

from ..detect._leaves import Leaf
from ..policy.scope import AcquisitionScope, ScopeFinding
from ._records import Marker

if TYPE_CHECKING:
    from .results import ResultView

__all__ = ["PARA_WITHHELD", "PART_WITHHELD", "withheld_parts"]

PART_WITHHELD = "[tpguard: part withheld - outside this task's scope]"
PARA_WITHHELD = "[tpguard: confidential passage withheld]"
_PARA = re.compile(r"\n[ \t]*\n")


@functools.lru_cache(maxsize=64)
def _part_re(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern, re.MULTILINE)


def withheld_parts(view: ResultView, scope: AcquisitionScope, leaf: Leaf, marker: Marker | None) -> str | None:
    """The text with out-of-scope parts and marked paragraphs replaced; None when unchanged."""
    text = leaf.text
    pattern = scope.binding.part_pattern
    has_parts = pattern is not None and scope.parts is not None
    if not has_parts and (marker is None or not marker.search(text)):
        return None
    changed = False
    out: list[str] = []
    for n, (name, header, body) in enumerate(_parts(text, pattern) if has_parts else [(None, "", text)]):
        if name is not None and (not scope.allows("part", name)
                                 or (marker is not None and marker.search(header))):
            dim = "part" if not scope.allows("part", name) else "confidential"
            view.scope.append(ScopeFinding(dim, f"{leaf.path}#part{n}",  # type: ignore[arg-type]
                                           f"a {dim} part outside the scope"))
            out.append(PART_WITHHELD + "\n")
            changed = True
            continue
        out.append(header)
        if marker is not None and marker.search(body):
            paras = _PARA.split(body)
            seps = _PARA.findall(body)
            kept = []
            for k, para in enumerate(paras):
                if marker.search(para):
                    view.scope.append(ScopeFinding("confidential", f"{leaf.path}#para{k}",
                                                   "a confidential-marked passage"))
                    para = PARA_WITHHELD
                    changed = True
                kept.append(para + (seps[k] if k < len(seps) else ""))
            body = "".join(kept)
        out.append(body)
    return "".join(out) if changed else None


def _parts(text: str, pattern: str | None) -> Iterator[tuple[str | None, str, str]]:
    """``(name, header line, body)`` per part; the text before the first header has no name."""
    rx = _part_re(pattern or "")
    matches = list(rx.finditer(text))
    if not matches or matches[0].start() > 0:
        yield None, "", text[:matches[0].start()] if matches else text
    for k, m in enumerate(matches):
        end = matches[k + 1].start() if k + 1 < len(matches) else len(text)
        line_end = text.find("\n", m.end())
        line_end = end if line_end < 0 or line_end > end else line_end + 1
        name = m.groupdict().get("part") if rx.groupindex else (m.group(1) if rx.groups else m.group())
        yield (name or "").strip(), text[m.start():line_end], text[line_end:end]
