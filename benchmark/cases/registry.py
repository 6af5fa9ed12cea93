"""Named suites: ``load_suite("need-to-know", seed=0)`` or ``load_suite("public-derived",
source=Path("../shared/data/public"))`` (seed ``000_*`` §6.1: the two splits of Table 5)."""

from __future__ import annotations

from pathlib import Path

from .schema import Suite

__all__ = ["SUITES", "SuiteError", "load_suite"]

SUITES: tuple[str, ...] = ("need-to-know", "public-derived", "acquisition", "exposure")


class SuiteError(ValueError):
    """An unknown suite name or missing/invalid source; the message says what to pass instead."""


def load_suite(name: str, *, source: Path | None = None, seed: int = 0) -> Suite:
    key = name.strip().lower().replace("_", "-")
    if key == "need-to-know":
        from .need_to_know import generate

        return generate(seed)
    if key == "public-derived":
        if source is None:
            raise SuiteError("the public-derived suite is built from public data: pass --source DIR "
                             "(the folder holding bfcl/ and tau2/, e.g. ../shared/data/public)")
        if not Path(source).is_dir():
            raise SuiteError(f"--source {source}: not a directory")
        try:
            from .public_derived import build_suite
        except ImportError as e:  # the builder is optional at import time
            raise SuiteError(f"the public-derived builder is not available ({e})") from e
        return build_suite(Path(source))
    if key in ("acquisition", "exposure"):  # their own case types: cases.<suite>.generate(seed)
        raise SuiteError(f"the {key} suite has its own case type: load it with "
                         f"tpguard.benchmark.cases.{key}.generate(seed)")
    raise SuiteError(f"unknown suite {name!r} (known: {', '.join(SUITES)})")
