"""The LLM-only baseline (seed paper, App. D.3): the same model gets the APIs as function specs and
writes the calls itself — values normalised by itself, missing ones asked for, dataflow as references —
with no rules and no planner. Scored by the same scorer as the pipeline.

Its answer is held to the JSON shape of function calls, as a function-calling API in strict mode holds
it: each call an API of the pack with its own parameters, each value a string or null. Which calls, in
which order, with which values, is the model's own choice. Without the shape (`--no-constrain`) the
packaged model writes no parsable answer (none of the first 40 tidy requests), which measures nothing but
its JSON."""

from __future__ import annotations

import json
import re
import time

from pipeline.llm.grammar import _literal
from pipeline.packs.pack import Pack
from pipeline.records import Failure, Plan, PlanArg, PlanCall, Run

INSTRUCTIONS = """You plan API calls for a customer's request. Answer with JSON only: a list of calls,
[{{"api": "<name>", "args": {{"<parameter>": <value>}}}}], in the order to make them.
Give every parameter of each API: the value from the request, normalised as the parameter says; null when
the request does not give it (the user will be asked); "$N" for the output of call N (counting from 0).
If the request breaks a rule (a period that ends before it starts), answer {{"error": "<reason>"}}.
If no API covers the request, answer [].
Today is {today}.

APIs:
{apis}

Examples from another domain (a pet clinic: book_visit(pet_name, visit_date), send_record(pet_name)):
Request: book Max in for next Monday and send me his record
Answer: [{{"api": "book_visit", "args": {{"pet_name": "Max", "visit_date": "<that Monday as MM/DD/YYYY>"}}}}, {{"api": "send_record", "args": {{"pet_name": "Max"}}}}]
Request: I want to book a visit
Answer: [{{"api": "book_visit", "args": {{"pet_name": null, "visit_date": null}}}}]
Request: what's a good name for a goldfish?
Answer: []"""


def function_specs(pack: Pack) -> str:
    lines = []
    for name, api in pack.spec.apis.items():
        params = ", ".join(
            f"{a}: {pack.spec.arguments[a].description}"
            + (f" (one of: {', '.join(pack.spec.arguments[a].values)})" if pack.spec.arguments[a].values else "")
            + (f" [{_format_hint(pack.spec.arguments[a].normalizer)}]" if _format_hint(pack.spec.arguments[a].normalizer) else "")
            for a in api.arguments)
        lines.append(f"- {name}({params}): {api.description}")
    return "\n".join(lines)


def _format_hint(normalizer: str) -> str:
    return {"date": "MM/DD/YYYY", "amount": "like 1500.00", "phone": "ddd-ddd-dddd",
            "email": "lower case", "lowercase_text": "lower case"}.get(normalizer, "")


MAX_CALLS = 5
# A JSON string value of up to 80 characters on one line, as both baselines' grammars write values.
JSON_STRING_RULE = 'string ::= "\\"" [^"\\\\\\n]{0,80} "\\""'


def json_names(items) -> str:
    """EBNF alternatives for these names, each written as a JSON string."""
    return " | ".join(_literal(json.dumps(name)) for name in items)


def calls_grammar(pack: Pack) -> str:
    """The answer's shape: a list of calls (each API with its own parameters, in the spec's order), or a
    rule-break error. Values are any short string (a "$N" reference is one) or null."""
    apis = list(pack.spec.apis.items())
    rules = [
        'root ::= "[" (call (", " call){0,%d})? "]" | "{\\"error\\": " string "}"' % (MAX_CALLS - 1),
        "call ::= " + " | ".join(f"call{i}" for i in range(len(apis))),
    ]
    for i, (name, api) in enumerate(apis):
        pairs = ' ", " '.join(f"{_literal(json.dumps(a) + ': ')} value" for a in api.arguments)
        parts = [_literal('{"api": '), _literal(json.dumps(name)), _literal(', "args": {'), pairs, _literal("}}")]
        rules.append(f"call{i} ::= " + " ".join(p for p in parts if p))
    rules += ['value ::= string | "null"', JSON_STRING_RULE]
    return "\n".join(rules) + "\n"


def _first_json(text: str):
    """The first JSON list or object in the text (anything after it is ignored), or None."""
    decoder = json.JSONDecoder()
    for match in re.finditer(r"[\[{]", text):
        try:
            return decoder.raw_decode(text[match.start():])[0]
        except json.JSONDecodeError:
            continue
    return None


def parse_calls(text: str, pack: Pack) -> Plan | Failure:
    """The model's JSON as a Plan, or why it is not one."""
    data = _first_json(text)
    if data is None:
        return Failure(stage="translate", kind="ir_rejected", message="no JSON list or object in the answer")
    if isinstance(data, dict) and "error" in data:
        return Failure(stage="plan", kind="domain_error", message=str(data["error"]))
    if data == []:
        return Failure(stage="plan", kind="out_of_domain", message="no API covers the request")
    if not isinstance(data, list):
        return Failure(stage="translate", kind="ir_rejected", message="the answer is not a list of calls")
    calls = []
    for i, call in enumerate(data):
        if not isinstance(call, dict) or call.get("api") not in pack.spec.apis or not isinstance(call.get("args", {}), dict):
            return Failure(stage="translate", kind="ir_rejected", message=f"call {i} is not a call of an API")
        args = {}
        for name, value in (call.get("args") or {}).items():
            if value is None:
                args[name] = PlanArg(get_info=name)
            elif isinstance(value, str) and re.fullmatch(r"\$\d+", value.strip()):
                args[name] = PlanArg(ref=int(value.strip()[1:]))
            else:
                args[name] = PlanArg(value=str(value))
        calls.append(PlanCall(api=call["api"], var=f"c{i}", args=args))
    return Plan(calls=calls, text=json.dumps(data), planner_actions=[])


def run_baseline(query: str, today: str, pack: Pack, backend, constrain: bool = True,
                 max_new_tokens: int = 256) -> Run:
    """One request through the LLM alone, as a Run the scorer reads like the pipeline's; `constrain`
    holds the answer to the calls' JSON shape."""
    run = Run(query=query, domain=pack.name, today=today, translator=f"baseline-{backend.name}")
    system = INSTRUCTIONS.format(today=today, apis=function_specs(pack))
    user = f"Request: {query.strip()}\nAnswer:"
    started = time.perf_counter()
    completion = backend.complete(system, user, calls_grammar(pack) if constrain else None, max_new_tokens)
    run.timings_ms["translate"] = round((time.perf_counter() - started) * 1000, 3)
    run.prompt, run.llm_output = system + "\n" + user, completion.text
    result = parse_calls(completion.text, pack)
    parsed = isinstance(result, Plan) or result.kind != "ir_rejected"
    run.llm_stats = {"first_output_valid": parsed, "new_tokens": completion.new_tokens, "llm_s": completion.seconds}
    if isinstance(result, Plan):
        run.plan, run.status = result, "succeeded"
    else:
        run.failure, run.status = result, "failed"
    return run
