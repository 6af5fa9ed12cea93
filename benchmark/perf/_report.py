"""The ratios of issue 9 with their targets, the JSON document and the rich tables.

A ratio compares two figures of the same run (noise on a shared machine cancels out better than in
absolute numbers). Where a figure timed out, the ratio is a bound: ``at_least`` when the numerator
timed out (never a pass), ``at_most`` when only the denominator did (a pass only if the bound meets
the target).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any, Literal

from rich.console import Console
from rich.table import Table

from ._adversarial import RECIPES, STAGES, adversarial_figure
from ._realistic import EXPORT_STAGES, absent_figure, export_atoms, export_figure
from ._workload import Sizes, count_label, size_label

if TYPE_CHECKING:
    from . import PerfRun
    from ._measure import Figure

__all__ = ["ABSENT_RATIO", "INFO_RATIOS", "RATIOS", "Ratio", "RatioSpec", "format_ns", "info_ratios", "ratios", "render",
           "to_json"]

Bound = Literal["exact", "at_least", "at_most", "unknown"]


@dataclass(frozen=True)
class RatioSpec:
    key: str
    target: float
    numerator: Callable[[Sizes], str]
    denominator: Callable[[Sizes], str] | None = None  # None: an absolute figure, in ms
    #: the numerator is the slowest of these figures (the adversarial series' worst recipe)
    worst_of: Callable[[Sizes], tuple[str, ...]] | None = None
    #: read a value other than a ratio or ms (issue 33's MB per CPU-second and MB of memory):
    #: ``reading(run) → (value, bound)``, in ``unit``; ``minimum``: the target is a floor
    reading: Callable[[PerfRun], tuple[float | None, Bound]] | None = None
    unit: str | None = None
    minimum: bool = False


def _adversarial(stage: str) -> RatioSpec:
    """``adversarial_<stage>/realistic``: the slowest recipe against the realistic text (≤ 3)."""
    recipes = tuple(name for name in RECIPES if name != "realistic")
    return RatioSpec(f"adversarial_{stage}/realistic", 3.0, _fixed(adversarial_figure(stage, recipes[0])),
                     _fixed(adversarial_figure(stage, "realistic")),
                     worst_of=lambda _: tuple(adversarial_figure(stage, r) for r in recipes))


def _fixed(name: str) -> Callable[[Sizes], str]:
    return lambda _: name


def _export(stage: str, which: int, *, nonascii: bool = False) -> Callable[[Sizes], str]:
    """The export figure of ``stage`` at the ``which``-th policy size of :func:`export_atoms`."""
    return lambda s: export_figure(stage, export_atoms(s)[which], nonascii=nonascii)


def _mb_per_cpu_s(run: PerfRun) -> tuple[float | None, Bound]:
    """Throughput of ``check_result`` on the export at 10 atoms (MB = 2**20 characters); a
    timed-out figure gives an upper bound (never a pass)."""
    f = run.figures.get(export_figure("result", export_atoms(run.sizes)[0]))
    if f is None or not f.estimate_ns:
        return None, "unknown"
    return run.sizes.adversarial / 2**20 / (f.estimate_ns / 1e9), "at_most" if f.timed_out else "exact"


def _guard_mb(run: PerfRun) -> tuple[float | None, Bound]:
    """RSS a guard with the largest policy adds (``_guard_memory``), in MB."""
    m = run.memory.get(f"guard_{count_label(run.sizes.policy_atoms)}_atoms") or {}
    return (None, "unknown") if m.get("bytes") is None else (m["bytes"] / 2**20, "exact")


#: issue 33's targets, read on the realistic series (``_realistic``)
_REALISTIC_RATIOS: tuple[RatioSpec, ...] = (
    RatioSpec("realistic_check_enforce/bare_langchain", 0.20, _fixed("realistic_check_enforce"),
              _fixed("realistic_bare_langchain")),
    RatioSpec("realistic_check_redact/bare_langchain", 0.30, _fixed("realistic_check_redact"),
              _fixed("realistic_bare_langchain")),
    RatioSpec("realistic_nonascii/ascii", 1.2, _fixed("realistic_check_enforce_nonascii"),
              _fixed("realistic_check_enforce")),
    RatioSpec("export_result_100k/export_result_10", 1.3, _export("result", -1), _export("result", 0)),
    RatioSpec("export_result_10_mb_per_cpu_s", 5.0, _export("result", 0), reading=_mb_per_cpu_s,
              unit="MB/CPU-s", minimum=True),
    RatioSpec("export_nonascii/ascii", 1.2, _export("result", 0, nonascii=True), _export("result", 0)),
    RatioSpec("guard_memory_100k_atoms", 120.0, lambda s: f"guard_{count_label(s.policy_atoms)}_atoms",
              reading=_guard_mb, unit="MB"),
)


RATIOS: tuple[RatioSpec, ...] = (
    RatioSpec("check_enforce/bare_langchain", 0.20, _fixed("check_enforce"), _fixed("bare_langchain")),
    RatioSpec("intercept_sdk/bare_langchain", 0.5, _fixed("intercept_sdk"), _fixed("bare_langchain")),
    RatioSpec("guarded_langchain/bare_langchain", 1.3, _fixed("guarded_langchain"),
              _fixed("bare_langchain")),
    RatioSpec("atoms_100k/atoms_10", 2.0, lambda s: f"atoms_{count_label(s.atoms[-1])}",
              lambda s: f"atoms_{count_label(s.atoms[0])}"),
    RatioSpec("multiline_100k/single_100k", 1.5, lambda s: f"multiline_{size_label(s.length_big)}",
              lambda s: f"single_{size_label(s.length_big)}"),
    RatioSpec("multiline_100k/multiline_10k", 12.0, lambda s: f"multiline_{size_label(s.length_big)}",
              lambda s: f"multiline_{size_label(s.length_small)}"),
    RatioSpec("redact_10k_leaves/redact_1k_leaves", 12.0,
              lambda s: f"redact_{count_label(s.leaves[-1])}_leaves",
              lambda s: f"redact_{count_label(s.leaves[0])}_leaves"),
    RatioSpec("session_entry_100k_atoms", 1.0,
              lambda s: f"session_entry_{count_label(s.policy_atoms)}_atoms"),
    RatioSpec("register_1000_one_by_one/register_1000_at_once", 2.0,
              lambda s: f"register_{s.register}_one_by_one",
              lambda s: f"register_{s.register}_at_once"),
    *(_adversarial(stage) for stage in STAGES),
    RatioSpec("mcp_proxied_cpu/mcp_direct_cpu", 1.3, _fixed("mcp_proxied_cpu"), _fixed("mcp_direct_cpu")),
    *_REALISTIC_RATIOS,
)


#: Ratios shown beside the targets, without one (``--check`` ignores them): ``(key, numerator,
#: denominator)``. The guarded LangChain call's target is measured in ``enforce`` (the default
#: deployment), and so is ``intercept`` with SDK spans (the same call as ``check_enforce``, plus
#: its span); their ``redact`` costs are reported here so nothing is hidden.
INFO_RATIOS: tuple[tuple[str, str, str], ...] = (
    ("guarded_langchain_redact/bare_langchain", "guarded_langchain_redact", "bare_langchain"),
    ("intercept_sdk_redact/bare_langchain", "intercept_sdk_redact", "bare_langchain"),
    ("mcp_proxied/mcp_direct", "mcp_proxied", "mcp_direct"),  # wall-clock, beside the CPU target
    ("realistic_guarded_langchain/bare_langchain", "realistic_guarded_langchain", "realistic_bare_langchain"),
)


#: info ratio of the export at the largest policy whose extra atoms never occur in it, to the same
#: export at 10 atoms (``_realistic.absent_atoms``): flatness in atoms without the real series'
#: output growth; its figures depend on the run's sizes, like the export target's
ABSENT_RATIO = "export_absent_100k/export_absent_10"


@dataclass(frozen=True)
class Ratio:
    key: str
    value: float | None
    target: float
    ok: bool
    unit: str  # "x" (a ratio), "ms" (an absolute figure), "MB/CPU-s" or "MB"
    bound: Bound
    numerator: str
    denominator: str | None
    minimum: bool = False  # the target is a floor: ok when value ≥ target


def _worst(names: tuple[str, ...], figures: dict[str, Figure]) -> str | None:
    """The slowest of ``names`` (a timed-out figure counts by its bound)."""
    present = [n for n in names if n in figures and figures[n].estimate_ns is not None]
    return max(present, key=lambda n: figures[n].estimate_ns or 0.0) if present else None


def _reading(spec: RatioSpec, run: PerfRun) -> Ratio:
    assert spec.reading is not None
    value, bound = spec.reading(run)
    passing = ("exact", "at_least") if spec.minimum else ("exact", "at_most")
    ok = value is not None and bound in passing and (value >= spec.target if spec.minimum else value <= spec.target)
    return Ratio(spec.key, value, spec.target, ok, spec.unit or "x", bound, spec.numerator(run.sizes), None,
                 spec.minimum)


def _ratio(spec: RatioSpec, sizes: Sizes, figures: dict[str, Figure]) -> Ratio:
    num_name = spec.numerator(sizes)
    if spec.worst_of is not None:
        num_name = _worst(spec.worst_of(sizes), figures) or num_name
    den_name = spec.denominator(sizes) if spec.denominator else None
    num = figures.get(num_name)
    den = figures.get(den_name) if den_name else None
    value: float | None = None
    bound: Bound = "unknown"
    if num is not None and num.estimate_ns is not None:
        if den_name is None:
            value, bound = num.estimate_ns / 1e6, "at_least" if num.timed_out else "exact"
        elif den is not None and den.estimate_ns and not (num.timed_out and den.timed_out):
            value = num.estimate_ns / den.estimate_ns
            bound = "at_least" if num.timed_out else "at_most" if den.timed_out else "exact"
    ok = value is not None and bound in ("exact", "at_most") and value <= spec.target
    return Ratio(spec.key, value, spec.target, ok, "ms" if den_name is None else "x", bound,
                 num_name, den_name)


def ratios(run: PerfRun) -> list[Ratio]:
    return [_reading(spec, run) if spec.reading else _ratio(spec, run.sizes, run.figures) for spec in RATIOS]


def info_ratios(run: PerfRun) -> dict[str, dict[str, Any]]:
    """The informational ratios (no target): ``{key: {value, numerator, denominator}}``."""
    out: dict[str, dict[str, Any]] = {}
    counts = export_atoms(run.sizes)
    for key, num_name, den_name in (*INFO_RATIOS, (ABSENT_RATIO, absent_figure(counts[-1]), absent_figure(counts[0]))):
        num, den = run.figures.get(num_name), run.figures.get(den_name)
        value = None
        if num is not None and den is not None and num.median_ns is not None and den.median_ns:
            value = num.median_ns / den.median_ns
        out[key] = {"value": value, "numerator": num_name, "denominator": den_name}
    return out


def _us(ns: float | None) -> float | None:
    return None if ns is None else round(ns / 1000, 3)


def to_json(run: PerfRun) -> dict[str, Any]:
    """The document ``--json`` prints (documented in ``docs/perf.md``)."""
    figures = {
        name: {"median_us": _us(f.median_ns), "n": f.n, "calls": f.calls, "timed_out": f.timed_out,
               "at_least_us": _us(f.at_least_ns), "skipped": f.skipped, "clock": "cpu" if f.cpu else "wall"}
        for name, f in run.figures.items()
    }
    out = {}
    for r in ratios(run):
        d = asdict(r)
        out[d.pop("key")] = d
    return {"machine": run.machine, "quick": run.sizes.name != "full", "sizes": run.sizes.name,
            "cap_s": run.sizes.cap_s, "figures": figures, "memory": run.memory, "ratios": out,
            "info_ratios": info_ratios(run), "adversarial": adversarial_table(run), "export": export_table(run)}


def export_table(run: PerfRun) -> dict[str, Any]:
    """``{"chars": n, "clock": "cpu", "<stage>": {"<atoms>": {"mb_per_cpu_s", "ratio"}}}``: the
    realistic export's throughput at every stage and policy size (MB = 2**20 characters), and its
    ratio to the smallest policy's; ``"result"`` also holds ``"<atoms>_nonascii"``."""
    size, counts = run.sizes.adversarial, export_atoms(run.sizes)
    out: dict[str, Any] = {"chars": size, "clock": "cpu"}
    for stage in EXPORT_STAGES:
        base = run.figures.get(export_figure(stage, counts[0]))
        keys = [(count_label(n), export_figure(stage, n)) for n in counts]
        if stage == "result":
            keys.append((f"{count_label(counts[0])}_nonascii", export_figure(stage, counts[0], nonascii=True)))
        rows: dict[str, Any] = {}
        for key, name in keys:
            f = run.figures.get(name)
            ns = f.estimate_ns if f is not None else None
            rows[key] = {
                "figure": name,
                "mb_per_cpu_s": None if not ns else round(size / 2**20 / (ns / 1e9), 3),
                "ratio": None if not ns or base is None or not base.estimate_ns else round(ns / base.estimate_ns, 3),
                "timed_out": bool(f and f.timed_out)}
        out[stage] = rows
    return out


