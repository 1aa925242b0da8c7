"""Planning: one request through the stages, in this process."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Optional

import typer
from rich.markup import escape

from nesyplan.cli.common import app, err_console, nothing, read_ir
from nesyplan.show import show_run


@app.command()
def plan(query: Optional[str] = typer.Argument(None, help="the request, in plain language"),
         file: Optional[Path] = typer.Option(None, "--file", exists=True, dir_okay=False,
                                             help="plan every request of a JSONL file in this one process (the "
                                                  "model loaded once): each line {query, domain?, today?, ir?}; "
                                                  "prints one Run JSON per line"),
         domain: str = typer.Option("quickbooks", help="domain pack"),
         today: Optional[str] = typer.Option(None, help="date to resolve relative dates against (YYYY-MM-DD)"),
         ir: Optional[str] = typer.Option(None, help="IR file, or - for standard input: skips translation"),
         translator: Optional[str] = typer.Option(None, help="hf (local model) or openai (a server); "
                                                              "default from NESYPLAN_TRANSLATOR, else hf"),
         constrain: bool = typer.Option(True, "--constrain/--no-constrain", help="grammar-constrained decoding"),
         goal_choice: str = typer.Option("retrieve", help="retrieve: goals by retrieval; shortlist: the LLM picks among "
                                                           "the top NESYPLAN_SHORTLIST_K; llm: among all"),
         json_out: bool = typer.Option(False, "--json", help="print the Run record as JSON")) -> None:
    """Plan one request. Exit code 0: a plan; 1: no plan (the reason is in the output). With --file, plan
    each line's request and exit 0 when every one was read (a request without a plan is a Run that says why)."""
    from pipeline.observability import tracing
    from pipeline.run import run_pipeline

    tracing.configure("nesyplan-cli")  # a root span per run and a span per stage, where traces are configured
    if (query is None) == (file is None):
        raise typer.BadParameter("give a request or --file, not both", param_hint="QUERY / --file")
    if file is not None:
        return plan_file(file, domain, today, translator, constrain, goal_choice)
    ir_text = read_ir(ir) if ir is not None else None
    with err_console.status("translating (the first request loads the model)...", spinner="dots") \
            if ir_text is None and not json_out else nothing():
        run = run_pipeline(query, domain, today, ir_text, translator, constrain, goal_choice)
    if json_out:
        print(run.model_dump_json(indent=2))
    else:
        show_run(run)
    raise typer.Exit(0 if run.status == "succeeded" else 1)


def plan_file(file: Path, domain: str, today: str | None, translator: str | None, constrain: bool,
              goal_choice: str) -> None:
    """One compact Run JSON per input line, in order; a line that is no request is reported with its number
    on stderr and skipped, and the exit code is 2 if any was."""
    from pipeline.run import run_pipeline

    bad = 0
    for number, line in enumerate(file.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
            if not isinstance(record, dict) or not isinstance(record.get("query", ""), str):
                raise ValueError("a line is a JSON object with a string `query`")
        except ValueError as exc:
            err_console.print(f"[red]{file}:{number}: {escape(str(exc))}[/]")
            bad += 1
            continue
        run = run_pipeline(record.get("query", ""), record.get("domain", domain), record.get("today", today),
                           record.get("ir"), translator, constrain, goal_choice)
        print(run.model_dump_json(), flush=True)
    if bad:
        raise typer.Exit(2)
