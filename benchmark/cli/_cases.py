"""``tpguard bench cases SUITE [--source DIR] [--seed N] (--stats [--json] | --show CASE_ID)``."""

from __future__ import annotations

import json
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.markup import escape

from ._common import SeedOpt, SourceOpt, SuiteArg, load_or_exit

__all__ = ["cases"]

_LABELS = (("cases", "Cases"), ("domains", "Domains"), ("tools", "Tools"),
           ("avg_tools_per_case", "Avg. tools/case"), ("avg_atoms_per_case", "Avg. atoms/case"),
           ("private_atoms", "Private atoms"), ("field_tool_pairs", "Field–tool pairs"),
           ("authorized", "Authorized"), ("forbidden", "Forbidden"))


def cases(
    suite: SuiteArg,
    source: SourceOpt = None,
    seed: SeedOpt = 0,
    stats: Annotated[bool, typer.Option("--stats", help="Print suite statistics (Table 5).")] = False,
    show: Annotated[str | None, typer.Option("--show", help="Print one case by id.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="JSON output.")] = False,
) -> None:
    """Suite statistics shaped like ToolPrivacyBench Table 5, or one case printed readably."""
    from ..cases.acquisition.cli import cases_command, is_acquisition

    if is_acquisition(suite):  # its own case type (seed 001_*)
        cases_command(seed, stats, show, as_json)
        return
    from ..cases.exposure.cli import is_exposure

    if is_exposure(suite):  # its own session type (seed 002_*)
        from ..cases.exposure.cli import cases_command as exp_cases

        exp_cases(seed, source, stats, show, as_json)
        return
    out, err = Console(), Console(stderr=True)
    loaded = load_or_exit(suite, source, seed, err)
    if show is not None:
        try:
            case = loaded.case(show)
        except KeyError:
            err.print(f"[red]error:[/] no case {escape(repr(show))} in suite {loaded.name!r}",
                      highlight=False, soft_wrap=True)
            raise typer.Exit(2) from None
        if as_json:
            out.print_json(case.model_dump_json(by_alias=True))
        else:
            from ._show import render_case

            render_case(case, out)
        return
    from ._stats import suite_stats

    data = suite_stats(loaded)
    sources = loaded.metadata.get("sources")  # public-derived: per-source counts, before/after de-dup
    if sources:
        data["sources"] = sources
    if as_json:
        typer.echo(json.dumps(data, indent=2, ensure_ascii=False))
        return
    if not stats:
        for c in loaded:
            out.print(f"{c.id}\t{c.domain}\t{len(c.tools)} tools\t{len(c.atoms)} atoms", highlight=False)
        return
    _print_stats(data, sources, out)


def _print_stats(data: dict[str, Any], sources: dict[str, Any] | None, out: Console) -> None:
    """The Table 5 statistics, cases per domain and (public-derived) per source, as tables."""
    from rich.table import Table

    table = Table(title=f"Suite {data['suite']}", show_header=True)
    for _, label in _LABELS:
        table.add_column(label, justify="right")
    table.add_row(*(str(data[k]) for k, _ in _LABELS))
    out.print(table)
    per = Table("Domain", "Cases", title="Cases per domain")
    for domain, n in data["per_domain"].items():
        per.add_row(domain, str(n))
    out.print(per)
    if sources:
        src = Table("Source", "Tasks", "Built", "Duplicates", "Distinct", "Retained",
                    title="Cases per source (before and after de-duplication and the filter)")
        for name, row in sources.items():
            src.add_row(name, *(str(row.get(k, "")) for k in
                                ("tasks", "built", "duplicates", "distinct", "retained")))
        out.print(src)