def adversarial_table(run: PerfRun) -> dict[str, Any]:
    """``{"chars": n, "<stage>": {"<recipe>": {"mb_per_s", "ratio"}}}``: throughput of every
    adversarial figure (MB = 2**20 characters) and its ratio to the realistic text's."""
    size = run.sizes.adversarial
    out: dict[str, Any] = {"chars": size}
    for stage in STAGES:
        base = run.figures.get(adversarial_figure(stage, "realistic"))
        rows: dict[str, Any] = {}
        for recipe in RECIPES:
            f = run.figures.get(adversarial_figure(stage, recipe))
            ns = f.estimate_ns if f is not None else None
            rows[recipe] = {
                "mb_per_s": None if not ns else round(size / 2**20 / (ns / 1e9), 3),
                "ratio": None if not ns or base is None or not base.estimate_ns else round(ns / base.estimate_ns, 3),
                "timed_out": bool(f and f.timed_out)}
        out[stage] = rows
    return out


def format_ns(ns: float) -> str:
    for unit, scale in (("s", 1e9), ("ms", 1e6), ("µs", 1e3)):
        if ns >= scale:
            return f"{ns / scale:,.3g} {unit}" if ns < 1000 * scale else f"{ns / scale:,.0f} {unit}"
    return f"{ns:.0f} ns"


