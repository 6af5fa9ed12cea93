"""Benchmark reports (``tpguard.benchmark.report``) on a small real run directory.

The run is built the way the runner builds one, in miniature: six generated need-to-know cases,
two scripted agents (``oracle`` replays the ground truth; ``leaky:unit`` also copies every atom
that is forbidden for the tool into the call's first free-text slot), four guards (``off``, tpguard
``enforce`` and ``redact`` with the case's policy, and the ``drop-free-text`` baseline) in front of
real SQLite backends (``Environment`` + ``AuditLog``), scored from the audit log with
``metrics.score_trajectory`` and summarized with ``metrics.summarize``.
"""

from __future__ import annotations

import csv
import json
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tpguard import Guard
from tpguard.benchmark.backends import AuditLog, Environment
from tpguard.benchmark.cases.need_to_know import generate
from tpguard.benchmark.cases.schema import Case
from tpguard.benchmark.metrics import KEYS, CaseScorer, summarize
from tpguard.benchmark.report import build_reports, compare_runs, load_run

SEED = 3
N_CASES = 6
AGENTS = ("oracle", "leaky:unit")
GUARDS = ("off", "enforce", "redact", "drop-free-text")


def _leaky_calls(case: Case) -> list[tuple[str, dict[str, Any]]]:
    """Ground truth, plus progressive diffusion: from the second call on, every atom an earlier
    call carried that is forbidden for this tool is copied into its first free-text slot."""
    matrix = case.matrix()
    seen: list[str] = []
    out = []
    for call in case.ground_truth:
        args = json.loads(json.dumps(call.arguments))
        spec = case.tool(call.tool)
        leak = [a for a in case.atoms
                if a.id in seen and matrix.cells[(a.id, call.tool)].binary == 0]
        if spec.free_text and leak:
            slot = spec.free_text[0]
            extra = "; ".join(str(a.value) for a in leak)
            args[slot] = f"{args.get(slot) or ''} Context: {extra}".strip()
        text = json.dumps(call.arguments).lower()
        seen += [a.id for a in case.atoms if str(a.value).lower() in text and a.id not in seen]
        out.append((call.tool, args))
    return out


def _attempt(step: int, tool: str, action: str, findings: Any = ()) -> dict[str, Any]:
    return {"step": step, "tool": tool, "action": action,
            "types": sorted({f.atom_type for f in findings}),
            "fields": sorted({f.path for f in findings})}


def _run_case(case: Case, agent: str, guard: str, audit: AuditLog, run_id: str) -> dict[str, Any]:
    env = Environment(case, audit, run_id=run_id, agent=agent, guard=guard)
    tpg = Guard(case.policy, mode=guard) if guard in ("enforce", "redact") else None
    calls = _leaky_calls(case) if agent.startswith("leaky") else [
        (c.tool, c.arguments) for c in case.ground_truth]
    attempts, blocked = [], 0
    give_up = generate(SEED, n_cases=N_CASES).cases[0].id if agent.startswith("leaky") else None
    for (tool, args), gt in zip(calls, case.ground_truth, strict=True):
        step = len(attempts) + 1
        if tpg is not None:
            d = tpg.check(tool, args)
            attempts.append(_attempt(step, tool, d.action, d.forbidden))
            if d.blocked:
                blocked += 1
                if case.id == give_up:  # this agent abandons the stage instead of retrying
                    continue
                args = gt.arguments  # retry with less, as a model follows the error message
                attempts.append(_attempt(step + 1, tool, tpg.check(tool, args).action))
            else:
                args = d.arguments
        elif guard == "drop-free-text":
            args = {k: ("" if k in case.tool(tool).free_text else v) for k, v in args.items()}
            attempts.append(_attempt(step, tool, "rewrite"))
        else:
            attempts.append(_attempt(step, tool, "allow"))
        try:
            env.call(tool, args)
        except Exception:  # a rejected call is logged by the backend with outcome=error
            pass
    traj = audit.trajectory(run_id, case.id)
    traj = traj.model_copy(update={"blocked": blocked})
    scorer = CaseScorer(case)
    score = scorer.score(traj, env.s_task, agent=agent, guard=guard)
    disclosures = []
    for call, ev in zip(traj.calls, scorer.evidence(traj), strict=True):
        for f in ev.findings:
            disclosures.append({
                "step": call.step, "tool": call.tool, "sink": case.tool(call.tool).sink,
                "atom_id": f.atom_id, "atom_type": f.atom_type, "path": f.path,
                "method": f.method, "free_text": f.free_text,
                "authorized": scorer.tables.access(f.atom_id, call.tool).binary == 1})
    return {"agent": agent, "guard": guard, "suite": case.suite, "case_id": case.id,
            "domain": case.domain, "seed": SEED, "trajectory": traj.model_dump(),
            "attempts": attempts, "disclosures": disclosures, "s_task": env.s_task,
            "score": score.to_dict(),
            "result": {"final_answer": "done", "error": None, "model_calls": len(calls)},
            "elapsed_s": 0.01}


