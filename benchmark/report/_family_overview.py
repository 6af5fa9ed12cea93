"""The opening of an acquisition or exposure report, in the suite's own terms: what ran (agents,
guards, cases or sessions, case-runs), one sentence per guard against ``off`` on the suite's
leakage and utility measures (:mod:`._families`), and where tpguard loses — computed from the
summary rows, speaking only of guards that ran.

Text is markdown-inline (backticks for names); the HTML renders it with ``inline_html``.
"""

from __future__ import annotations

from typing import Any

from ._families import Family, family_rows, is_sanity_check
from ._load import RunData
from ._tables import fmt

__all__ = ["family_losses", "family_overview", "family_sentences"]

BASELINE = "off"
_SANITY = ("the paper's oracle sanity check, given the evaluator's answer key — a ceiling, not a "
           "guard result")


def _names(items: list[str]) -> str:
    return ", ".join(f"`{i}`" for i in items)


def _count(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def _join(parts: list[str]) -> str:
    return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + ", and " + parts[-1]


def cases_phrase(seen: int, planned: int, unit: str) -> str:
    """``"13 of 56 cases"`` while a run is short of its plan (stopped or still going), else
    ``"56 cases"`` — one wording for every suite's first screen."""
    return _count(seen or planned, unit) if seen >= planned else f"{seen} of {_count(planned, unit)}"


def _cfg(data: RunData) -> dict[str, Any]:
    raw = data.run.get("config")
    return raw if isinstance(raw, dict) else {}


def _what_ran(data: RunData, fam: Family, rows: list[dict[str, Any]]) -> str:
    cfg = _cfg(data)
    agents, guards = _order(data, rows, "agent"), _order(data, rows)
    suites = list(dict.fromkeys(r["suite"] for r in rows))
    recs = [r for r in (data.all_records or data.records) if r.get("suite") in suites]
    seen = len({(r.get("suite"), r.get("case_id")) for r in recs})
    planned = int(data.run.get("cases") or 0)
    seed = f"seed {cfg['seed']}" if "seed" in cfg else "seed not recorded"
    subset = [s for s, on in (("the quick subset", cfg.get("quick")),
                              (f"limit {cfg.get('limit')}", cfg.get("limit")),
                              ("domains " + ", ".join(map(str, cfg.get("domains") or [])),
                               cfg.get("domains"))) if on]
    runs = sum(int(r.get("n_total", r.get("n", 0)) or 0) for r in rows)
    cases = cases_phrase(seen, planned, fam.unit)  # and below, how many case-runs are missing
    text = (f"This run scored {_count(len(agents), 'agent')} ({_names(agents)}) under "
            f"{_count(len(guards), 'guard')} ({_names(guards)}) on {cases} of "
            f"the {', '.join(suites)} suite ({', '.join([seed, *subset])}): "
            f"{_count(runs, fam.unit + '-run')}.")
    plan = planned * len(cfg.get("agents") or agents) * len(cfg.get("guards") or guards)
    if runs < plan:
        text += (f" **The run is incomplete: {runs} of its {plan} {fam.unit}-runs have a "
                 "record** (it stopped or is still going; the same `bench run` resumes it).")
    errors = sum(int(r.get("errors") or 0) for r in rows)
    if errors:
        text += (f" {_count(errors, fam.unit + '-run')} failed and are left out of the metrics "
                 "(their error classes are in records.jsonl and the summary rows).")
    return text


def _move(key: str, b: float | None, v: float | None) -> str:
    if b is None or v is None:
        return f"{key} undefined"
    if v == b:
        return f"left {key} at {fmt(v)} %" + (" (`off` had none)" if b == 0 else "")
    return f"{'cut' if v < b else 'raised'} {key} from {fmt(b)} % to {fmt(v)} %"


def _clause(fam: Family, row: dict[str, Any], base: dict[str, Any]) -> str:
    keys = (fam.leak, *fam.also, fam.utility)
    if all(row.get(k) == base.get(k) for k in keys) and not base.get(fam.leak):
        return "changed nothing (`off` leaked nothing)"
    main = _move(fam.leak, base.get(fam.leak), row.get(fam.leak))
    also = [f"{k} {fmt(base.get(k))} → {fmt(row.get(k))} %" for k in fam.also
            if base.get(k) is not None and row.get(k) is not None]
    u, uv, ub = fam.utility, row.get(fam.utility), base.get(fam.utility)
    util = (f"{u} unchanged at {fmt(uv)} %" if uv == ub else
            f"{u} {fmt(uv)} % against {fmt(ub)} %")
    return main + (f" ({', '.join(also)})" if also else "") + f", {util}"


Tests = dict[tuple[str, str, str, str], dict[str, Any]]


def _tests(data: RunData, fam: Family) -> Tests:
    """The summary's paired comparisons against ``off``, by (agent, suite, guard, metric)."""
    part = (data.full_summary or data.summary).get(fam.name) if fam.name else None
    comps = part.get("comparisons", []) if isinstance(part, dict) else []
    return {(t["agent"], t["suite"], t["guard"], t["metric"]): t for t in comps
            if isinstance(t, dict) and {"agent", "suite", "guard", "metric"} <= t.keys()}


def _unpaired(row: dict[str, Any], base: dict[str, Any]) -> bool:
    """A guard and ``off`` scored on different numbers of cases (a partial run): their rates are
    over different cases, so only the paired differences compare them."""
    return row.get("n") != base.get("n")


def _diff(t: dict[str, Any] | None) -> float | None:
    d = t.get("mean_diff") if t else None
    return float(d) if isinstance(d, int | float) else None


def _paired_clause(fam: Family, row: dict[str, Any], tests: Tests) -> str:
    """The guard against ``off`` on the cases both ran, from the paired comparisons."""
    keys = (fam.leak, *fam.also, fam.utility)
    got = {k: tests.get((row["agent"], row["suite"], row["guard"], k)) for k in keys}
    n = next((t.get("n") for t in got.values() if t and t.get("n")), None)
    if not n:
        return f"has no {fam.unit} in common with `off` yet"
    moves = [f"{k} {'undefined' if (d := _diff(t)) is None else f'{d:+.2f} pp'}"
             for k, t in got.items()]
    return f"on the {_count(n, fam.unit)} both ran: {', '.join(moves)}"


def _description(data: RunData, guard: str) -> str:
    guards = data.run.get("guards")
    info = guards.get(guard) if isinstance(guards, dict) else None
    text = info.get("description") if isinstance(info, dict) else None
    return f" — {text} —" if text else ""


def _order(data: RunData, rows: list[dict[str, Any]], what: str = "guard") -> list[str]:
    """Guards (or agents) in the order the run was asked for (``--guard``), then any others."""
    asked = [str(g) for g in _cfg(data).get(what + "s") or []]
    ran = list(dict.fromkeys(r[what] for r in rows))
    return [g for g in asked if g in ran] + [g for g in ran if g not in asked]


def family_sentences(data: RunData, fam: Family, rows: list[dict[str, Any]]) -> list[str]:
    """One sentence per guard but ``off``: its leakage and utility against ``off`` for every agent
    that ran both (what the guard is, from run.json, in brackets)."""
    by = {(r["agent"], r["suite"], r["guard"]): r for r in rows}
    tests = _tests(data, fam)
    out = []
    for guard in _order(data, rows):
        if guard == BASELINE:
            continue
        parts = [f"{_paired_clause(fam, r, tests) if _unpaired(r, base) else _clause(fam, r, base)}"
                 f" for `{r['agent']}`" for r in rows
                 if r["guard"] == guard and r.get("n")
                 and (base := by.get((r["agent"], r["suite"], BASELINE))) is not None
                 and base.get("n")]
        if not parts:
            continue
        lead = f"`{guard}`{_description(data, guard)}"
        if is_sanity_check(guard):
            lead += f" — {_SANITY} —"
        out.append(f"{lead} {_join(parts)}, against `off`.")
    return out


def _lower(a: float | None, b: float | None) -> bool:
    return a is not None and b is not None and a < b - 1e-9


def family_losses(fam: Family, rows: list[dict[str, Any]], tests: Tests | None = None) -> list[str]:
    """Where tpguard loses, per agent: a baseline that leaks less than every tpguard guard, or
    keeps more utility at no more leakage; a tpguard guard that costs utility against ``off``;
    a tpguard guard that leaves the leakage where ``off`` had it (while ``off`` leaked). Against
    ``off`` on different numbers of cases (a partial run), the paired differences decide."""
    out: list[str] = []
    lk, ut = fam.leak, fam.utility
    for agent in dict.fromkeys(r["agent"] for r in rows):
        mine = [r for r in rows if r["agent"] == agent and r.get("n")]
        base = next((r for r in mine if r["guard"] == BASELINE), None)
        ours = [r for r in mine if fam.is_tpguard(r["guard"]) and r["guard"] != "audit"]
        others = [r for r in mine if r["guard"] != BASELINE and not fam.is_tpguard(r["guard"])
                  and not is_sanity_check(r["guard"])]
        for o in others:
            beaten = [r for r in ours if _lower(o.get(lk), r.get(lk))]
            if ours and len(beaten) == len(ours):
                out.append(f"`{o['guard']}` leaks less than every tpguard guard for `{agent}` "
                           f"({lk} {fmt(o.get(lk))} % vs {_names([r['guard'] for r in ours])} "
                           f"at {', '.join(fmt(r.get(lk)) for r in ours)} %).")
            for r in ours:
                if (_lower(r.get(ut), o.get(ut)) and None not in (o.get(lk), r.get(lk))
                        and not _lower(r.get(lk), o.get(lk))):
                    out.append(f"`{o['guard']}` keeps more {ut} than `{r['guard']}` for `{agent}` "
                               f"({fmt(o.get(ut))} % vs {fmt(r.get(ut))} %) at no more {lk}.")
        if base is None:
            continue
        for r in ours:
            if _unpaired(r, base):
                out += _paired_losses(fam, r, (tests or {}), agent)
                continue
            if _lower(r.get(ut), base.get(ut)):
                out.append(f"`{r['guard']}` costs {ut} for `{agent}`: {fmt(r.get(ut))} % vs "
                           f"{fmt(base.get(ut))} % under `off`"
                           f"{_evidence((tests or {}).get((r['agent'], r['suite'], r['guard'], ut)))}.")
            if base.get(lk) and r.get(lk) is not None and not _lower(r.get(lk), base.get(lk)):
                out.append(f"`{r['guard']}` leaves {lk} at {fmt(r.get(lk))} % for `{agent}` "
                           f"(`off`: {fmt(base.get(lk))} %).")
    return out


def _evidence(t: dict[str, Any] | None) -> str:
    """The paired test behind a cost, so a first screen does not present a difference of one or
    two cases as a finding: `` (paired sign-flip over sessions: p = 0.38)``; empty without one."""
    p = t.get("p_value") if t else None
    if not isinstance(p, int | float) or not t:
        return ""
    note = " — within chance at this size" if p >= 0.05 else ""
    return f" ({t.get('test') or 'paired test'}: p = {p:.2f}{note})"


def _paired_losses(fam: Family, r: dict[str, Any], tests: Tests, agent: str) -> list[str]:
    key = (r["agent"], r["suite"], r["guard"])
    out = []
    ut, lk = tests.get((*key, fam.utility)), tests.get((*key, fam.leak))
    if (d := _diff(ut)) is not None and d < -1e-9:
        out.append(f"`{r['guard']}` costs {fam.utility} for `{agent}`: {d:+.2f} pp against `off` "
                   f"on the {_count(int(ut.get('n') or 0) if ut else 0, fam.unit)} both ran"
                   f"{_evidence(ut)}.")
    # a mean difference of 0 does not say whether off leaked on those cases: only a rise is sure
    if (d := _diff(lk)) is not None and d > 1e-9:
        out.append(f"`{r['guard']}` raises {fam.leak} for `{agent}`: {d:+.2f} pp against `off` "
                   f"on the {_count(int(lk.get('n') or 0) if lk else 0, fam.unit)} both ran.")
    return out


def family_overview(data: RunData, fam: Family) -> list[str]:
    """``[what ran, one sentence per guard …, where tpguard loses]``."""
    rows = family_rows(data.full_summary or data.summary, fam)
    losses = family_losses(fam, rows, _tests(data, fam))
    ran = {r["guard"] for r in rows if r.get("n")}
    acting = [g for g in ran if fam.is_tpguard(g) and g != "audit"]
    if losses:
        loss = "Where tpguard loses: " + " ".join(losses)
    elif not acting:  # say nothing about guards that did not run
        loss = "Where tpguard loses: no tpguard guard that acts ran in this run."
    else:
        loss = (f"Where tpguard loses: nowhere in this run — no other guard leaks less ({fam.leak}) "
                f"or keeps more {fam.utility} than tpguard's"
                + (f", and no tpguard guard costs {fam.utility} against `off`." if BASELINE in ran
                   else " (`off` did not run: no cost against it is measured)."))
    return [_what_ran(data, fam, rows), *family_sentences(data, fam, rows), loss]