def _figure_cell(f: Figure, cap_s: float) -> str:
    if f.median_ns is not None:
        return format_ns(f.median_ns)
    what = "skipped" if f.skipped else "timed out"
    return f"[yellow]{what}[/] (≥ {format_ns(f.at_least_ns or cap_s * 1e9)})"


def _unit(r: Ratio) -> str:
    return "×" if r.unit == "x" else r.unit


def _ratio_cell(r: Ratio) -> str:
    if r.value is None:
        return "n/a"
    sign = {"at_least": "≥ ", "at_most": "≤ "}.get(r.bound, "")
    number = f"{r.value:,.0f}" if r.value >= 100 else f"{r.value:.3g}"
    return f"{sign}{number} {_unit(r)}"


def render(run: PerfRun, console: Console) -> None:
    quick = "" if run.sizes.name == "full" else f" — {run.sizes.name.upper()} sizes"
    figs = Table(title=f"tpguard bench perf: median per call{quick}", title_justify="left")
    figs.add_column("figure")
    figs.add_column("median", justify="right")
    figs.add_column("samples × calls", justify="right")
    for name, f in run.figures.items():
        figs.add_row(name + (" [dim](CPU)[/]" if f.cpu else ""), _figure_cell(f, run.sizes.cap_s),
                     f"{f.n} × {f.calls}" if f.n else "—")
    for name, m in run.memory.items():
        held = (f"{m['bytes'] / 2**20:,.1f} MB" if m.get("bytes") is not None
                else "[yellow]skipped[/] (session entry timed out)" if m.get("skipped")
                else f"[yellow]error[/] ({m['error']})" if m.get("error")
                else "[yellow]timed out[/]")
        method = "RSS delta, own process" if m.get("method") == "rss_delta" else "tracemalloc"
        figs.add_row(f"memory: {name}", held, method)
    console.print(figs)
    table = Table(title=f"ratios and targets{quick}", title_justify="left")
    table.add_column("ratio (figures used, dimmed)", no_wrap=True)
    table.add_column("value", justify="right", no_wrap=True)
    table.add_column("target", justify="right", no_wrap=True)
    table.add_column("", justify="center", no_wrap=True)
    for r in ratios(run):
        target = f"{'≥' if r.minimum else '≤'} {r.target:g} {_unit(r)}"
        verdict = "[green]pass[/]" if r.ok else "[red]FAIL[/]"
        used = r.numerator if r.denominator is None else f"{r.numerator} / {r.denominator}"
        if r.unit.startswith("MB/"):
            used = f"{run.sizes.adversarial:,} characters / CPU time of {r.numerator}"
        table.add_row(f"{r.key}\n[dim]{used}[/]", _ratio_cell(r), target, verdict)
    for key, info in info_ratios(run).items():
        value = "n/a" if info["value"] is None else f"{info['value']:.3g} ×"
        table.add_row(f"{key}\n[dim]{info['numerator']} / {info['denominator']}[/]", value, "—",
                      "[dim]info[/]")
    console.print(table)
    m = run.machine
    console.print(f"{m['cpus_usable'] or m['cpu_count']} CPUs, Python {m['python']}, load "
                  f"{m['load_average'] and ' '.join(f'{x:.1f}' for x in m['load_average'])}; "
                  f"one call is capped at {run.sizes.cap_s:g} s.", highlight=False)
