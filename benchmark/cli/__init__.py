"""``tpguard bench …``: the benchmark's commands, registered on the core CLI.

Each command lives in its own module (``_cases.py``, ``_check.py``); a new command is one module
plus one line below. Heavy imports happen inside the commands.
"""

from __future__ import annotations

import typer

from ._audit import audit
from ._calibrate import calibrate
from ._cases import cases
from ._check import check
from ._common import require_bench_extra
from ._perf import perf
from ._report import register as _register_report
from ._run import run

__all__ = ["bench_app", "register"]

bench_app = typer.Typer(name="bench", help="Benchmark suites, runs and reports.",
                        no_args_is_help=True, add_completion=False)


@bench_app.callback()
def _needs_bench_extra() -> None:
    """Benchmark suites, runs and reports (the ``bench`` extra)."""
    require_bench_extra()


bench_app.command("cases")(cases)
bench_app.command("check")(check)
bench_app.command("perf")(perf)
bench_app.command("calibrate")(calibrate)
bench_app.command("run")(run)
_register_report(bench_app)  # report, compare


def register(app: typer.Typer) -> None:
    """Add the ``bench`` sub-app to the core ``tpguard`` app (called by ``tpguard.cli``)."""
    app.add_typer(bench_app, name="bench")
    app.command("audit")(audit)
