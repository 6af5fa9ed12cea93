"""The mixed ASCII/non-ASCII corpus of ``test_normalize_mixed.py`` and how its expectations were
recorded: ``python tests/core/normalize_corpus.py > tests/core/data/normalize_mixed.json``, run on
the code *before* issue 33's partial normalization (commit d86977f: every non-ASCII text that was not
NFKC-normal went through one per-token pass). The test compares today's code to that record."""

from __future__ import annotations

import json
import random
import re
from typing import Any

SEED = 3333
WORDS = ("Laurie", "Bates", "laurie.bates@example.com", "12", "Oak", "St.", "Street", "card", "ending",
         "4821", "415-555-0142", "CUS-0048213", "ship", "to", "the", "order")
SPACES = (" ", " ", " ", "  ", "\n", "\t", "\r\n", "\u00a0", "\u00a0 ", " \n ", "\u2028")
ODD = ("\u201c", "\u201d", "\u2019", "\u00e9", "Jos\u00e9", "Zo\u00eb", "\u00df", "e\u0301", "\u0430",
       "\ufb01", "\u0664", "\u200b", "\uff4d", "\u2026", "\u2014", "\u00c5", "\u00a0")
ESCAPES = ("%20", "&amp;", "&#233;", "%C3%A9")
#: by hand: a non-ASCII character beside an atom and inside one
HAND = ("Call \u201cLaurie Bates\u201d at 415-555-0142.", "Laurie\u00a0Bates, card ending 4821\u00a0",
        "Jos\u00e9 Bates lives at 12 Oak Street", "Jose\u0301 Bates\n\n12\u00a0Oak Street",
        "card ending \uff14\uff18\uff12\uff11", "Laurie Bat\u00e9s asked", "laurie.bates@example.com\u2019s order",
        "L\u0430urie Bates", "Laurie  Bates\t\u2014\t415-555-0142\u2026", "\u00a0\u00a0Laurie Bates \u00df\n",
        "Stra\u00dfe 12 Oak St. \u201c12 Oak Street\u201d")


def corpus(n: int = 160) -> list[str]:
    """Texts of 4-14 pieces: words, separators, non-ASCII pieces glued to a word or standing alone;
    one text in eight carries an escape (the general path)."""
    rng = random.Random(SEED)
    texts = list(HAND)
    for i in range(n):
        parts: list[str] = []
        for _ in range(rng.randint(4, 14)):
            r = rng.random()
            if r < 0.25:
                parts.append(rng.choice(ODD))  # glued: inside or beside a word
            elif r < 0.6:
                parts.append(rng.choice(WORDS))
            else:
                parts.append(rng.choice(SPACES))
        if i % 8 == 7:
            parts.insert(rng.randrange(len(parts) + 1), rng.choice(ESCAPES))
        texts.append("".join(parts))
    return texts


def spans(norm_text: str) -> list[tuple[int, int]]:
    """Every one-character span, every word (run between spaces) and the whole text."""
    out = [(i, i + 1) for i in range(len(norm_text))]
    out += [m.span() for m in re.finditer(r"[^ ]+", norm_text)]
    if norm_text:
        out.append((0, len(norm_text)))
    return out


def record(text: str) -> dict[str, Any]:
    from tpguard.detect._normalize import normalize

    norm = normalize(text)
    return {"text": text, "norm": norm.text,
            "map": [[s, e, *norm.to_original(s, e)] for s, e in spans(norm.text)]}


def findings() -> list[dict[str, Any]]:
    """``check`` (redact) of each corpus text as a ticket note, with the realistic note's atoms."""
    from opentelemetry.trace import NoOpTracerProvider

    from tpguard import Guard, PolicyKB, PrivateAtom, Rule, ToolSpec

    spec = ToolSpec(name="create_ticket", purpose="open a ticket", sink="ticket", free_text=("note",))
    atoms = (PrivateAtom(id="name", type="person_name", value="Laurie Bates"),
             PrivateAtom(id="email", type="email", value="laurie.bates@example.com"),
             PrivateAtom(id="address", type="street_address", value="12 Oak Street"),
             PrivateAtom(id="card", type="card_suffix", value="4821"),
             PrivateAtom(id="phone", type="phone", value="415-555-0142"),
             PrivateAtom(id="jose", type="person_name", value="Jos\u00e9 Bates"))
    kb = PolicyKB(atoms=atoms, tools=(spec,), rules=(Rule(atom_type="street_address", sink="ticket", allow=True),))
    guard = Guard(kb, mode="redact", tracer_provider=NoOpTracerProvider())
    out = []
    for text in corpus():
        d = guard.check(spec, {"note": text})
        out.append({"text": text, "findings": sorted([f.atom_id, f.start, f.end] for f in d.findings),
                    "redacted": (d.arguments or {}).get("note")})
    return out


if __name__ == "__main__":
    print(json.dumps({"normalize": [record(t) for t in corpus()], "check": findings()}, ensure_ascii=True))
