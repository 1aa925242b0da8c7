"""The pack compiled into a grammar of valid IR (FARS-style constrained decoding), per request.

Only the pack's goal names (or a shortlist of them) can be written; each goal only its own argument
predicates, in a fixed order; closed arguments their listed values; free values are holes that take a span
of the request (copied, case-insensitively, at token boundaries) or the value already in its normal form
(a date `MM/DD/YYYY`, an amount `123.00`, ...), so the model copies rather than invents and the rule pack
normalises what it copied. Arguments that accept another call's output may name an earlier goal id.
The output is EBNF for xgrammar (GBNF-compatible, so llama.cpp-style servers accept it too).
"""

from __future__ import annotations

import json
import re

from pipeline.pack import Pack

MAX_GOALS = 3
NONE_LINE = "% no goal of this domain covers the request"
# Spans are made of word tokens (runs of letters and digits) and the literal text between two tokens
# ("4,500", "jake.miller@gmail.com", "Miller's", "P&L" are all spans). A gap longer than a few characters,
# or holding a quote, a backslash or a line break, ends a span.
_TOKEN = re.compile(r"[^\W_]+")
_MAX_GAP = 3

# Normal forms a value may also be written in, by normaliser.
NORMAL_FORMS = {
    "date": r'[0-1] [0-9] "/" [0-3] [0-9] "/" [1-2] [0-9] [0-9] [0-9]',
    "amount": r'[1-9] [0-9]* "." [0-9] [0-9]',
    "phone": r'[0-9] [0-9] [0-9] "-" [0-9] [0-9] [0-9] "-" [0-9] [0-9] [0-9] [0-9]',
    "email": r'[a-z0-9._+\-]+ "@" [a-z0-9\-]+ ("." [a-z0-9\-]+)+',
}


def _literal(text: str) -> str:
    """An EBNF string literal (JSON escaping is what xgrammar's EBNF reads)."""
    return json.dumps(text, ensure_ascii=False)


def _asp_string_body(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"')


def _case_insensitive(token: str) -> str:
    parts = []
    for ch in token:
        if ch.isalpha() and ch.lower() != ch.upper() and len(ch.upper()) == 1 and len(ch.lower()) == 1:
            parts.append(f"[{ch.lower()}{ch.upper()}]")
        else:
            parts.append(_literal(ch))
    return " ".join(parts)


def request_tokens(query: str) -> list[tuple[str, str | None]]:
    """(token, the text joining it to the next token, or None where a span cannot go on)."""
    matches = list(_TOKEN.finditer(query))
    tokens = []
    for i, m in enumerate(matches):
        gap = query[m.end():matches[i + 1].start()] if i + 1 < len(matches) else None
        if gap is not None:
            gap = re.sub(r"[ \t]+", " ", gap)
            if len(gap) > _MAX_GAP or any(c in gap for c in '"\\\n\r'):
                gap = None
        tokens.append((m.group(), gap))
    return tokens


def _span_rules(query: str) -> tuple[list[str], bool]:
    """Rules `span ::= s0 | s1 | ...` where `s_i` is token i optionally followed by `s_{i+1}`."""
    tokens = request_tokens(query)
    if not tokens:
        return [], False
    rules = []
    for i, (token, separator) in enumerate(tokens):
        body = _case_insensitive(token)
        if separator is not None:
            body += f" ({_literal(_asp_string_body(separator)) + ' ' if separator else ''}s{i + 1})?"
        rules.append(f"s{i} ::= {body}")
    rules.append("span ::= " + " | ".join(f"s{i}" for i in range(len(tokens))))
    return rules, True


def ir_grammar(pack: Pack, query: str, shortlist: list[str] | None = None, max_goals: int = MAX_GOALS) -> str:
    """EBNF of the IRs a translator may write for this request."""
    goals = [g for g in (shortlist or pack.spec.goals) if g in pack.spec.goals]
    span_rules, has_spans = _span_rules(query)
    rules: list[str] = []
    value_rules: dict[str, str] = {}

    def value_rule(argument: str) -> str:
        """The hole for one argument's value, a string: a span, a listed value, or a normal form."""
        if argument in value_rules:
            return value_rules[argument]
        spec = pack.spec.arguments.get(argument)
        options = ["span"] if has_spans else []
        if spec is not None:
            options += [_literal(_asp_string_body(v)) for v in spec.values]
            if spec.normalizer in NORMAL_FORMS:
                options.append(f"({NORMAL_FORMS[spec.normalizer]})")
        name = f"v_{argument}"
        rules.append(f'{name} ::= "\\"" ({" | ".join(options) or _literal("")}) "\\""')
        value_rules[argument] = name
        return name

    def goal_rule(goal: str, position: int) -> str:
        gid = f"g{position}"
        api = pack.spec.apis[pack.spec.goals[goal].api]
        parts = [_literal(f"_goal({gid}, {goal}).\n")]
        takes = list(api.arguments)
        predicates = [(extra, extra_spec.gives[0]) for extra, extra_spec in pack.spec.ir_extra.items()
                      if set(extra_spec.gives) <= set(takes)] + [(a, a) for a in takes]
        for predicate, typed_as in predicates:
            spec = pack.spec.arguments.get(typed_as)
            hole = value_rule(typed_as)
            if spec is not None and spec.accepts_output and max_goals > 1:
                refs = " | ".join(_literal(f"g{k}") for k in range(1, max_goals + 1) if k != position)
                hole = f"({hole} | {refs})"
            parts.append(f"({_literal(f'_{predicate}({gid}, ')} {hole} {_literal(').' + chr(10))})?")
        name = f"goal{position}_{goal}"
        rules.append(f"{name} ::= " + " ".join(parts))
        return name

    positions = []
    for position in range(1, max_goals + 1):
        names = [goal_rule(goal, position) for goal in goals]
        rules.append(f"goal{position} ::= " + " | ".join(names))
        positions.append(f"goal{position}")
    # goal1 (goal2 (goal3)?)? : a request names one to max_goals goals, or none.
    chain = positions[-1]
    for name in reversed(positions[:-1]):
        chain = f"{name} ({chain})?"
    root = f"root ::= ({chain}) | {_literal(NONE_LINE + chr(10))}"
    return "\n".join([root, *rules, *span_rules]) + "\n"
