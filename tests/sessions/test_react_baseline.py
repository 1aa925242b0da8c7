"""The LLM-only conversation baseline: its action format, its parsing, and a turn with the real model
that follows the reply protocol whatever the model chooses."""

import json

from pipeline.packs.pack import load_pack
from pipeline.sessions.react import ReactAgent, _parse_action, action_grammar
from tests.llm.test_grammar import accepts, compiler  # noqa: F401 - the fixture

PACK = "restaurant_reservation"


def test_the_action_grammar_gives_the_shape_not_the_choice(compiler):  # noqa: F811
    grammar = action_grammar(load_pack(PACK))
    call = {"action": "call", "api": "book_table", "args": {"contact_name": "anyone at all"}}
    assert accepts(compiler, grammar, json.dumps(call))  # any order, any value: the model's own choice
    assert accepts(compiler, grammar, json.dumps({"action": "ask", "slot": "party_size", "text": "How many?"}))
    assert accepts(compiler, grammar, json.dumps({"action": "done"}))
    assert not accepts(compiler, grammar, json.dumps({"action": "call", "api": "book_flight", "args": {}}))
    assert not accepts(compiler, grammar, json.dumps({"action": "ask", "slot": "shoe_size", "text": "?"}))


def test_an_action_is_the_first_json_object_that_is_one():
    text = 'Sure! {"note": 1} then {"action": "ask", "slot": "party_size", "text": "How many?"} and more'
    assert _parse_action(text) == {"action": "ask", "slot": "party_size", "text": "How many?"}
    assert _parse_action("I would book it for you.") is None
    assert _parse_action('{"action": "call", "api": ') is None


def test_a_turn_with_the_real_model_follows_the_reply_protocol():
    agent = ReactAgent("hf")
    state = agent.open(PACK, "2025-03-10")
    reply = agent.reply(state, "I'd like a table at The Oak Room for 4 people on March 14 at 7pm")
    assert reply.kind in ("ask", "done", "fail") and len(state.turns) == 1
    assert [c.api for c in reply.executed] == [c.api for c in state.executed]
    assert all(c.api in load_pack(PACK).spec.apis for c in state.executed)
    if reply.kind == "ask":
        assert reply.slot in load_pack(PACK).spec.arguments and state.ended is None
    else:
        assert state.ended == reply.kind and agent.reply(state, "hello?") == reply
