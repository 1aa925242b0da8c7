"""Typed PDL workflows as conversation packs: generated from the specs, expanded into their API calls,
planned in data order with a question for each slot the request left out."""

from pathlib import Path

import pytest
import yaml

from pipeline.authoring.flow_packs import PdlWorkflow
from pipeline.authoring.workflow_packs import make_workflow_pack, workflow_pack_spec
from pipeline.packs.flows import FlowSpecError
from pipeline.packs.pack import load_pack
from pipeline.run import run_pipeline

ROOT = Path(__file__).resolve().parents[2]
SPECS = {name: ROOT / "domains" / "_specs" / f"{name}.pdl.yaml" for name in ("restaurant_reservation", "bank_transfer")}


def workflow(name: str) -> PdlWorkflow:
    return PdlWorkflow.model_validate(yaml.safe_load(SPECS[name].read_text(encoding="utf-8")))


@pytest.mark.parametrize("name", sorted(SPECS))
def test_the_checked_in_packs_are_what_the_generator_makes(tmp_path, name):
    make_workflow_pack(tmp_path, workflow(name), SPECS[name].name)
    for made in tmp_path.rglob("*"):
        if made.is_file():
            checked_in = ROOT / made.relative_to(tmp_path)
            assert checked_in.read_text(encoding="utf-8") == made.read_text(encoding="utf-8"), checked_in


def test_a_slot_without_a_type_or_an_input_nothing_gives_is_rejected():
    spec = workflow("bank_transfer")
    untyped = spec.model_copy(update={"slots": [s.model_copy(update={"type": None}) if s.name == "amount" else s
                                                for s in spec.slots]})
    with pytest.raises(FlowSpecError, match="slot amount needs a `type:`"):
        workflow_pack_spec(untyped)
    orphan = spec.model_copy(update={"apis": [a.model_copy(update={"request": [*a.request, "pin"]})
                                              if a.name == "make_transfer" else a for a in spec.apis]})
    with pytest.raises(FlowSpecError, match="make_transfer takes pin"):
        workflow_pack_spec(orphan)


def test_a_workflow_goal_plans_every_call_in_data_order_and_asks_for_each_missing_slot():
    ir = ('_goal(g1, transfer_money).\n_payee_name(g1, "Acme Supplies").\n_amount(g1, "$1,200").\n'
          '_source_account(g1, "savings account").\n')
    run = run_pipeline("", "bank_transfer", "2025-03-12", ir=ir)
    assert run.status == "succeeded", run.failure
    apis = [c.api for c in run.plan.calls]
    assert apis[0] == "verify_identity" and apis[-1] == "make_transfer"
    position = {c.api: i for i, c in enumerate(run.plan.calls)}
    transfer = run.plan.calls[-1].args
    assert transfer["payee_id"].ref == position["find_payee"] and transfer["balance"].ref == position["get_balance"]
    assert transfer["amount"].value == "1200.00" and transfer["source_account"].value == "savings"
    asked = {a.get_info for c in run.plan.calls for a in c.args.values() if a.get_info}
    assert asked == {"customer_id", "date_of_birth"}


def test_the_steps_of_a_workflow_are_never_offered_as_goals():
    pack = load_pack("restaurant_reservation")
    assert pack.requestable_goals() == ["reserve_table"]
    assert pack.goal_takes("reserve_table") == ["restaurant_name", "party_size", "reservation_date",
                                                "reservation_time", "contact_name", "contact_phone"]
