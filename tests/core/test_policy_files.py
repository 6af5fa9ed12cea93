"""Hostile and careless policy files: each is refused fast, with file, place and a fix — no value echoed."""

from __future__ import annotations

import time
import tracemalloc
from pathlib import Path

import pytest

from tpguard import Authorization, PolicyError, PolicyKB, PrivateAtom, Rule, ToolSpec
from tpguard.policy import _yaml

SECRET = "Maria-Gonzalez-SECRET"


def _write(tmp_path: Path, text: str | bytes, name: str = "policy.yaml") -> Path:
    p = tmp_path / name
    p.write_bytes(text if isinstance(text, bytes) else text.encode())
    return p


def _refused(p: Path) -> str:
    with pytest.raises(PolicyError) as info:
        PolicyKB.from_file(p)
    msg = str(info.value)
    assert msg.startswith(f"{p}: ") and "Traceback" not in msg, msg
    return msg


def _billion_laughs(indent: str) -> str:
    lines = [f'{indent}l0: &l0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    for i in range(1, 10):
        refs = ", ".join([f"*l{i - 1}"] * 9)
        lines.append(f"{indent}l{i}: &l{i} [{refs}]")
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("where", ["atoms", "schema"])
def test_alias_bomb_is_refused_fast_and_small(tmp_path: Path, where: str) -> None:
    if where == "schema":  # the case that used to pass validation and hang every call to the tool
        text = "tools:\n  - name: lookup\n    schema:\n" + _billion_laughs("      ")
    else:
        text = 'atoms:\n  - {id: a, type: t, value: "abcd"}\nextra:\n' + _billion_laughs("  ")
    p = _write(tmp_path, text)
    tracemalloc.start()
    started = time.perf_counter()
    msg = _refused(p)
    elapsed = time.perf_counter() - started
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert elapsed < 1.0 and peak < 5_000_000, (elapsed, peak)
    assert "anchors and aliases are not allowed" in msg and "line " in msg and "column " in msg


def test_a_single_alias_is_refused_too(tmp_path: Path) -> None:
    p = _write(tmp_path, 'atoms:\n  - &one {id: a, type: t, value: "abcd"}\n  - *one\n')
    msg = _refused(p)
    assert ": line 2, column 5: " in msg and "anchors and aliases are not allowed" in msg


def test_strict_loader_reads_with_libyaml_when_present() -> None:
    import yaml

    assert _yaml.WITH_LIBYAML == bool(yaml.__with_libyaml__)
    if _yaml.WITH_LIBYAML:
        from yaml.cyaml import CParser

        assert issubclass(_yaml.StrictLoader, CParser)


@pytest.mark.parametrize(
    ("field", "raw", "kind"),
    [
        ("value", "0042", "a number"),            # octal: 34
        ("value", "12:30", "a number"),           # sexagesimal: 750
        ("value", "yes", "true/false"),
        ("value", "2024-03-01", "a date or time"),
        ("value", "", "empty (null)"),
        ("aliases", "[1.50]", "a number"),
        ("variants", "[off]", "true/false"),
        ("semantic_variants", "[0x1F]", "a number"),
        ("masked", "[4417]", "a number"),
    ],
)
def test_unquoted_values_must_be_quoted(tmp_path: Path, field: str, raw: str, kind: str) -> None:
    value = raw if field == "value" else '"abcd"'
    extra = f", {field}: {raw}" if field != "value" else ""
    p = _write(tmp_path, f"atoms:\n  - {{id: a, type: t, value: {value}{extra}}}\n")
    msg = _refused(p)
    path = "atoms[0].value" if field == "value" else f"atoms[0].{field}[0]"
    assert f": {path}: expected a quoted string at line 2" in msg, msg
    assert f"as {kind}" in msg and "quote it" in msg, msg
    shown = raw.strip("[]")
    assert not shown or shown not in msg.replace(str(p), ""), msg


def test_quoted_values_keep_their_text(tmp_path: Path) -> None:
    p = _write(tmp_path, 'atoms:\n  - {id: a, type: t, value: "0042", aliases: ["12:30"], '
                         'masked: ["**** 4417"]}\n')
    atom = PolicyKB.from_file(p).atoms[0]
    assert atom.value == "0042" and atom.aliases == ("12:30",) and atom.masked == ("**** 4417",)


def test_json_values_must_be_strings(tmp_path: Path) -> None:
    p = _write(tmp_path, '{"atoms": [{"id": "a", "type": "t", "value": 4417}]}', "p.json")
    assert "atoms[0].value: expected a JSON string" in _refused(p)


def test_python_construction_still_takes_numbers_as_text() -> None:
    # Decided: only files must quote (YAML changed the number before we saw it); Python ints are exact.
    kb = PolicyKB(atoms=(PrivateAtom(id="c", type="card_suffix", value=4417),))  # type: ignore[arg-type]
    assert kb.atoms[0].value == "4417"


def test_duplicate_keys_name_the_key_and_line_never_the_value(tmp_path: Path) -> None:
    p = _write(tmp_path, f'atoms:\n  - id: a\n    type: t\n    value: "{SECRET}"\n    value: "other-value"\n')
    msg = _refused(p)
    assert ": line 5, column 5: " in msg and "duplicate key 'value'" in msg
    assert SECRET not in msg and "other-value" not in msg
    j = _write(tmp_path, '{"atoms": [], "tools": [], "atoms": []}', "p.json")
    assert "duplicate key 'atoms'" in _refused(j)


def test_merge_keys_are_refused(tmp_path: Path) -> None:
    p = _write(tmp_path, 'atoms:\n  - {<<: {id: a, type: t}, value: "abcd"}\n')
    assert "merge keys (<<) are not allowed" in _refused(p)


def test_contradictory_authorizations_are_errors(tmp_path: Path) -> None:
    p = _write(tmp_path, 'atoms: [{id: a, type: t, value: "abcd"}]\ntools: [{name: x}]\n'
                         "authorizations:\n  - {atom: a, tool: x, allow: false}\n"
                         "  - {atom: a, tool: x, allow: true}\n")
    msg = _refused(p)
    assert "authorizations[1]: expected one decision per atom and tool (authorizations[0] already " \
           "decides atom 'a' for tool 'x', differently)" in msg
    atom, tool = PrivateAtom(id="a", type="t", value="abcd"), ToolSpec(name="x")
    with pytest.raises(ValueError, match="one decision per atom and tool"):
        PolicyKB(atoms=(atom,), tools=(tool,), authorizations=(
            Authorization(atom="a", tool="x", allow="conditional", fields=("f",)),
            Authorization(atom="a", tool="x", allow="conditional", fields=("g",)),
        ))
    # the same entry twice decides nothing new: accepted
    same = Authorization(atom="a", tool="x", allow=False)
    kb = PolicyKB(atoms=(atom,), tools=(tool,), authorizations=(same, same))
    assert not kb.is_authorized("a", "x")


@pytest.mark.parametrize(
    ("first", "second", "target"),
    [
        ({"sink": "ticket"}, {"sink": "ticket"}, "sink"),
        ({"purpose": "Process  Payment"}, {"purpose": "process payment"}, "purpose"),
        ({"tool": "pay"}, {"tool": "pay"}, "tool"),
    ],
)
def test_contradictory_rules_at_one_level_are_errors(first: dict, second: dict, target: str) -> None:
    with pytest.raises(ValueError, match=rf"(?s)rules.1.*one decision per atom type and {target}"):
        PolicyKB(rules=(Rule(atom_type="phone", allow=True, **first),
                        Rule(atom_type="phone", allow=False, **second)))
    # different levels are not a contradiction: the more specific one decides
    kb = PolicyKB(rules=(Rule(atom_type="phone", sink="ticket", allow=True),
                         Rule(atom_type="phone", tool="pay", allow=False)))
    assert len(kb.rules) == 2


@pytest.mark.parametrize(
    ("fields", "path", "label"),
    [
        ({"value": "ab"}, "atoms[0].value", "the value of atom 'pin'"),
        ({"value": "123"[:2]}, "atoms[0].value", "the value of atom 'pin'"),
        ({"value": "abcd", "aliases": ["xy"]}, "atoms[0].aliases[0]", "the alias of atom 'pin'"),
        ({"value": "abcd", "variants": ["q"]}, "atoms[0].variants[0]", "the variant of atom 'pin'"),
        ({"value": "abcd", "masked": ["*"]}, "atoms[0].masked[0]", "the masked form of atom 'pin'"),
    ],
)
def test_undetectable_values_name_the_atom_never_the_value(fields: dict, path: str, label: str) -> None:
    with pytest.raises(PolicyError) as info:
        PolicyKB.from_dict({"atoms": [{"id": "pin", "type": "pin", **fields}]})
    msg = str(info.value)
    assert f"{path}: expected" in msg and f"({label} is too short to detect)" in msg, msg
    for v in [fields["value"], *fields.get("aliases", ()), *fields.get("variants", ())]:
        assert f"'{v}'" not in msg


def test_shortest_detectable_values_are_accepted() -> None:
    kb = PolicyKB(atoms=(PrivateAtom(id="a", type="t", value="abc"),
                         PrivateAtom(id="b", type="t", value="12 34", masked=("**34x",))))
    assert [a.id for a in kb.atoms] == ["a", "b"]


@pytest.mark.parametrize("text", ["", "\n\n", "# only a comment\n", "{}\n"])
def test_empty_file_is_not_a_valid_policy(tmp_path: Path, text: str) -> None:
    msg = _refused(_write(tmp_path, text))
    assert "the file is empty" in msg
    assert "the file is empty" in _refused(_write(tmp_path, "{}", "p.json"))


def test_non_utf8_file(tmp_path: Path) -> None:
    raw = b"atoms:\n  - {id: a, type: t, value: \"\xff\xfe\"}\n"
    msg = _refused(_write(tmp_path, raw))
    at = raw.index(b"\xff")
    assert f"<file>: expected UTF-8 text (byte {at} is not UTF-8)" in msg


@pytest.mark.parametrize(("name", "depth"), [("deep.yaml", 10_000), ("mid.yaml", 150),
                                              ("deep.json", 10_000), ("mid.json", 150)])
def test_deep_nesting_is_refused_fast(tmp_path: Path, name: str, depth: int) -> None:
    nested = "[" * depth + "]" * depth
    text = f'{{"tools": [{{"name": "x", "schema": {{"a": {nested}}}}}]}}'
    started = time.perf_counter()
    msg = _refused(_write(tmp_path, text, name))
    assert time.perf_counter() - started < 1.0
    assert "levels of nesting" in msg or "maximum nesting depth" in msg, msg


@pytest.mark.parametrize("name", ["p.yaml", "p.json"])
def test_five_thousand_digit_integer(tmp_path: Path, name: str) -> None:
    text = '{"atoms": [{"id": "a", "type": "t", "value": "abcd", "severity": ' + "9" * 5000 + "}]}"
    assert "at most 4300 digits" in _refused(_write(tmp_path, text, name))


def test_a_generated_file_of_many_atoms_loads(tmp_path: Path) -> None:
    rows = "\n".join(f'  - {{id: a{i}, type: account_id, value: "ACC-{i:06d}"}}' for i in range(2000))
    kb = PolicyKB.from_file(_write(tmp_path, f"atoms:\n{rows}\n"))
    assert len(kb.atoms) == 2000 and kb.atoms[1999].value == "ACC-001999"


def test_the_policy_page_example_is_a_valid_policy(tmp_path: Path) -> None:
    import re

    page = (Path(__file__).resolve().parents[2] / "docs" / "policy.md").read_text(encoding="utf-8")
    block = re.search(r"```yaml\n(.*?)```", page, re.S)
    assert block is not None
    kb = PolicyKB.from_file(_write(tmp_path, block.group(1)))
    assert kb.is_authorized("phone", "notify_patient") and kb.tools[0].input_schema == {"type": "object"}
