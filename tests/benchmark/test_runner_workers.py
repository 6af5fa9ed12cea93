"""``--workers N`` (issue 33, item 4): case-runs in worker processes, the driver alone writing.

A two-process run writes what a one-worker run writes — the same records (modulo ``elapsed_s``),
audit rows, spans (modulo ids and times) and summary — whether work goes out a case at a time or a
case-run at a time; a case-run that raises in a worker, or whose worker dies, is an errored record
that a resumed run retries; the recorder compiles once per case, not once per case-run."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from run_compare import stable_spans

from tpguard.benchmark.cases.schema import Case
from tpguard.benchmark.runner import RunConfig, latest_records, run_benchmark
from tpguard.benchmark.runner._pool import CASES_PER_WORKER

AGENTS, GUARDS = ("oracle", "leaky"), ("off", "enforce", "redact")


def _config(out: Path, workers: int, limit: int) -> RunConfig:
    return RunConfig(out=out, agents=AGENTS, guards=GUARDS, limit=limit, workers=workers,
                     reports=False, bootstrap=200)


def _records(out: Path) -> dict[tuple[Any, ...], dict[str, Any]]:
    return {(r["agent"], r["guard"], r["suite"], r["case_id"], r["seed"]):
            {k: v for k, v in r.items() if k != "elapsed_s"}
            for r in latest_records(out / "records.jsonl")}


def _summary(out: Path) -> dict[str, Any]:
    summary = json.loads((out / "summary.json").read_text())
    summary.pop("run")  # config (workers, out) and start/finish times
    return summary


def _audit(out: Path) -> list[dict[str, Any]]:
    from tpguard.benchmark.backends import AuditLog

    with AuditLog(out / "audit.sqlite") as audit:
        return sorted((json.dumps({k: v for k, v in row.items() if k != "ts"}, sort_keys=True)
                       for row in audit.rows()), key=str)  # type: ignore[return-value]


@pytest.mark.parametrize("limit", [2 * CASES_PER_WORKER + 1, 3])  # a case at a time; a case-run
def test_two_worker_processes_write_what_one_worker_writes(tmp_path: Path, limit: int) -> None:
    one = run_benchmark(_config(tmp_path / "w1", 1, limit), progress=False)
    two = run_benchmark(_config(tmp_path / "w2", 2, limit), progress=False)
    assert one.executed == two.executed == limit * len(AGENTS) * len(GUARDS)
    assert one.errors == two.errors == 0
    assert _records(tmp_path / "w2") == _records(tmp_path / "w1")
    assert _summary(tmp_path / "w2") == _summary(tmp_path / "w1")
    rows = {(r["agent"], r["guard"]): r for r in two.summary["rows"]}
    assert rows[("leaky", "off")]["FOR"] > rows[("leaky", "enforce")]["FOR"]  # a real measurement
    assert _audit(tmp_path / "w2") == _audit(tmp_path / "w1") != []
    spans = stable_spans(tmp_path / "w2")
    assert spans == stable_spans(tmp_path / "w1") and len(spans) > limit * len(AGENTS) * len(GUARDS)
    # The driver alone wrote: one record line per case-run, no worker file in the directory.
    lines = (tmp_path / "w2" / "records.jsonl").read_text().splitlines()
    assert len(lines) == two.executed
    assert sorted(p.name for p in (tmp_path / "w2").iterdir()) == sorted(
        p.name for p in (tmp_path / "w1").iterdir())


def _raise_on_second_case(case: Case, agent: str, guard: str) -> None:
    if case.id == "ntk-coding-0000" and agent == "leaky" and guard == "enforce":
        raise RuntimeError("injected")


def _die(case: Case, agent: str, guard: str) -> None:
    os._exit(1)  # the worker process dies mid-run


def test_a_case_run_that_raises_in_a_worker_is_an_errored_record(tmp_path: Path) -> None:
    config = _config(tmp_path / "run", 2, 3)
    result = run_benchmark(config, progress=False, task_hook=_raise_on_second_case)
    errored = [r for r in latest_records(tmp_path / "run" / "records.jsonl") if r["error"]]
    assert result.executed == 18 and result.errors == 1
    assert [(r["agent"], r["guard"], r["error"]) for r in errored] == [
        ("leaky", "enforce", {"type": "RuntimeError", "stage": "backend", "message": None})]
    assert errored[0]["case_id"] == "ntk-coding-0000"  # the second case
    again = run_benchmark(config, progress=False)  # resumed: the errored case-run runs again
    assert again.executed == 1 and again.retried == 1 and again.errors == 0


def test_a_dead_worker_loses_nothing_and_resume_retries(tmp_path: Path) -> None:
    config = _config(tmp_path / "run", 2, 2)
    result = run_benchmark(config, progress=False, task_hook=_die)
    records = list(latest_records(tmp_path / "run" / "records.jsonl"))
    assert len(records) == result.executed == 12 and result.errors == 12  # none lost
    assert {r["error"]["type"] for r in records} == {"BrokenProcessPool"}
    again = run_benchmark(config, progress=False)
    assert again.executed == again.retried == 12 and again.errors == 0


def test_the_recorder_compiles_once_per_case(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from tpguard.benchmark.runner import gateway

    built: list[int] = []
    real = gateway.Guard

    def counting(*args: Any, **kw: Any) -> Any:
        built.append(1)
        return real(*args, **kw)

    monkeypatch.setattr(gateway, "Guard", counting)
    result = run_benchmark(_config(tmp_path / "run", 1, 3), progress=False)
    assert result.executed == 18 and len(built) == 3


@pytest.mark.parametrize("options", [{"quick": True}, {"limit": 30}, {"domains": ["coding"]},
                                     {"domains": ["Credit-card risk", "coding"], "limit": 5},
                                     {"seed": 3, "limit": 2}])
def test_a_run_builds_only_its_cases_and_they_are_the_suites(
        options: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> None:
    from tpguard.benchmark.cases.need_to_know import generator
    from tpguard.benchmark.runner import plan_run, select_cases

    suite = generator.generate(options.get("seed", 0))
    built: list[int] = []
    real = generator.build_case
    monkeypatch.setattr(generator, "build_case", lambda *a: built.append(1) or real(*a))
    plan = plan_run(RunConfig(out=None, agents=("oracle",), guards=("off",), **options))
    expected = select_cases(suite, RunConfig(**options))
    assert plan.cases == expected and len(built) == len(expected) < len(suite)


def test_every_need_to_know_id_maps_back_to_its_index() -> None:
    from tpguard.benchmark.cases.need_to_know.generator import case_index, generate

    assert [case_index(c.id) for c in generate(0)] == list(range(1150))
    assert case_index("ntk-coding-x001") is None and case_index("acq-coding-0001") is None


def _session_processes(sid: int) -> list[int]:
    """Live processes of session ``sid`` (the driver's and its workers')."""
    pids = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[3]) == sid and fields[0] != "Z":
            pids.append(int(stat.parent.name))
    return pids


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc")
def test_ctrl_c_stops_the_workers_keeps_what_finished_and_resume_completes(tmp_path: Path) -> None:
    import signal
    import subprocess
    import sys
    import time

    # 120 cases (720 case-runs): records are written in case order, so when the first case's
    # worker starts late the others' finished chunks are written in one burst; with 40 cases that
    # burst could end the whole run within one poll of the loop below (exit 0 before the SIGINT
    # arrived, seen under a loaded full suite). 120 leaves most of the run still to do.
    out = tmp_path / "run"
    cmd = [sys.executable, "-c", "from tpguard.cli import main; main()", "bench", "run",
           "--agent", "oracle,leaky", "--guard", "off,enforce,redact", "--limit", "120",
           "--workers", "2", "--no-report", "--bootstrap", "200", "--out", str(out)]
    log = tmp_path / "stderr.txt"
    with log.open("wb") as err:
        driver = subprocess.Popen(cmd, start_new_session=True, stdout=subprocess.DEVNULL,
                                  stderr=err)
    try:
        deadline = time.monotonic() + 180
        records = out / "records.jsonl"
        while not (records.exists() and records.read_text().count("\n") >= 12):
            assert driver.poll() is None and time.monotonic() < deadline, log.read_text()
            time.sleep(0.2)
        driver.send_signal(signal.SIGINT)  # what Ctrl-C sends the driver
        assert driver.wait(timeout=60) != 0, log.read_text()
    finally:
        if driver.poll() is None:
            driver.kill()
    for _ in range(50):  # the workers are gone with the driver
        if not _session_processes(driver.pid):
            break
        time.sleep(0.1)
    assert _session_processes(driver.pid) == []
    done = list(latest_records(out / "records.jsonl"))
    assert 12 <= len(done) < 720, (len(done), log.read_text())
    assert not [r for r in done if r["error"]]

    again = run_benchmark(RunConfig(out=out, agents=AGENTS, guards=GUARDS, limit=120, workers=2,
                                    reports=False, bootstrap=200), progress=False)
    assert again.executed == 720 - len(done) and again.errors == 0
    assert len(list(latest_records(out / "records.jsonl"))) == 720


def test_ctrl_c_on_a_threaded_run_finishes_the_runs_in_flight_and_starts_no_more() -> None:
    """The acquisition and exposure suites run case-runs on threads (``run_local``): Ctrl-C must
    stop there as it stops the process pool — the two case-runs in flight finish (each writes its
    own record), none of the other eight starts. A plain ``with ThreadPoolExecutor`` shutdown ran
    all ten to the end before the interrupt surfaced."""
    import signal
    import threading
    import time

    from tpguard.benchmark.runner._executor import run_local

    started: list[int] = []
    finished: list[int] = []
    both_running, release = threading.Event(), threading.Event()

    def one(task: int) -> None:
        started.append(task)
        if len(started) == 2:
            both_running.set()
        assert release.wait(10)
        finished.append(task)

    def ctrl_c() -> None:
        assert both_running.wait(10)
        time.sleep(0.2)  # Ctrl-C once every task is queued (not inside ThreadPoolExecutor.submit)
        os.kill(os.getpid(), signal.SIGINT)  # as a terminal sends it: to the process, any thread
        release.wait(1.5)  # the interrupt is seen while both are still running
        release.set()

    signal.signal(signal.SIGINT, signal.default_int_handler)
    helper = threading.Thread(target=ctrl_c)
    helper.start()
    with pytest.raises(KeyboardInterrupt):
        run_local(list(range(10)), one, 2, False)
    helper.join()
    assert sorted(started) == sorted(finished) == [0, 1]


def test_a_threaded_acquisition_run_scores_what_a_one_worker_run_scores(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The acquisition and exposure suites put ``--workers N`` on threads (``run_local``): each
    case-run writes its own record as it ends, so the order differs, the records do not."""
    monkeypatch.setenv("TPGUARD_ACQ_CACHE", str(tmp_path / "files"))
    runs = {}
    for workers in (1, 3):
        out = tmp_path / f"w{workers}"
        result = run_benchmark(RunConfig(suite="acquisition", agents=("oracle", "leaky:eager"),
                                         guards=("off", "enforce"), limit=7, workers=workers,
                                         out=out, reports=False, bootstrap=200), progress=False)
        assert result.executed == 28
        runs[workers] = _records(out)
    assert len(runs[1]) == 28 and runs[3] == runs[1]
