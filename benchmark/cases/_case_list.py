"""What a suite of one case type does with its cases, shared by the acquisition and exposure
suites (their cases are their own models): iterate, look one up by id, write and read JSONL."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, ClassVar

if TYPE_CHECKING:
    from pydantic import BaseModel

__all__ = ["CaseList"]


class CaseList:
    """Mixin for a pydantic suite model with ``name``, ``seed`` and ``cases``; ``case_type`` is
    the model of one case (for :meth:`read_jsonl`)."""

    case_type: ClassVar[type[BaseModel]]
    if TYPE_CHECKING:
        name: str
        seed: int
        cases: tuple[Any, ...]

    def __iter__(self) -> Iterator[Any]:
        return iter(self.cases)

    def __len__(self) -> int:
        return len(self.cases)

    def case(self, case_id: str) -> Any:
        for c in self.cases:
            if c.id == case_id:
                return c
        raise KeyError(f"no case {case_id!r} in suite {self.name!r}")

    def write_jsonl(self, path: str) -> None:
        with open(path, "w", encoding="utf-8") as fh:
            for c in self.cases:
                fh.write(c.model_dump_json() + "\n")

    @classmethod
    def read_jsonl(cls, path: str, seed: int = 0) -> Any:
        with open(path, encoding="utf-8") as fh:
            cases = [cls.case_type.model_validate(json.loads(line)) for line in fh if line.strip()]
        return cls(seed=seed, cases=tuple(cases))  # type: ignore[call-arg]
