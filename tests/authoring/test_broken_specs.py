"""A corpus of broken typed PDL specs and pack.yaml files, each refused with the file:line of the mistake
and a message that names it (and the closest valid name for a typo), never a clingo or planner error."""

import re
import shutil
from pathlib import Path

import pytest

from pipeline.authoring.workflow_packs import read_workflow
from pipeline.packs.flows import FlowSpecError
from pipeline.packs.pack import PackError, load_pack, using_packs_root

ROOT = Path(__file__).resolve().parents[2]
SPEC = (ROOT / "domains" / "_specs" / "restaurant_reservation.pdl.yaml").read_text(encoding="utf-8")


def _line(text: str, needle: str) -> int:
    return text[: text.index(needle)].count("\n") + 1


# (what is changed: old -> new, the line's needle in the new text, what the message must say)
SPEC_MISTAKES = [
    ("domain: restaurant_reservation", "domain: Events_3", "domain: Events_3",
     "domain 'Events_3' is not a pack name"),
    ("name: reserve_table", "name: ReserveTable", "name: ReserveTable", "workflow name 'ReserveTable' is not a goal name"),
    ("type: future_date}", "type: datetime}", "name: reservation_date", "unknown type 'datetime'"),
    ("precondition: [check_availability]", "precondition: [chek_availability]", "precondition: [chek_availability]",
     "precondition 'chek_availability', which is no API of the workflow (did you mean 'check_availability'?)"),
    ("description: the restaurant the user wants,", "description: the restaurant, the user wants,",
     "description: the restaurant, the user wants", "unknown key"),
    ("{name: party_size, description: how many people are coming, type: integer}",
     "{name: party_size, descripton: how many people are coming, type: integer}", "name: party_size",
     "unknown key (did you mean 'description'?)"),
    ("    response: [booking_id]", "    response: [booking_id, receipt]", "response: [booking_id, receipt]",
     "must return one item"),
    ("request: [availability_id, contact_name, contact_phone]", "request: [availability_id, contact_nam, contact_phone]",
     "request: [availability_id, contact_nam", "takes contact_nam, which no slot gives and no API returns (did you mean 'contact_name'?)"),
    ("{name: contact_phone, description: a phone number for the reservation, type: phone}",
     "{name: Contact_Phone, description: a phone number for the reservation, type: phone}", "name: Contact_Phone",
     "slot name 'Contact_Phone' is not lower case"),
    ("{name: contact_name, description: the name the reservation is under, type: person_name}",
     "{name: contact_name, description: the name the reservation is under}", "name: contact_name, description: the name the",
     "slot contact_name needs a `type:`"),
    ("examples:\n", "examples: 5\n", "examples: 5", "examples: Input should be a valid list"),
    ("procedure: |", "procedur: |", "procedur: |", "unknown key (did you mean 'procedure'?)"),
    ("    precondition: [find_restaurant]", "    precondition: [book_table]", "name: check_availability",
     "form a cycle"),
]


@pytest.mark.parametrize("old, new, needle, message", SPEC_MISTAKES, ids=[m[3][:40] for m in SPEC_MISTAKES])
def test_a_broken_workflow_spec_is_refused_at_its_line(tmp_path, old, new, needle, message):
    assert old in SPEC
    text = SPEC.replace(old, new, 1)
    path = tmp_path / "spec.pdl.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(FlowSpecError) as refused:
        read_workflow(path)
    first = str(refused.value).splitlines()[0]
    where = re.match(rf"{re.escape(str(path))}:(\d+): ", first)
    assert where, first
    if "cycle" not in message:  # a cycle belongs to no one line: it is reported at the file's first
        assert int(where.group(1)) == _line(text, needle), first
    assert message in str(refused.value)


def test_a_yaml_syntax_error_points_at_its_line(tmp_path):
    path = tmp_path / "spec.pdl.yaml"
    path.write_text(SPEC.replace("slots:\n", "slots: [\n", 1), encoding="utf-8")
    with pytest.raises(FlowSpecError, match=rf"{re.escape(str(path))}:\d+: invalid YAML"):
        read_workflow(path)


PACK_MISTAKES = [
    ("    normalizer: title_text\n", "    normaliser: title_text\n", "normaliser: title_text",
     "unknown key (did you mean 'normalizer'?)"),
    ("max_goals: 1\n", "max_goals: many\n", "max_goals: many", "max_goals: Input should be a valid integer"),
    ("    api: book_table\n", "    api: book_tabel\n", "api: book_tabel", "goal reserve_table names unknown api 'book_tabel'"),
    ("    after:\n    - find_restaurant\n", "    after:\n    - find_restaurnt\n", "after:",
     "comes after unknown api 'find_restaurnt'"),
    ("    produces: booking_id\n", "    produces: booking_id\n    optional: {party_sise: '2'}\n", "optional:",
     "optional argument 'party_sise' is not one of its arguments"),
    ("name: restaurant_reservation\n", "name: restaurants\n", "name: restaurants", "is not the folder"),
]


@pytest.mark.parametrize("old, new, needle, message", PACK_MISTAKES, ids=[m[3][:40] for m in PACK_MISTAKES])
def test_a_broken_pack_is_refused_at_its_line(tmp_path, old, new, needle, message):
    for folder in ("domains", "asp_rules", "pddl"):
        shutil.copytree(ROOT / folder / "restaurant_reservation", tmp_path / folder / "restaurant_reservation")
    path = tmp_path / "domains" / "restaurant_reservation" / "pack.yaml"
    text = path.read_text(encoding="utf-8")
    assert old in text
    text = text.replace(old, new, 1)
    path.write_text(text, encoding="utf-8")
    with using_packs_root(tmp_path), pytest.raises(PackError) as refused:
        load_pack("restaurant_reservation")
    # every problem is reported; the one about this mistake names it at its line
    assert (str(path), _line(text, needle)) in {(f, line) for f, line, said in refused.value.problems
                                                if message in said}, refused.value.problems


def test_a_misspelt_synonyms_key_is_refused_not_dropped(tmp_path):
    text = (ROOT / "domains" / "_specs" / "bank_transfer.pdl.yaml").read_text(encoding="utf-8")
    assert "synonyms: {checking:" in text
    text = text.replace("synonyms: {checking:", "synonym: {checking:", 1)
    path = tmp_path / "bank.pdl.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(FlowSpecError, match=rf"{re.escape(str(path))}:{_line(text, 'synonym: {')}: slots\.2\.synonym: "
                                            r"unknown key \(did you mean 'synonyms'\?\)"):
        read_workflow(path)
