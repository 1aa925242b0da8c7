"""The sessions benchmark's simulated user and metrics, on made-up scenarios and scripted agents."""

from pipeline.evaluation.sessions import (NOT_SURE, calls_match, flow_violations, report, score_session,
                                          simulate)

SCENARIO = {
    "id": "t-1", "domain": "toy", "today": "2024-01-01", "opening": "book a visit for Rex",
    "answers": {"visit_date": "next monday", "owner_phone": "555 010 0000"},
    "oow": [{"at": 1, "kind": "irrelevant", "text": "is parking free?"},
            {"at": 2, "kind": "jump", "text": "my phone is 555 010 0000", "slots": ["owner_phone"]}],
    "gold": [{"api": "find_pet", "args": {"pet": "Rex"}},
             {"api": "book", "args": {"pet_id": {"ref": 0}, "date": "01/08/2024", "phone": "555-010-0000"}}],
    "expect": "done",
}
DONE = {"kind": "done", "text": "booked",
        "executed": [{"api": "find_pet", "args": {"pet": "Rex"}},
                     {"api": "book", "args": {"pet_id": {"ref": 0}, "date": "01/08/2024", "phone": "555-010-0000"}}]}
DONE["result"] = DONE["executed"]


def scripted(replies):
    sent = []

    def agent(message):
        sent.append(message)
        return replies[len(sent) - 1]
    return agent, sent


def test_the_simulated_user_sends_events_at_their_ask_count_then_answers():
    agent, sent = scripted([{"kind": "ask", "slot": "visit_date"}, {"kind": "ask", "slot": "visit_date"},
                            {"kind": "ask", "slot": "visit_date"}, {"kind": "ask", "slot": "pet_size"}, DONE])
    transcript = simulate(SCENARIO, agent)
    assert sent == ["book a visit for Rex", "is parking free?", "my phone is 555 010 0000", "next monday", NOT_SURE]
    result = score_session(SCENARIO, transcript)
    assert result.success and result.turns == 5 and result.redundant == 0


def test_asking_again_for_what_a_jump_gave_is_a_redundant_ask():
    agent, _ = scripted([{"kind": "ask", "slot": "visit_date"}, {"kind": "ask", "slot": "visit_date"},
                         {"kind": "ask", "slot": "owner_phone"}, DONE])
    assert score_session(SCENARIO, simulate(SCENARIO, agent)).redundant == 1


def test_a_session_stops_after_twenty_user_messages():
    transcript = simulate({**SCENARIO, "oow": []}, lambda _: {"kind": "ask", "slot": "nothing_known"})
    assert len(transcript.messages) == 20
    assert not score_session(SCENARIO, transcript).success


def test_results_match_as_a_multiset_with_refs():
    find, book = SCENARIO["gold"]
    reordered = [book | {"args": {**book["args"], "pet_id": {"ref": 1}}}, find]
    assert calls_match(reordered, [find, book])  # order is free; the ref names the paired call
    assert not calls_match([find, reordered[0]], [find, book])  # here it names the booking itself
    assert not calls_match([find, book | {"args": {**book["args"], "date": "01/09/2024"}}], [find, book])
    assert not calls_match([find], [find, book])


def test_a_call_that_takes_an_output_not_yet_produced_is_a_flow_violation():
    executed = [{"api": "book", "args": {"pet_id": {"ref": 1}}}, {"api": "find_pet", "args": {"pet": "Rex"}}]
    assert flow_violations(executed) == 1
    assert flow_violations(list(reversed(DONE["executed"]))) == 1
    assert flow_violations(DONE["executed"]) == 0
    assert flow_violations([{"api": "book", "args": {}}], {"book": ["find_pet"]}) == 1


def test_the_report_breaks_down_by_domain_and_event_kind():
    agent, _ = scripted([{"kind": "fail", "text": "cannot"}])
    failed = score_session(SCENARIO, simulate(SCENARIO, agent))
    agent, _ = scripted([DONE])
    passed = score_session({**SCENARIO, "id": "t-2", "oow": []}, simulate(SCENARIO, agent))
    summary = report([failed, passed])
    assert summary["success_rate"] == 0.5 and summary["by_event"]["none"]["success_rate"] == 1.0
    assert summary["by_event"]["jump"]["success_rate"] == 0.0 and summary["by_domain"]["toy"]["sessions"] == 2
    assert summary["failures"][0]["id"] == "t-1" and "expected 'done'" in summary["failures"][0]["reason"]