def make_run(run_dir: Path, guards: tuple[str, ...] = GUARDS) -> list[dict[str, Any]]:
    cases = generate(SEED, n_cases=N_CASES).cases
    run_dir.mkdir(parents=True, exist_ok=True)
    records = []
    with AuditLog(run_dir / "audit.sqlite") as audit:
        for agent in AGENTS:
            for guard in guards:
                for case in cases:
                    records.append(_run_case(case, agent, guard, audit, f"{agent}|{guard}"))
    run = {"config": {"suite": "need-to-know", "agents": list(AGENTS), "guards": list(guards),
                      "seed": SEED, "quick": False, "limit": None, "domains": None, "workers": 1},
           "versions": {"tpguard": "test", "python": "3.11"},
           "detector": {"evaluator": {"fuzzy": True, "pii": None},
                        "guard": {"fuzzy": True, "pii": None}},
           "started": "2025-01-01T00:00:00", "finished": "2025-01-01T00:01:00", "notes": []}
    (run_dir / "run.json").write_text(json.dumps(run))
    with (run_dir / "records.jsonl").open("w") as fh:
        for r in records:
            fh.write(json.dumps(r) + "\n")
    return records


def atom_values(n_cases: int = N_CASES) -> list[str]:
    vals = set()
    for case in generate(SEED, n_cases=n_cases).cases:
        for a in case.atoms:
            vals.update(v for v in (str(a.value), *map(str, a.aliases)) if len(v) >= 4)
    return sorted(vals)


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Path]]:
    run_dir = tmp_path_factory.mktemp("run")
    make_run(run_dir)
    return run_dir, build_reports(run_dir)


def test_files_exist_and_summary_rebuilt_from_records(built) -> None:
    run_dir, paths = built
    for name in ("report.md", "report.html", "summary.json", "tables/main_need-to-know.csv",
                 "tables/guard_vs_off.csv", "tables/transitions.csv", "tables/domains.csv",
                 "tables/atom_types.csv", "tables/sinks.csv", "tables/fields.csv",
                 "tables/atom_type_sink.csv", "tables/weight_sensitivity.csv",
                 "figures/scatter.png", "figures/sinks.png", "figures/fields.png"):
        assert name in paths and paths[name].is_file() and paths[name].stat().st_size > 0, name
    assert any(n.startswith("figures/heatmap_") for n in paths)
    assert paths["figures/scatter.png"].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["run"]["config"]["seed"] == SEED
    assert len(summary["rows"]) == len(AGENTS) * len(GUARDS)
    assert all(r["n"] == N_CASES for r in summary["rows"])


def _rows(run_dir: Path) -> dict[tuple[str, str], dict[str, Any]]:
    summary = json.loads((run_dir / "summary.json").read_text())
    return {(r["agent"], r["guard"]): r for r in summary["rows"]}


