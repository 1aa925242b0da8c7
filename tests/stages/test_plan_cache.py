"""The planner's fast path: the domain parsed once, the task built in memory, plans cached by structure.
A cached plan must be the plan a fresh planner run gives, with the request's own values."""

import shutil
from collections import Counter
from pathlib import Path

import pytest

from pipeline.evaluation.calls import oracle_ir
from pipeline.evaluation.datasets import load_dataset
from pipeline.evaluation.flows import flow_oracle_ir, is_flow_dataset
from pipeline.packs.pack import PROJECT_ROOT, load_pack
from pipeline.run import SYMBOLIC_STAGES, new_run, run_pipeline, run_stage
from pipeline.stages.check import check_ir
from pipeline.stages.compile import compile_task
from pipeline.stages.materialize import materialize
from pipeline.stages.plan import PlanCache, _structure, plan, plan_cache

BENCHMARK = PROJECT_ROOT.parent / "shared" / "benchmark"
HITS_CHECKED = 2  # answers from the cache checked per structure: every structure, and more than one request
DATASETS = [BENCHMARK / "quickbooks" / "dev.jsonl", BENCHMARK / "quickbooks" / "dev_realistic.jsonl",
            BENCHMARK / "flows" / "dev.jsonl"]


def without_flag(p):
    return p.model_dump(exclude={"cached"})


def compiled(ir, pack, today="2024-10-15"):
    m = materialize(check_ir(ir, pack), pack, today)
    return compile_task(m, pack), m


def plannable_runs(dataset: Path):
    records = load_dataset(dataset)
    flows = is_flow_dataset(records)
    runs = []
    for record in records:
        domain = record["domain"] if flows else "quickbooks"
        ir = flow_oracle_ir(record) if flows else oracle_ir(record, load_pack(domain))
        run = new_run(record["query"], domain, record.get("today"), ir)
        for stage in SYMBOLIC_STAGES[:-1]:  # up to the task; planning is the test's
            run_stage(run, stage)
        if run.task_pddl is not None and run.status != "failed":
            runs.append((run, load_pack(domain)))
    return runs


@pytest.mark.parametrize("dataset", DATASETS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_every_cached_plan_equals_a_fresh_one(dataset):
    """A stream of requests: the first of each structure is planned, the others are answered from the cache
    with their own values. Each structure's answers from the cache (its first ones, up to
    `HITS_CHECKED`) must equal the plan Fast Downward gives that request fresh."""
    if not dataset.is_file():
        pytest.skip("the benchmark is not beside this checkout")
    runs = plannable_runs(dataset)
    assert len(runs) > 50
    plan_cache().clear()
    streamed = [plan(run.task_pddl, run.materialized, pack) for run, pack in runs]
    structures = [_structure(run.task_pddl) for run, _pack in runs]
    first = {s: k for k, s in reversed(list(enumerate(structures)))}
    assert [got.cached for got in streamed] == [first[s] != k for k, s in enumerate(structures)]
    assert len(plan_cache()) == len(first) < len(runs)  # requests share structures
    checked: Counter = Counter()
    for (run, pack), got, structure in zip(runs, streamed, structures):
        if not got.cached or checked[structure] == HITS_CHECKED:
            continue
        checked[structure] += 1
        plan_cache().clear()
        fresh = plan(run.task_pddl, run.materialized, pack)  # Fast Downward on the task built in memory
        assert not fresh.cached
        assert without_flag(got) == without_flag(fresh), run.query
    assert sum(checked.values()) >= min(len(runs) - len(first), 10)


def test_the_in_memory_task_plans_as_the_parsed_text_does(pack):
    """The naive path reads domain and task from PDDL text; the fast path must find the same plan on every
    shipped example."""
    for file in sorted(pack.examples_dir.glob("*.lp")):
        run = run_pipeline("q", "quickbooks", "2024-10-15", file.read_text())
        if run.task_pddl is None or run.status != "succeeded":
            continue
        plan_cache().clear()
        fast = plan(run.task_pddl, run.materialized, pack)
        naive = plan(run.task_pddl, run.materialized, pack, fast=False)
        assert not fast.cached and not naive.cached
        assert without_flag(fast) == without_flag(naive), file.name


def test_same_structure_other_values_shares_the_plan_but_keeps_its_own_values(pack):
    plan_cache().clear()
    task1, m1 = compiled('_goal(g1, expense_report). _period(g1, "Q2 2024").', pack)
    task2, m2 = compiled('_goal(g1, expense_report). _period(g1, "March 2023").', pack)
    assert task1.text != task2.text
    first, second = plan(task1, m1, pack), plan(task2, m2, pack)
    assert not first.cached and second.cached
    assert '"04/01/2024"' in first.text and '"04/01/2024"' not in second.text
    assert '"03/01/2023"' in second.text and '"03/31/2023"' in second.text
    assert [c.args["start_date"].value for c in second.calls] == ["03/01/2023"]


def test_a_missing_argument_is_another_structure(pack):
    plan_cache().clear()
    given, m1 = compiled('_goal(g1, contact_agent). _contact_channel(g1, "chat").', pack)
    missing, m2 = compiled("_goal(g1, contact_agent).", pack)
    assert not plan(given, m1, pack).cached
    asked = plan(missing, m2, pack)
    assert not asked.cached
    assert 'get_info_api("contact_channel")' in asked.text


def test_a_changed_domain_is_a_new_pack_version(tmp_path, monkeypatch):
    for part in ("domains", "asp_rules", "pddl"):
        shutil.copytree(PROJECT_ROOT / part / "quickbooks", tmp_path / part / "quickbooks")
    monkeypatch.setenv("NESYPLAN_PACKS_DIR", str(tmp_path))
    pack = load_pack("quickbooks")
    task, m = compiled('_goal(g1, expense_report). _period(g1, "Q2 2024").', pack)
    plan_cache().clear()
    assert not plan(task, m, pack).cached
    assert plan(task, m, pack).cached
    domain = tmp_path / "pddl" / "quickbooks" / "domain.pddl"
    domain.write_text(domain.read_text() + "\n; a new version of the pack\n")
    assert not plan(task, m, pack).cached


def test_the_cache_is_bounded_and_forgets_the_least_recently_used():
    cache = PlanCache(2)
    cache.put("a", (("x", ()),))
    cache.put("b", (("y", ()),))
    assert cache.get("a") is not None  # a is now the most recent
    cache.put("c", (("z", ()),))
    assert len(cache) == 2 and cache.get("b") is None and cache.get("a") and cache.get("c")
    assert (cache.hits, cache.misses) == (3, 1)
    off = PlanCache(0)
    off.put("a", (("x", ()),))
    assert off.get("a") is None and len(off) == 0
