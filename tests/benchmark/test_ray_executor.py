"""``tpguard bench run --executor ray`` (issue 13): every case-run a Ray task on a local 2-CPU
instance bound to loopback; the driver alone writes, so the run directory equals a local run's
(records modulo timing, the same summary), a worker killed mid-run loses and duplicates nothing,
and without the ``ray`` extra the option fails in one line."""

from __future__ import annotations

import json
import os
import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from run_compare import stable_spans
from typer.testing import CliRunner

from tpguard.benchmark.backends import AuditLog
from tpguard.benchmark.cases.schema import Case
from tpguard.benchmark.metrics import KEYS
from tpguard.benchmark.runner import RunConfig, iter_records, latest_records, run_benchmark
from tpguard.benchmark.runner._remote import TRANSIENT_ERRORS, CaseRun, with_retries
from tpguard.cli import app

AGENTS, GUARDS = ("oracle", "leaky"), ("off", "enforce")
runner = CliRunner()


@pytest.fixture(scope="module")
def ray_instance() -> Iterator[Any]:
    """A local Ray instance: 2 CPUs, loopback only, no dashboard, no usage stats; shut down after
    the module so no Ray process outlives the tests."""
    ray = pytest.importorskip("ray")
    from ray import cloudpickle

    os.environ["RAY_USAGE_STATS_ENABLED"] = "0"
    # The fault-injection hooks below live in this test module, which workers cannot import.
    cloudpickle.register_pickle_by_value(sys.modules[__name__])
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, ignore_reinit_error=True,
             _node_ip_address="127.0.0.1")
    try:
        yield ray
    finally:
        ray.shutdown()
        cloudpickle.unregister_pickle_by_value(sys.modules[__name__])


def _config(out: Path, **kw: Any) -> RunConfig:
    return RunConfig(out=out, agents=AGENTS, guards=GUARDS, limit=40, reports=False, **kw)


def _records(out: Path) -> dict[tuple[Any, ...], dict[str, Any]]:
    """Current records by key, without the timing field."""
    return {(r["agent"], r["guard"], r["suite"], r["case_id"], r["seed"]):
            {k: v for k, v in r.items() if k != "elapsed_s"}
            for r in latest_records(out / "records.jsonl")}


def _audit(out: Path) -> list[dict[str, Any]]:
    with AuditLog(out / "audit.sqlite") as audit:
        return [{k: v for k, v in row.items() if k != "ts"} for row in audit.rows()]


def test_ray_run_equals_local_run(tmp_path: Path, ray_instance: Any) -> None:
    local = run_benchmark(_config(tmp_path / "local"), progress=False)
    ray_out = tmp_path / "ray"
    remote = run_benchmark(_config(ray_out, executor="ray", max_concurrency=1), progress=False)
    assert remote.executed == local.executed == 40 * 2 * 2 and remote.errors == 0

    rows = {(r["agent"], r["guard"]): r for r in local.summary["rows"]}
    ray_rows = {(r["agent"], r["guard"]): r for r in remote.summary["rows"]}
    assert rows.keys() == ray_rows.keys() and len(rows) == 4
    for key, row in rows.items():
        assert row["n"] == ray_rows[key]["n"] == 40
        assert {k: row[k] for k in KEYS} == {k: ray_rows[key][k] for k in KEYS}, key
    assert rows[("leaky", "off")]["FOR"] > rows[("leaky", "enforce")]["FOR"]  # a real measurement

    assert _records(ray_out) == _records(tmp_path / "local")
    assert _audit(ray_out) == _audit(tmp_path / "local") and _audit(ray_out)
    ray_spans = stable_spans(ray_out)
    assert ray_spans == stable_spans(tmp_path / "local") and len(ray_spans) > 160
    parents = [json.loads(x) for x in (ray_out / "spans.jsonl").read_text().splitlines()]
    ids = {s["span_id"] for s in parents}
    assert all(s["parent_span_id"] in ids for s in parents if s["parent_span_id"])

    run_json = json.loads((ray_out / "run.json").read_text())
    assert run_json["config"]["executor"] == "ray"
    # The executor is not part of the configuration: resuming locally finds every case-run done.
    again = run_benchmark(_config(ray_out), progress=False)
    assert again.executed == 0 and again.skipped == 160


def _crash_first_attempt(marker: Path, case_id: str) -> Any:
    def hook(case: Case, agent: str, guard: str) -> None:
        if case.id == case_id and agent == "leaky" and guard == "enforce" and not marker.exists():
            marker.write_text(str(os.getpid()))
            os._exit(1)  # the worker process dies mid-run; Ray re-runs its task elsewhere

    return hook


