"""The realistic series (issue 33, item 1): what users send, beside the benchmark's cheapest call.

* ``realistic_*`` — one ~286-character ticket note against a 10-atom policy: a name that also
  appears inside an e-mail address, an abbreviated street (``12 Oak St.``, registered as ``12 Oak
  Street``), a card suffix, a phone number and a customer id. Measured in one group, in the same
  rounds, in CPU time: the bare LangChain call of the same arguments (the ``create_ticket`` tool of
  :mod:`._cases`), ``check`` in ``enforce`` and ``redact``, the guarded LangChain tool (enforce), and
  ``check`` of the note's non-ASCII twin (curly quotes, an accented name, a non-breaking space inside
  the address, a curly apostrophe: five characters).
* ``export_<stage>_<n>`` — the adversarial series' realistic customer export
  (:func:`~._adversarial.customer_export`, ``Sizes.adversarial`` characters: 1 MB in the full run)
  through ``check`` (arguments), ``check_result`` (what a tool returns) and ``check_exit`` (the final
  answer), with 10, 1,000 and the run's largest policy (100,000 atoms in the full run). One group per
  stage, in the same rounds, in CPU time (MB per CPU-second is the target's unit). The result
  stage's group also holds ``export_result_<10>_nonascii``: the export with a few non-ASCII
  characters (curly quotes around a name, an accented letter, a non-breaking space inside a name).
* ``export_absent_<n>`` (info, no target) — ``check_result`` of the same export with a policy of
  the run's largest size whose atoms but the first 10 never occur in it (:func:`absent_atoms`), and
  ``export_absent_10`` with those 10 alone, in one group, in CPU time: at the real series' largest
  policy the export mentions 31x the atoms it mentions at 10 (its people come from the policy's
  pools), so part of that ratio is output; this one has the same findings at both sizes and reads
  how the cost grows with atoms alone.
* memory ``guard_<n>_atoms`` — resident memory (RSS) a guard with the run's largest policy adds when
  it is built, in a fresh Python process (:mod:`._guard_memory`): the heap of the series run before
  it would hide part of it (freed arenas are reused).
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from functools import partial
from typing import Any

from opentelemetry.trace import NoOpTracerProvider

from tpguard import Guard, PolicyKB, PrivateAtom

from ._adversarial import EXPORT_SPEC, STAGES, customer_export, stage_call
from ._cases import Bench, _bare_tool
from ._workload import _RULES, NESTED_SPEC, SPEC, Sizes, count_label, make_atoms

__all__ = ["ABSENT_MARKER", "EXPORT_STAGES", "REALISTIC_ATOMS", "absent_atoms", "absent_figure", "export_atoms",
           "export_figure", "export_series", "guard_memory", "nonascii_export", "realistic_arguments",
           "realistic_policy", "realistic_series"]

_BUDGETS = 4  # the export figures' budget, in the sizes' budgets (calls of a second: three samples)
EXPORT_STAGES = STAGES

#: The note's own customer (six atoms) and four atoms of another customer: 10 policy atoms.
REALISTIC_ATOMS: tuple[PrivateAtom, ...] = (
    PrivateAtom(id="lb-name", type="person_name", value="Laurie Bates"),
    PrivateAtom(id="lb-email", type="email", value="laurie.bates@example.com"),
    PrivateAtom(id="lb-address", type="street_address", value="12 Oak Street"),
    PrivateAtom(id="lb-card", type="card_suffix", value="4821"),
    PrivateAtom(id="lb-phone", type="phone", value="415-555-0142"),
    PrivateAtom(id="lb-id", type="customer_id", value="CUS-0048213"),
    *make_atoms(4, prefix="o"),
)

_NOTE = ("Laurie Bates (laurie.bates@example.com) called about her order: the parcel for 12 Oak St. "
         "came back, resend it and refund the card ending 4821. Call her at 415-555-0142 "
         "by 5pm, customer ID CUS-0048213. She said \"the courier left it next door\" and Jose "
         "from the depot's desk can confirm.")
#: the same note with five non-ASCII characters: curly quotes, an accented name, a non-breaking
#: space inside the address, a curly apostrophe (one character each: the same length)
_NONASCII = (("\"the courier", "\u201cthe courier"), ("next door\"", "next door\u201d"), ("Jose", "Jos\u00e9"),
             ("12 Oak", "12\u00a0Oak"), ("depot's", "depot\u2019s"))


def realistic_policy() -> PolicyKB:
    """10 atoms; names, addresses and customer ids may go into tickets, the rest may not."""
    return PolicyKB(atoms=REALISTIC_ATOMS, tools=(SPEC, EXPORT_SPEC), rules=_RULES)


def realistic_arguments(*, nonascii: bool = False) -> dict[str, str]:
    """The ``create_ticket`` call whose note is the realistic one (or its non-ASCII twin)."""
    note = _NOTE
    if nonascii:
        for old, new in _NONASCII:
            note = note.replace(old, new)
    return {"customer_id": "CUS-0048213", "priority": "high", "queue": "deliveries", "due": "2026-12-04",
            "note": note}


def realistic_series(bench: Bench) -> None:
    """realistic_{bare_langchain, check_enforce, check_redact, guarded_langchain,
    check_enforce_nonascii}: one group, the same rounds, CPU time."""
    from tpguard.adapters.langchain import guard_tool

    args, twin = realistic_arguments(), realistic_arguments(nonascii=True)
    guard = Guard(realistic_policy(), mode="enforce", tracer_provider=NoOpTracerProvider())
    bare = _bare_tool()
    guarded = guard_tool(_bare_tool(), purpose=SPEC.purpose, sink=SPEC.sink, free_text=SPEC.free_text,
                         guard=Guard(realistic_policy(), mode="enforce", tracer_provider=NoOpTracerProvider()))
    fns: dict[str, tuple[Callable[[], Any], Callable[[], Any] | None]] = {
        "realistic_bare_langchain": (partial(bare.invoke, args), None),
        "realistic_check_enforce": (partial(guard.check, SPEC, args), None),
        "realistic_check_redact": (partial(guard.check, SPEC, args, mode="redact"), None),
        "realistic_guarded_langchain": (partial(guarded.invoke, args), None),
        "realistic_check_enforce_nonascii": (partial(guard.check, SPEC, twin), None),
    }
    bench.time_together(fns, same_rounds=True, cpu=True)


def export_atoms(sizes: Sizes) -> tuple[int, ...]:
    """10, 1,000 and the run's largest policy (fewer in the test-only sizes)."""
    return tuple(dict.fromkeys((sizes.atoms[0], min(1_000, sizes.policy_atoms), sizes.policy_atoms)))


