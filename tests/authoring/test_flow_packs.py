"""Flow packs: generated from API/flow specs and PDL workflows; plans follow every flow and dependency."""

import json
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from pipeline.authoring.flow_packs import PdlWorkflow, compile_pdl, load_any_spec, make_flow_pack
from pipeline.evaluation.flows import flow_metrics
from pipeline.packs.flows import FlowDomain, FlowSpecError, check_flow_domain, gold_plan, plan_violations
from pipeline.packs.pack import load_pack
from pipeline.run import run_pipeline

ROOT = Path(__file__).resolve().parents[2]
SHARED_SPEC = ROOT.parent / "shared" / "benchmark" / "flows" / "domains.yaml"
FLOW_PACKS = ["trip_booking", "insurance", "banking", "restaurant_ride", "hospital"]

# A spec written for these tests: a one-of input, data order inside a step that differs from the listed
# order, an input produced two steps earlier.
SHOP = {
    "name": "shop",
    "apis": {
        "Begin": {"in": [], "out": ["session"]},
        "PickItem": {"in": ["session"], "out": ["item"]},
        "PickGift": {"in": ["session"], "out": ["gift"]},
        "Price": {"in": [["item", "gift"]], "out": ["price"]},
        "AskCard": {"in": [], "out": ["card"]},
        "Pay": {"in": ["price", "card"], "out": ["receipt"]},
        "Mail": {"in": ["receipt", "session"], "out": ["mail_status"]},
    },
    "intents": {
        "buy_item": [{"step": "start", "apis": ["Begin"]},
                     {"step": "choose", "apis": ["Price", "PickItem"]},
                     {"step": "pay", "apis": ["Pay", "AskCard"]},
                     {"step": "tell", "apis": ["Mail"]}],
        "buy_gift": [{"step": "start", "apis": ["Begin"]},
                     {"step": "choose", "apis": ["PickGift", "Price"]},
                     {"step": "pay", "apis": ["AskCard", "Pay"]}],
    },
}


def _domain(**changes) -> FlowDomain:
    spec = json.loads(json.dumps(SHOP))
    spec.update(changes)
    return FlowDomain(**spec)


@pytest.fixture(scope="module")
def shop_root(tmp_path_factory):
    root = tmp_path_factory.mktemp("packs")
    make_flow_pack(root, _domain(), "test spec")
    return root


def _plan_apis(root: Path, monkeypatch, domain: str, intent: str) -> list[str]:
    monkeypatch.setenv("NESYPLAN_PACKS_DIR", str(root))
    run = run_pipeline(f"{intent} please", domain, "2024-01-01", f"_goal(g1, {intent}).\n")
    assert run.status == "succeeded", run.failure
    return [c.api for c in run.plan.calls]


@pytest.mark.parametrize("intent", ["buy_item", "buy_gift"])
def test_a_generated_pack_plans_follow_the_flow_and_the_data(shop_root, monkeypatch, intent):
    apis = _plan_apis(shop_root, monkeypatch, "shop", intent)
    assert plan_violations(_domain(), intent, apis) == []
    # Inside a step the data decides: the listed order (Price before PickItem) would be wrong.
    if intent == "buy_item":
        assert apis.index("PickItem") < apis.index("Price")
        assert "PickGift" not in apis  # nothing outside the flow, though it could feed Price too


@pytest.mark.parametrize("domain", FLOW_PACKS)
def test_every_checked_in_flow_pack_plans_every_intent_by_its_flow(domain):
    pack = load_pack(domain)
    flow = pack.flow_domain
    for intent in flow.intents:
        run = run_pipeline(f"{intent}", domain, "2024-01-01", f"_goal(g1, {intent}).\n")
        apis = [c.api for c in run.plan.calls]
        assert plan_violations(flow, intent, apis) == [], (intent, apis)
        assert sorted(apis) == sorted(gold_plan(flow, intent))
        figures = flow_metrics(flow, intent, apis)
        assert figures["edits"] == figures["inconsistent_apis"] == figures["inconsistent_steps"] == 0


