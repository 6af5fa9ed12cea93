"""``summary.json`` from records: errored case-runs are counted, never scored.

``summarize_records(records)`` takes the current records (last of each key, see
:func:`.records.latest_records`), scores the measured ones with :func:`..metrics.summarize`, and
adds to every (agent, guard, suite) row ``n_total`` (case-runs recorded), ``errors`` (of them,
errored), ``error_rate`` (percent of ``n_total``) and ``error_types`` (``{"Type (stage)": count}``);
``n`` stays the number of scored case-runs, so every metric's denominator excludes errors. A
configuration whose every case-run errored gets a row with ``n = 0`` and no metric values.

Acquisition scores (``score["kind"] == "acquisition"``, seed ``001_*``) are summarized by
:func:`..metrics.acquisition.summarize_acquisition` into ``summary["acquisition"]``; its rows
(``family: "acquisition"``, keys TCR, CER, HCER, OLR, PLR, HPLR … with Wilson ``ci``) also join
``summary["rows"]`` with the same error accounting.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import Any

from ..metrics import KEYS, CaseScore, summarize
from ..metrics.acquisition import ACQ_KEYS, ACQ_RATE_KEYS, AcqScore, summarize_acquisition
from ._errors import record_error

__all__ = ["error_label", "summarize_records"]

RowKey = tuple[str, str, str]


def error_label(err: dict[str, Any]) -> str:
    """``"OpenAIError (agent)"`` — how reports and the terminal name an error class."""
    return f"{err.get('type', 'Error')} ({err.get('stage', 'agent')})"


def _key(r: dict[str, Any]) -> RowKey:
    return (str(r["agent"]), str(r["guard"]), str(r["suite"]))


def summarize_records(records: Iterable[dict[str, Any]], **options: Any) -> dict[str, Any]:
    """The summary of ``records`` (already deduplicated); ``options`` go to ``summarize``."""
    totals: Counter[RowKey] = Counter()
    types: dict[RowKey, Counter[str]] = {}
    scores: list[CaseScore] = []
    acq: list[AcqScore] = []
    acq_keys: set[RowKey] = set()
    for r in records:
        key = _key(r)
        totals[key] += 1
        err = record_error(r)
        if AcqScore.is_acquisition(r.get("score")) or r.get("suite") == "acquisition":
            acq_keys.add(key)
        if err is None and AcqScore.is_acquisition(r.get("score")):
            a = AcqScore.from_dict(r["score"])
            a.agent, a.guard = key[0], key[1]
            acq.append(a)
        elif err is None and isinstance(r.get("score"), dict):
            s = CaseScore.from_dict(r["score"])
            s.agent, s.guard = key[0], key[1]  # the record's identity is authoritative
            scores.append(s)
        else:
            types.setdefault(key, Counter())[error_label(err or {"type": "MissingScore",
                                                                "stage": "scoring"})] += 1
    summary = summarize(scores, **options)
    rows = {_key(r): r for r in summary["rows"]}
    if acq_keys:
        part = summarize_acquisition(acq)
        summary["acquisition"] = part
        rows.update({_key(r): r for r in part["rows"]})
        for key in sorted(acq_keys - rows.keys()):  # every case-run of it errored
            row = {"agent": key[0], "guard": key[1], "suite": key[2], "n": 0,
                   "family": "acquisition", **dict.fromkeys(ACQ_KEYS),
                   "ci": dict.fromkeys(ACQ_RATE_KEYS)}
            rows[key] = row
            part["rows"].append(row)
    for key in totals.keys() - rows.keys():  # every case-run of this configuration errored
        rows[key] = {"agent": key[0], "guard": key[1], "suite": key[2], "n": 0,
                     **dict.fromkeys(KEYS), "ci": dict.fromkeys(KEYS)}
    for key, row in rows.items():
        errors = sum(types.get(key, Counter()).values())
        row["n_total"] = totals[key]
        row["errors"] = errors
        row["error_rate"] = 100.0 * errors / totals[key] if totals[key] else 0.0
        row["error_types"] = dict(types.get(key, Counter()).most_common())
    summary["rows"] = [rows[k] for k in sorted(rows)]
    by_type: Counter[str] = Counter()
    for c in types.values():
        by_type.update(c)
    summary["errors"] = {"total": sum(by_type.values()), "case_runs": sum(totals.values()),
                         "by_type": dict(by_type.most_common())}
    return summary
