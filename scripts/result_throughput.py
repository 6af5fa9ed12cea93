"""The acquisition stage's cost on realistic results (the figures in docs/acquisition-guard.md).

    python scripts/result_throughput.py            # check_result on ~1 MB exports, MB/s per shape
    python scripts/result_throughput.py --taint 4000   # N results, one new tainted atom each

Best of seven CPU-time runs per line; run it twice, the machine is shared.
"""

from __future__ import annotations

import argparse
import json
import time
from typing import Any

from tpguard import AcquisitionScope, Guard, PolicyKB, ScopeBinding, ToolSpec
from tpguard.benchmark.perf._workload import long_text, make_atoms, policy

FIELDS = ["name", "email", "phone", "address", "notes"]


def export(size: int) -> list[dict[str, str]]:
    values: dict[str, list[str]] = {}
    for a in make_atoms(400):
        values.setdefault(a.type, []).append(a.value)
    rows: list[dict[str, str]] = []
    total = i = 0
    while total < size:
        def pick(t: str, i: int = i) -> str:
            return values[t][i % len(values[t])]
        row = {"id": f"C-{i:06d}", "customer": f"C-{i % 40:03d}", "name": pick("person_name"),
               "email": pick("email"), "phone": pick("phone"), "address": pick("street_address"),
               "updated": f"2024-{1 + i % 12:02d}-{1 + i % 28:02d}",
               "notes": "Customer asked about delivery slots; prefers mornings. Follow up next week."}
        rows.append(row)
        total += len(json.dumps(row)) + 2
        i += 1
    return rows


def throughput(size: int) -> None:
    rows = export(size)
    as_json = json.dumps(rows)
    text = long_text(size, multiline=True)
    binding = ScopeBinding(subject_key="customer", date_key="updated")
    scopes = {"fields": AcquisitionScope(fields=FIELDS, binding=binding),
              "fields+subjects": AcquisitionScope(fields=FIELDS, subjects=[f"C-{k:03d}" for k in range(30)],
                                                  binding=binding),
              "markers only": AcquisitionScope(binding=ScopeBinding(fields_arg=None))}
    cases: list[tuple[str, str, str, Any, int]] = [
        ("JSON text export", "enforce", "fields", as_json, len(as_json)),
        ("JSON text export", "redact", "fields+subjects", as_json, len(as_json)),
        ("record list (objects)", "enforce", "fields", rows, len(as_json)),
        ("plain text", "enforce", "markers only", text, len(text)),
    ]
    for label, mode, scope, payload, n in cases:
        g = Guard(policy(20), mode=mode)  # type: ignore[arg-type]
        g.add_tool(ToolSpec(name="export", purpose="export customers", sink="record"))
        best = float("inf")
        with g.session(scopes={"export": scopes[scope]}):
            for _ in range(7):
                t = time.process_time()
                d = g.check_result("export", {}, payload)
                best = min(best, time.process_time() - t)
        print(f"{label:22s} {scope:16s} {mode:8s} {n / 1e6:4.2f} MB {best * 1e3:7.1f} ms "
              f"{n / 1e6 / best:5.2f} MB/s  {d.action}")


def taint(n: int) -> None:
    g = Guard(PolicyKB(tools=(ToolSpec(name="q", sink="record"),)), mode="enforce")
    scope = AcquisitionScope(binding=ScopeBinding(atom_keys={"phone": "phone"}))
    with g.session(scopes={"q": scope}):
        start = last = time.perf_counter()
        quarter = max(1, n // 4)
        marks = []
        for i in range(n):
            g.check_result("q", {}, [{"id": f"r{i}", "phone": f"+1 415 {i // 10000:03d} {i % 10000:04d}"}])
            if (i + 1) % quarter == 0:
                now = time.perf_counter()
                marks.append(f"{i + 1}: {(now - last) / quarter * 1e3:.2f} ms")
                last = now
    print(f"{n} results registered in {time.perf_counter() - start:.2f} s; per result by quarter: "
          + ", ".join(marks))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", type=int, default=1_000_000)
    ap.add_argument("--taint", type=int, default=0, help="register N tainted atoms instead")
    args = ap.parse_args()
    if args.taint:
        taint(args.taint)
    else:
        throughput(args.size)


if __name__ == "__main__":
    main()