#: the word put before every value of :func:`absent_atoms` but the first 10: a bare ``Qz`` prefix
#: is not enough (``qzmaria gonzalez`` is a fuzzy near miss of the export's ``Maria Gonzalez``), a
#: marker word with a digit is (a fuzzy occurrence needs the atom's digits, and no window of the
#: export has exactly ``0`` plus the value's own)
ABSENT_MARKER = "Qz0"


def absent_atoms(n: int, few: int = 10) -> list[PrivateAtom]:
    """The policy of ``n`` atoms (:func:`~._workload.make_atoms`) with every value but the first
    ``few`` behind :data:`ABSENT_MARKER`: the same records, words and pools (the export's names, streets
    and domains are still the index's words and pairs), none of them occurring in the export — a
    guard with them reports what the first ``few`` alone report (``tests/benchmark/test_perf.py``;
    the 1 MB export at 100,000 atoms: the same 132 findings)."""
    atoms = make_atoms(n)
    return atoms[:few] + [PrivateAtom(id=a.id, type=a.type, value=f"{ABSENT_MARKER} {a.value}") for a in atoms[few:]]


def absent_figure(n_atoms: int) -> str:
    return f"export_absent_{count_label(n_atoms)}"


def export_figure(stage: str, n_atoms: int, *, nonascii: bool = False) -> str:
    return f"export_{stage}_{count_label(n_atoms)}" + ("_nonascii" if nonascii else "")


