"""The LLM-only baseline (seed paper, App. D.3): the same model gets the APIs as function specs and
writes the calls itself — values normalised by itself, missing ones asked for, dataflow as references —
with no rules and no planner. Scored by the same scorer as the pipeline."""

from __future__ import annotations

import json
import re
import time

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


def parse_calls(text: str, pack: Pack) -> Plan | Failure:
    """The model's JSON as a Plan, or why it is not one."""
    match = re.search(r"(\[.*\]|\{.*\})", text, re.DOTALL)
    if not match:
        return Failure(stage="translate", kind="ir_rejected", message="no JSON in the answer")
    try:
        data = json.loads(match.group(1))
    except json.JSONDecodeError as exc:
        return Failure(stage="translate", kind="ir_rejected", message=f"invalid JSON: {exc}")
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


def run_baseline(query: str, today: str, pack: Pack, backend, max_new_tokens: int = 256) -> Run:
    """One request through the LLM alone, as a Run the scorer reads like the pipeline's."""
    run = Run(query=query, domain=pack.name, today=today, translator=f"baseline-{backend.name}")
    system = INSTRUCTIONS.format(today=today, apis=function_specs(pack))
    user = f"Request: {query.strip()}\nAnswer:"
    started = time.perf_counter()
    completion = backend.complete(system, user, None, max_new_tokens)
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
