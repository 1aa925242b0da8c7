"""Sessions with the real packaged model, real clingo and Fast Downward: each out-of-workflow kind, the
controllers, and the reply protocol."""

import json
import subprocess
import sys

import pytest

from pipeline.packs.pack import PackError, load_pack
from pipeline.sessions.delta import _named_goals
from pipeline.sessions.engine import SessionEngine

TODAY = "2024-10-15"


@pytest.fixture(scope="module")
def engine():
    return SessionEngine("hf")


def agreed(engine, state, reply):
    """The user's yes to a read-back: a call with effects has not run before it, and runs after it."""
    if reply.kind != "confirm":
        return reply
    assert not any(c.api == call.api and c.args == call.args for c in state.executed for call in reply.calls), \
        "ran before the yes"
    return engine.reply(state, "yes, go ahead")


def test_an_unrelated_turn_gives_nothing_and_the_question_is_asked_again(engine):
    state = engine.open("quickbooks", TODAY)
    first = engine.reply(state, "pull the sales report and get me a person on the line about it")
    assert first.kind == "ask"
    again = engine.reply(state, "by the way, is your office closed on holidays?")
    assert again.kind == "ask" and again.slot == first.slot
    assert state.turns[-1].kind == "unrelated" and again.executed == first.executed


def test_a_value_in_passing_changes_nothing_given_without_a_switch_cue(engine):
    state = engine.open("quickbooks", TODAY)
    first = engine.reply(state, "get me the expenses for last quarter and have an agent reach out about them")
    assert first.kind == "ask" and first.slot == "contact_channel"
    again = engine.reply(state, "random thought, will it snow today?")
    assert again.kind == "ask" and again.slot == "contact_channel"
    assert state.turns[-1].kind == "unrelated" and again.executed == first.executed
    done = agreed(engine, state, engine.reply(state, "a phone call works"))
    assert done.kind == "done", done.text
    assert done.result[0].args == {"start_date": "07/01/2024", "end_date": "09/30/2024"}


def test_a_goal_asked_for_mid_session_joins_it_and_a_question_about_the_business_adds_none(engine):
    state = engine.open("quickbooks", TODAY)
    first = engine.reply(state, "pull the sales report for Q1 2024 and then get me an agent to talk about it")
    assert first.kind == "ask" and first.slot == "contact_channel"
    reply = engine.reply(state, "do you charge for the expense reports?")
    assert state.turns[-1].kind == "unrelated" and len(state.goals) == 2
    reply = engine.reply(state, "oh and also run the profit and loss for March 2024")
    assert state.turns[-1].kind == "added" and reply.kind == "ask" and reply.slot == "contact_channel"
    reply = engine.reply(state, "a video call")
    reply = agreed(engine, state, reply)
    assert reply.kind == "done", reply.text
    calls = {c.api: c.args for c in reply.result}
    assert calls["profit_loss_api"] == {"start_date": "03/01/2024", "end_date": "03/31/2024"}
    assert calls["invoice_sales_api"] == {"start_date": "01/01/2024", "end_date": "03/31/2024"}
    assert calls["contact_us_api"]["contact_channel"] == "video"


def test_a_jump_is_kept_and_never_asked_for(engine):
    state = engine.open("quickbooks", TODAY)
    reply = engine.reply(state, "please update the customer record for Dana Kim")
    assert reply.kind == "ask" and reply.slot in ("customer_email", "customer_phone")
    other = "customer_phone" if reply.slot == "customer_email" else "customer_email"
    jump = "her cell is 415-555-0101" if other == "customer_phone" else "her address is dana@kimworks.com"
    reply = engine.reply(state, jump)
    assert state.turns[-1].kind == "jump" and reply.kind == "ask" and reply.slot != other
    answer = "dana@kimworks.com" if other == "customer_phone" else "415-555-0101"
    reply = engine.reply(state, answer)
    reply = agreed(engine, state, reply)
    assert reply.kind == "done", reply.text
    assert [s for s in state.asked if s == other] == []
    (call,) = reply.result
    assert call.args["customer_phone"] == "415-555-0101" and call.args["customer_email"] == "dana@kimworks.com"


