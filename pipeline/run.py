"""Runs the stages over a Run record, one stage at a time, timing each.

`run_stage` is what both shells use: the embedded path calls it in a loop (`run_pipeline`), the service
calls it once per queued task. A stage reads its input from the record and writes its artifact back;
a StageError ends the run with that stage's reason, and any other exception is reported, never raised.
"""

from __future__ import annotations

import time
from datetime import date

from pipeline.packs.pack import Pack, PackError, load_pack
from pipeline.packs.store import load_pack_version
from pipeline.packs.versions import installed_digest
from pipeline.packs.workflows import expand_workflows
from pipeline.observability import metrics, tracing
from pipeline.records import LOOKUP, Failure, Run, StageError
from pipeline.settings import settings
from pipeline.stages.check import check_ir
from pipeline.stages.compile import compile_task
from pipeline.stages.materialize import materialize, require_plannable
from pipeline.stages.plan import plan

SYMBOLIC_STAGES = ("check", "materialize", "compile", "plan")
ALL_STAGES = ("translate", *SYMBOLIC_STAGES)


def backend_for(translator: str):
    """The LLM backend a translator name stands for, configured from the settings."""
    from pipeline.llm.backends import BACKENDS, get_backend

    if translator not in BACKENDS:
        raise StageError("translate", "internal", f"unknown translator {translator!r} ({', '.join(BACKENDS)})")
    return get_backend(translator, **BACKENDS[translator].options(settings()))


def _translate(run: Run, pack: Pack) -> None:
    from pipeline.stages.translate import translate

    translation = translate(run.query, pack, backend_for(run.translator or settings().translator), run.today,
                            constrain=run.constrain, goal_choice=run.goal_choice)
    run.prompt, run.llm_output, run.ir = translation.prompt, translation.raw, translation.ir
    run.shortlist, run.llm_stats = translation.shortlist, {**translation.stats, "attempts": translation.attempts}
    run.analysis = translation.analysis


def _check(run: Run, pack: Pack) -> None:
    if run.ir is None:
        raise StageError("check", "ir_rejected", "no IR: give one (--ir) or a translator")
    run.checked_ir = expand_workflows(check_ir(run.ir, pack), pack)


def _materialize(run: Run, pack: Pack) -> None:
    run.materialized = materialize(run.checked_ir, pack, run.today, settings().clingo_timeout_s)
    refused = [c.refused for c in run.analysis.clauses if c.refused] if run.analysis else []
    require_plannable(run.materialized, "; ".join(refused))


def _compile(run: Run, pack: Pack) -> None:
    lookups = frozenset(pack.spec.goals[c["goal"]].api for c in run.shortlist
                        if c.get("chosen_by") == LOOKUP and c["goal"] in pack.spec.goals)
    run.task_pddl = compile_task(run.materialized, pack, lookups)
    run.domain_pddl = pack.domain_pddl.read_text(encoding="utf-8")


def _plan(run: Run, pack: Pack, fast: bool = True) -> None:
    run.plan = plan(run.task_pddl, run.materialized, pack, settings().planner_timeout_s,
                    settings().planner_alias, fast=fast)


_STAGE_FUNCTIONS = {"translate": _translate, "check": _check, "materialize": _materialize, "compile": _compile, "plan": _plan}


def _pack_failure(exc: PackError, stage: str) -> Failure:
    kind = "unknown_domain" if "unknown domain" in str(exc) else "internal"
    return Failure(stage=stage, kind=kind, message=str(exc))


def new_run(query: str, domain: str, today: str | None = None, ir: str | None = None,
            translator: str | None = None, constrain: bool | None = None, goal_choice: str | None = None,
            pack_digest: str | None = None) -> Run:
    """A run to do. Without IR, it starts by translating (default translator from the settings).
    `pack_digest`: the pack version its stages use (default: the installed pack's, when they load it)."""
    s = settings()
    return Run(query=query, domain=domain, pack_digest=pack_digest, today=today or date.today().isoformat(), ir=ir,
               translator=None if ir is not None else (translator or s.translator),
               constrain=s.constrain if constrain is None else constrain,
               goal_choice=goal_choice or s.goal_choice)


