"""Where case-runs execute: the progress bar every executor feeds, and the local executor.

``local`` (the default) runs case-runs in this process (``--workers 1``), in worker processes
(:mod:`._pool`, ``--workers N`` for the need-to-know and public-derived suites) or on threads (the
acquisition and exposure suites), each record written by this process as it finishes. ``ray``
(:mod:`._ray`) runs them as Ray tasks and hands their results back to this process, which writes
them through the same writers. Both advance one bar per finished
case-run; off a terminal the bar is off.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from contextlib import contextmanager
from typing import Any

from ._errors import UsageError
from .config import RunConfig

__all__ = ["EXECUTORS", "progress_bar", "run_local", "validate_executor"]

EXECUTORS = ("local", "ray")

_POLL_S = 0.5  #: how soon a threaded run sees Ctrl-C


def validate_executor(config: RunConfig) -> None:
    """The executor options: :class:`UsageError` (exit 2) for a bad combination or a missing
    ``ray`` extra (one line naming it)."""
    if config.executor not in EXECUTORS:
        raise UsageError(f"--executor must be one of {', '.join(EXECUTORS)} (got {config.executor!r})")
    ray_only = {"--ray-address": config.ray_address, "--ray-num-cpus": config.ray_num_cpus,
                "--max-concurrency": config.max_concurrency}
    given = [name for name, value in ray_only.items() if value is not None]
    if config.executor != "ray":
        if given:
            raise UsageError(f"{', '.join(given)}: only with --executor ray")
        return
    if config.workers != 1:
        raise UsageError("--workers is for --executor local; with --executor ray, "
                         "--max-concurrency bounds the case-runs in flight per agent")
    counts = {"--ray-num-cpus": config.ray_num_cpus, "--max-concurrency": config.max_concurrency}
    for name, value in counts.items():
        if value is not None and value < 1:
            raise UsageError(f"{name} must be at least 1 (got {value})")
    if config.ray_num_cpus is not None and (config.ray_address or os.environ.get("RAY_ADDRESS")):
        raise UsageError("--ray-num-cpus sizes a local Ray instance; a cluster (--ray-address or "
                         "RAY_ADDRESS) has its own CPUs")
    from .._extras import MissingExtra, require_extra

    try:
        require_extra("ray", "ray", what="--executor ray")
    except MissingExtra as e:
        raise UsageError(str(e)) from None


@contextmanager
def progress_bar(total: int, enabled: bool) -> Iterator[Callable[[], None]]:
    """``with progress_bar(n, enabled) as advance:`` — ``advance()`` once per finished case-run."""
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
    )

    columns = (TextColumn("[bold]bench run"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    console = Console(stderr=True)
    with Progress(*columns, console=console, disable=not (enabled and console.is_terminal),
                  transient=False) as bar:
        job = bar.add_task("cases", total=total)
        yield lambda: bar.advance(job)


def run_local(tasks: list[Any], one: Callable[[Any], Any], workers: int, progress: bool) -> None:
    """Run ``one(task)`` for every task on ``workers`` threads (1: in order, in this thread).

    Ctrl-C (``KeyboardInterrupt`` in this thread) cancels the tasks not yet started, waits for the
    ones running and re-raises."""
    with progress_bar(len(tasks), progress) as advance:
        if workers <= 1:
            for t in tasks:
                one(t)
                advance()
            return
        pool = ThreadPoolExecutor(max_workers=workers)
        try:
            pending = {pool.submit(one, t) for t in tasks}
            while pending:
                # Wake at least every _POLL_S: Ctrl-C may land on a worker thread, and a wait
                # blocked in this thread sees the KeyboardInterrupt only when it next runs Python
                # — after the next case-run ends, by which time its worker has started another.
                done, pending = wait(pending, timeout=_POLL_S, return_when=FIRST_COMPLETED)
                for fut in done:
                    fut.result()
                    advance()
        except KeyboardInterrupt:
            # Ctrl-C: drop what has not started and let the case-runs in flight finish (each writes
            # its own record), as the process pool does; the same command resumes. Leaving this to
            # ``with``'s plain shutdown would run every queued case-run to the end first.
            pool.shutdown(wait=True, cancel_futures=True)
            raise
        finally:
            pool.shutdown(wait=True)
