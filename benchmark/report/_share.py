"""A value-free, resumable copy of a run directory, to commit or publish (``tpguard bench share``).

A run directory holds raw values: ``records.jsonl`` keeps every call's arguments and results and
the agent's final answer, ``audit.sqlite`` and ``spans.jsonl`` what the backends received. Its
*share* keeps what the reports need and nothing else:

* ``records.jsonl`` — the records as reports read them (trajectory calls keep step, tool and
  outcome; results keep error and model calls; no final answer), ``elapsed_s`` to 0.1 s;
* ``run.json`` — configuration, versions, case ids;
* ``summary.json`` and ``report.md`` — rebuilt from those records (the same numbers: the summary
  is computed from the scores, never from the values).

Before anything is kept, every file is scanned for every written form of every private value of
the run's cases — need-to-know and public-derived: each atom's value, aliases, semantic variants
and masked forms; acquisition (seed ``001_*``): the match strings of every ``k_acq`` item and
``k_disc`` target, the completion facts and the directory's names, e-mails and phones; exposure
(seed ``002_*``): every target's value and aliases — one hit and the share is removed and
:class:`ShareRefused` names the atom, item or target id and the file — never the value. A share is also a run
directory: copied back into a working directory, ``tpguard bench run --out`` with the same
configuration resumes it (the case-runs it holds are not run again), so a long run can go on in a
later session from what was committed.
"""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Iterable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

from ..cases.schema import Case
from ._build import build_reports
from ._load import RunDirError, load_cases, load_run, read_records, suite_names

__all__ = ["SHARED_FILES", "ShareRefused", "share_run"]

SHARED_FILES = ("records.jsonl", "run.json", "summary.json", "report.md")
#: suites whose cases :func:`load_cases` regenerates, so the scan knows every atom
_ATOM_SUITES = ("need-to-know", "public-derived")
#: suites with their own case types, regenerated here from the run's seed (and source)
_OWN_SUITES = ("acquisition", "exposure")
_SCANNABLE = _ATOM_SUITES + _OWN_SUITES
#: forms shorter than this mean nothing on their own (the policy refuses them as atom values)
_MIN_FORM = 4


class ShareRefused(RunDirError):
    """The share would hold a private value, or its atoms cannot be known to check it."""


def share_run(run_dir: str | Path, out_dir: str | Path) -> dict[str, Path]:
    """Write the share of ``run_dir`` into ``out_dir`` (created; an earlier share there is
    replaced, any other content is refused) and return ``{file name: path}``."""
    run_dir, out_dir = Path(run_dir), Path(out_dir)
    if not (run_dir / "records.jsonl").is_file():
        raise RunDirError(f"{run_dir}: no records.jsonl — not a benchmark run directory")
    if out_dir.resolve() == run_dir.resolve():
        raise RunDirError("the share must go to another directory than the run itself")
    _prepare(out_dir)
    try:
        records = read_records(run_dir / "records.jsonl", [])
        with (out_dir / "records.jsonl").open("w", encoding="utf-8") as fh:
            for rec in records:
                if isinstance(rec.get("elapsed_s"), float):
                    rec["elapsed_s"] = round(rec["elapsed_s"], 1)
                fh.write(json.dumps(rec, ensure_ascii=False) + "\n")
        if (run_dir / "run.json").is_file():
            shutil.copyfile(run_dir / "run.json", out_dir / "run.json")
        build_reports(out_dir, figures=False, kept=SHARED_FILES)
        for extra in [p for p in out_dir.iterdir() if p.name not in SHARED_FILES]:
            shutil.rmtree(extra) if extra.is_dir() else extra.unlink()
        _verify(out_dir)
    except BaseException:
        shutil.rmtree(out_dir, ignore_errors=True)
        raise
    return {name: out_dir / name for name in SHARED_FILES if (out_dir / name).is_file()}


def _prepare(out_dir: Path) -> None:
    if out_dir.exists():
        if not out_dir.is_dir():
            raise RunDirError(f"{out_dir}: exists and is not a directory")
        foreign = sorted(p.name for p in out_dir.iterdir() if p.name not in SHARED_FILES)
        if foreign:
            raise RunDirError(f"{out_dir}: holds other files than a share ({', '.join(foreign[:3])}"
                              f"{', …' if len(foreign) > 3 else ''}); choose an empty directory")
        shutil.rmtree(out_dir)
    out_dir.mkdir(parents=True)


