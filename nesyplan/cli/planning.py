"""Planning: one request through the stages, in this process."""

from __future__ import annotations

from typing import Optional

import typer

from nesyplan.cli.common import app, err_console, nothing, read_ir
from nesyplan.show import show_run


@app.command()
def plan(query: str = typer.Argument(..., help="the request, in plain language"),
         domain: str = typer.Option("quickbooks", help="domain pack"),
         today: Optional[str] = typer.Option(None, help="date to resolve relative dates against (YYYY-MM-DD)"),
         ir: Optional[str] = typer.Option(None, help="IR file, or - for standard input: skips translation"),
         translator: Optional[str] = typer.Option(None, help="hf (local model) or openai (a server); "
                                                              "default from NESYPLAN_TRANSLATOR, else hf"),
         constrain: bool = typer.Option(True, "--constrain/--no-constrain", help="grammar-constrained decoding"),
         goal_choice: str = typer.Option("retrieve", help="retrieve: goals by retrieval; shortlist: the LLM picks among "
                                                           "the top NESYPLAN_SHORTLIST_K; llm: among all"),
         json_out: bool = typer.Option(False, "--json", help="print the Run record as JSON")) -> None:
    """Plan one request. Exit code 0: a plan; 1: no plan (the reason is in the output)."""
    from pipeline.run import run_pipeline

    ir_text = read_ir(ir) if ir is not None else None
    with err_console.status("translating (the first request loads the model)...", spinner="dots") \
            if ir_text is None and not json_out else nothing():
        run = run_pipeline(query, domain, today, ir_text, translator, constrain, goal_choice)
    if json_out:
        print(run.model_dump_json(indent=2))
    else:
        show_run(run)
    raise typer.Exit(0 if run.status == "succeeded" else 1)
