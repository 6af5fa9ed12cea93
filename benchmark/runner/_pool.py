"""``--workers N`` (N > 1): case-runs in N worker processes; this process (the driver) alone writes.

The detectors, agents and scorers are pure Python, so threads share one GIL and two of them run no
faster than one. Worker processes do. They run exactly what a Ray worker runs
(:func:`._remote.run_case`: the record, the audit rows and the spans as plain data, against a
backend of their own) and the driver writes each :class:`._remote.CaseRun` through the writers a
one-worker run uses (:func:`._ray.store_case_run`, then ``records.jsonl``) — so the run directory,
resume and error accounting are a one-worker run's.

Work is handed out a case at a time (every agent × guard of it), so a worker builds each case's
scorer and span recorder once; with fewer than :data:`CASES_PER_WORKER` cases per worker it is
handed out a case-run at a time instead, so a short run of slow agents still runs in parallel. Results are written in the order a one-worker run writes them (a chunk that
finishes early waits for the ones before it), so ``records.jsonl`` — and the summary's bootstrap,
which resamples in file order — come out the same.

Workers are started with ``spawn`` — a fresh interpreter, not a fork of a driver that already
runs the tracer's and the progress bar's threads. They ignore SIGINT: Ctrl-C stops the driver,
which cancels what has not started, lets the chunks in flight finish (at most one per worker),
writes every finished case-run and exits; the next run resumes. A case-run that raised, or whose worker died, becomes an errored record
(its exception's type, stage ``backend``), which a resumed run retries.
"""

from __future__ import annotations

import multiprocessing
import signal
import time
from collections.abc import Callable
from concurrent.futures import Future, ProcessPoolExecutor, as_completed

from ..cases.schema import Case
from ._errors import case_error
from ._executor import progress_bar
from ._remote import CaseRun, WorkerSpec, run_case

__all__ = ["CASES_PER_WORKER", "run_in_processes"]

CASES_PER_WORKER = 4  #: below this many cases per worker, work goes out a case-run at a time

Task = tuple[Case, str, str]  # (case, agent spec, guard name)

_SPEC: WorkerSpec | None = None  # the run's spec, in a worker process


def _init_worker(spec: WorkerSpec) -> None:
    global _SPEC
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the driver's to handle
    _SPEC = spec


def _run_chunk(case: Case, pairs: list[tuple[str, str]]) -> list[CaseRun]:
    """In a worker: every (agent, guard) of one case, each as :func:`run_case` runs it."""
    assert _SPEC is not None, "worker not initialized"
    out = []
    for agent, guard in pairs:
        try:
            out.append(run_case(_SPEC, case, agent, guard))
        except Exception as e:  # a case-run that raised outside execute_case's own net
            out.append(failed_run((case, agent, guard), _SPEC.seed, e))
    return out


def failed_run(task: Task, seed: int, error: BaseException) -> CaseRun:
    """An errored record for a case-run that produced none (its exception's type, value-free)."""
    from ._execute import _failed

    case, agent, guard = task
    base = {"agent": agent, "guard": guard, "suite": case.suite, "case_id": case.id,
            "domain": case.domain, "seed": seed}
    return CaseRun(_failed(base, case_error(type(error).__qualname__, "backend"),
                           time.perf_counter()), [], [], 0)


def _chunks(tasks: list[Task], workers: int) -> list[tuple[Case, list[tuple[str, str]]]]:
    """The tasks grouped by case (in order), or one per task when cases are few."""
    by_case: dict[int, tuple[Case, list[tuple[str, str]]]] = {}
    for case, agent, guard in tasks:
        by_case.setdefault(id(case), (case, []))[1].append((agent, guard))
    if len(by_case) >= CASES_PER_WORKER * workers:
        return list(by_case.values())
    return [(case, [(agent, guard)]) for case, agent, guard in tasks]


def run_in_processes(tasks: list[Task], spec: WorkerSpec, write: Callable[[CaseRun], None], *,
                     workers: int, progress: bool) -> None:
    """Run every task in ``workers`` processes; ``write`` is called in this process once per
    task, in the tasks' order (a one-worker run's order), with its :class:`CaseRun`."""
    pool = ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context("spawn"),
                               initializer=_init_worker, initargs=(spec,))
    chunks = _chunks(tasks, workers)
    done: dict[int, list[CaseRun]] = {}  # finished chunks waiting for an earlier one
    written = 0  # chunks written so far, in order
    futures: dict[Future[list[CaseRun]], int] = {}
    writing = -1
    try:
        futures = {pool.submit(_run_chunk, case, pairs): i for i, (case, pairs) in enumerate(chunks)}
        with progress_bar(len(tasks), progress) as advance:
            for fut in as_completed(futures):
                i = futures[fut]
                done[i] = _results(fut, chunks[i], spec.seed)
                for _ in done[i]:
                    advance()
                while written in done:
                    writing = written  # a chunk cut short by Ctrl-C is not written again
                    for run in done.pop(written):
                        write(run)
                    written += 1
    except KeyboardInterrupt:  # Ctrl-C: cancel what has not started, keep what finishes
        pool.shutdown(wait=True, cancel_futures=True)
        for fut, i in futures.items():
            if i not in done and i > writing and i >= written and fut.done() and not fut.cancelled():
                done[i] = _results(fut, chunks[i], spec.seed)
        while written in done:  # only chunks with no gap before them: records keep the order a
            for run in done.pop(written):  # one-worker run writes (bootstrap intervals follow it);
                write(run)  # the rest run again on resume
            written += 1
        raise
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def _results(fut: Future[list[CaseRun]], chunk: tuple[Case, list[tuple[str, str]]],
             seed: int) -> list[CaseRun]:
    """A chunk's runs; a chunk that failed as a whole (its worker died, it could not be sent)
    becomes one errored record per case-run."""
    try:
        return fut.result()
    except Exception as e:
        case, pairs = chunk
        return [failed_run((case, agent, guard), seed, e) for agent, guard in pairs]