def test_worker_killed_mid_run_loses_and_duplicates_nothing(tmp_path: Path,
                                                            ray_instance: Any) -> None:
    out, marker = tmp_path / "run", tmp_path / "killed"
    config = RunConfig(out=out, agents=AGENTS, guards=GUARDS, limit=6, reports=False,
                       executor="ray")
    from tpguard.benchmark.cases.need_to_know import generate

    victim = generate(0).cases[3].id
    result = run_benchmark(config, progress=False, task_hook=_crash_first_attempt(marker, victim))
    assert marker.exists()  # a worker really died
    keys = Counter((r["agent"], r["guard"], r["case_id"]) for r in iter_records(out / "records.jsonl"))
    assert len(keys) == 6 * 2 * 2 and set(keys.values()) == {1}  # none lost, none written twice
    assert result.errors == 0 and ("leaky", "enforce", victim) in keys
    calls = Counter((r["run_id"], r["case_id"], r["step"]) for r in _audit(out))
    assert set(calls.values()) == {1}
    assert {(r["run_id"], r["case_id"]) for r in _audit(out)} >= {("leaky/enforce", victim)}


def _always_crash(case: Case, agent: str, guard: str) -> None:
    os._exit(1)


def test_a_task_whose_worker_always_dies_is_an_errored_record_retried_on_resume(
        tmp_path: Path, ray_instance: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    from tpguard.benchmark.runner import _ray

    monkeypatch.setattr(_ray, "TASK_MAX_RETRIES", 1)  # two deaths instead of four: CI time
    out = tmp_path / "run"
    config = RunConfig(out=out, agents=("oracle",), guards=("off",), limit=1, reports=False,
                       executor="ray")
    result = run_benchmark(config, progress=False, task_hook=_always_crash)
    assert result.executed == 1 and result.errors == 1
    [record] = list(iter_records(out / "records.jsonl"))
    assert record["error"] == {"type": "WorkerCrashedError", "stage": "backend", "message": None}
    again = run_benchmark(RunConfig(out=out, agents=("oracle",), guards=("off",), limit=1,
                                    reports=False), progress=False)  # resumed locally
    assert again.executed == again.retried == 1 and again.errors == 0


def _note_overlap(folder: Path) -> Any:
    def hook(case: Case, agent: str, guard: str) -> None:
        import time
        import uuid

        mine = folder / f"{agent}.{uuid.uuid4().hex}.running"
        mine.touch()
        # Wait a little for the other agent's case-run (workers start at their own pace on a
        # loaded machine); a cap that serialised everything never shows two in flight.
        deadline = time.monotonic() + 5.0
        while len(list(folder.glob("*.running"))) < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
        same, every = len(list(folder.glob(f"{agent}.*.running"))), len(list(folder.glob("*.running")))
        with (folder / "seen.log").open("a") as fh:
            fh.write(f"{agent} {same} {every}\n")
        time.sleep(0.5)
        mine.unlink()

    return hook


def test_max_concurrency_bounds_case_runs_in_flight_per_agent(tmp_path: Path,
                                                              ray_instance: Any) -> None:
    folder = tmp_path / "inflight"
    folder.mkdir()
    config = RunConfig(out=tmp_path / "run", agents=AGENTS, guards=GUARDS, limit=2, reports=False,
                       executor="ray", max_concurrency=1)
    result = run_benchmark(config, progress=False, task_hook=_note_overlap(folder))
    assert result.executed == 8 and result.errors == 0
    seen = [line.split() for line in (folder / "seen.log").read_text().splitlines()]
    assert len(seen) == 8
    assert max(int(same) for _, same, _ in seen) == 1  # never two of one agent at once
    assert max(int(every) for _, _, every in seen) == 2  # while the two agents ran side by side


def test_cli_executor_ray_writes_the_run_directory(tmp_path: Path, ray_instance: Any) -> None:
    out = tmp_path / "r"
    res = runner.invoke(app, ["bench", "run", "--agent", "oracle,leaky", "--guard", "off",
                              "--limit", "2", "--executor", "ray", "--max-concurrency", "1",
                              "--out", str(out), "--no-report"])
    assert res.exit_code == 0, res.output
    assert "4 runs executed" in res.output
    for name in ("run.json", "records.jsonl", "audit.sqlite", "spans.jsonl", "summary.json"):
        assert (out / name).is_file(), name


def _raylets() -> set[int]:
    pids = set()
    for proc in Path("/proc").iterdir():
        try:
            if proc.name.isdigit() and b"raylet" in (proc / "cmdline").read_bytes():
                pids.add(int(proc.name))
        except OSError:
            continue
    return pids


def test_without_a_cluster_the_driver_starts_and_stops_its_own_instance(tmp_path: Path) -> None:
    """The CLI's own path: no address → a loopback instance of --ray-num-cpus, shut down after."""
    import subprocess

    pytest.importorskip("ray")
    before = _raylets()
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAY_")}
    out = tmp_path / "r"
    proc = subprocess.run(
        [sys.executable, "-c", "from tpguard.cli import main; main()", "bench", "run", "--agent", "oracle", "--guard", "off",
         "--limit", "2", "--executor", "ray", "--ray-num-cpus", "1", "--out", str(out),
         "--no-report", "--json"], env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert [r["n"] for r in json.loads(proc.stdout)] == [2]
    assert len(list(iter_records(out / "records.jsonl"))) == 2
    assert _raylets() <= before  # no Ray process outlives the run


def test_a_worker_with_another_tpguard_refuses_to_measure() -> None:
    from tpguard.benchmark.cases.need_to_know import generate
    from tpguard.benchmark.runner._remote import WorkerSpec, run_case

    case = generate(0).cases[0]
    spec = WorkerSpec({}, False, None, 0, "r", tpguard_version="0.0.0-elsewhere")
    run = run_case(spec, case, "oracle", "off")
    assert run.record["error"]["type"] == "TpguardVersionMismatch" and not run.audit_rows
    import tpguard

    run = run_case(WorkerSpec({}, False, None, 0, "r", tpguard.__version__), case, "oracle", "off")
    assert run.record["error"] is None and run.audit_rows and run.spans


def _run(error: str | None) -> CaseRun:
    err = None if error is None else {"type": error, "stage": "agent", "message": None}
    return CaseRun({"error": err}, [], [])


def test_transient_agent_errors_are_retried_with_backoff() -> None:
    answers = iter(["RateLimitError", "APIConnectionError", None])
    slept: list[float] = []
    run = with_retries(lambda: _run(next(answers)), retries=4, backoff_s=1.0, sleep=slept.append)
    assert run.record["error"] is None and run.tries == 3
    assert len(slept) == 2 and 0.5 <= slept[0] <= 1.0 and 1.0 <= slept[1] <= 2.0

    slept.clear()  # a non-transient error is a measurement: recorded as it came, never retried
    run = with_retries(lambda: _run("AuthenticationError"), retries=4, backoff_s=1.0,
                       sleep=slept.append)
    assert run.tries == 1 and not slept and run.record["error"]["type"] == "AuthenticationError"

    run = with_retries(lambda: _run("APITimeoutError"), retries=2, backoff_s=0.5,
                       sleep=slept.append)
    assert run.tries == 3 and len(slept) == 2 and run.record["error"]["type"] == "APITimeoutError"
    assert {"RateLimitError", "APITimeoutError", "APIConnectionError"} <= TRANSIENT_ERRORS
    assert "AuthenticationError" not in TRANSIENT_ERRORS


def test_without_the_extra_executor_ray_exits_2_naming_it(tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)  # as if `ray` were not installed
    res = runner.invoke(app, ["bench", "run", "--agent", "oracle", "--guard", "off", "--limit",
                              "1", "--executor", "ray", "--out", str(tmp_path / "r")])
    assert res.exit_code == 2
    lines = [x for x in res.output.splitlines() if x.strip()]
    assert len(lines) == 1 and "pip install 'tpguard[ray]'" in lines[0], res.output
    assert not (tmp_path / "r").exists()


@pytest.mark.parametrize(("args", "says"), [
    (["--executor", "ray", "--workers", "2"], "--workers is for --executor local"),
    (["--max-concurrency", "2"], "only with --executor ray"),
    (["--executor", "ray", "--max-concurrency", "0"], "--max-concurrency must be at least 1"),
    (["--executor", "dask"], "--executor must be one of local, ray"),
])
def test_executor_options_are_checked_before_anything_runs(tmp_path: Path, args: list[str],
                                                           says: str) -> None:
    pytest.importorskip("ray")
    res = runner.invoke(app, ["bench", "run", "--agent", "oracle", "--guard", "off", "--limit",
                              "1", "--out", str(tmp_path / "r"), *args])
    assert res.exit_code == 2 and says in res.output, res.output
    assert not (tmp_path / "r").exists()