def test_a_switch_before_the_calls_run_changes_what_runs_and_nothing_runs_with_the_old_value(engine):
    state = engine.open("quickbooks", TODAY)
    reply = engine.reply(state, "show me expenses for Q1 2024 and then connect me with an agent to discuss it")
    assert reply.kind == "ask" and reply.slot == "contact_channel"
    assert reply.executed == []  # every question first: nothing runs on a value the user may still change
    reply = engine.reply(state, "hmm, actually make the expenses Q2 2024 instead")
    assert state.turns[-1].kind == "switch" and reply.kind == "ask"
    reply = engine.reply(state, "chat is fine")
    reply = agreed(engine, state, reply)
    assert reply.kind == "done", reply.text
    expenses = [c for c in reply.executed if c.api == "expense_spend_api"]
    assert [c.args["start_date"] for c in expenses] == ["04/01/2024"]
    assert reply.result[0].args == {"start_date": "04/01/2024", "end_date": "06/30/2024"}
    assert reply.result[1].args["contact_topic"] == {"ref": 0}
    # The contact call takes the output of the report, carried out before it.
    contact = next(c for c in reply.executed if c.api == "contact_us_api")
    assert contact.args["contact_topic"] == {"ref": reply.executed.index(expenses[-1])}


def test_a_span_of_days_answers_a_date_slot_with_the_whole_period(engine):
    state = engine.open("quickbooks", TODAY)
    reply = engine.reply(state, "I need a profit and loss report")
    assert reply.kind == "ask" and reply.slot == "start_date"
    reply = engine.reply(state, "from february through april of this year")
    reply = agreed(engine, state, reply)
    assert reply.kind == "done", reply.text
    assert reply.result[0].args == {"start_date": "02/01/2024", "end_date": "04/30/2024"}
    assert "end_date" not in state.asked


def test_out_of_domain_and_unknown_domain(engine):
    state = engine.open("quickbooks", TODAY)
    assert engine.reply(state, "what's the best pizza place downtown?").kind == "fail"
    assert engine.reply(state, "and the expense report?").kind == "fail"  # an ended session stays ended
    with pytest.raises(PackError):
        engine.open("no_such_pack", TODAY)