def _md_table(md: str, heading: str) -> list[list[str]]:
    block = md.split(heading, 1)[1].split("\n\n", 2)[1]
    lines = [ln for ln in block.splitlines() if ln.startswith("|")]
    return [[c.strip() for c in ln.strip("|").split("|")] for ln in lines]


def _split_md_table(md: str, heading: str) -> list[list[str]]:
    """The parts of a table split by column groups (### sub-headings), joined back on the
    identity columns (Agent, Guard)."""
    section = md.split(heading, 1)[1].split("\n## ", 1)[0].split("\n### 95 %", 1)[0]
    parts = [_md_table(section, sub) for sub in re.findall(r"^### .+$", section, re.M)]
    header = parts[0][0][:2] + [c for p in parts for c in p[0][2:]]
    body = [parts[0][i][:2] + [c for p in parts for c in p[i][2:]]
            for i in range(2, len(parts[0]))]
    assert all(p[i][:2] == body[i - 2][:2] for p in parts for i in range(2, len(p)))
    return [header, [], *body]


def test_markdown_main_table_equals_summary(built) -> None:
    run_dir, _ = built
    md = (run_dir / "report.md").read_text()
    table = _split_md_table(md, "## Overall results — need-to-know — as the paper's Tables 7/8 "
                                "(overall utility and leakage per model)")
    header, body = table[0], table[2:]
    assert max(len(line) for line in md.splitlines() if line.startswith("|")) < 200  # fits
    assert header[:3] == ["Agent", "Guard", "n"] and "FreeTextFOR" in header and "SMTC" in header
    rows = _rows(run_dir)
    assert len(body) == len(rows)
    for line in body:
        r = rows[(line[0], line[1])]
        assert int(line[2]) == r["n"]
        for col, cell in zip(header[3:], line[3:], strict=True):
            v = r[col]  # counts (n_total, errors) print as integers, metrics to 2 decimals
            want = "—" if v is None else str(v) if isinstance(v, int) else f"{v:.2f}"
            assert cell == want, (line[:2], col)
    # the oracle is the sanity control: full success, no over-disclosure, under every guard
    for guard in GUARDS:
        assert rows[("oracle", guard)]["FOR"] == 0.0
    leaky_off = rows[("leaky:unit", "off")]
    assert leaky_off["FOR"] > 10.0 and leaky_off["FreeTextFOR"] > 10.0
    assert rows[("leaky:unit", "enforce")]["FOR"] < 0.1 * leaky_off["FOR"]


def test_markdown_states_settings_and_caveats(built) -> None:
    run_dir, _ = built
    md = (run_dir / "report.md").read_text()
    assert "Evaluator detector (scores every call the backends received): fuzzy=True" in md
    assert "behaviour model" in md and "not a measurement of any LLM" in md
    assert "`drop-free-text`" in md and "langchain-ai/langchain#37659" in md
    assert "does not scan tool-call arguments" in md
    for section in ("## Each guard against off", "## Where tpguard loses",
                    "spread) — `leaky:unit` / `off`", "domain) — domains, ", "data) — atom types, ", "Figure 7a", "Figure 7b",
                    "Appendix D.2", "Table D.15 (MT-POI weight sensitivity: do rankings change "
                    "under other weightings?)"):
        assert section in md, section