def test_the_validator_catches_every_kind_of_broken_flow_plan():
    domain, gold = _domain(), gold_plan(_domain(), "buy_item")
    assert plan_violations(domain, "buy_item", gold) == []
    swapped = gold.copy()
    i, j = swapped.index("PickItem"), swapped.index("Price")
    swapped[i], swapped[j] = swapped[j], swapped[i]
    assert any("before its input" in v for v in plan_violations(domain, "buy_item", swapped))
    late_step = [a for a in gold if a != "AskCard"] + ["AskCard"]
    problems = plan_violations(domain, "buy_item", late_step)
    assert any("flow step 3" in v for v in problems)
    assert any("never called" in v for v in plan_violations(domain, "buy_item", gold[:-1]))
    assert any("not part of" in v for v in plan_violations(domain, "buy_item", gold + ["PickGift"]))
    assert any("not an API" in v for v in plan_violations(domain, "buy_item", gold + ["Teleport"]))
    assert any("2 times" in v for v in plan_violations(domain, "buy_item", gold + ["Mail"]))


def test_flap_metrics_count_edits_and_inconsistencies():
    domain = _domain()
    gold = gold_plan(domain, "buy_item")  # Begin PickItem Price AskCard Pay Mail
    assert flow_metrics(domain, "buy_item", gold)["edits"] == 0
    reordered = ["Begin", "Price", "PickItem", "AskCard", "Pay", "Mail"]
    figures = flow_metrics(domain, "buy_item", reordered)
    assert figures["edits"] == 0 and figures["inconsistent_apis"] == 1 and figures["inconsistent_steps"] == 0
    steps_swapped = ["Begin", "AskCard", "PickItem", "Price", "Pay", "Mail"]
    figures = flow_metrics(domain, "buy_item", steps_swapped)
    assert figures["inconsistent_steps"] == 1  # "pay" begins before "choose"
    figures = flow_metrics(domain, "buy_item", ["Begin", "Teleport", "Mail"])
    assert figures["hallucinated"] == 1 and figures["edits"] == 1 + 4  # one added, four missing
    assert flow_metrics(domain, None, ["Begin"])["edits"] == 1  # out of domain: every API is an edit


def test_a_cycle_inside_a_step_is_rejected_with_where_it_is():
    apis = dict(SHOP["apis"], PickItem={"in": ["session", "price"], "out": ["item"]})
    with pytest.raises(FlowSpecError, match=r"intent 'buy_item', step 2 .*cycle"):
        check_flow_domain(_domain(apis=apis))


def test_an_input_nothing_produces_in_time_is_rejected():
    # Pay needs a card, but AskCard now runs only in a later step.
    intents = {"buy_item": [{"step": "start", "apis": ["Begin"]}, {"step": "choose", "apis": ["PickItem", "Price"]},
                            {"step": "pay", "apis": ["Pay"]}, {"step": "card", "apis": ["AskCard"]}]}
    with pytest.raises(FlowSpecError, match=r"API 'Pay' needs 'card', which no API of this or an earlier step"):
        check_flow_domain(_domain(intents=intents))
    with pytest.raises(FlowSpecError, match="unknown API 'Refund'"):
        check_flow_domain(_domain(intents={"x": [{"step": "s", "apis": ["Refund"]}]}))


def test_make_flow_packs_reports_a_bad_spec_and_writes_nothing(tmp_path, monkeypatch):
    from nesyplan.cli import app

    spec = {"domains": {"shop": {**{k: v for k, v in SHOP.items() if k != "name"},
                                 "apis": dict(SHOP["apis"], Price={"in": ["discount"], "out": ["price"]})}}}
    file = tmp_path / "spec.yaml"
    file.write_text(yaml.safe_dump(spec))
    monkeypatch.setenv("NESYPLAN_PACKS_DIR", str(tmp_path))
    result = CliRunner().invoke(app, ["make-flow-packs", str(file)])
    assert result.exit_code == 2
    assert "needs 'discount'" in " ".join(result.output.split())
    assert not (tmp_path / "domains" / "shop").exists()


