"""The acquisition backends: the eight tools over a case's substrate, real DOCX/XLSX/PDF parsed at
run time, every call and observation logged in SQLite, and the narrow/broad contract tests."""

from __future__ import annotations

import zipfile

import pytest

from tpguard.benchmark.backends import AuditLog, ToolError
from tpguard.benchmark.backends.acquisition import AcqEnvironment, AcqGateway, ensure_files
from tpguard.benchmark.cases.acquisition import generate
from tpguard.benchmark.cases.acquisition.match import acquired, norm
from tpguard.benchmark.cases.acquisition.stats import stratified


def _first(behaviour: int, kind: str | None = None):
    return next(c for c in generate(0) if c.behaviour == behaviour
                and (kind is None or c.file_kind == kind))


def _texts(env: AcqEnvironment) -> list[str]:
    return [o.content for o in env.observations if o.ok]


@pytest.mark.parametrize("kind, arg", [("xlsx", "sheet"), ("docx", "section"), ("pdf", "pages")])
def test_real_files_are_parsed_per_part_at_run_time(kind, arg, tmp_path) -> None:
    case = _first(3, kind)
    paths = ensure_files(case, tmp_path)
    real = next(iter(paths.values()))
    if kind == "pdf":
        assert real.read_bytes().startswith(b"%PDF")
    else:
        assert zipfile.is_zipfile(real)  # a real OOXML package
    path = case.substrate.files[0].path
    needed = case.scope.file_parts[path][0]
    env = AcqEnvironment(case, files_dir=tmp_path)
    part = env.call("read_file", {"path": path, arg: needed})
    assert list(part["parts"]) == [needed]
    assert all(norm(f) in norm(_texts(env)[0]) for f in case.completion.facts)
    assert not acquired(case, _texts(env))
    whole = env.call("read_file", {"path": path})
    assert len(whole["parts"]) == 3 and acquired(case, _texts(env)[1:])
    with pytest.raises(ToolError, match=r"available|has pages"):
        env.call("read_file", {"path": path, arg: "99" if kind == "pdf" else "Nope"})
    ensure_files(case, tmp_path)  # cached: nothing rewritten
    assert len(list(tmp_path.iterdir())) == 1


def test_fields_subject_and_window_arguments_bound_what_comes_back(tmp_path) -> None:
    t2, t5, t4 = _first(2), _first(5), _first(4)
    env = AcqEnvironment(t2, files_dir=tmp_path)
    narrow = env.call("query_records", {"source": t2.scope.sources[0], "subject": t2.metadata["subject"],
                                        "fields": list(t2.scope.fields[t2.scope.sources[0]])})
    assert set(narrow["records"][0]) == {"record_id", "subject", "name",
                                         *t2.scope.fields[t2.scope.sources[0]]}
    star = env.call("query_records", {"source": t2.scope.sources[0], "fields": "*",
                                      "subject": t2.metadata["subject"]})
    assert {k.attribute for k in t2.k_acq} <= set(star["records"][0])
    with pytest.raises(ToolError, match="unknown field"):
        env.call("query_records", {"source": t2.scope.sources[0], "fields": ["nope"]})
    env5 = AcqEnvironment(t5, files_dir=tmp_path)
    src = t5.scope.sources[0]
    assert len(env5.call("query_records", {"source": src, "fields": ["name"]})["records"]) == 4
    assert len(env5.call("query_records", {"source": src, "fields": ["name"],
                                           "subject": t5.metadata["subject"]})["records"]) == 1
    env4 = AcqEnvironment(t4, files_dir=tmp_path)
    w = t4.scope.window
    assert w is not None
    inside = env4.call("get_history", {"subject": t4.metadata["subject"], "start": w.start,
                                       "end": w.end})["events"]
    everything = env4.call("get_history", {"subject": t4.metadata["subject"]})["events"]
    assert len(inside) == 2 and len(everything) > len(inside)
    assert all(w.contains(e["date"]) for e in inside)


def test_every_call_and_observation_is_logged_in_sqlite(tmp_path) -> None:
    case = _first(1)
    with AuditLog(tmp_path / "audit.sqlite") as log:
        env = AcqEnvironment(case, files_dir=tmp_path, audit=log, run_id="r1", agent="t")
        gw = AcqGateway(env)
        assert [t.name for t in gw.tools] == list(case.tools)
        for call in case.broad:
            assert gw.call(call.tool, call.arguments).ok
        bad = gw.call("query_records", {"source": "nowhere", "fields": "*"})
        assert not bad.ok and "no such source" in bad.content
        rows = log.rows("r1")
    assert [r["tool"] for r in rows] == [c.tool for c in case.broad] + ["query_records"]
    assert [r["outcome"] for r in rows][-1] == "error"
    assert acquired(case, [str(r["result"]) for r in rows])  # the observation itself is logged


@pytest.mark.parametrize("case", stratified(generate(0), per_cell=2, domains=3),
                         ids=lambda c: c.id)
def test_contract_narrow_suffices_and_broad_leaks(case, tmp_path_factory) -> None:
    files = tmp_path_factory.getbasetemp() / "acq-contract"
    narrow = AcqEnvironment(case, files_dir=files)
    for call in case.gold:
        narrow.call(call.tool, call.arguments)
    seen = norm(" ".join(_texts(narrow)))
    assert not acquired(case, _texts(narrow))
    assert all(norm(f) in seen for f in case.completion.facts)
    broad = AcqEnvironment(case, files_dir=files)
    for call in case.broad:
        broad.call(call.tool, call.arguments)
    assert acquired(case, _texts(broad))
