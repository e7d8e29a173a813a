"""`farmhand rag`: build document collections and search them (what a model's `rag:` and
the `rag_query` tool read). Collections live in $FARMHAND_HOME/rag (or $FARMHAND_RAG_DIR),
one SQLite file each."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from farmhand.cli.common import ConfigOption, console, err_console, project_config, user_errors
from farmhand.config.models import FarmhandConfig
from farmhand.errors import RequestError
from farmhand.models.sentence_models import sentence_model
from farmhand.rag import DEFAULT_EMBEDDER, MODES, GgufEmbedder, home_library

rag_app = typer.Typer(no_args_is_help=True)

Collection = Annotated[
    str, typer.Option("--collection", "-n", help="The collection's name, e.g. docs.")
]


@rag_app.command("add")
def add(
    paths: Annotated[
        list[Path], typer.Argument(help="Files and folders: text, Markdown, code, PDF.")
    ],
    collection: Collection,
    model: Annotated[
        str | None,
        typer.Option(
            "--model",
            "-m",
            help=f"The model whose embeddings index the collection: {DEFAULT_EMBEDDER} (the"
            " default, a sentence-embedding model), a configured llamacpp model, a catalog"
            " name or a .gguf file. A collection keeps to one model.",
        ),
    ] = None,
    reindex: Annotated[
        bool,
        typer.Option(
            "--reindex",
            help="Embed every passage the collection holds again with --model (or the"
            " default) first: for a collection indexed with another model.",
        ),
    ] = False,
    config: ConfigOption = None,
) -> None:
    """Index documents into a collection (made on first use); changed files are replaced,
    unchanged ones left as they are."""
    with user_errors():
        cfg = project_config(config)
        source = embedding_source(cfg, model)
        library = home_library()
        embedder = GgufEmbedder(source)
        try:
            report = library.add(
                collection,
                paths,
                embedder,
                progress=lambda line: err_console.print(f"[dim]{escape(line)}[/]"),
                reindex=reindex,
            )
        finally:
            library.close()
            embedder.close()
    passages = sum(n for _, n in report.added)
    again = f"{report.reembedded} embedded again, " if reindex else ""
    console.print(
        f"{collection}: {again}{len(report.added)} added ({passages} passages),"
        f" {len(report.unchanged)} unchanged, {len(report.skipped)} skipped"
        f" [dim](embeddings: {escape(embedder.name)})[/]",
        highlight=False,
        soft_wrap=True,
    )
    for skipped in report.skipped:
        err_console.print(
            f"skipped {escape(str(skipped.path))}: {skipped.reason}",
            highlight=False,
            soft_wrap=True,
        )


def embedding_source(config: FarmhandConfig, name: str | None) -> str:
    """The model that embeds for `rag add --model NAME`: the packaged sentence model when no
    name is given or it names that model; a .gguf path; else a configured llamacpp model
    or a catalog name."""
    if name is None or sentence_model(name) is not None:
        return name or DEFAULT_EMBEDDER
    if name.endswith(".gguf") or "/" in name:
        return name
    model = config.model(name, catalog=True)
    if model.provider != "llamacpp":
        raise RequestError(
            f"model {model.name!r} runs on the {model.provider} backend; collections are"
            f" embedded by llama.cpp: name {DEFAULT_EMBEDDER} (the default), an embedded"
            " (llamacpp) model, a catalog model or a .gguf"
        )
    return str(model.model_path or model.model or DEFAULT_EMBEDDER)


@rag_app.command("query")
def query(
    text: Annotated[str, typer.Argument(help="The question.")],
    collection: Collection,
    top_k: Annotated[int, typer.Option("--top-k", "-k", min=1, max=50)] = 5,
    mode: Annotated[
        str, typer.Option(help="hybrid (words and meaning), keyword or vector.")
    ] = "hybrid",
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """The passages of a collection that best answer a question, each with its citation."""
    with user_errors():
        if mode not in MODES:
            raise RequestError(f"--mode must be one of {', '.join(MODES)} (got {mode!r})")
        library = home_library()
        try:
            hits = library.query(collection, text, top_k=top_k, mode=mode)
        finally:
            library.close()
    if as_json:
        results = [h.to_json() for h in hits]
        typer.echo(json.dumps({"collection": collection, "query": text, "results": results}))
        return
    if not hits:
        err_console.print(f"no passage of {collection!r} matches")
        raise typer.Exit(1)
    for rank, hit in enumerate(hits, start=1):
        console.print(
            f"[bold][{rank}] {escape(hit.citation)}[/] [dim]score {hit.score:.4f}[/]",
            highlight=False,
            soft_wrap=True,
        )
        console.print(escape(hit.passage.text), highlight=False, soft_wrap=True)
        console.print()


@rag_app.command("list")
def list_collections() -> None:
    """The collections, with their documents, passages and embedding model."""
    with user_errors():
        library = home_library()
        try:
            infos = [library.info(name) for name in library.names()]
        finally:
            library.close()
    if not infos:
        err_console.print("no collections yet; make one with `farmhand rag add PATH -n NAME`")
        return
    for info in infos:
        console.print(
            f"{info.name}: {info.documents} documents, {info.passages} passages"
            f" [dim](embeddings: {escape(info.embedder)}, {info.dimensions} dimensions)[/]",
            highlight=False,
            soft_wrap=True,
        )
