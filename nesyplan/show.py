"""A Run record in the terminal (rich): every artifact in stage order, then the timings and the outcome.
Shared by the CLI and the demo."""

from __future__ import annotations

from rich.console import Console
from rich.markup import escape
from rich.panel import Panel
from rich.syntax import Syntax
from rich.table import Table

from pipeline.records import Analysis, Run

console = Console()


def show_analysis(analysis: Analysis, out: Console = console) -> None:
    """The clauses (what each does, its best goals), the goals chosen, and every value reading."""
    clauses = Table("clause", "act", "best goals", title="analysis: clauses", title_justify="left")
    for c in analysis.clauses:
        clauses.add_row(escape(c.text), c.act + (" (refers back)" if c.refers_back else ""),
                        ", ".join(f"{g['goal']} {g['score']:.2f}" for g in c.goals))
    out.print(clauses)
    if analysis.goals:
        out.print(Panel(escape("\n".join(f"{g['goal']}  {g['score']:.3f}  <- {g.get('source', '')!r}"
                                         + (f"  ({g['chosen_by']})" if g.get("chosen_by") else "")
                                         for g in analysis.goals)), title="goals chosen", title_align="left"))
    values = Table("argument", "words", "value", "p", "kept / why", title="analysis: value readings",
                   title_justify="left")
    for v in analysis.values:
        values.add_row(v.argument, escape(v.text), escape(v.value), "" if v.probability is None else f"{v.probability:.2f}",
                       "kept" if v.kept else escape(v.why))
    if analysis.values:
        out.print(values)
    heads = ", ".join(k for k, on in analysis.learned.items() if on) or "none"
    out.print(f"learned heads: {heads}; analysis {analysis.seconds * 1000:.1f} ms")


def show_run(run: Run, out: Console = console) -> None:
    """Every artifact of a run, in stage order, then the timings and the outcome."""
    out.rule(f"[bold]{escape(run.query or '(no query)')}[/]  domain={escape(run.domain)}{'@' + run.pack_digest[:12] if run.pack_digest else ''} today={escape(run.today)}")
    if run.analysis is not None:
        show_analysis(run.analysis, out)
    elif run.shortlist:
        out.print(Panel(escape("\n".join(f"{g['goal']}  {g['score']:.3f}  <- {g.get('source', '')!r}"
                                         for g in run.shortlist)), title="retrieved goals", title_align="left"))
    if run.llm_output is not None:
        out.print(Panel(escape(run.llm_output.strip() or "(empty)"), title=f"LLM output ({run.translator})",
                        title_align="left"))
        out.print(Panel(Syntax(run.ir.strip() or "% (empty)", "prolog"), title="IR", title_align="left"))
    if run.materialized is not None:
        m = run.materialized
        out.print(Panel(Syntax(m.atoms.strip() or "% (no atoms)", "prolog"), title="materialized",
                        title_align="left"))
        if m.unreadable:
            out.print(Panel(escape("\n".join(m.unreadable)), title="words the normalisers could not read (asked for)",
                            title_align="left", border_style="yellow"))
    if run.task_pddl is not None:
        out.print(Panel(Syntax(run.task_pddl.text.strip(), "lisp"), title="task PDDL", title_align="left"))
    if run.plan is not None:
        out.print(Panel(escape(run.plan.text), title="plan", title_align="left", border_style="green"))
    timings = Table("stage", "ms", title="stage wall time", title_justify="left")
    for stage, ms in run.timings_ms.items():
        timings.add_row(stage, f"{ms:.1f}")
    out.print(timings)
    if run.failure:
        f = run.failure
        out.print(Panel(f"[bold]{f.kind}[/] at stage {f.stage}: {escape(f.message)}", title="no plan",
                        title_align="left", border_style="red"))
    else:
        out.print(f"[green]{run.status}[/]")
