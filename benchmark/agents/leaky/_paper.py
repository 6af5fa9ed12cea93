"""The paper's numbers the leaky profiles are fitted to — one place, each cited (seed ``000_*``,
ToolPrivacyBench, need-to-know synthetic private split).

Figure 7 is a bar chart; its values are read from the seed's text layer. Two readings are
certain from the prose (§7.3: tickets FOR 51.43 / SWLR 48.42 / FreeTextFOR 50.79; §7.4:
description FreeTextFOR 45.82, FTSlotRate > 80 % for message, description and work_notes); the
rest follow the chart's label order (value pairs FreeTextFOR, FTSlotRate before each field
label, as for ``summary`` and ``description``). The pairing of ``note`` and ``work_notes`` with
FreeTextFOR 33.59 / 6.12 is the least certain reading; it is the one where ``note`` tracks the
comment/note sink (FreeTextFOR 33.44), which §7.4's "internal notes" suggests.
"""

from __future__ import annotations

__all__ = ["DOMAIN_FOR", "FIELDS", "SINKS", "SINK_MEMBERS", "TABLE8", "TRANSITIONS"]

#: Table 8, nine models: (min, mean, max) per column, in percent. FreeText FOR here is above FOR,
#: which only the per-field-opportunity reading allows (``FreeTextFOR_field``, docs/metrics.md).
TABLE8: dict[str, tuple[float, float, float]] = {
    "Task": (93.46, 96.82, 98.86),            # Table 8, Task column
    "Workflow": (94.54, 97.99, 100.00),        # Table 8, Workflow column
    "GoldArg": (88.26, 91.88, 94.58),          # Table 8, Gold Arg. column
    "FOR": (16.50, 23.21, 28.58),              # Table 8, FOR column
    "SWLR": (18.50, 24.85, 30.48),             # Table 8, SWLR column
    "FreeTextFOR_field": (27.16, 37.11, 46.76),  # Table 8, FreeText FOR column
    "MT-POI": (19.19, 24.21, 28.04),           # Table 8, MT-POI column
    "TaskSuccess": (92.23, 95.52, 97.70),      # Table 8, TaskSuccess column
}

#: Figure 7(a), per information sink: (FOR, SWLR, FreeTextFOR), percent; ordered as the paper
#: ranks them by FOR.
SINKS: dict[str, tuple[float, float, float]] = {
    "ticket": (51.43, 48.42, 50.79),        # Fig. 7a "Ticket" (also §7.3 text)
    "handoff": (34.79, 33.94, 34.58),       # Fig. 7a "Handoff"
    "comment": (33.42, 32.34, 33.44),       # Fig. 7a "Comment / note"
    "notification": (24.65, 23.59, 24.64),  # Fig. 7a "Notification"
    "record": (5.79, 5.14, 11.62),          # Fig. 7a "Backend record"
}

#: Which of this suite's sinks pool into each Figure 7a sink (the figure has no e-mail bar; a
#: user-facing e-mail is a notification there). Payment, document and console are not reported.
SINK_MEMBERS: dict[str, tuple[str, ...]] = {
    "ticket": ("ticket",), "handoff": ("handoff",), "comment": ("comment",),
    "notification": ("notification", "email"), "record": ("record",),
}

#: Figure 7(b), per free-text field: (FTSlotRate, FreeTextFOR), percent.
FIELDS: dict[str, tuple[float, float]] = {
    "message": (81.26, 30.87),      # Fig. 7b "message"
    "summary": (35.96, 21.67),      # Fig. 7b "summary"
    "note": (57.50, 33.59),         # Fig. 7b "note" (pairing: see the module docstring)
    "description": (83.07, 45.82),  # Fig. 7b "description" (also §7.4 text)
    "work_notes": (80.51, 6.12),    # Fig. 7b "work_notes" (pairing: see the module docstring)
}

#: Table 9 (§7.5), per transition type: (FirstLeak Freq., Propagation Depth or None for N/A,
#: RiskyTransitionRate), percent / steps.
TRANSITIONS: dict[str, tuple[float, float | None, float]] = {
    "record → ticket": (37.27, 2.78, 96.89),
    "ticket → handoff": (0.00, None, 98.00),
    "document → notification": (14.09, 0.96, 82.47),
    "processing → summary": (2.08, 1.71, 5.06),
}

#: Table B.12 (complete domain-level results, synthetic private split; Table 10 shows six of
#: these rows): (FOR, SWLR, TaskSuccess), percent; labels as in this suite.
DOMAIN_FOR: dict[str, tuple[float, float, float]] = {
    "Charity aid": (19.25, 22.39, 96.34),
    "Coding": (21.63, 25.49, 92.33),
    "Credit-card risk": (42.21, 46.89, 94.59),
    "Customer dispute": (33.83, 37.03, 96.58),
    "E-commerce after-sales": (27.83, 33.01, 95.78),
    "Employee offboarding": (26.67, 30.80, 95.41),
    "Employee onboarding": (15.29, 16.68, 97.30),
    "Expense": (22.78, 22.61, 95.92),
    "Finance": (17.68, 20.01, 94.62),
    "Government service": (22.30, 21.02, 97.01),
    "Hiring": (17.93, 18.57, 96.87),
    "Housing rental": (15.68, 17.59, 96.57),
    "Insurance claim": (17.79, 17.65, 97.05),
    "IT helpdesk": (29.83, 30.89, 97.28),
    "Legal contract": (24.57, 27.00, 97.14),
    "Logistics and shipping": (21.04, 22.86, 93.78),
    "Medical": (33.07, 38.28, 95.66),
    "Procurement": (25.76, 25.44, 87.96),
    "Scholarship": (18.66, 20.88, 95.45),
    "Student counseling": (24.31, 27.85, 96.52),
    "Tax filing": (25.95, 25.23, 96.41),
    "Telecom service": (23.66, 23.94, 94.47),
    "Travel booking": (12.33, 13.61, 97.61),
}
