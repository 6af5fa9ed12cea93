"""Rewrite the explicit package list in pyproject.toml from the package folders on disk.

setuptools needs the list spelled out because adapters/ and benchmark/ are mapped under the
tpguard namespace; tests/test_packaging.py fails when the two disagree.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TOPS = (("tpguard", "tpguard"), ("adapters", "tpguard.adapters"), ("benchmark", "tpguard.benchmark"))


def packages() -> list[str]:
    found = set()
    for top, dotted in TOPS:
        for init in (ROOT / top).rglob("__init__.py"):
            found.add(".".join([dotted, *init.parent.relative_to(ROOT / top).parts]))
    return sorted(found)


def main() -> None:
    path = ROOT / "pyproject.toml"
    text = path.read_text()
    body = "".join(f'  "{p}",\n' for p in packages())
    new = re.sub(r"(?ms)^packages = \[\n.*?^\]\n", f"packages = [\n{body}]\n", text, count=1)
    path.write_text(new)


if __name__ == "__main__":
    main()
