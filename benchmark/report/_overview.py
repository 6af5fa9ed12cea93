"""The report's opening for a newcomer, computed from the summary: what was run, one sentence per
guard on its trade-off against ``off``, where tpguard loses, and the failed case-runs first.

Text is markdown-inline (backticks for names); the HTML renders it with :func:`inline_html`.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from markdown_it import MarkdownIt

from ..runner.config import ORACLE_VARIANTS
from ._families import present_families
from ._family_overview import cases_phrase, family_overview
from ._load import RunData
from ._tables import Table, fmt, ordered_configs
from ._verdicts import BASELINE, is_tpguard_mode

__all__ = ["error_table", "guard_sentences", "inline_html", "loss_summary", "no_loss_text", "overview",
           "what_was_run"]


def _names(items: list[str]) -> str:
    return ", ".join(f"`{i}`" for i in items)


def _count(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def _pct(rel: float) -> str:
    return f"{rel:+.1f} %".replace("-", "−")


def what_was_run(data: RunData) -> str:
    rows = ordered_configs(data)
    raw = data.run.get("config")
    cfg: dict[str, Any] = raw if isinstance(raw, dict) else {}
    agents = list(dict.fromkeys(r["agent"] for r in rows))
    guards = list(dict.fromkeys(r["guard"] for r in rows))
    suites = list(dict.fromkeys(r["suite"] for r in rows))
    seen = len({(r.get("suite"), r.get("case_id")) for r in data.records})
    cases = cases_phrase(seen, int(data.run.get("cases") or seen), "case")
    seed = f"seed {cfg.get('seed', 0)}"
    subset = [s for s, on in (("the quick subset", cfg.get("quick")),
                              (f"limit {cfg.get('limit')}", cfg.get("limit")),
                              ("domains " + ", ".join(map(str, cfg.get("domains") or [])),
                               cfg.get("domains"))) if on]
    seed = f"seed {cfg['seed']}" if "seed" in cfg else "seed not recorded"
    return (f"This run scored {_count(len(agents), 'agent')} ({_names(agents)}) under "
            f"{_count(len(guards), 'guard')} ({_names(guards)}) on {cases} "
            f"of the {', '.join(suites)} suite{'s' if len(suites) > 1 else ''} "
            f"({', '.join([seed, *subset])}): {_count(len(data.records), 'case-run')}.")


def _clause(row: dict[str, Any], base: dict[str, Any]) -> str:
    f, bf = row.get("FOR"), base.get("FOR")
    ts, bts = row.get("TaskSuccess"), base.get("TaskSuccess")
    if f is None or bf is None:
        part = "FOR undefined"
    elif bf > 0 and f != bf:
        verb = "cut" if f < bf else "raised"
        part = f"{verb} FOR from {fmt(bf)} % to {fmt(f)} % ({_pct(100.0 * (f - bf) / bf)})"
    elif f == bf:
        part = f"left FOR at {fmt(f)} %" + (" (`off` leaked nothing)" if bf == 0 else "")
    else:
        part = f"raised FOR from {fmt(bf)} % to {fmt(f)} %"
    return f"{part} at TaskSuccess {fmt(ts)} vs {fmt(bts)}"


def guard_sentences(data: RunData) -> list[tuple[str, str]]:
    """``(guard, sentence)`` for every guard but ``off``: its FOR and TaskSuccess against ``off``
    for each agent (and suite) that ran both."""
    rows = ordered_configs(data)
    by = {(r["agent"], r["suite"], r["guard"]): r for r in rows}
    multi = len({r["suite"] for r in rows}) > 1
    out = []
    for guard in dict.fromkeys(r["guard"] for r in rows):
        if guard == BASELINE:
            continue
        parts = []
        for r in rows:
            base = by.get((r["agent"], r["suite"], BASELINE))
            if r["guard"] != guard or base is None:
                continue
            where = f"`{r['agent']}`" + (f" on {r['suite']}" if multi else "")
            parts.append(f"{_clause(r, base)} for {where}")
        if parts:
            joined = parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + ", and " + parts[-1]
            out.append((guard, f"`{guard}` {joined} (TaskSuccess: guard vs `off`)."))
    return out


def no_loss_text(data: RunData) -> str:
    """What "where tpguard loses" says when nothing was found, naming only guards that ran."""
    guards = list(dict.fromkeys(r["guard"] for r in ordered_configs(data)))
    modes = [g for g in guards if is_tpguard_mode(g) and g != "audit"]
    baselines = [g for g in guards if g != BASELINE and not is_tpguard_mode(g)]
    if not modes:
        return "no tpguard mode that acts (`enforce`, `redact`) ran in this run."
    named = " or ".join(f"`{g}`" for g in modes)
    first = (f"no baseline ({_names(baselines)}) has a higher TaskSuccess or a lower FOR than "
             f"{named} in this run" if baselines else "no baseline ran in this run")
    if BASELINE not in guards:
        return (f"{first}; `off` did not run, so what {named} costs in TaskSuccess is not measured "
                "here; the residual FOR is in the tables.")
    cost = ("it does not cost" if len(modes) == 1 else "neither costs" if len(modes) == 2
            else "none costs")
    return f"{first}, and {cost} TaskSuccess against `off`; the residual FOR is in the tables."


def loss_summary(loss_text: list[str], limit: int = 3, data: RunData | None = None) -> str:
    """The baseline wins and utility costs of the "Where tpguard loses" section, shortened."""
    wins = [s for s in loss_text if " leaves FOR " not in s]
    if not wins:
        if data is not None:
            return "Where tpguard loses: " + no_loss_text(data)
        return ("Where tpguard loses: no baseline has a higher TaskSuccess or a lower FOR than "
                "`enforce` or `redact` in this run, and neither costs TaskSuccess against `off`; "
                "their residual FOR is listed below.")
    shown = " ".join(wins[:limit])
    more = len(wins) - limit
    return f"Where tpguard loses: {shown}" + (
        f" ({more} more under \"Where tpguard loses\".)" if more > 0 else "")


def _error_class(rec: dict[str, Any]) -> str | None:
    err = rec.get("error")
    if isinstance(err, dict):
        err = err.get("class") or err.get("type")
    if not err and isinstance(rec.get("result"), dict):
        err = rec["result"].get("error")
    return str(err) if err else None


def error_table(data: RunData) -> Table | None:
    """Rows whose case-runs failed (summary ``errors`` > 0), with the error classes of their
    records; ``None`` when no row reports errors (or the rows predate error accounting)."""
    classes: dict[tuple[str, str, str], Counter[str]] = {}
    for rec in (*data.records, *data.errored):
        if (cls := _error_class(rec)) is not None:
            key = (str(rec.get("agent")), str(rec.get("guard")), str(rec.get("suite")))
            classes.setdefault(key, Counter())[cls] += 1
    rows = []
    for r in ordered_configs(data):
        n_err = int(r.get("errors") or 0)
        if n_err <= 0:
            continue
        total = int(r.get("n_total") or (int(r.get("n", 0)) + n_err))
        found = classes.get((r["agent"], r["guard"], r["suite"]), Counter())
        rows.append([r["agent"], r["guard"], r["suite"], n_err, total,
                     100.0 * n_err / total if total else None,
                     ", ".join(f"{c} ×{k}" for c, k in found.most_common()) or None])
    if not rows:
        return None
    return Table("errors", "Errors: case-runs that failed",
                 ["Agent", "Guard", "Suite", "errors", "case-runs", "error rate (%)",
                  "error classes"], rows,
                 "A failed case-run (the agent or its model raised) is reported here and left out "
                 "of the metrics' denominators, not scored as 0; its record in records.jsonl "
                 "carries the error class. Fix the cause and re-run: errored records are retried.")


def overview(data: RunData, loss_text: list[str]) -> list[str]:
    """The opening paragraphs: what was run (and what the Presidio baseline ran), then one
    sentence per guard, then where tpguard loses."""
    oracle = [f"**{ORACLE_VARIANTS}**"] if (data.run.get("config") or {}).get("guard_knows_variants") else []
    if not data.legacy:
        fams = present_families(data.full_summary or data.summary)
        if fams:  # an acquisition or exposure run: its own terms (a run holds one suite)
            return [*oracle, *family_overview(data, fams[0])]
    first = [what_was_run(data)]
    errors = error_table(data)
    if errors is not None:
        n = sum(int(row[3]) for row in errors.rows)
        first.append(f"{_count(n, 'case-run')} failed and are left out of the metrics (see "
                     "Errors below).")
    presidio = presidio_statement(data)
    if presidio:
        first.append(presidio)
    return [" ".join([*oracle, *first]), *[s for _, s in guard_sentences(data)], loss_summary(loss_text, data=data)]


def presidio_statement(data: RunData) -> str | None:
    """Which recognizers ``presidio-redact`` ran, from ``run.json`` (its ``describe()``)."""
    if "presidio-redact" not in {g for _, g, _ in data.configs}:
        return None
    guards = data.run.get("guards") if isinstance(data.run.get("guards"), dict) else {}
    info = guards.get("presidio-redact") if isinstance(guards, dict) else None
    if isinstance(info, dict) and info.get("statement"):
        return str(info["statement"]) + "."
    model = (data.run.get("config") or {}).get("presidio_model")
    if model and str(model).lower() != "none":
        return f"presidio-redact was asked for the spaCy model {model}."
    return ("run.json does not record which Presidio recognizers ran; without a spaCy model, "
            "presidio-redact runs pattern recognizers only (person names are not detected).")


_MD = MarkdownIt("commonmark", {"html": False})  # rich's own dependency; raw HTML is escaped


def inline_html(text: str) -> str:
    """Markdown-inline text (``code``, **bold**) as escaped HTML: no literal markup survives."""
    return str(_MD.renderInline(text))
