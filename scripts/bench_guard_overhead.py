"""Guard cost per tool call, beside the alternatives, measured in one run (a benchmark, not a test).

A typical call: 7 registered atoms, 5 arguments, one 300-character free-text slot. Prints medians
(µs) of: a bare LangChain ``tool.invoke``; ``Guard.check``; ``Guard.intercept`` with the default
(no-op) tracer and with an SDK tracer recording spans; LangChain's PII regex detectors and Presidio
on the same text; one raw Aho–Corasick pass; and ``Guard.check`` with 10 vs 10,000 atoms.
Machines are shared and noisy: read the ratios, which are measured side by side.

    python scripts/bench_guard_overhead.py [--json] [--rounds N]
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections.abc import Callable
from typing import Any

from tpguard import Guard, PolicyKB, PrivateAtom, ToolSpec

TEXT = (
    "Patient Maria Gonzalez called about her refill. She reports chest tightness since Monday and "
    "asked that we call back at (415) 555-0199. Insurance on file is Blue Shield PPO; card ending "
    "4417 was charged for the copay. Pickup RX-88213 at the Mission St pharmacy after 3pm, status "
    "ready for pickup. Priority normal, route to pharmacy queue."
)[:300]
ARGS = {"case_id": "C-1042", "priority": "normal", "queue": "pharmacy", "due": "2026-12-01",
        "summary": TEXT}
ATOMS = [
    PrivateAtom(id="name", type="person_name", value="Maria Gonzalez", aliases=("Ms. Gonzalez",)),
    PrivateAtom(id="phone", type="phone", value="415-555-0199"),
    PrivateAtom(id="symptom", type="medical", value="chest tightness", variants=("tight chest",)),
    PrivateAtom(id="insurance", type="insurance_type", value="Blue Shield PPO"),
    PrivateAtom(id="card", type="card_suffix", value="4417", masked=("**** 4417",)),
    PrivateAtom(id="pickup", type="pickup_id", value="RX-88213"),
    PrivateAtom(id="status", type="workflow_status", value="ready for pickup"),
]
SPEC = ToolSpec(name="team_handoff", purpose="hand the case to the pharmacy team", sink="handoff",
                free_text=("summary",))


def measure(fn: Callable[[], Any], rounds: int, inner: int) -> float:
    """Median µs per call over ``rounds`` batches of ``inner`` calls."""
    for _ in range(inner):
        fn()
    samples = []
    for _ in range(rounds):
        t = time.perf_counter_ns()
        for _ in range(inner):
            fn()
        samples.append((time.perf_counter_ns() - t) / inner / 1000)
    return statistics.median(samples)


def policy(extra: int = 0) -> PolicyKB:
    filler = [PrivateAtom(id=f"acct{i}", type="account_id", value=f"ACC-{i:07d}") for i in range(extra)]
    return PolicyKB(atoms=(*ATOMS, *filler), tools=(SPEC,))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--json", action="store_true")
    opts = ap.parse_args()
    r = opts.rounds
    rows: dict[str, float] = {}

    guard = Guard(policy(), mode="redact")
    rows["tpguard Guard.check (redact)"] = measure(lambda: guard.check(SPEC, ARGS), r, 400)
    enforce = Guard(policy(), mode="enforce")
    rows["tpguard Guard.check (enforce)"] = measure(lambda: enforce.check(SPEC, ARGS), r, 400)

    def intercepted(g: Guard) -> Callable[[], None]:
        def call() -> None:
            with g.intercept(SPEC, ARGS):
                pass
        return call

    rows["tpguard intercept, no-op tracer"] = measure(intercepted(guard), r, 300)
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    provider = TracerProvider()
    exporter = InMemorySpanExporter()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    traced = Guard(policy(), mode="redact", tracer_provider=provider)

    def traced_call() -> None:
        with traced.intercept(SPEC, ARGS):
            pass
        exporter.clear()

    rows["tpguard intercept, SDK spans recorded"] = measure(traced_call, r, 200)

    small, big = Guard(policy(3), mode="redact"), Guard(policy(10_000 - len(ATOMS)), mode="redact")
    rows["Guard.check with 10 atoms"] = measure(lambda: small.check(SPEC, ARGS), r, 400)
    rows["Guard.check with 10,000 atoms"] = measure(lambda: big.check(SPEC, ARGS), r, 400)

    import ahocorasick

    ac = ahocorasick.Automaton()
    for a in ATOMS:
        ac.add_word(a.value.lower(), a.id)
    ac.make_automaton()
    low = TEXT.lower()
    rows["one Aho–Corasick pass (pyahocorasick)"] = measure(lambda: list(ac.iter(low)), r, 2000)

    try:
        from langchain_core.tools import StructuredTool

        def team_handoff(case_id: str, priority: str, queue: str, due: str, summary: str) -> str:
            """Hand the case over."""
            return "HND-1"

        tool = StructuredTool.from_function(team_handoff)
        rows["bare LangChain tool.invoke"] = measure(lambda: tool.invoke(ARGS), r, 100)
        from langchain.agents.middleware._redaction import BUILTIN_DETECTORS

        detectors = list(BUILTIN_DETECTORS.values())
        rows["LangChain PII regex detectors (all built-ins)"] = measure(
            lambda: [d(TEXT) for d in detectors], r, 200)
    except ImportError:
        pass
    try:
        from tpguard.pii import offline_analyzer

        analyzer = offline_analyzer()
        rows["Presidio analyzer (pattern recognizers, offline)"] = measure(
            lambda: analyzer.analyze(text=TEXT, language="en"), max(3, r // 3), 5)
    except ImportError:
        pass

    bare = rows.get("bare LangChain tool.invoke")
    ratios = {
        "check / bare tool.invoke": rows["tpguard Guard.check (redact)"] / bare if bare else None,
        "10,000 atoms / 10 atoms": rows["Guard.check with 10,000 atoms"] / rows["Guard.check with 10 atoms"],
    }
    if opts.json:
        print(json.dumps({"median_us": rows, "ratios": ratios}, indent=2))
        return
    width = max(map(len, rows))
    print(f"{'median per call':<{width}}  µs")
    for k, v in rows.items():
        print(f"{k:<{width}}  {v:10.1f}")
    for k, ratio in ratios.items():
        if ratio is not None:
            print(f"{k:<{width}}  {ratio:10.2f}×")


if __name__ == "__main__":
    main()
