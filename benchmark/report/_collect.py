"""All of a report's tables, built once and shared by the markdown, CSV and HTML renderings."""

from __future__ import annotations

from dataclasses import dataclass

from ._crosstab import Config, CrossTab
from ._load import RunData
from ._tables import (
    Table,
    atom_sink_table,
    atom_type_table,
    ci_tables,
    domain_table,
    field_table,
    main_tables,
    ordered_configs,
    paths_table,
    pivot,
    sensitivity_table,
    sink_table,
    transitions_table,
)
from ._verdicts import BASELINE, comparison_table, losses

__all__ = ["ReportTables", "collect", "reference_configs"]


@dataclass
class ReportTables:
    main: list[Table]
    ci: list[Table]
    comparison: Table
    losses: Table
    loss_text: list[str]
    paths: Table
    transitions: Table
    transitions_pivot: Table
    domains: Table
    domain_pivot: Table
    atom_types: Table
    sinks: Table
    sink_pivot: Table
    fields: Table
    field_pivot: Table
    slot_pivot: Table
    atom_sink: Table
    sensitivity: Table

    def csv_tables(self) -> list[Table]:
        """Every table written to ``tables/*.csv`` (long forms; pivots are views of them)."""
        return [*self.main, *self.ci, self.comparison, self.losses, self.paths, self.transitions,
                self.domains, self.atom_types, self.sinks, self.fields, self.atom_sink,
                self.sensitivity]


def reference_configs(data: RunData) -> list[Config]:
    """Per (agent, suite), the configuration whose detail tables the markdown prints: the
    unguarded ``off`` row (what the agent itself does, as in Table 10), else the first guard."""
    seen: dict[tuple[str, str], Config] = {}
    for r in ordered_configs(data):
        key = (r["agent"], r["suite"])
        if key not in seen or r["guard"] == BASELINE:
            seen[key] = (r["agent"], r["guard"], r["suite"])
    return list(seen.values())


def collect(data: RunData, tabs: dict[Config, CrossTab]) -> ReportTables:
    transitions = transitions_table(data)
    domains, sinks, fields = domain_table(data), sink_table(data), field_table(data)
    loss_table, loss_text = losses(data)
    return ReportTables(
        main=main_tables(data), ci=ci_tables(data), comparison=comparison_table(data),
        losses=loss_table, loss_text=loss_text, paths=paths_table(data), transitions=transitions,
        transitions_pivot=pivot(transitions, "Transition", "RiskyTransitionRate",
                                title="Risky transition rate", name="transitions_risky"),
        domains=domains,
        domain_pivot=pivot(domains, "Domain", "FOR", title="FOR by domain", name="domains_for"),
        atom_types=atom_type_table(data, tabs), sinks=sinks,
        sink_pivot=pivot(sinks, "Sink", "FOR", title="FOR by sink", name="sinks_for"),
        fields=fields,
        field_pivot=pivot(fields, "Field", "FreeTextFOR", title="FreeTextFOR by field",
                          name="fields_freetextfor"),
        slot_pivot=pivot(fields, "Field", "FTSlotRate", title="FTSlotRate by field",
                         name="fields_slotrate"),
        atom_sink=atom_sink_table(data, tabs), sensitivity=sensitivity_table(data),
    )
