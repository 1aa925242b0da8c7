"""The CLI end to end: `nesyplan plan`, `eval` and the shipped examples that `make demo` plans."""

import json

import pytest
from typer.testing import CliRunner

from nesyplan.cli import app
from pipeline.packs.pack import examples

runner = CliRunner()


def test_plan_json_holds_every_artifact(tmp_path):
    ir = tmp_path / "ir.lp"
    ir.write_text('_goal(g1, expense_report). _period(g1, "last month").\n')
    result = runner.invoke(app, ["plan", "expenses last month", "--today", "2024-03-10", "--ir", str(ir), "--json"])
    assert result.exit_code == 0, result.output
    run = json.loads(result.output)
    assert run["status"] == "succeeded"
    assert run["checked_ir"]["facts"][0]["predicate"] == "_goal"
    assert 'arg(g1,start_date,"02/01/2024")' in run["materialized"]["atoms"]
    assert "(define (problem request)" in run["task_pddl"]["text"]
    assert "(define (domain quickbooks)" in run["domain_pddl"]
    assert run["plan"]["calls"][0]["args"]["end_date"]["value"] == "02/29/2024"
    assert set(run["timings_ms"]) == {"check", "materialize", "compile", "plan"}


def test_plan_reads_ir_from_stdin_and_shows_artifacts():
    result = runner.invoke(app, ["plan", "some help", "--ir", "-"],
                           input='_goal(g1, product_help). _help_topic(g1, "[bold]payroll[/]").')
    assert result.exit_code == 0, result.output
    assert 'Step 1. x_help_topic = "payroll";' in result.output
    assert "Step 2. x = help_api(x_help_topic);" in result.output


def test_plan_with_hostile_ir_fails_clearly():
    result = runner.invoke(app, ["plan", "x", "--ir", "-", "--json"], input="#script (python) import os #end.")
    assert result.exit_code == 1
    run = json.loads(result.output)
    assert run["failure"]["kind"] == "ir_rejected" and "#script" in run["failure"]["message"]


def test_plan_on_an_unknown_domain():
    result = runner.invoke(app, ["plan", "x", "--domain", "nope", "--ir", "-", "--json"], input="")
    assert result.exit_code == 1
    assert json.loads(result.output)["failure"]["kind"] == "unknown_domain"


def test_plan_with_a_bad_today():
    result = runner.invoke(app, ["plan", "x", "--today", "15/10/2024", "--ir", "-", "--json"],
                           input="_goal(g1, business_advice).")
    assert result.exit_code == 1 and "not a date" in json.loads(result.output)["failure"]["message"]


@pytest.fixture
def dataset(tmp_path):
    records = [
        {"id": "s1", "query": "a", "today": "2024-10-15", "tags": {"goals": 1, "complete": False, "dataflow": False},
         "calls": [{"api": "charge_lookup_api", "args": {"charge_date": "10/14/2024", "charge_amount": None}}]},
        {"id": "s2", "query": "b", "today": "2024-10-15", "tags": {"goals": 0, "complete": True, "dataflow": False},
         "ood": True, "calls": []},
    ]
    path = tmp_path / "set.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in records) + "\n")
    return path


def test_eval_json(dataset):
    result = runner.invoke(app, ["eval", "--dataset", str(dataset), "--translator", "oracle", "--json"])
    assert result.exit_code == 0, result.output
    summary = json.loads(result.output)
    assert (summary["total"], summary["success"], summary["rate"]) == (2, 2, 1.0)
    assert summary["failures"] == []
    assert summary["latency_ms"]["plan"]["p50"] > 0


def test_eval_table(dataset):
    result = runner.invoke(app, ["eval", "--dataset", str(dataset)])
    assert result.exit_code == 0
    assert "| **overall** | 2 | 2 | 100.0% |" in result.output
    assert "| incomplete | 1 | 1 | 100.0% |" in result.output


def test_eval_unknown_translator(dataset):
    result = runner.invoke(app, ["eval", "--dataset", str(dataset), "--translator", "magic"])
    assert result.exit_code == 2 and "unknown translator" in result.output


@pytest.mark.parametrize("query, today, ir_file", examples("quickbooks"))
def test_shipped_examples_end_as_their_names_say(query, today, ir_file):
    result = runner.invoke(app, ["plan", query, "--today", today, "--ir", ir_file, "--json"])
    run = json.loads(result.output)
    if "error" in ir_file:
        assert run["failure"]["kind"] == "domain_error"
    elif "out_of_domain" in ir_file:
        assert run["failure"]["kind"] == "out_of_domain"
    else:
        assert run["status"] == "succeeded"
        asked = [a for a in run["plan"]["planner_actions"] if a.startswith("get_info_api")]
        assert bool(asked) == ("incomplete" in ir_file)