def nonascii_export(text: str, k: int = 12) -> str:
    """``text`` with ``k`` lines touched (evenly spaced): curly quotes around the line's first field
    (a name), an accented letter, or a non-breaking space for the line's first space (inside a
    name) — a few characters in the whole export, not one a word."""
    lines = text.split("\n")
    step = max(1, len(lines) // (k + 1))
    for j in range(k):
        i = (j + 1) * step
        if i >= len(lines) - 1 or "," not in lines[i]:
            continue
        line = lines[i]
        if j % 3 == 0:
            head, _, tail = line.partition(",")
            lines[i] = f"\u201c{head}\u201d,{tail}"
        elif j % 3 == 1:
            lines[i] = line.replace("e", "\u00e9", 1)
        else:
            lines[i] = line.replace(" ", "\u00a0", 1)
    return "\n".join(lines)


def export_series(bench: Bench) -> None:
    """One group per stage: the export at every policy size, measured together in CPU time (their
    ratio is a target); the result stage's group also holds the export's non-ASCII twin at the
    smallest policy. Run after the atom series: it reuses the guards that series built."""
    size = bench.sizes.adversarial
    bench.progress(f"building the realistic export ({size:,} characters)")
    text = customer_export(size)
    twin = nonascii_export(text)
    counts = export_atoms(bench.sizes)
    for stage in EXPORT_STAGES:
        fns = {export_figure(stage, n): stage_call(bench.guard(n), stage, text) for n in counts}
        if stage == "result":
            fns[export_figure(stage, counts[0], nonascii=True)] = stage_call(bench.guard(counts[0]), stage, twin)
        for fn in fns.values():  # untimed: the cold call fills the detectors' memos
            fn()
        bench.time_together({name: (fn, None) for name, fn in fns.items()}, same_rounds=True,
                            budget_s=_BUDGETS * bench.sizes.budget_s, min_repeats=3, cpu=True)
    _absent_series(bench, text, counts[0], counts[-1])


def _absent_series(bench: Bench, text: str, few: int, many: int) -> None:
    """``export_absent_<few>`` and ``export_absent_<many>`` (info): ``check_result`` of the export
    with the first ``few`` atoms of :func:`absent_atoms` (the ``few``-atom policy: its guard, the
    call of ``export_result_<few>`` measured again) and with all ``many``, one group, CPU time.
    Its own group, after the targets' (the guard is dropped after it: the 10-atom target figure
    is not taken in a heap holding a second large guard)."""
    bench.progress(f"building a guard with {many:,} atoms, {many - few:,} of them absent from the export")
    absent = Guard(PolicyKB(atoms=tuple(absent_atoms(many, few)), tools=(SPEC, NESTED_SPEC), rules=_RULES),
                   mode="enforce", tracer_provider=NoOpTracerProvider())
    # the first ``few`` atoms of absent_atoms are the policy of bench.guard(few): that guard again
    fns = {absent_figure(few): stage_call(bench.guard(few), "result", text),
           absent_figure(many): stage_call(absent, "result", text)}
    for fn in fns.values():
        fn()
    bench.time_together({name: (fn, None) for name, fn in fns.items()}, same_rounds=True,
                        budget_s=_BUDGETS * bench.sizes.budget_s, min_repeats=3, cpu=True)


def guard_memory(bench: Bench) -> None:
    """memory ``guard_<n>_atoms``: RSS a guard with the run's largest policy adds, measured in a
    fresh process (:mod:`._guard_memory`), at most six caps."""
    n = bench.sizes.policy_atoms
    name = f"guard_{count_label(n)}_atoms"
    bench.progress(f"memory of a {n:,}-atom guard (a fresh process)")
    timeout = 6 * bench.sizes.cap_s
    cmd = [sys.executable, "-m", "tpguard.benchmark.perf._guard_memory", str(n)]
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, check=True)
    except subprocess.TimeoutExpired:
        bench.memory[name] = {"bytes": None, "timed_out": True, "skipped": False, "cap_s": timeout,
                              "method": "rss_delta"}
        return
    except subprocess.CalledProcessError as e:  # reported, never a crash of the run
        lines = (e.stderr or "").strip().splitlines()
        bench.memory[name] = {"bytes": None, "timed_out": False, "skipped": False, "method": "rss_delta",
                              "error": lines[-1] if lines else f"exit code {e.returncode}"}
        return
    bench.memory[name] = {**json.loads(out.stdout), "timed_out": False, "skipped": False}
