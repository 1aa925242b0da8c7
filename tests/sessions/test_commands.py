"""Each dialogue command's handler, on a session's state (no model, no planner: the handlers only change the
state and say what kind of turn it was)."""

from pipeline.packs.versions import installed_digest
from pipeline.sessions.commands import (Affirm, Cancel, Choose, Deny, DontKnow, OffTopic, SetValues, TurnContext,
                                        TurnInput, commands_for)
from pipeline.sessions.records import Call, Candidate, ExecutedCall, Given, SessionState

DOMAIN = "bank_transfer"


def waiting_for_a_yes() -> SessionState:
    """A transfer read back, waiting for a yes or a no."""
    state = SessionState(domain=DOMAIN, pack_digest=installed_digest(DOMAIN), today="2024-10-15")
    state.goals = [Given(goal_id="g1", goal="transfer_money", values={"amount": "50 dollars", "payee_name": "Ann Lee"},
                         turns={"amount": 0, "payee_name": 0})]
    state.awaiting = [Call(api="make_transfer", args={"amount": "50.00"})]
    return state


def applied(state: SessionState, commands) -> TurnContext:
    context = TurnContext(state=state, turn=1)
    for command in commands:
        command.apply(context)
    return context


def test_a_yes_confirms_what_was_read_back():
    state = waiting_for_a_yes()
    context = applied(state, [Affirm()])
    assert context.kind == "affirm" and state.awaiting is None
    assert [c.api for c in state.confirmed] == ["make_transfer"]


def test_a_yes_with_a_new_value_answers_nothing_and_the_read_back_comes_again():
    state = waiting_for_a_yes()
    context = applied(state, commands_for([("g1", "amount", "60 dollars")], None, "affirm"))
    assert context.kind == "switch" and context.corrected
    assert state.awaiting is None and state.confirmed == []  # read back anew with 60, not confirmed with 50
    assert state.goals[0].values["amount"] == "60 dollars"


def test_a_bare_no_and_i_do_not_know_say_so_and_change_no_value():
    for command, kind in ((Deny(), "deny"), (DontKnow(), "dont_know")):
        state = waiting_for_a_yes()
        context = applied(state, [command])
        assert context.kind == kind and state.goals[0].values["amount"] == "50 dollars"


def test_a_pick_becomes_the_lookup_s_output_and_nothing_else_of_the_first_found():
    state = waiting_for_a_yes()
    state.executed = [ExecutedCall(api="find_payee", args={}, output="p1", turn=0, fields={"payee_id": "p1", "note": "x"},
                                   candidates=[Candidate(id="p1", label="Ann Lee"), Candidate(id="p2", label="Ann Leigh")])]
    state.choosing = 0
    context = applied(state, [Choose(pick=1)])
    call = state.executed[0]
    assert context.kind == "answer" and call.output == "p2" and call.chosen and state.choosing is None
    assert call.fields == {"payee_id": "p2"} and call.lacks == ["note"]


def test_nothing_read_is_off_topic_and_a_cancel_answers_at_once():
    assert [type(c) for c in commands_for([], None, None)] == [OffTopic]
    context = TurnContext(state=waiting_for_a_yes(), turn=1)
    reply = Cancel().reply(context)
    assert reply.kind == "fail" and context.state.ended == "fail" and "Cancelled" in reply.text


def test_commands_travel_between_workers_as_json():
    sent = TurnInput(turn=1, message="yes, 60", commands=commands_for([("g1", "amount", "60")], None, "affirm"))
    received = TurnInput.model_validate_json(sent.model_dump_json())
    assert [type(c) for c in received.commands] == [SetValues, Affirm] and received == sent