def test_bench_streams_the_symbolic_stages_with_the_naive_path_beside(tmp_path):
    records = [  # two requests of one structure (other values), one that asks, one that breaks a rule, one ood
        {"query": "q1", "today": "2024-10-15", "calls": [
            {"api": "expense_spend_api", "args": {"start_date": "04/01/2024", "end_date": "06/30/2024"}}]},
        {"query": "q2", "today": "2024-10-15", "calls": [
            {"api": "expense_spend_api", "args": {"start_date": "01/01/2023", "end_date": "03/31/2023"}}]},
        {"query": "q3", "today": "2024-10-15", "calls": [
            {"api": "contact_us_api", "args": {"contact_topic": "payroll", "contact_channel": None}}]},
        {"query": "q4", "today": "2024-10-15", "error": "end_before_start", "intended": [
            {"api": "expense_spend_api", "args": {"start_date": "06/30/2024", "end_date": "04/01/2024"}}]},
        {"query": "q5", "today": "2024-10-15", "calls": []},
    ]
    dataset = tmp_path / "stream.jsonl"
    dataset.write_text("".join(json.dumps(r) + "\n" for r in records))
    result = runner.invoke(app, ["bench", "--path", "symbolic", "--dataset", str(dataset), "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    assert report["requests"] == 5
    assert report["outcomes"] == {"succeeded": 3, "failed: domain_error": 1, "failed: out_of_domain": 1}
    assert report["plan_cache"] == {"hits": 1, "misses": 2, "entries": 2}  # q2 reuses q1's plan
    assert set(report["stages_ms"]) == {"check", "materialize", "compile", "plan", "total"}
    assert set(report["naive_stages_ms"]) == set(report["stages_ms"])
    for key in ("p50_ms", "p90_ms", "naive_p50_ms", "speedup", "requests_per_s"):
        assert report[key] > 0, key
    assert report["speedup"] == round(report["naive_p50_ms"] / report["p50_ms"], 1)


def test_bench_llm_records_the_inputs_and_replays_them_one_at_a_time_and_at_once(tmp_path):
    dataset = tmp_path / "requests.jsonl"
    dataset.write_text("".join(json.dumps({"id": f"r{i}", "query": q, "today": "2024-10-15"}) + "\n" for i, q in
                               enumerate(["invoice 300 dollars for piano lessons", "what did we spend in March 2024?",
                                          "email Dana about the overdue invoice"])))
    saved, outputs = tmp_path / "inputs.jsonl", tmp_path / "outputs.json"
    result = runner.invoke(app, ["bench", "--path", "llm", "--dataset", str(dataset), "--concurrency", "3",
                                 "--save-inputs", str(saved), "--save-outputs", str(outputs), "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["one_at_a_time"]["requests"] == report["concurrent"]["requests"] == 3
    assert report["same_outputs"] == 3 and report["different_outputs"] == []
    assert report["device"] == "cpu" and report["batching"] is True
    assert [json.loads(line)["id"] for line in saved.read_text().splitlines()] == ["r0", "r1", "r2"]
    assert set(json.loads(outputs.read_text())) == {"r0", "r1", "r2"}
    replayed = runner.invoke(app, ["bench", "--path", "llm", "--inputs", str(saved), "--limit", "1", "--json"])
    assert replayed.exit_code == 0 and json.loads(replayed.stdout)["one_at_a_time"]["requests"] == 1
    broken = tmp_path / "broken.jsonl"
    broken.write_text('{"not": "an input"}\n')
    refused = runner.invoke(app, ["bench", "--path", "llm", "--inputs", str(broken)])
    assert refused.exit_code == 2 and "LLM inputs" in refused.output


def test_bench_without_a_dataset_says_so():
    result = runner.invoke(app, ["bench", "--path", "symbolic"])
    assert result.exit_code == 2
    assert "--dataset" in result.output


def test_plan_file_plans_every_line_in_one_process_and_reports_a_bad_line(tmp_path):
    requests = tmp_path / "requests.jsonl"
    lines = [{"query": "expenses last month", "today": "2024-03-10",
              "ir": '_goal(g1, expense_report). _period(g1, "last month").\n'},
             "not a request",
             {"query": "the sales for q1", "today": "2024-05-02", "ir": '_goal(g1, invoice_sales_report). _period(g1, "q1").\n'}]
    requests.write_text("\n".join(json.dumps(x) if isinstance(x, dict) else x for x in lines) + "\n")
    result = runner.invoke(app, ["plan", "--file", str(requests)])
    assert result.exit_code == 2  # line 2 is no request
    runs = [json.loads(line) for line in result.stdout.splitlines() if line.startswith("{")]
    assert [r["query"] for r in runs] == ["expenses last month", "the sales for q1"]
    assert runs[0]["plan"]["calls"][0]["args"]["end_date"]["value"] == "02/29/2024"
    assert runs[1]["today"] == "2024-05-02" and runs[1]["status"] == "succeeded"
    assert f"{requests}:2:" in result.stderr
    assert runner.invoke(app, ["plan", "a request", "--file", str(requests)]).exit_code == 2  # one or the other