def test_where_tpguard_loses_is_computed_from_rows(built) -> None:
    run_dir, _ = built
    rows = _rows(run_dir)
    md = (run_dir / "report.md").read_text()
    section = md.split("## Where tpguard loses", 1)[1].split("\n## ", 1)[0]
    expected = []
    for agent in AGENTS:
        for g in ("enforce", "redact"):
            mine, base = rows[(agent, g)], rows[(agent, "drop-free-text")]
            if base["TaskSuccess"] > mine["TaskSuccess"]:
                expected.append(f"`drop-free-text` has higher TaskSuccess than `{g}` for `{agent}`")
            if base["FOR"] < mine["FOR"]:
                expected.append(f"`drop-free-text` has lower FOR than `{g}` for `{agent}`")
    # The scripted agent gives up on one blocked stage: enforce loses utility against off (and,
    # with binary Task, drop-free-text loses more — it blanks the messages' next step).
    assert "`enforce` costs TaskSuccess against `off` for `leaky:unit`" in section
    for e in expected:
        assert e in section
    # drop-free-text blanks the required free text too, so it must lose utility somewhere,
    # and a lost row must never be claimed as a win
    with (run_dir / "tables" / "where_tpguard_loses.csv").open() as fh:
        lost = list(csv.DictReader(fh))
    bullets = [ln for ln in section.splitlines() if ln.startswith("- ")]
    assert len(lost) == (0 if "no baseline row" in section else len(bullets))
    for row in lost:
        if row["Metric"] == "FOR":
            assert float(row["Their value"]) < float(row["tpguard value"])
        else:
            assert float(row["Their value"]) > float(row["tpguard value"])


def test_csv_tables_parse_and_carry_the_summary_numbers(built) -> None:
    run_dir, _ = built
    rows = _rows(run_dir)
    with (run_dir / "tables" / "main_need-to-know.csv").open() as fh:
        main = list(csv.DictReader(fh))
    assert len(main) == len(rows)
    for line in main:
        r = rows[(line["Agent"], line["Guard"])]
        for k in KEYS:
            assert (line[k] == "") if r[k] is None else float(line[k]) == pytest.approx(r[k])
    with (run_dir / "tables" / "ci_need-to-know.csv").open() as fh:
        for line in csv.DictReader(fh):
            ci = rows[(line["Agent"], line["Guard"])]["ci"]["FOR"]
            assert float(line["FOR lo"]) == pytest.approx(ci[0])
    summary = json.loads((run_dir / "summary.json").read_text())
    with (run_dir / "tables" / "sinks.csv").open() as fh:
        sinks = list(csv.DictReader(fh))
    bd = next(b for b in summary["breakdowns"] if (b["agent"], b["guard"]) == ("leaky:unit", "off"))
    for line in sinks:
        if (line["Agent"], line["Guard"]) == ("leaky:unit", "off"):
            exp = bd["sink"][line["Sink"]]["FOR"]
            assert (line["FOR"] == "") if exp is None else float(line["FOR"]) == pytest.approx(exp)
    with (run_dir / "tables" / "guard_vs_off.csv").open() as fh:
        comp = {(c["Agent"], c["Guard"]): c for c in csv.DictReader(fh)}
    enf = comp[("leaky:unit", "enforce")]
    off_for, enf_for = rows[("leaky:unit", "off")]["FOR"], rows[("leaky:unit", "enforce")]["FOR"]
    assert float(enf["ΔFOR (%)"]) == pytest.approx(100 * (enf_for - off_for) / off_for)
    p = next(c for c in summary["comparisons"] if (c["agent"], c["guard"], c["metric"])
             == ("leaky:unit", "enforce", "FOR"))
    assert float(enf["p FOR"]) == pytest.approx(p["p_value"])


def test_atom_type_sink_for_matches_the_pooled_atom_type_breakdown(built) -> None:
    """Summing the atom type × sink cells over sinks gives the summary's per-type counts."""
    run_dir, _ = built
    summary = json.loads((run_dir / "summary.json").read_text())
    with (run_dir / "tables" / "atom_type_sink.csv").open() as fh:
        cells = [c for c in csv.DictReader(fh) if (c["Agent"], c["Guard"]) == ("leaky:unit", "off")]
    assert cells and "FOR" in cells[0]
    bd = next(b for b in summary["breakdowns"]
              if (b["agent"], b["guard"]) == ("leaky:unit", "off"))["atom_type"]
    per: dict[str, list[float]] = {}
    for c in cells:
        acc = per.setdefault(c["Atom type"], [0.0, 0.0])
        acc[0] += float(c["opportunities"])
        acc[1] += float(c["leaks"])
    for typ, (opp, leaks) in per.items():
        assert opp == bd[typ]["opportunities"] and leaks == bd[typ]["leaks"], typ
    with (run_dir / "tables" / "atom_types.csv").open() as fh:
        types = [t for t in csv.DictReader(fh) if (t["Agent"], t["Guard"]) == ("leaky:unit", "off")]
    leaked = [t for t in types if float(t["leaks"]) > 0]
    assert leaked and all(t["Common unauthorized sink"] for t in leaked)


