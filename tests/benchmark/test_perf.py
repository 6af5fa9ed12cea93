"""``tpguard bench perf``: the whole command on test-only sizes, and the timing helper's budget and
cap. Targets are *not* asserted: the machine is shared and noisy; the command is a report."""

from __future__ import annotations

import dataclasses
import json
import time

import pytest
from typer.testing import CliRunner

from tpguard.benchmark.perf import RATIOS, SIZES, Figure, measure, measure_interleaved, ratios
from tpguard.benchmark.perf._adversarial import RECIPES, STAGES, adversarial_figure, customer_export
from tpguard.benchmark.perf._realistic import absent_atoms, absent_figure, export_figure
from tpguard.benchmark.perf._workload import case_atoms, long_text, make_atoms, nested_arguments
from tpguard.cli import app


@pytest.fixture(scope="module")
def tiny_run() -> dict:
    result = CliRunner().invoke(app, ["bench", "perf", "--quick", "--json", "--sizes", "tiny"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_json_has_every_ratio_with_a_value_and_a_target(tiny_run: dict) -> None:
    assert set(tiny_run) >= {"machine", "figures", "ratios", "quick", "memory"}
    assert tiny_run["quick"] is True and tiny_run["sizes"] == "tiny"
    assert tiny_run["machine"]["cpu_count"] >= 1 and tiny_run["machine"]["python"]
    assert [k for k in tiny_run["ratios"]] == [spec.key for spec in RATIOS]
    for key, r in tiny_run["ratios"].items():
        assert isinstance(r["value"], float) and r["value"] > 0, key
        assert r["target"] > 0 and isinstance(r["ok"], bool), key
        assert r["numerator"] in tiny_run["figures"] or r["numerator"] in tiny_run["memory"], key
        assert r["denominator"] is None or r["denominator"] in tiny_run["figures"], key
    assert tiny_run["ratios"]["session_entry_100k_atoms"]["unit"] == "ms"
    # the guarded call's redact cost is reported beside the enforce target, never hidden
    info = tiny_run["info_ratios"]["guarded_langchain_redact/bare_langchain"]
    assert info["value"] > 0 and info["numerator"] == "guarded_langchain_redact"
    assert tiny_run["info_ratios"]["intercept_sdk_redact/bare_langchain"]["value"] > 0
    # the MCP proxy's cost (issue 30): the CPU ratio against its target, the wall ratio beside it
    mcp = tiny_run["ratios"]["mcp_proxied_cpu/mcp_direct_cpu"]
    assert mcp["target"] == 1.3 and mcp["unit"] == "x" and mcp["value"] > 0
    assert tiny_run["figures"]["mcp_proxied"]["n"] >= 20
    assert tiny_run["info_ratios"]["mcp_proxied/mcp_direct"]["value"] > 0


def test_figures_are_positive_and_cover_every_measurement(tiny_run: dict) -> None:
    figures = tiny_run["figures"]
    expected = {"bare_langchain", "check_audit", "check_enforce", "check_redact", "intercept_sdk",
                "intercept_sdk_redact",
                "guarded_langchain", "guarded_langchain_redact", "langchain_pii", "presidio", "atoms_10", "atoms_200",
                "single_1kb", "single_4kb", "multiline_1kb", "multiline_4kb", "redact_100_leaves",
                "redact_400_leaves", "session_entry_200_atoms", "register_50_at_once",
                "register_50_one_by_one"}
    expected |= {adversarial_figure(stage, recipe) for stage in STAGES for recipe in RECIPES}
    expected |= {"mcp_direct", "mcp_proxied", "mcp_direct_cpu", "mcp_proxied_cpu"}
    expected |= {"realistic_bare_langchain", "realistic_check_enforce", "realistic_check_redact",
                 "realistic_guarded_langchain", "realistic_check_enforce_nonascii", "export_result_10_nonascii"}
    expected |= {export_figure(stage, n) for stage in STAGES for n in (10, 200)}
    expected |= {absent_figure(10), absent_figure(200)}
    assert set(figures) == expected
    for name, f in figures.items():
        if f["timed_out"]:
            assert f["at_least_us"] > 0, name
        else:
            assert f["median_us"] > 0 and f["n"] >= 1 and f["calls"] >= 1, name
    memory = tiny_run["memory"]["session_200_atoms"]
    assert memory["timed_out"] or memory["bytes"] > 0


def test_check_flag_exits_1_exactly_when_a_target_fails(tiny_run: dict) -> None:
    # --check on a second tiny run: its exit code must agree with its own ratios.
    result = CliRunner().invoke(app, ["bench", "perf", "--json", "--check", "--sizes", "tiny"])
    data = json.loads(result.stdout)
    failed = not all(r["ok"] for r in data["ratios"].values())
    assert result.exit_code == (1 if failed else 0)


def test_unknown_sizes_is_a_usage_error() -> None:
    result = CliRunner().invoke(app, ["bench", "perf", "--sizes", "huge"])
    assert result.exit_code == 2


def test_workload_is_deterministic_and_mentions_atoms() -> None:
    assert [a.value for a in make_atoms(25)] == [a.value for a in make_atoms(25)]
    types = [a.type for a in make_atoms(10)]
    assert types[:5] == ["person_name", "phone", "email", "customer_id", "street_address"]
    assert len({a.id for a in make_atoms(1000)}) == 1000
    assert not {a.id for a in make_atoms(10, prefix="s")} & {a.id for a in make_atoms(10)}
    text = long_text(10 * 1024, multiline=True)
    assert 9 * 1024 < len(text) <= 10 * 1024
    assert "\n" in text and "\t" in text and "  " in text
    single = long_text(10 * 1024, multiline=False)
    assert "\n" not in single and "  " not in single
    name = case_atoms()["person_name"].value
    assert name in text and name in single
    tickets = nested_arguments(1000)["tickets"]
    assert len(tickets) * 4 == 1000


def test_measure_takes_the_median_of_repeats_within_the_budget() -> None:
    fig = measure(lambda: sum(range(100)), budget_s=0.05, cap_s=2.0, min_repeats=5)
    assert not fig.timed_out and fig.median_ns and fig.median_ns > 0
    assert fig.n >= 5 and fig.calls > 1  # fast calls are batched


def test_measure_reports_a_call_slower_than_the_budget_from_fewer_samples() -> None:
    t0 = time.perf_counter()
    fig = measure(lambda: time.sleep(0.03), budget_s=0.01, cap_s=2.0, min_repeats=50)
    assert fig.median_ns is not None and fig.median_ns >= 0.03e9
    assert fig.calls == 1 and 1 <= fig.n < 50  # stopped at four budgets, not 50 repeats
    assert time.perf_counter() - t0 < 1.0


def test_measure_caps_a_call_that_would_hang() -> None:
    calls = []

    def slow() -> None:
        calls.append(1)
        time.sleep(30)

    t0 = time.perf_counter()
    fig = measure(slow, budget_s=0.01, cap_s=0.2)
    assert time.perf_counter() - t0 < 2.0
    assert fig.timed_out and fig.median_ns is None and fig.at_least_ns == pytest.approx(0.2e9)
    assert calls == [1]


def test_interleaved_figures_are_sampled_in_turns() -> None:
    order: list[str] = []

    def op(name: str, n: int) -> None:
        order.append(name)
        sum(range(n))

    figs = measure_interleaved({"a": (lambda: op("a", 50), None), "b": (lambda: op("b", 5000), None)},
                               budget_s=0.02, cap_s=2.0, min_repeats=5)
    assert set(figs) == {"a", "b"} and all(f.n >= 5 and f.median_ns for f in figs.values())
    assert figs["b"].median_ns > figs["a"].median_ns  # type: ignore[operator]
    # after warm-up and calibration (a, a, a…, b, b, b…) the batches alternate: every "b"
    # batch is followed by an "a" batch until "a" has its samples
    runs = [name for i, name in enumerate(order) if i == 0 or order[i - 1] != name]
    assert runs[:2] == ["a", "b"] and runs.count("a") >= 5 and runs.count("b") >= 5


def test_figures_measured_together_cover_the_same_rounds() -> None:
    # A slow call and a fast one: in turns, the slow one has its five samples long before the
    # fast one's batches fill its budget, and stops; together, it goes on, round for round.
    def slow() -> None:
        time.sleep(0.02)

    apart = measure_interleaved({"fast": (lambda: sum(range(10)), None), "slow": (slow, None)},
                                budget_s=0.03, cap_s=2.0, min_repeats=5)
    together = measure_interleaved({"fast": (lambda: sum(range(10)), None), "slow": (slow, None)},
                                   budget_s=0.03, cap_s=2.0, min_repeats=5, together=True)
    assert apart["slow"].n == 5 < apart["fast"].n
    assert together["fast"].n == together["slow"].n > 5
    assert together["slow"].median_ns > together["fast"].median_ns  # type: ignore[operator]


def test_interleaved_figure_past_its_cap_times_out_alone() -> None:
    def slow() -> None:
        time.sleep(30)

    t0 = time.perf_counter()
    figs = measure_interleaved({"fast": (lambda: sum(range(10)), None), "slow": (slow, None)},
                               budget_s=0.01, cap_s=0.2)
    assert time.perf_counter() - t0 < 2.0
    assert figs["slow"].timed_out and figs["slow"].at_least_ns == pytest.approx(0.2e9)
    assert not figs["fast"].timed_out and figs["fast"].n >= 5


def test_measure_cap_is_not_swallowed_by_except_exception() -> None:
    # The guard fails closed with `except Exception`; the timeout must get through it.
    def guarded() -> None:
        try:
            time.sleep(30)
        except Exception:  # what Guard.check does
            pass

    t0 = time.perf_counter()
    assert measure(guarded, budget_s=0.01, cap_s=0.2).timed_out
    assert time.perf_counter() - t0 < 2.0


def test_series_skips_larger_sizes_after_a_timeout() -> None:
    from tpguard.benchmark.perf._cases import Bench

    sizes = SIZES["tiny"]
    bench = Bench(dataclasses.replace(sizes, cap_s=0.2, budget_s=0.01))
    made = []

    def make(seconds: float):
        made.append(seconds)
        return lambda: time.sleep(seconds)

    bench.series([{"s1": lambda: make(0.001)}, {"s2": lambda: make(5)}, {"s3": lambda: make(50)}])
    assert made == [0.001, 5]  # s3 never built nor run
    assert not bench.figures["s1"].timed_out
    assert bench.figures["s2"].timed_out and not bench.figures["s2"].skipped
    assert bench.figures["s3"].timed_out and bench.figures["s3"].skipped


def test_a_timed_out_numerator_gives_a_failing_lower_bound() -> None:
    from tpguard.benchmark.perf import PerfRun

    sizes = SIZES["quick"]
    figures = {"check_enforce": Figure.timeout(3e9), "bare_langchain": Figure(300e3, 5, 1),
               "intercept_sdk": Figure(100e3, 5, 1), "guarded_langchain": Figure(1e6, 5, 1)}
    run = PerfRun(sizes, figures, {}, {})
    by_key = {r.key: r for r in ratios(run)}
    check = by_key["check_enforce/bare_langchain"]
    assert check.bound == "at_least" and check.value == pytest.approx(1e4) and not check.ok
    assert by_key["intercept_sdk/bare_langchain"].ok
    assert not by_key["guarded_langchain/bare_langchain"].ok
    missing = by_key["atoms_100k/atoms_10"]
    assert missing.value is None and not missing.ok and missing.bound == "unknown"


def test_adversarial_series_is_reported_per_stage_against_the_realistic_text(tiny_run: dict) -> None:
    # issue 28, item 7: every recipe beside the realistic export, at every stage, measured in one
    # group per stage; the worst recipe is the numerator of a ≤ 3 target per stage
    adv = tiny_run["adversarial"]
    assert adv["chars"] == SIZES["tiny"].adversarial
    for stage in STAGES:
        assert set(adv[stage]) == set(RECIPES)
        assert adv[stage]["realistic"]["ratio"] == 1.0
        for recipe, row in adv[stage].items():
            assert row["mb_per_s"] > 0 and row["ratio"] > 0, (stage, recipe)
        r = tiny_run["ratios"][f"adversarial_{stage}/realistic"]
        assert r["target"] == 3.0 and r["denominator"] == adversarial_figure(stage, "realistic")
        worst = max((row["ratio"], recipe) for recipe, row in adv[stage].items() if recipe != "realistic")
        assert r["numerator"] == adversarial_figure(stage, worst[1])
        assert r["value"] == pytest.approx(worst[0], rel=0.01)
        n = {tiny_run["figures"][adversarial_figure(stage, recipe)]["n"] for recipe in RECIPES}
        assert len(n) == 1  # the same rounds for every figure of a stage


def test_adversarial_texts_are_the_size_asked_and_hit_the_detector() -> None:
    from tpguard.benchmark.perf._adversarial import TARGETS, _guard

    size = 8 * 1024
    for name, make in RECIPES.items():
        text = make(size)
        assert size - 12 <= len(text) <= size, name
    export = customer_export(size)
    assert export.count("\n") > 50 and "@" in export
    guard = _guard()
    assert {a.id for a in TARGETS} <= {a.id for a in guard.policy.atoms}
    exact = guard.check_exit("final_response", None, RECIPES["exact_names"](size))
    assert exact.blocked and len(exact.findings) > size // 20


# issue 33, item 1: the realistic series and their targets


def test_realistic_series_report_their_targets_beside_the_old_ones(tiny_run: dict) -> None:
    r = tiny_run["ratios"]
    expected = {"realistic_check_enforce/bare_langchain": (0.2, "realistic_check_enforce", "realistic_bare_langchain"),
                "realistic_check_redact/bare_langchain": (0.3, "realistic_check_redact", "realistic_bare_langchain"),
                "realistic_nonascii/ascii": (1.2, "realistic_check_enforce_nonascii", "realistic_check_enforce"),
                "export_result_100k/export_result_10": (1.3, "export_result_200", "export_result_10"),
                "export_nonascii/ascii": (1.2, "export_result_10_nonascii", "export_result_10")}
    for key, (target, num, den) in expected.items():
        assert (r[key]["target"], r[key]["numerator"], r[key]["denominator"]) == (target, num, den), key
        assert r[key]["unit"] == "x" and not r[key]["minimum"]
        f = tiny_run["figures"]
        assert r[key]["value"] == pytest.approx(f[num]["median_us"] / f[den]["median_us"], rel=0.01)
        assert r[key]["ok"] == (r[key]["value"] <= target)
    # the old targets are still there, unchanged
    assert r["check_enforce/bare_langchain"]["target"] == 0.2 and r["atoms_100k/atoms_10"]["target"] == 2.0
    # the guarded LangChain tool on the realistic note: reported, no target of its own
    info = tiny_run["info_ratios"]["realistic_guarded_langchain/bare_langchain"]
    assert info["value"] > 0 and info["denominator"] == "realistic_bare_langchain"
    # measured in one group, the same rounds, in CPU time
    group = [f for name, f in tiny_run["figures"].items() if name.startswith("realistic_")]
    assert len(group) == 5 and len({f["n"] for f in group}) == 1 and {f["clock"] for f in group} == {"cpu"}
    assert tiny_run["figures"]["bare_langchain"]["clock"] == "wall"


def test_export_throughput_is_a_floor_in_mb_per_cpu_second(tiny_run: dict) -> None:
    r = tiny_run["ratios"]["export_result_10_mb_per_cpu_s"]
    assert r["unit"] == "MB/CPU-s" and r["target"] == 5.0 and r["minimum"] is True
    chars, f = tiny_run["export"]["chars"], tiny_run["figures"]["export_result_10"]
    assert r["value"] == pytest.approx(chars / 2**20 / (f["median_us"] / 1e6), rel=0.01)
    assert r["ok"] == (r["value"] >= 5.0)  # a floor: higher passes
    export = tiny_run["export"]
    assert export["clock"] == "cpu" and chars == SIZES["tiny"].adversarial
    for stage in STAGES:
        assert set(export[stage]) == ({"10", "200", "10_nonascii"} if stage == "result" else {"10", "200"})
        assert export[stage]["10"]["ratio"] == 1.0
        for row in export[stage].values():
            assert row["mb_per_cpu_s"] > 0 and tiny_run["figures"][row["figure"]]["clock"] == "cpu"
        assert len({tiny_run["figures"][row["figure"]]["n"] for row in export[stage].values()}) == 1


def test_the_absent_series_reads_flatness_alone(tiny_run: dict) -> None:
    # info: the export at the largest policy whose extra atoms never occur in it, to 10 atoms
    info = tiny_run["info_ratios"]["export_absent_100k/export_absent_10"]
    assert info == {"value": pytest.approx(tiny_run["figures"]["export_absent_200"]["median_us"]
                                           / tiny_run["figures"]["export_absent_10"]["median_us"], rel=1e-3),
                    "numerator": "export_absent_200", "denominator": "export_absent_10"}
    group = [tiny_run["figures"][absent_figure(n)] for n in (10, 200)]
    assert all(f["clock"] == "cpu" for f in group) and len({f["n"] for f in group}) == 1


def test_the_absent_atoms_never_occur_in_the_export() -> None:
    # the extra atoms share the export's words and pairs, but a guard holding them finds exactly
    # what the first 10 atoms alone find (a bare "Qz" prefix would not: near misses)
    from tpguard.detect.detector import Detector

    text = customer_export(128 * 1024)
    atoms = absent_atoms(3000)
    assert [a.value for a in atoms[:10]] == [a.value for a in make_atoms(10)]
    assert all(a.value.startswith("Qz0 ") for a in atoms[10:])

    def found(detector: Detector) -> list[tuple]:
        return sorted((f.atom_id, f.method, f.start, f.end, f.score) for f in detector.scan_text(text))

    few = found(Detector(atoms[:10]))
    assert few and found(Detector(atoms)) == few
    words = {w for a in atoms[10:] for w in a.value.lower().split()[1:]}
    assert sum(w in words for w in text.lower().split()) > len(text.split()) / 4  # shared words


def test_guard_memory_is_an_rss_delta_in_a_process_of_its_own(tiny_run: dict) -> None:
    m = tiny_run["memory"]["guard_200_atoms"]
    assert m["method"] == "rss_delta" and m["atoms"] == 200 and not m["timed_out"]
    assert m["bytes"] > 0 and m["peak_bytes"] >= m["bytes"]
    r = tiny_run["ratios"]["guard_memory_100k_atoms"]
    assert r["unit"] == "MB" and r["target"] == 120.0 and r["numerator"] == "guard_200_atoms"
    assert r["value"] == pytest.approx(m["bytes"] / 2**20)


def test_a_missed_floor_and_a_missed_memory_target_fail() -> None:
    from tpguard.benchmark.perf import PerfRun

    sizes = SIZES["tiny"]  # 4 KB export: 4096 / 2**20 MB in 2 ms is ~1.95 MB/s
    figures = {"export_result_10": Figure(2e6, 5, 1, cpu=True), "export_result_200": Figure(2.4e6, 5, 1, cpu=True)}
    run = PerfRun(sizes, figures, {"guard_200_atoms": {"bytes": 300 * 2**20}}, {})
    by_key = {r.key: r for r in ratios(run)}
    floor = by_key["export_result_10_mb_per_cpu_s"]
    assert floor.value == pytest.approx(4096 / 2**20 / 2e-3) and not floor.ok
    assert by_key["export_result_100k/export_result_10"].ok  # 1.2 ≤ 1.3
    assert not by_key["guard_memory_100k_atoms"].ok and by_key["guard_memory_100k_atoms"].value == 300
    timed_out = PerfRun(sizes, {"export_result_10": Figure.timeout(1e3)}, {}, {})
    bound = {r.key: r for r in ratios(timed_out)}["export_result_10_mb_per_cpu_s"]
    assert bound.bound == "at_most" and not bound.ok  # an upper bound on throughput never passes a floor


def test_realistic_note_and_its_twin_decide_alike() -> None:
    from tpguard import Guard
    from tpguard.benchmark.perf._realistic import realistic_arguments, realistic_policy
    from tpguard.benchmark.perf._workload import SPEC

    ascii_args, twin = realistic_arguments(), realistic_arguments(nonascii=True)
    note, twin_note = ascii_args["note"], twin["note"]
    assert len(note) == len(twin_note) == 286 and note.isascii()
    assert sum(a != b for a, b in zip(note, twin_note, strict=True)) == 5
    assert "laurie.bates@example.com" in note and "12 Oak St." in note and "card ending 4821" in note
    guard = Guard(realistic_policy(), mode="enforce")
    assert len(guard.policy.atoms) == 10
    d, t = guard.check(SPEC, ascii_args), guard.check(SPEC, twin)
    assert d.blocked and t.blocked
    assert sorted((f.atom_id, f.start, f.end) for f in d.findings) == sorted((f.atom_id, f.start, f.end) for f in t.findings)
    assert {"lb-name", "lb-email", "lb-card", "lb-phone"} <= {f.atom_id for f in d.findings}


def test_nonascii_export_touches_a_few_characters_only() -> None:
    from tpguard.benchmark.perf._realistic import nonascii_export

    text = customer_export(64 * 1024)
    twin = nonascii_export(text)
    odd = [c for c in twin if not c.isascii()]
    assert 8 <= len(odd) <= 12 * 2 and {"\u201c", "\u00e9", "\u00a0"} <= set(odd)
    assert twin.count("\n") == text.count("\n")
