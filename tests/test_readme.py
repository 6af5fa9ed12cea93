"""The README's set-up commands and Python snippets are true: every snippet runs."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")
SNIPPETS = re.findall(r"```python\n(.*?)```", README, flags=re.S)


def test_exactly_two_setup_commands_at_the_top() -> None:
    first = re.search(r"```bash\n(.*?)```", README, flags=re.S)
    assert first is not None and README.index(first.group(0)) < 200
    commands = [c for c in first.group(1).splitlines() if c.strip()]
    assert commands == ['pip install -e ".[bench]" && tpguard bench run --quick',
                        'pip install -e ".[test]" && pytest']


def run_snippet(code: str, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    """Run a snippet as a script file (smolagents' @tool reads its function's source)."""
    script = tmp_path / "snippet.py"
    script.write_text(code, encoding="utf-8")
    return subprocess.run([sys.executable, str(script)], cwd=ROOT, capture_output=True, text=True,
                          timeout=300, env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path),
                                            "HF_HUB_OFFLINE": "1"})


@pytest.mark.parametrize("code", SNIPPETS, ids=[f"snippet{i}" for i in range(len(SNIPPETS))])
def test_python_snippet_runs(code: str, tmp_path: Path) -> None:
    out = run_snippet(code, tmp_path)
    assert out.returncode == 0, out.stderr[-3000:]


def test_first_snippet_prints_what_the_readme_says(tmp_path: Path) -> None:
    out = run_snippet(SNIPPETS[0], tmp_path)
    assert "handed over RX-88213" in out.stdout
    assert "person_name" in out.stdout and "summary" in out.stdout and "415" not in out.stdout.split(
        "redact")[0]
    assert "redact {'summary': 'Call [PERSON_NAME_1] at [PHONE_1]'}" in out.stdout


def test_langchain_snippet_output(tmp_path: Path) -> None:
    out = run_snippet(next(s for s in SNIPPETS if "create_agent" in s), tmp_path)
    assert "handed over: [PERSON_NAME_1], [PHONE_1], ready" in out.stdout, out.stderr[-2000:]
