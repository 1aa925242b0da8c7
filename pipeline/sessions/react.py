"""The LLM-only conversation baseline (`eval-sessions --agent llm`), as FlowAgent compares against ReAct:
the same packaged model reads the conversation and writes each next action itself (call an API, ask the
user, finish, give up) as JSON held to an action's shape only, with no planner, no IR and no controllers.
Its calls run on the same executors as the pipeline's and its replies follow the same protocol, so the
same scorer reads both."""

from __future__ import annotations

import json
import re

from pipeline.llm.baseline import JSON_STRING_RULE, function_specs, json_names
from pipeline.packs.pack import Pack, load_pack
from pipeline.packs.store import load_pack_version
from pipeline.packs.versions import installed_digest
from pipeline.run import backend_for
from pipeline.sessions.executors import ExecutionError, executed_call, get_executor
from pipeline.sessions.records import Call, ExecutedCall, Reply, SessionState, Turn

MAX_ACTIONS_PER_TURN = 4  # a ReAct step budget per user message

INSTRUCTIONS = """You are an agent that serves a customer by calling APIs. Write the next action as one JSON
object on one line, one of:
{{"action": "call", "api": "<name>", "args": {{"<parameter>": "<value>"}}}}
{{"action": "ask", "slot": "<parameter>", "text": "<your question>"}}
{{"action": "done"}}
{{"action": "fail", "text": "<why>"}}
Call only the APIs below, each parameter with its value from the conversation, normalised as it says, or
"$N" for the output of call N. Ask the user for one missing value at a time. Finish when the request is
carried out; give up when no API serves it. Today is {today}.

APIs:
{apis}

Example from another domain (a pet clinic: find_pet(pet_name) returns pet_id; book_visit(pet_id, visit_date)):
User: book Max in for a visit
Action: {{"action": "call", "api": "find_pet", "args": {{"pet_name": "Max"}}}}
Call 0: find_pet(pet_name=Max) -> pet-17
Action: {{"action": "ask", "slot": "visit_date", "text": "Which day would suit you?"}}
User: next Monday
Action: {{"action": "call", "api": "book_visit", "args": {{"pet_id": "$0", "visit_date": "<that Monday as MM/DD/YYYY>"}}}}
Call 1: book_visit(pet_id=$0, visit_date=...) -> visit-3
Action: {{"action": "done"}}"""


class ReactAgent:
    """Same interface as SessionEngine (`open`, `reply`), so the same benchmark and chat drive it."""

    def __init__(self, translator: str = "hf", executor: str = "simulated", json_grammar: bool = True):
        self.translator, self.executor_kind, self.json_grammar = translator, executor, json_grammar

    def open(self, domain: str, today: str) -> SessionState:
        load_pack(domain)
        return SessionState(domain=domain, pack_digest=installed_digest(domain), today=today,
                            executor=self.executor_kind)

    def reply(self, state: SessionState, message: str) -> Reply:
        pack = load_pack_version(state.domain, state.pack_digest)
        if state.ended:
            return state.turns[-1].reply
        log = self._log(state) + [f"User: {message.strip()}"]
        system = INSTRUCTIONS.format(today=state.today, apis=function_specs(pack))
        executor, backend, reply = get_executor(state.executor, pack, session_id=state.id, recorded=state.recorded), backend_for(self.translator), None
        grammar = action_grammar(pack) if self.json_grammar else None
        for _ in range(MAX_ACTIONS_PER_TURN):
            completion = backend.complete(system, "\n".join(log) + "\nAction:", grammar, max_new_tokens=120)
            action = _parse_action(completion.text)
            log.append(f"Action: {json.dumps(action) if action else completion.text.strip()[:200]}")
            if action is None:
                reply = Reply(kind="fail", text="the model wrote no action")
            elif action.get("action") == "call":
                try:
                    call = self._call(state, executor, action, len(state.turns))
                except ExecutionError as exc:
                    reply = Reply(kind="fail", text=f"an API call failed: {exc}")
                else:
                    log.append(f"Call {len(state.executed) - 1}: {_show(call)} -> {call.output}")
                    continue
            elif action.get("action") == "ask":
                slot = str(action.get("slot", ""))
                reply = Reply(kind="ask", slot=slot, text=str(action.get("text") or f"Please tell me the {slot}."))
                state.asked.append(slot)
            elif action.get("action") == "done":
                reply = Reply(kind="done", text="Done.", result=state.calls())
            else:
                reply = Reply(kind="fail", text=str(action.get("text") or "the model gave up"))
            break
        if reply is None:
            reply = Reply(kind="fail", text=f"no reply after {MAX_ACTIONS_PER_TURN} actions")
        reply.executed = state.calls()
        if reply.kind != "ask":
            state.ended = reply.kind
        state.turns.append(Turn(message=message, kind="opening" if not state.turns else "answer", reply=reply))
        return reply

    @staticmethod
    def _call(state: SessionState, executor, action: dict, turn: int) -> ExecutedCall:
        args: dict = {}
        values: dict[str, str] = {}
        for name, value in (action.get("args") or {}).items():
            text = str(value)
            match = re.fullmatch(r"\$(\d+)", text.strip())
            if match and int(match.group(1)) < len(state.executed):
                args[name] = {"ref": int(match.group(1))}
                values[name] = state.executed[int(match.group(1))].value_for(name)
            else:
                args[name] = values[name] = text
        api = str(action.get("api"))
        state.executed.append(executed_call(api, args, executor.call(api, values), turn))
        return state.executed[-1]

    @staticmethod
    def _log(state: SessionState) -> list[str]:
        """The conversation so far as the model reads it."""
        lines = []
        for i, turn in enumerate(state.turns):
            lines.append(f"User: {turn.message}")
            for j, call in enumerate(state.executed):
                if call.turn == i:
                    lines.append(f"Call {j}: {_show(call)} -> {call.output}")
            if turn.reply.kind == "ask":
                lines.append(f"Action: {json.dumps({'action': 'ask', 'slot': turn.reply.slot, 'text': turn.reply.text})}")
        return lines


def action_grammar(pack: Pack) -> str:
    """The shape of an action only (JSON, an API's name, a parameter's name): which call, in which order,
    with which values is the model's own choice, as a ReAct agent's is. Without it the packaged model
    rarely writes an action at all."""
    parameters = sorted({a for api in pack.spec.apis.values() for a in api.arguments})
    return "\n".join([
        'root ::= "{\\"action\\": " (call | ask | done | fail) "}"',
        'call ::= "\\"call\\", \\"api\\": " api ", \\"args\\": {" (pair (", " pair){0,5})? "}"',
        'ask ::= "\\"ask\\", \\"slot\\": " parameter ", \\"text\\": " string',
        'done ::= "\\"done\\""',
        'fail ::= "\\"fail\\", \\"text\\": " string',
        'pair ::= parameter ": " string',
        f"api ::= {json_names(pack.spec.apis)}",
        f"parameter ::= {json_names(parameters)}",
        JSON_STRING_RULE,
    ]) + "\n"


def _show(call: Call) -> str:
    args = ", ".join(f"{k}=${v['ref']}" if isinstance(v, dict) else f"{k}={v}" for k, v in call.args.items())
    return f"{call.api}({args})"


def _parse_action(text: str) -> dict | None:
    """The first JSON object in the model's text, if it is one."""
    decoder = json.JSONDecoder()
    for match in re.finditer(r"\{", text):
        try:
            value, _ = decoder.raw_decode(text[match.start():])
        except json.JSONDecodeError:
            continue
        if isinstance(value, dict) and "action" in value:
            return value
    return None