def test_html_is_self_contained_with_scatter_and_audit_view(built) -> None:
    run_dir, _ = built
    page = (run_dir / "report.html").read_text()
    assert not re.search(r"<script[^>]+src=", page, re.I)
    assert "<link" not in page and not re.search(r"<(img|iframe)[^>]+src=.?https?:", page, re.I)
    assert page.count("Plotly.newPlot") >= 4  # scatter, sink bars, field bars, heatmap
    assert max(len(chunk) for chunk in page.split("<script")) > 1_000_000  # plotly.js inlined
    rows = _rows(run_dir)
    scatter = page.split("Scatter data", 1)[1].split("</details>", 1)[0]
    for (agent, guard), r in rows.items():
        assert f"{r['TaskSuccess']:.2f}" in scatter and f"{100 - r['MT-POI']:.2f}" in scatter
        assert f"<td>{agent} / {guard}</td>" in scatter
    data = json.loads(page.split('<script type="application/json" id="audit-data">', 1)[1]
                      .split("</script>", 1)[0])
    assert len(data["records"]) == len(AGENTS) * len(GUARDS) * N_CASES
    s = data["strings"]
    leaky_off = [r for r in data["records"]
                 if [s[i] for i in data["configs"][r["c"]]] == ["leaky:unit", "off", "need-to-know"]]
    forbidden = [d for r in leaky_off for d in r["x"] if d[8] == 0]
    assert forbidden and all(s[d[5]] and s[d[3]] for d in forbidden)  # path, atom id
    enforce = [r for r in data["records"] if s[data["configs"][r["c"]][1]] == "enforce"
               and s[data["configs"][r["c"]][0]] == "leaky:unit"]
    assert any(s[a[2]] == "block" for r in enforce for a in r["a"])
    assert "id=\"au-case\"" in page and "id=\"au-q\"" in page


def test_no_atom_value_in_any_output(built) -> None:
    run_dir, paths = built
    values = [v.lower() for v in atom_values()]
    raw = (run_dir / "records.jsonl").read_text().lower()  # the check bites: records hold values
    assert sum(1 for v in values if v in raw) > 10
    for name, path in paths.items():
        if path.suffix == ".png" or name == "summary.json":
            continue
        text = path.read_text(encoding="utf-8").lower()
        if name == "report.html":  # the inlined plotly.js is third-party code, not report text
            text = "<script".join(c for c in text.split("<script") if len(c) < 1_000_000)
        hits = [v for v in values
                if re.search(rf"(?<![0-9a-z]){re.escape(v)}(?![0-9a-z])", text)]
        assert not hits, (name, len(hits))


def test_compare_with_itself_is_all_zero(built, tmp_path: Path) -> None:
    run_dir, _ = built
    result = compare_runs(run_dir, run_dir)
    assert len(result["rows"]) == len(AGENTS) * len(GUARDS)
    assert not result["only_in_run1"] and not result["only_in_run2"]
    for r in result["rows"]:
        assert all(v is None or v == 0.0 for v in r["delta"].values())
        assert any(v is not None for v in r["delta"].values())