def stages_of(run: Run) -> tuple[str, ...]:
    return ALL_STAGES if run.translator else SYMBOLIC_STAGES


def run_stage(run: Run, stage: str, pack: Pack | None = None, fast_plan: bool = True) -> Run:
    """Execute one stage on the record (in place, and returned); the last stage marks success.
    `fast_plan=False`: the naive planner path (for `bench`'s ratio)."""
    if run.status == "failed":
        return run
    run.status = "running"
    span = tracing.stage_started(run, stage)
    started = time.perf_counter()
    try:
        try:
            date.fromisoformat(run.today)
        except ValueError:
            raise StageError(stage, "ir_rejected", f"today {run.today!r} is not a date (YYYY-MM-DD)") from None
        pack = pack or load_pack_version(run.domain, run.pack_digest)
        if stage == "plan":
            _plan(run, pack, fast=fast_plan)
        else:
            _STAGE_FUNCTIONS[stage](run, pack)
    except StageError as exc:
        run.status, run.failure = "failed", exc.to_failure()
    except PackError as exc:
        run.status, run.failure = "failed", _pack_failure(exc, stage)
    except Exception as exc:  # noqa: BLE001 - a bug must end the run with its reason, not lose it
        run.status = "failed"
        run.failure = Failure(stage=stage, kind="internal", message=f"{type(exc).__name__}: {exc}")
        span.record_exception(exc)
    finally:
        run.timings_ms[stage] = round((time.perf_counter() - started) * 1000, 3)
    if run.status != "failed" and stage == SYMBOLIC_STAGES[-1]:
        run.status = "succeeded"
    metrics.stage_observed(run, stage)
    tracing.stage_ended(span, run, stage)
    return run


def warm_up(domains: list[str], translator: str | None = None) -> dict[str, float]:
    """Load now what the first request would otherwise pay for: each pack and its parsed planning domain,
    and with a translator, the model, the pack's goal retriever and the model state of the pack's static
    prompt. Workers call this at start; returns the seconds each part took."""
    from pipeline.retrieval.retrievers import get_retriever
    from pipeline.stages.plan import parsed_domain

    took: dict[str, float] = {}
    backend = None
    if translator:
        started = time.perf_counter()
        backend = backend_for(translator)
        took["model"] = time.perf_counter() - started
    for domain in domains:
        started = time.perf_counter()
        pack = load_pack(domain)
        parsed_domain(pack)
        if backend is not None:
            from pipeline.llm.prompt import render_system_prompt

            get_retriever(pack).by_clause("warm up")  # builds the index and loads the embedding model
            if backend.capabilities.prompt_prefix_cache:  # the opening every prompt of the pack shares
                backend.warm_up(render_system_prompt(pack, list(pack.spec.goals)[:1]))
        took[domain] = time.perf_counter() - started
    return took


@tracing.traced_run("embedded")  # one trace: a root span around it all, a child span per stage
def run_pipeline(query: str, domain: str, today: str | None = None, ir: str | None = None,
                 translator: str | None = None, constrain: bool | None = None,
                 goal_choice: str | None = None, pack_digest: str | None = None) -> Run:
    """The embedded path: every stage in this process, on the pack version `pack_digest` (default: the
    installed one)."""
    run = new_run(query, domain, today, ir, translator, constrain, goal_choice, pack_digest)
    try:
        pack = load_pack_version(domain, pack_digest)
        run.pack_digest = pack_digest or installed_digest(domain)
    except PackError as exc:
        run.status, run.failure = "failed", _pack_failure(exc, "check")
        metrics.run_ended(run, "check")
        return run
    for stage in stages_of(run):
        run_stage(run, stage, pack)
        if run.status == "failed":
            break
    return run
