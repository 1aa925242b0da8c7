"""Conversations that recover, with the real packaged model, clingo and Fast Downward: a call with effects is
read back and runs only on a yes; a no corrects; cancel, a person, "I don't know" and off-topic messages
end the session within bounds, with the reason; the benchmark's simulated user answers read-backs as its
SPEC says."""

import pytest

from pipeline.evaluation.sessions import NO, NO_WITH, YES, confirm_answer, simulate, wrong_calls_executed
from pipeline.sessions.engine import SessionEngine
from pipeline.sessions.repair import MAX_ASIDES

TODAY = "2025-06-02"
DOMAIN = "restaurant_reservation"
OPENING = "could you reserve Casa Verde for 3 people on June 12 at 8:30pm"


@pytest.fixture(scope="module")
def engine():
    return SessionEngine("hf")


def read_back(engine, opening=OPENING, name="Noor Haddad", phone="312-555-0147"):
    """A session brought up to the booking's read-back."""
    state = engine.open(DOMAIN, TODAY)
    reply = engine.reply(state, opening)
    answers = {"contact_name": name, "contact_phone": phone}
    while reply.kind == "ask":
        reply = engine.reply(state, answers[reply.slot])
    assert reply.kind == "confirm", reply.text
    return state, reply


def test_a_booking_is_read_back_with_every_value_and_runs_only_on_a_yes(engine):
    state, reply = read_back(engine)
    # The booking and the lookups it depends on, read back before any of them runs.
    assert [c.api for c in reply.calls] == ["find_restaurant", "check_availability", "book_table"]
    assert state.executed == [] and reply.calls[2].args["availability_id"] == {"ref": 1}
    for words in ("Casa Verde", "3", "06/12/2025", "20:30", "Noor Haddad", "312-555-0147"):
        assert words in reply.text
    done = engine.reply(state, "yes, go ahead")
    assert done.kind == "done" and state.turns[-1].kind == "affirm"
    assert [c.api for c in state.executed].count("book_table") == 1
    assert state.end_reason == "carried out"


def test_a_no_with_the_right_value_changes_it_and_reads_back_again(engine):
    state, _ = read_back(engine)
    again = engine.reply(state, "no, that's not right. we are 5")
    assert again.kind == "confirm" and "book_table" not in [c.api for c in state.executed]
    assert "the party size 5" in again.text
    done = engine.reply(state, "yes")
    booked = [c for c in state.executed if c.api == "check_availability"][-1]
    assert done.kind == "done" and booked.args["party_size"] == "5"


def test_a_bare_no_is_asked_about_once_then_handed_off_with_nothing_booked(engine):
    state, first = read_back(engine)
    second = engine.reply(state, "no")
    assert second.kind == "confirm" and second.calls == first.calls and "change" in second.text
    third = engine.reply(state, "nope")
    assert third.kind == "handoff" and state.ended == "handoff"
    assert "book_table" not in [c.api for c in state.executed]
    assert "Casa Verde" in third.text  # what it had so far goes to the person


def test_a_read_back_turned_down_with_nothing_new_is_not_offered_a_third_time(engine):
    """A no that repeats a value the read-back already has changes nothing: after the questions it may
    raise again, the same read-back comes back; turned down twice, the session goes to a person instead of
    going round again."""
    state, first = read_back(engine)
    answers = {"contact_name": "Noor Haddad", "contact_phone": "312-555-0147", "restaurant_name": "Casa Verde"}
    reply, sent = engine.reply(state, "no, that's not right. Casa Verde"), 1
    while reply.kind in ("ask", "confirm") and sent < 10:
        reply = engine.reply(state, answers[reply.slot] if reply.kind == "ask" else "no, that's not right. Casa Verde")
        sent += 1
    assert reply.kind == "handoff" and "turned down the same read-back" in reply.text, reply.text
    assert sum(1 for t in state.turns if t.reply.kind == "confirm" and t.reply.calls == first.calls) == 2
    assert "book_table" not in [c.api for c in state.executed]


def test_cancel_ends_the_session_and_nothing_more_runs(engine):
    state = engine.open(DOMAIN, TODAY)
    assert engine.reply(state, OPENING).kind == "ask"
    before = len(state.executed)
    reply = engine.reply(state, "never mind, forget it")
    assert reply.kind == "fail" and state.end_reason == "cancelled by the user"
    assert len(state.executed) == before
    assert engine.reply(state, "Noor Haddad").kind == "fail"  # ended: later messages change nothing
    assert len(state.executed) == before


