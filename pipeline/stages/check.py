"""Stage `check IR`: only plain facts over the pack's `_`-predicates ever reach clingo.

clingo runs `#script` code and reads `#include` files (the parser itself opens them), so the IR is screened
for directives before it is parsed, then parsed with clingo's own parser and every statement is checked
to be a fact over a known predicate whose arguments are constants, strings or integers.
"""

from __future__ import annotations

import re

from clingo import ast
from clingo.ast import ASTType

from pipeline.packs.pack import Pack
from pipeline.records import CheckedIR, IRFact, StageError

MAX_IR_CHARS = 20_000
MAX_FACTS = 200
MAX_VALUE_CHARS = 300

_DIRECTIVE = re.compile(r"#\s*([A-Za-z_]*)")
# What may stand outside strings and comments: a string is "..." with backslash escapes.
_STRING_OR_COMMENT = re.compile(r'"(?:[^"\\\n]|\\.)*"|%\*.*?\*%|%[^\n]*', re.DOTALL)


def _reject(message: str) -> StageError:
    return StageError(stage="check", kind="ir_rejected", message=message)


def _screen_directives(text: str) -> None:
    code = _STRING_OR_COMMENT.sub(" ", text)
    if m := _DIRECTIVE.search(code):
        raise _reject(f"directive '#{m[1]}' is not allowed in IR: the IR is plain facts only")


_ESCAPES = {"\\": "\\", '"': '"', "n": "\n"}


def _unescape(literal: str) -> str:
    """An ASP string literal's value (clingo's escapes: \\\\, \\" and \\n; any other is an error)."""
    def replace(match: re.Match) -> str:
        if match[1] not in _ESCAPES:
            raise _reject(f"'\\{match[1]}' is not an escape of an ASP string (\\\\, \\\", \\n)")
        return _ESCAPES[match[1]]
    return re.sub(r"\\(.)", replace, literal[1:-1], flags=re.DOTALL)


def _ascii_for_clingo(text: str) -> tuple[str, list[str]]:
    """The IR with every string literal replaced by an ASCII placeholder ("0", "1", ...) and comments by
    blank lines, and the literals' values. Clingo gets ASCII only: its parser's messages quote the input
    cut at a byte count, and a message cut inside a UTF-8 character aborts the process (found by fuzzing)."""
    values: list[str] = []

    def replace(match: re.Match) -> str:
        if match[0].startswith('"'):
            values.append(_unescape(match[0]))
            return f'"{len(values) - 1}"'
        return "\n" * match[0].count("\n") or " "
    safe = _STRING_OR_COMMENT.sub(replace, text)
    if not safe.isascii():
        bad = next(c for c in safe if not c.isascii())
        raise _reject(f"character {bad!r} outside a string: the IR's syntax is ASCII (values go in quotes)")
    return safe, values


def _term_value(term: ast.AST, strings: list[str]) -> str | int | tuple[str]:
    """A fact's argument: a string, an integer, or a constant (returned as a 1-tuple of its name)."""
    if term.ast_type == ASTType.SymbolicTerm:
        symbol = term.symbol
        if symbol.type.name == "String":
            value = strings[int(symbol.string)]  # the placeholder's literal
            if len(value) > MAX_VALUE_CHARS:
                raise _reject(f"a value is longer than {MAX_VALUE_CHARS} characters")
            return value
        if symbol.type.name == "Number":
            return symbol.number
        if symbol.type.name == "Function" and not symbol.arguments and not symbol.negative:
            return (symbol.name,)
    if term.ast_type == ASTType.Function and not term.arguments and not term.external:
        return (term.name,)
    if (term.ast_type == ASTType.UnaryOperation and term.argument.ast_type == ASTType.SymbolicTerm
            and term.argument.symbol.type.name == "Number"):
        return -term.argument.symbol.number
    raise _reject(f"argument '{term}' is not a constant, a string or an integer")


def _fact(statement: ast.AST, predicates: dict[str, int], pack: Pack, strings: list[str]) -> IRFact:
    if statement.ast_type != ASTType.Rule:
        kind = str(statement.ast_type).split(".")[-1]
        raise _reject(f"'{statement}' ({kind}) is not a fact; the IR is plain facts only")
    if statement.body or statement.head.ast_type != ASTType.Literal or statement.head.sign:
        raise _reject(f"'{statement}' is a rule, not a fact")
    atom = statement.head.atom
    if atom.ast_type != ASTType.SymbolicAtom or atom.symbol.ast_type != ASTType.Function:
        raise _reject(f"'{statement}' is not a plain fact")
    name, arguments = atom.symbol.name, atom.symbol.arguments
    if name not in predicates:
        known = ", ".join(f"{p}/{a}" for p, a in predicates.items())
        raise _reject(f"unknown predicate {name}/{len(arguments)} in '{statement}' (known: {known})")
    if len(arguments) != predicates[name]:
        raise _reject(f"{name} takes {predicates[name]} arguments, '{statement}' has {len(arguments)}")
    values = [_term_value(t, strings) for t in arguments]
    if not isinstance(values[0], tuple):
        raise _reject(f"the first argument of '{statement}' must be a goal id (a lower-case constant)")
    if name == "_goal":
        if not isinstance(values[1], tuple) or values[1][0] not in pack.spec.goals:
            goals = ", ".join(pack.spec.goals)
            raise _reject(f"unknown goal {arguments[1]} in '{statement}' (goals of {pack.name}: {goals})")
    return IRFact(predicate=name, arguments=[v[0] if isinstance(v, tuple) else v for v in values],
                  constants=[isinstance(v, tuple) for v in values])


def check_ir(ir_text: str, pack: Pack) -> CheckedIR:
    """Parse and check an IR; the returned facts are re-rendered from the AST, never passed through."""
    if len(ir_text) > MAX_IR_CHARS:
        raise _reject(f"IR of {len(ir_text)} characters is over the limit of {MAX_IR_CHARS}")
    _screen_directives(ir_text)
    safe_text, strings = _ascii_for_clingo(ir_text)
    statements: list[ast.AST] = []
    messages: list[str] = []
    try:
        ast.parse_string(safe_text, statements.append, logger=lambda _code, msg: messages.append(msg.strip()))
    except RuntimeError:
        detail = "; ".join(m.replace("<string>:", "line ") for m in messages) or "syntax error"
        raise _reject(f"IR is not valid ASP: {detail}") from None
    predicates = pack.ir_predicates()
    facts = []
    for statement in statements:
        if statement.ast_type in (ASTType.Program, ASTType.Comment):
            if statement.ast_type == ASTType.Program and (statement.name != "base" or statement.parameters):
                raise _reject(f"'{statement}' is not allowed in IR")
            continue
        facts.append(_fact(statement, predicates, pack, strings))
        if len(facts) > MAX_FACTS:
            raise _reject(f"IR has more than {MAX_FACTS} facts")
    goal_ids = {f.arguments[0] for f in facts if f.predicate == "_goal"}
    if len(goal_ids) > pack.spec.max_goals:
        raise _reject(f"IR names {len(goal_ids)} goals; a request to {pack.name} may ask for at most "
                      f"{pack.spec.max_goals}")
    return CheckedIR(facts=facts)