def test_compare_lists_rows_present_in_one_run_and_real_deltas(built, tmp_path: Path) -> None:
    run_dir, _ = built
    other = tmp_path / "other"
    make_run(other, guards=("off", "enforce", "audit"))
    result = compare_runs(run_dir, other)
    assert {(r["agent"], r["guard"]) for r in result["only_in_run1"]} == {
        (a, g) for a in AGENTS for g in ("redact", "drop-free-text")}
    assert {(r["agent"], r["guard"]) for r in result["only_in_run2"]} == {
        (a, "audit") for a in AGENTS}
    assert not (other / "summary.json").exists()  # compare only reads
    one = load_run(run_dir).summary["rows"]
    r1 = next(r for r in one if (r["agent"], r["guard"]) == ("leaky:unit", "off"))
    row = next(r for r in result["rows"] if (r["agent"], r["guard"]) == ("leaky:unit", "off"))
    assert row["run1"]["FOR"] == pytest.approx(r1["FOR"])
    assert row["delta"]["FOR"] == pytest.approx(row["run2"]["FOR"] - row["run1"]["FOR"])


def test_stale_summary_is_rebuilt_and_truncated_lines_skipped(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    records = make_run(run_dir, guards=("off",))
    (run_dir / "summary.json").write_text(json.dumps({"rows": [], "run": {}}))
    with (run_dir / "records.jsonl").open("a") as fh:
        fh.write(json.dumps(records[0]) + "\n")  # a resumed run re-wrote one record
        fh.write('{"agent": "oracle", "guard": "of')  # an interrupted write
    data = load_run(run_dir)
    assert data.summary_rebuilt and len(data.records) == len(records)
    assert any("could not be read" in n for n in data.notes)
    rebuilt = json.loads((run_dir / "summary.json").read_text())
    assert sum(r["n"] for r in rebuilt["rows"]) == len(records)
    fresh = summarize(data.scores)
    assert [r["FOR"] for r in rebuilt["rows"]] == [r["FOR"] for r in fresh["rows"]]
    assert load_run(run_dir).summary_rebuilt is False  # now up to date


def _row(agent: str, guard: str, ts: float, f: float) -> dict[str, Any]:
    return {"agent": agent, "guard": guard, "suite": "s", "n": 10, "TaskSuccess": ts, "FOR": f,
            "ci": {"TaskSuccess": [ts - 1.0, ts + 1.0], "FOR": [f - 0.5, f + 0.5]}}


def test_losses_by_hand() -> None:
    """off 90/20; enforce 85/2 (costs 5.56 % utility, leaves 10 % of the leaks); redact 90/0;
    presidio-redact 88/1 (higher TaskSuccess than enforce, lower FOR than enforce, apart)."""
    from tpguard.benchmark.report import RunData
    from tpguard.benchmark.report._verdicts import comparison_table, losses

    rows = [_row("a", "off", 90.0, 20.0), _row("a", "enforce", 85.0, 2.0),
            _row("a", "redact", 90.0, 0.0), _row("a", "presidio-redact", 88.0, 1.0)]
    data = RunData(Path("."), {}, [], [], {"rows": rows, "comparisons": [
        {"agent": "a", "suite": "s", "guard": "enforce", "metric": "FOR", "p_value": 0.002}]})
    table, text = losses(data)
    got = {(r[2], r[3], r[4]): r[5:] for r in table.rows}
    assert got == {
        ("enforce", "off", "residual FOR"): [2.0, 20.0, -18.0, None],
        ("enforce", "off", "TaskSuccess"): [85.0, 90.0, -5.0, False],
        ("enforce", "presidio-redact", "TaskSuccess"): [85.0, 88.0, -3.0, False],
        ("enforce", "presidio-redact", "FOR"): [2.0, 1.0, 1.0, True],
    }
    assert "`enforce` leaves FOR 2.00 for `a` on s (10.00 % of `off`'s 20.00)" in text[0]
    assert "85.00 vs 90.00 (-5.56 %) (95 % intervals apart)" in text[1]
    comp = {r[2]: r for r in comparison_table(data).rows}
    assert comp["enforce"][6] == pytest.approx(-90.0) and comp["enforce"][7] == 0.002
    assert comp["redact"][10] == pytest.approx(0.0) and comp["redact"][7] is None


_DOM_STUB = r"""
const fs = require("fs");
function el(tag) {
  const e = {tag, value: "", checked: false, className: "", children: [], listeners: {},
    appendChild(c) { this.children.push(c); if (tag === "select" && this.children.length === 1) this.value = c.value; },
    addEventListener(t, f) { this.listeners[t] = f; },
    querySelector(sel) { const v = /value="(.*)"/.exec(sel)[1]; return this.children.find(c => c.value === v) || null; }};
  let t = "";
  Object.defineProperty(e, "textContent", {get() { return t; },
    set(v) { t = String(v); if (t === "") e.children = []; }});
  return e;
}
const els = {"au-q": el("input"), "au-leaky": el("input"), "au-case": el("select"),
             "au-cfg": el("select"), "au-sum": el("p"), x: el("tbody"), a: el("tbody")};
els["audit-data"] = {textContent: fs.readFileSync(process.argv[2], "utf8")};
global.document = {getElementById: id => els[id], createElement: el,
                   querySelector: sel => sel.startsWith("#au-x") ? els.x : els.a};
eval(fs.readFileSync(process.argv[3], "utf8"));
const out = {cases: els["au-case"].children.map(c => c.value)};
const opts = els["au-cfg"].children.map(c => c.textContent);
for (const name of ["leaky:unit / off", "leaky:unit / enforce"]) {
  els["au-cfg"].value = String(opts.findIndex(t => t.startsWith(name)));
  els["au-cfg"].listeners.change();
  out[name] = {summary: els["au-sum"].textContent,
               x: els.x.children.map(r => [r.className, ...r.children.map(c => c.textContent)]),
               a: els.a.children.map(r => r.children.map(c => c.textContent))};
}
els["au-q"].value = "zzz-no-such-case"; els["au-q"].listeners.input();
out.filtered = els["au-case"].children.length;
console.log(JSON.stringify(out));
"""


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_audit_view_script_runs_and_shows_the_records(built, tmp_path: Path) -> None:
    """Execute the page's audit-view script (node, minimal DOM stub) on its embedded data."""
    run_dir, _ = built
    chunks = (run_dir / "report.html").read_text().split("<script")
    i = next(k for k, c in enumerate(chunks) if 'id="audit-data"' in c.split(">", 1)[0])
    (tmp_path / "data.json").write_text(chunks[i].split(">", 1)[1].split("</script>", 1)[0])
    (tmp_path / "view.js").write_text(chunks[i + 1].split(">", 1)[1].split("</script>", 1)[0])
    (tmp_path / "stub.js").write_text(_DOM_STUB)
    proc = subprocess.run(["node", str(tmp_path / "stub.js"), str(tmp_path / "data.json"),
                           str(tmp_path / "view.js")], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    records = {(r["agent"], r["guard"], r["case_id"]): r for r in make_records_view(run_dir)}
    first = sorted(out["cases"])[0]
    assert out["cases"] == sorted(out["cases"]) and len(out["cases"]) == N_CASES
    assert out["filtered"] == 0
    off = records[("leaky:unit", "off", first)]
    shown = out["leaky:unit / off"]
    assert shown["summary"].startswith(f"{first} · leaky:unit / off")
    assert len(shown["x"]) == len(off["disclosures"])
    forbidden = sorted((d["step"], d["atom_id"]) for d in off["disclosures"] if not d["authorized"])
    assert forbidden == sorted((int(r[1]), r[4]) for r in shown["x"] if r[0] == "bad")
    assert all(r[-1] == "FORBIDDEN" for r in shown["x"] if r[0] == "bad")
    enforce = records[("leaky:unit", "enforce", first)]
    assert [a[2] for a in out["leaky:unit / enforce"]["a"]] == [a["action"] for a in enforce["attempts"]]


def make_records_view(run_dir: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (run_dir / "records.jsonl").read_text().splitlines()]