def test_chat_jsonl_prints_one_reply_object_per_message_and_nothing_else():
    messages = ["please have somebody reach out to me regarding payroll", "over the phone please", "yes"]
    out = subprocess.run([sys.executable, "-m", "nesyplan.cli", "chat", "--domain", "quickbooks", "--today", TODAY,
                          "--jsonl"], input="".join(json.dumps(m) + "\n" for m in messages),
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    replies = [json.loads(line) for line in out.stdout.splitlines()]
    assert [r["kind"] for r in replies] == ["ask", "confirm", "done"] and replies[0]["slot"] == "contact_channel"
    call = {"api": "contact_us_api", "args": {"contact_topic": "Payroll", "contact_channel": "phone"}}
    assert replies[1]["calls"] == [call] and replies[1]["executed"] == []  # read back, not yet run
    assert replies[2]["result"] == [call] and replies[2]["executed"] == replies[2]["result"]


def test_a_workflow_runs_no_api_before_the_calls_it_needs_even_when_the_user_jumps_ahead(engine):
    from pipeline.evaluation.sessions import flow_violations

    state = engine.open("restaurant_reservation", TODAY)
    reply = engine.reply(state, "I'd like a table for 3 tomorrow at 7:30 pm")
    assert reply.kind == "ask" and reply.slot == "restaurant_name" and reply.executed == []
    # The booking's details before the restaurant: kept, asked for never, and nothing is booked yet.
    reply = engine.reply(state, "put it under Maya Lindgren, my number is 312 555 0147")
    assert state.turns[-1].kind == "jump" and reply.slot == "restaurant_name" and reply.executed == []
    reply = engine.reply(state, "The Copper Pot")
    reply = agreed(engine, state, reply)
    assert reply.kind == "done", reply.text
    executed = [c.model_dump() for c in reply.executed]
    assert [c["api"] for c in executed] == ["find_restaurant", "check_availability", "book_table"]
    assert flow_violations(executed) == 0
    assert executed[1]["args"] == {"restaurant_id": {"ref": 0}, "party_size": "3", "reservation_date": "10/16/2024",
                                   "reservation_time": "19:30"}
    assert executed[2]["args"] == {"availability_id": {"ref": 1}, "contact_name": "Maya Lindgren",
                                   "contact_phone": "312-555-0147"}
    assert set(state.asked) == {"restaurant_name"}  # asked again after the jump, nothing else


def test_a_whole_name_beside_an_answer_is_kept_and_never_asked_for(engine):
    state = engine.open("restaurant_reservation", TODAY)
    reply = engine.reply(state, "could you reserve us a table at Copper Finch")
    assert reply.kind == "ask" and reply.slot == "party_size"
    reply = engine.reply(state, "seven people, four grown-ups and three children, and book it under Omar Haddad")
    assert reply.kind == "ask" and reply.slot not in ("party_size", "contact_name")
    given = state.goals[0].normalized
    assert given["party_size"] == "7" and given["contact_name"] == "Omar Haddad"


def test_the_controller_refuses_a_call_before_its_pdl_precondition(engine):
    from pipeline.sessions.executors import ExecutionError, SimulatedExecutor
    from pipeline.packs.pack import load_pack

    state = engine.open("restaurant_reservation", TODAY)
    executor = SimulatedExecutor(load_pack("restaurant_reservation"))
    with pytest.raises(ExecutionError, match="book_table may not run before check_availability"):
        engine._run_once(state, "book_table", {"availability_id": "a1", "contact_name": "Ana Lopez",
                                               "contact_phone": "617-555-0199"}, executor, 0)
    assert state.executed == []


def test_a_name_that_answers_the_question_is_no_other_slots_name_too(engine):
    state = engine.open("restaurant_reservation", TODAY)
    reply = engine.reply(state, "a table for two on friday at 8pm please")
    assert reply.kind == "ask" and reply.slot == "restaurant_name"
    reply = engine.reply(state, "Golden Lotus Kitchen")
    assert reply.kind == "ask" and reply.slot == "contact_name"
    assert "contact_name" not in state.goals[0].values


def test_a_word_every_report_shares_does_not_name_one_of_them(engine):
    state = engine.open("quickbooks", TODAY)
    engine.reply(state, "pull the spending report and the sales report for Q1 2024, then an agent about the spending")
    by_goal = {g.goal: g.goal_id for g in state.goals}
    pack = load_pack("quickbooks")
    assert _named_goals(pack, state, "switch the sales report to Q2") == [by_goal["invoice_sales_report"]]
    assert set(_named_goals(pack, state, "each report for Q2")) >= {by_goal["invoice_sales_report"],
                                                                    by_goal["expense_report"]}


def test_a_name_with_a_number_answers_whole_and_a_time_typed_oddly_is_still_read(engine):
    state = engine.open("restaurant_reservation", TODAY)
    reply = engine.reply(state, "a table for two on friday please")
    asked = [reply.slot]
    for _ in range(4):
        if reply.kind != "ask":
            break
        answer = {"restaurant_name": "Pier 39", "reservation_time": '8 o"clock in the evening'}.get(reply.slot)
        if answer is None:
            break
        reply = engine.reply(state, answer)
        asked.append(reply.slot)
    given = state.goals[0].normalized
    assert {"restaurant_name", "reservation_time"} <= set(asked)
    assert given["restaurant_name"] == "Pier 39" and given["party_size"] == "2"
    assert given["reservation_time"] == "20:00"
