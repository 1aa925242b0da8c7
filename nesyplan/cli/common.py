"""What every room of the command line shares: the typer app, the consoles, and small helpers."""

from __future__ import annotations

import sys
from pathlib import Path

import typer
from rich.console import Console
from rich.markup import escape

from nesyplan.show import console
from pipeline.records import Run

app = typer.Typer(add_completion=False, no_args_is_help=True,
                  help="nesyplan: plain-language requests -> inspectable plans of API calls.")
# Errors are not wrapped at the terminal's width: a `file:line:` or a path in them stays whole, to copy or click.
err_console = Console(stderr=True, soft_wrap=True)
__all__ = ["app", "console", "err_console"]


def read_ir(source: str) -> str:
    if source == "-":
        return sys.stdin.read()
    path = Path(source)
    if not path.is_file():
        raise typer.BadParameter(f"no such IR file: {source}", param_hint="--ir")
    return path.read_text(encoding="utf-8")


def nothing():
    import contextlib

    return contextlib.nullcontext()


def trained(pack) -> bool:
    from pipeline.retrieval.retrievers import trained_model

    return trained_model(pack) is not None


def service_errors(function):
    """Redis or the broker being down is a clear message and exit code 2, not a traceback."""
    import functools

    @functools.wraps(function)
    def wrapper(*args, **kwargs):
        import kombu.exceptions
        import redis

        try:
            return function(*args, **kwargs)
        except (redis.exceptions.RedisError, kombu.exceptions.OperationalError) as exc:
            from pipeline.settings import settings

            err_console.print(f"[red]the queue (Redis at {escape(settings().redis_url)}) is unavailable: "
                              f"{escape(str(exc))}[/]")
            raise typer.Exit(2)

    return wrapper


def wait_for(run_ids: list[str], timeout_s: float, on_done=None) -> dict[str, Run]:
    import time

    from workers.tasks import store

    pending, done = set(run_ids), {}
    deadline = time.monotonic() + timeout_s
    while pending and time.monotonic() < deadline:
        for run_id in list(pending):
            run = store().load(run_id)
            if run is not None and run.status in ("succeeded", "failed"):
                done[run_id] = run
                pending.discard(run_id)
                if on_done:
                    on_done()
        if pending:
            time.sleep(0.05)
    return done