def _verify(out_dir: Path) -> None:
    data = load_run(out_dir, write_summary=False)
    # every record's case, errored case-runs included (load_run keeps the scored ones)
    data = replace(data, records=read_records(out_dir / "records.jsonl", []))
    unknown = sorted(s for s in suite_names(data.run, data.records) if s not in _SCANNABLE)
    if unknown:
        raise ShareRefused(f"cannot check a share of the {', '.join(unknown)} suite(s) for values; "
                           f"only {' and '.join(_SCANNABLE)} runs can be shared")
    cases, notes = load_cases(data)
    wanted = {(str(r.get("suite", "")), str(r.get("case_id", ""))) for r in data.records}
    own = {key for key in wanted if key[0] in _OWN_SUITES}
    forms = dict(_atom_forms({c.id: c for c in cases.values()}.values()))
    try:
        found, regenerated = _own_forms(data.run, own)
    except Exception as e:  # a generator that cannot run here: nothing can be checked
        raise ShareRefused(f"the run's cases could not be regenerated ({type(e).__name__}), so "
                           "the share cannot be checked for their values") from None
    forms.update(found)
    if notes or wanted - set(cases) - regenerated:
        raise ShareRefused("the run's cases could not be regenerated, so the share cannot be "
                           "checked for their values (is the run's --source folder where "
                           "run.json says?)")
    patterns = _patterns(forms.items())
    for name in SHARED_FILES:
        path = out_dir / name
        if not path.is_file():
            continue
        text = path.read_text(encoding="utf-8").casefold()
        for key, rx in patterns:
            if rx.search(text):
                raise ShareRefused(f"{name} would hold a written form of {key}; "
                                   "nothing was shared")


def _atom_forms(cases: Iterable[Case]) -> Iterator[tuple[str, set[str]]]:
    for case in cases:
        for atom in case.atoms:
            yield f"{case.id}/{atom.id}", {atom.value, *atom.aliases, *atom.variants, *atom.masked}


def _own_forms(run: dict[str, Any], wanted: set[tuple[str, str]]
               ) -> tuple[dict[str, set[str]], set[tuple[str, str]]]:
    """The written forms of the acquisition and exposure cases the records name, by
    ``"case/item"`` key, and the ``(suite, case id)`` pairs regenerated."""
    cfg = run.get("config", {}) if isinstance(run.get("config"), dict) else {}
    seed = int(cfg.get("seed", 0) or 0)
    forms: dict[str, set[str]] = {}
    found: set[tuple[str, str]] = set()
    if any(suite == "acquisition" for suite, _ in wanted):
        from ..cases.acquisition import generate as acq_generate

        for acq in acq_generate(seed):
            if ("acquisition", acq.id) not in wanted:
                continue
            found.add(("acquisition", acq.id))
            for item in acq.k_acq:
                forms[f"{acq.id}/{item.id}"] = set(item.strings)
            for disc in acq.k_disc:
                forms[f"{acq.id}/{disc.id}"] = set(disc.strings)
            forms[f"{acq.id}/completion"] = set(acq.completion.facts)
            for person in acq.substrate.directory:
                forms[f"{acq.id}/{person.id}"] = {person.name, person.email, person.phone}
    if any(suite == "exposure" for suite, _ in wanted):
        from ..cases.exposure import generate as exp_generate

        source = cfg.get("source")
        for exp in exp_generate(seed, source if source and Path(source).is_dir() else None):
            if ("exposure", exp.id) not in wanted:
                continue
            found.add(("exposure", exp.id))
            for target in exp.targets:
                forms[f"{exp.id}/{target.id}"] = {target.value, *target.aliases}
    return forms, found


def _patterns(forms: Iterable[tuple[str, set[str]]]) -> list[tuple[str, re.Pattern[str]]]:
    """One case-insensitive pattern per key over all its written forms; a digits-only form
    counts only as a whole number (``1441`` is not found inside ``21441``), and a form of letters
    and spaces only as whole words, as the evaluator matches whole tokens (the completion fact
    ``Support`` is not found inside the domain id ``customer_support``). Any other form — an id,
    an address, a code — is still found anywhere (``LGC-6672`` inside ``file_lgc-6672.docx``)."""
    out = []
    for key, written in forms:
        kept = {f.casefold() for f in written if len(f.strip()) >= _MIN_FORM}
        if not kept:
            continue
        alts = [rf"(?<![0-9]){re.escape(f)}(?![0-9])" if f.isdigit() else
                rf"(?<!\w){re.escape(f)}(?!\w)" if all(c.isalpha() or c == " " for c in f) else
                re.escape(f)
                for f in sorted(kept, key=len, reverse=True)]
        out.append((key, re.compile("|".join(alts))))
    return out