def test_asking_for_a_person_hands_off_with_the_state_summarised(engine):
    state = engine.open(DOMAIN, TODAY)
    engine.reply(state, OPENING)
    reply = engine.reply(state, "can I just speak to someone please")
    assert reply.kind == "handoff" and state.ended == "handoff"
    assert "Casa Verde" in reply.text and "person" in reply.text


def test_i_dont_know_is_explained_once_then_handed_off(engine):
    state = engine.open(DOMAIN, TODAY)
    first = engine.reply(state, OPENING)
    assert first.kind == "ask"
    second = engine.reply(state, "hmm, I don't know")
    assert second.kind == "ask" and second.slot == first.slot and "person" in second.text
    third = engine.reply(state, "no idea, sorry")
    assert third.kind == "handoff" and first.slot.replace("_", " ") in state.end_reason


def test_off_topic_messages_in_a_row_are_bounded(engine):
    state = engine.open(DOMAIN, TODAY)
    reply = engine.reply(state, OPENING)
    kinds = [engine.reply(state, "how far away is the moon anyway").kind for _ in range(MAX_ASIDES)]
    assert kinds[:-1] == ["ask"] * (MAX_ASIDES - 1) and kinds[-1] == "handoff", kinds
    assert reply.kind == "ask"


def test_the_simulated_user_answers_a_read_back_as_the_spec_says():
    gold = [{"api": "find", "args": {"name": "Casa Verde"}},
            {"api": "book", "args": {"place": {"ref": 0}, "party_size": "3"}}]
    scenario = {"gold": gold, "answers": {"party_size": "three of us", "name": "Casa Verde"}}
    executed = [{"api": "find", "args": {"name": "Casa Verde"}}]
    right = {"kind": "confirm", "calls": [{"api": "book", "args": {"place": {"ref": 0}, "party_size": "3"}}],
             "executed": executed}
    assert confirm_answer(scenario, right) == YES
    wrong_size = {**right, "calls": [{"api": "book", "args": {"place": {"ref": 0}, "party_size": "4"}}]}
    assert confirm_answer(scenario, wrong_size) == NO_WITH + "three of us"
    # A ref to a call made with a wrong value: the value behind the ref is what differs.
    other = [{"api": "find", "args": {"name": "Casa Roja"}}]
    assert confirm_answer(scenario, {**right, "executed": other}) == NO_WITH + "Casa Verde"
    assert confirm_answer({"gold": gold, "answers": {}}, wrong_size) == NO
    assert wrong_calls_executed(scenario, other + right["calls"]) == 2
    assert wrong_calls_executed(scenario, executed + right["calls"]) == 0


def test_an_agent_that_books_unasked_is_caught_and_one_that_confirms_is_not():
    scenario = {"opening": "book it", "gold": [{"api": "book", "args": {"party_size": "3"}}],
                "answers": {"party_size": "three"}, "expect": "done"}
    hasty = simulate(scenario, lambda m: {"kind": "done", "executed": [{"api": "book", "args": {"party_size": "2"}}]})
    assert wrong_calls_executed(scenario, hasty.replies[-1]["executed"]) == 1
    said = []

    def careful(message):
        said.append(message)
        size = "2" if len(said) == 1 else "3"
        call = {"api": "book", "args": {"party_size": size}}
        return {"kind": "confirm", "calls": [call], "executed": []} if message != YES else \
            {"kind": "done", "executed": [call], "result": [call]}
    transcript = simulate(scenario, careful)
    assert said == ["book it", NO_WITH + "three", YES]
    assert wrong_calls_executed(scenario, transcript.replies[-1]["executed"]) == 0


def test_a_transactional_intent_imports_as_an_api_with_effects():
    from pipeline.authoring.sgd_packs import service_pack_spec
    from pipeline.packs.sgd_schema import SgdService

    slot = {"name": "city", "description": "where", "is_categorical": False, "possible_values": []}
    intents = [{"name": name, "description": name, "is_transactional": effects, "required_slots": ["city"],
                "optional_slots": {}, "result_slots": ["city"]}
               for name, effects in (("FindPlaces", False), ("ReservePlace", True))]
    spec = service_pack_spec(SgdService(service_name="Places_1", description="places", slots=[slot], intents=intents))
    assert {name: api.get("effects", False) for name, api in spec["apis"].items()} == \
        {"find_places": False, "reserve_place": True}
