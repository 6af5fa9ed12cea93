"""The adversarial series (issue 28, item 7): text written to be slow, against a realistic text of the
same size, at every stage.

For each stage — ``check`` (arguments), ``check_result`` (what a tool returns), ``check_exit`` (the
final answer) — one group measured together (in turns, in the same rounds): the realistic text and
every recipe, each ``Sizes.adversarial`` characters in one field. The guard holds the length
series' 1,000 customer atoms plus the atoms the recipes aim at (a card suffix, an insurance plan, a
condition, a name), in ``enforce``. The target: no recipe costs more than 3× the realistic text.

* ``realistic`` — a customer export: one line per customer (name, phone, e-mail, street address),
  one line in twenty naming a policy atom;
* ``digits_4417`` — ``"4417 "`` repeated (every group an atom: a finding per five characters);
* ``blue_shield`` — ``"Blue Shield "`` repeated (two words of a three-word atom: a fuzzy candidate at
  every other word, never a match);
* ``swapped_names`` — ``"Gonzalez, Maria; "`` repeated (the name swapped: a finding per 17 characters);
* ``typos`` — one-edit typos of ``Maria Gonzalez`` (a fuzzy candidate per name, each aligned);
* ``exact_names`` — ``"Maria Gonzalez "`` repeated (the value itself, every 15 characters);
* ``percent`` — the realistic export percent-encoded whole (``%4D%61…``: three characters a byte);
* ``entities`` — the realistic export as HTML character references (``&#77;&#97;…``);
* ``zero_width`` — ``4\\u200d4\\u200d1\\u200d7 `` repeated (an invisible mark between every two digits);
* ``fullwidth`` — full-width digits and spaces (``４４１７５５５０１９９``: NFKC on every character);
* ``combining`` — a combining accent after every vowel of the names (``Mari\\u0301a``).
"""

from __future__ import annotations

import random
from collections.abc import Callable
from functools import partial
from typing import Any
from urllib.parse import quote

from opentelemetry.trace import NoOpTracerProvider

from tpguard import Guard, PolicyKB, PrivateAtom, ToolSpec

from ._cases import Bench
from ._workload import _pools, make_atoms, policy

__all__ = ["RECIPES", "STAGES", "adversarial_figure", "adversarial_series", "customer_export",
           "stage_call"]

STAGES: tuple[str, ...] = ("check", "result", "exit")
_BUDGETS = 4  # this series' budget per figure, in the sizes' budgets: 1 s (full), three samples of a 1 s call
EXPORT_SPEC = ToolSpec(name="export_customers", purpose="export the customer list for the task",
                       sink="document", free_text=("export",))
#: the atoms the recipes aim at (beside the 1,000 customer atoms of the length series)
TARGETS: tuple[PrivateAtom, ...] = (
    PrivateAtom(id="adv-card", type="card_suffix", value="4417"),
    PrivateAtom(id="adv-plan", type="insurance_plan", value="Blue Shield PPO"),
    PrivateAtom(id="adv-cond", type="medical_condition", value="hepatitis B"),
    PrivateAtom(id="adv-name", type="person_name", value="Maria Gonzalez"),
)


def _repeat(unit: str, size: int) -> str:
    return (unit * (size // len(unit) + 1))[:size]


def customer_export(size: int) -> str:
    """About ``size`` characters of a customer export: ``name, phone, e-mail, address`` lines of
    Faker-pool customers, one line in twenty naming one of the policy's first 50 atoms."""
    rng, pools = random.Random(20261203), _pools()
    mentioned = make_atoms(50)
    lines: list[str] = []
    total = 0
    while total < size:
        first, last = rng.choice(pools.first), rng.choice(pools.last)
        if rng.random() < 0.05:
            line = f"{rng.choice(mentioned).value}, see ticket\n"
        else:
            line = (f"{first} {last}, {rng.randint(201, 989)}-{rng.randint(200, 999)}-"
                    f"{rng.randint(0, 9999):04d}, {first.lower()}.{last.lower()}@{rng.choice(pools.domains)}, "
                    f"{rng.randint(1, 9999)} {rng.choice(pools.streets)}\n")
        lines.append(line)
        total += len(line)
    return "".join(lines)[:size]


def _typos(size: int) -> str:
    rng, base, out, total = random.Random(7), "Maria Gonzalez", [], 0
    while total < size:
        i = rng.randrange(len(base))
        word = base[:i] + rng.choice("aeioxz") + base[i + 1 :] if base[i] != " " else base
        out.append(word + "; ")
        total += len(word) + 2
    return "".join(out)[:size]


def _encoded(encode: Callable[[str], str], size: int) -> str:
    """The export encoded whole, cut to ``size`` at a character boundary of the encoding."""
    text = encode(customer_export(size))[:size]
    cut = max(text.rfind("%"), text.rfind("&"))
    return text[:cut] if cut > size - 12 else text


def _combining(size: int) -> str:
    return customer_export(size).translate({ord(v): v + "\u0301" for v in "aeiou"})[:size]


RECIPES: dict[str, Callable[[int], str]] = {
    "realistic": customer_export,
    "digits_4417": partial(_repeat, "4417 "),
    "blue_shield": partial(_repeat, "Blue Shield "),
    "swapped_names": partial(_repeat, "Gonzalez, Maria; "),
    "typos": _typos,
    "exact_names": partial(_repeat, "Maria Gonzalez "),
    "percent": partial(_encoded, lambda t: quote(t, safe="")),
    "entities": partial(_encoded, lambda t: "".join(f"&#{ord(c)};" for c in t)),
    "zero_width": partial(_repeat, "4\u200d4\u200d1\u200d7 "),
    "fullwidth": partial(_repeat, "４４１７５５５０１９９　"),
    "combining": _combining,
}


def adversarial_figure(stage: str, recipe: str) -> str:
    return f"adversarial_{stage}_{recipe}"


def _guard() -> Guard:
    base = policy(1_000)
    kb = PolicyKB(atoms=(*base.atoms, *TARGETS), tools=(*base.tools, EXPORT_SPEC), rules=base.rules)
    return Guard(kb, mode="enforce", tracer_provider=NoOpTracerProvider())


def stage_call(guard: Guard, stage: str, text: str) -> Callable[[], Any]:
    """``text`` through ``stage`` (check, result, exit) of ``guard``, as a zero-argument call."""
    if stage == "check":
        return partial(guard.check, EXPORT_SPEC, {"export": text})
    if stage == "result":
        return partial(guard.check_result, EXPORT_SPEC, {}, text)
    return partial(guard.check_exit, "final_response", None, text)


def adversarial_series(bench: Bench) -> None:
    """One group per stage: the realistic text and every recipe, measured together. Nothing of it
    stays alive after it (guard, texts): the atom series after it measures in the heap it had."""
    size = bench.sizes.adversarial
    bench.progress(f"building the adversarial texts ({size:,} characters each)")
    texts = {name: make(size) for name, make in RECIPES.items()}
    guard = _guard()
    for stage in STAGES:
        fns = {adversarial_figure(stage, name): stage_call(guard, stage, text) for name, text in texts.items()}
        for fn in fns.values():  # untimed: a call of a second or more is its own figure (Figure),
            fn()  # and must not be the cold one that fills the detector's memos
        # calls of a second: the default budget would give each figure one or two samples, and
        # one lucky sample of the realistic text reads as every recipe slower — three at least
        bench.time_together({name: (fn, None) for name, fn in fns.items()}, same_rounds=True,
                            budget_s=_BUDGETS * bench.sizes.budget_s, min_repeats=3)
