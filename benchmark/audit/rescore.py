"""Re-score an acquisition or exposure run from what it stored (issue 29 item 4).

``rescore_run(RUN_DIR)`` reads the run's configuration (``run.json``: suite, seed, source), its
records (``records.jsonl``: which (agent, guard, case) were measured, and whether each completed
its task) and the observations in ``audit.sqlite``, rebuilds each case's evaluation contract from
the suite generator (``S``, ``Auth`` and ``c*``, or ``k_acq`` and ``k_disc``), scores every stored
case-run again with the suite's scorer and compares the result with the recorded score.

The check is that a run can be re-adjudicated without re-running it: a change of scorer (or a
hand adjudication) reads the same evidence the run was scored from. Output is value-free: ids,
counts and rates.
"""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ._observations import acq_evidence, exp_evidence

__all__ = ["RESCORABLE", "RescoreError", "Rescored", "rescore_run"]

#: The suites whose runs keep their observations in ``audit.sqlite``.
RESCORABLE = ("acquisition", "exposure")
#: The per-case-run rates compared, per suite (fractions for exposure, booleans for acquisition).
_KEYS = {"exposure": ("ecr", "olf"), "acquisition": ("cer", "olr", "plr")}


class RescoreError(ValueError):
    """The folder is not a re-scorable run (one line saying why)."""


@dataclass
class Rescored:
    """Per (agent, guard): case-runs re-scored, how many agree with the record, the mean of each
    rate as recorded and as re-scored (percent), and the case ids that differ."""

    suite: str
    rows: list[dict[str, Any]] = field(default_factory=list)
    missing: int = 0  # measured case-runs with no stored observation

    @property
    def agree(self) -> bool:
        return self.missing == 0 and all(r["agree"] == r["n"] for r in self.rows)


def _cases(config: dict[str, Any]) -> dict[str, Any]:
    suite, seed = config.get("suite"), int(config.get("seed") or 0)
    source = config.get("source")
    if suite == "exposure":
        from ..cases.exposure import generate as gen_exp

        return {c.id: c for c in gen_exp(seed, Path(source) if source else None).cases}
    from ..cases.acquisition import generate as gen_acq

    return {c.id: c for c in gen_acq(seed).cases}


def _read(run_dir: Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    info_path, rec_path = run_dir / "run.json", run_dir / "records.jsonl"
    if not info_path.is_file() or not rec_path.is_file():
        raise RescoreError(f"{run_dir}: not a run directory (no run.json / records.jsonl)")
    config = json.loads(info_path.read_text(encoding="utf-8")).get("config", {})
    if config.get("suite") not in RESCORABLE:
        raise RescoreError(f"{run_dir}: suite {config.get('suite')!r} is re-scored from its "
                           f"calls by `tpguard audit --trajectory`; --run takes "
                           f"{' or '.join(RESCORABLE)} runs")
    latest: dict[tuple[str, str, str], dict[str, Any]] = {}
    with rec_path.open(encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                r = json.loads(line)
                latest[(r["agent"], r["guard"], r["case_id"])] = r  # the last of a key wins
    return config, [r for r in latest.values() if r.get("score") and not r.get("error")]


def _pick(score: dict[str, Any], key: str) -> float | None:
    v = score.get(key)
    return None if v is None else float(v)


def rescore_run(run_dir: str | Path) -> Rescored:
    """Re-score every measured case-run of the run in ``run_dir`` (see the module docstring)."""
    from ..backends import AuditLog
    from ..metrics.acquisition import score_acquisition
    from ..metrics.exposure import score_exposure

    run_dir = Path(run_dir)
    config, records = _read(run_dir)
    suite = str(config["suite"])
    cases = _cases(config)
    build, score = ((exp_evidence, score_exposure) if suite == "exposure"
                    else (acq_evidence, score_acquisition))
    keys = _KEYS[suite]
    groups: dict[tuple[str, str], list[tuple[str, dict[str, Any], dict[str, Any]]]] = \
        defaultdict(list)
    out = Rescored(suite)
    with AuditLog(run_dir / "audit.sqlite") as audit:
        stored: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
        for o in audit.observations():
            stored[(o["run_id"], o["case_id"])].append(o)
        for r in records:
            rows = stored.get((f"{r['agent']}/{r['guard']}", r["case_id"]))
            case = cases.get(r["case_id"])
            if not rows or case is None:
                out.missing += 1
                continue
            ev = build(case, rows, completed=bool(r["score"].get("completed")),
                       agent=r["agent"], guard=r["guard"])
            groups[(r["agent"], r["guard"])].append((case.id, r["score"], score(ev).to_dict()))
    for (agent, guard), runs in sorted(groups.items()):
        row: dict[str, Any] = {"agent": agent, "guard": guard, "n": len(runs), "differ": []}
        for k in keys:
            for label, which in (("recorded", 0), ("rescored", 1)):
                vals = [v for _cid, *scores in runs if (v := _pick(scores[which], k)) is not None]
                row[f"{k}.{label}"] = round(100 * sum(vals) / len(vals), 2) if vals else None
        row["differ"] = [cid for cid, old, new in runs
                         if any(_pick(old, k) != _pick(new, k) for k in keys)]
        row["agree"] = row["n"] - len(row["differ"])
        out.rows.append(row)
    return out