HOSPITAL_PDL = ROOT / "domains" / "_specs" / "hospital.pdl.yaml"


def test_the_pdl_workflow_compiles_and_plans_in_its_order(tmp_path, monkeypatch):
    [domain] = load_any_spec(HOSPITAL_PDL)
    make_flow_pack(tmp_path, domain, HOSPITAL_PDL.name)
    apis = _plan_apis(tmp_path, monkeypatch, "hospital", "book_appointment")
    assert plan_violations(domain, "book_appointment", apis) == []
    core = [a for a in apis if not a.startswith("Ask")]
    assert core == ["CheckHospital", "CheckDepartment", "QueryAppointment", "ConfirmSlot", "Register",
                    "InformResult"]
    # Each slot is asked before the first node that takes it.
    assert apis.index("AskHospitalName") < apis.index("CheckHospital")
    assert apis.index("AskPatientIdNumber") < apis.index("Register")


def test_a_pdl_workflow_with_a_precondition_cycle_is_rejected():
    raw = yaml.safe_load(HOSPITAL_PDL.read_text())
    raw["apis"][0]["precondition"] = ["inform_result"]  # check_hospital after the final answer
    with pytest.raises(FlowSpecError, match="cycle"):
        compile_pdl(PdlWorkflow.model_validate(raw))
    raw = yaml.safe_load(HOSPITAL_PDL.read_text())
    raw["apis"][1]["request"].append("insurance_card")
    with pytest.raises(FlowSpecError, match="insurance_card"):
        compile_pdl(PdlWorkflow.model_validate(raw))


@pytest.mark.skipif(not SHARED_SPEC.is_file(), reason="the benchmark spec is not beside this checkout")
def test_the_checked_in_flow_packs_are_what_the_generator_writes(tmp_path):
    domains = load_any_spec(SHARED_SPEC, ROOT / "domains" / "_specs" / "flow_intents.yaml")
    domains += load_any_spec(HOSPITAL_PDL)
    for domain in domains:
        make_flow_pack(tmp_path, domain, "x")
        for part in (f"pddl/{domain.name}/domain.pddl", f"asp_rules/{domain.name}/ir_to_domain.lp"):
            assert (tmp_path / part).read_text() == (ROOT / part).read_text(), part
        generated = yaml.safe_load((tmp_path / f"domains/{domain.name}/pack.yaml").read_text())
        checked_in = yaml.safe_load((ROOT / f"domains/{domain.name}/pack.yaml").read_text())
        assert generated == checked_in, domain.name


def test_flow_eval_reports_flap_metrics(tmp_path):
    from nesyplan.cli import app

    records = [{"id": "t1", "domain": "banking", "query": "I would like a new savings account",
                "intent": "open_account"},
               {"id": "t2", "domain": "insurance", "query": "what is the tallest mountain", "intent": None}]
    dataset = tmp_path / "flows.jsonl"
    dataset.write_text("".join(json.dumps(r) + "\n" for r in records))
    result = CliRunner().invoke(app, ["eval", "--dataset", str(dataset), "--translator", "oracle", "--json"])
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    assert summary["intent_accuracy"] == 1.0 and summary["ood_handled"] == "1/1"
    assert summary["avg_edits"] == 0 and summary["inconsistent_api_pct"] == 0.0
    assert summary["inconsistent_step_pct"] == 0.0 and summary["parsable_pct"] == 100.0


def test_a_flow_pack_takes_one_intent_per_request():
    from pipeline.records import StageError
    from pipeline.stages.check import check_ir

    pack = load_pack("banking")
    assert pack.spec.max_goals == 1
    check_ir("_goal(g1, open_account).\n", pack)
    with pytest.raises(StageError, match="at most 1"):
        check_ir("_goal(g1, open_account).\n_goal(g2, report_problem).\n", pack)
