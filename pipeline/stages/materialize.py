"""Stage `materialize`: clingo grounds and solves checked IR + the pack's rules + its Python helpers.

The model's goal/2, arg/3, ref/3, missing/2 and error/1 atoms are the materialized representation. An error
atom ends the run with the pack's description of it; a model without goals is out of the domain.
"""

from __future__ import annotations

import re
from datetime import date

import clingo

from pipeline.packs.pack import Pack
from pipeline.records import Binding, CheckedIR, GoalCall, Materialized, StageError
from pipeline.values import dates, moments
from pipeline.values.normalizers import NORMALIZERS, full_name

OUT_OF_DOMAIN = "nothing in this domain covers the request"


def _text(symbol: clingo.Symbol) -> str:
    if symbol.type == clingo.SymbolType.String:
        return symbol.string
    return str(symbol)


def _day(symbol: clingo.Symbol) -> date:
    return date.fromisoformat(_text(symbol))


class Helpers:
    """The Python functions the rules call as `@name(...)`. Each returns a list: empty when the words
    cannot be read, so the rule does not fire and the argument stays missing."""

    def __init__(self, pack: Pack):
        self.pack = pack

    @staticmethod
    def _date(period: dates.Period | None, end: bool) -> list[clingo.Symbol]:
        if period is None:
            return []
        return [clingo.String(dates.format_date(period.end if end else period.start))]

    def period_start(self, text, today):
        return self._date(dates.resolve_period(_text(text), _day(today)), end=False)

    def period_end(self, text, today):
        return self._date(dates.resolve_period(_text(text), _day(today)), end=True)

    def span_start(self, first, last, today):
        return self._date(dates.resolve_span(_text(first), _text(last), _day(today)), end=False)

    def span_end(self, first, last, today):
        return self._date(dates.resolve_span(_text(first), _text(last), _day(today)), end=True)

    def future_day(self, text, today):
        day = dates.resolve_future_day(_text(text), _day(today))
        return [clingo.String(dates.format_date(day))] if day else []

    def moment(self, text, today):
        read = moments.moment(_text(text), _day(today))
        return [clingo.String(read)] if read else []

    def day(self, text, today):
        period = dates.resolve_period(_text(text), _day(today))
        if period is None or period.start != period.end:
            return []
        return [clingo.String(dates.format_date(period.start))]

    def normalize(self, argument, text):
        spec = self.pack.spec.arguments.get(_text(argument))
        if spec is None:
            return []
        value = NORMALIZERS[spec.normalizer](_text(text), values=spec.values, synonyms=spec.synonyms)
        return [clingo.String(value)] if value is not None else []

    def given_name(self, text):
        parts = full_name(_text(text))
        return [clingo.String(parts[0])] if parts and parts[0] else []

    def family_name(self, text):
        parts = full_name(_text(text))
        return [clingo.String(parts[1])] if parts and parts[1] else []

    def date_order(self, text):
        """A normalised date as a number that orders like the date."""
        month, day, year = (int(x) for x in _text(text).split("/"))
        return clingo.Number(date(year, month, day).toordinal())


def _goal_order(goal_id: str) -> tuple:
    """g2 before g10: ids compare by their digits as numbers."""
    return tuple(int(p) if p.isdigit() else p for p in re.split(r"(\d+)", goal_id))


def describe_error(atom: clingo.Symbol, pack: Pack) -> str:
    name = atom.name if atom.type == clingo.SymbolType.Function else str(atom)
    description = pack.spec.errors.get(name)
    return f"{description} [{atom}]" if description else f"domain rule broken: {atom}"


def materialize(checked: CheckedIR, pack: Pack, today: str, time_limit_s: float = 10.0,
                ) -> Materialized:
    """Ground and solve; error atoms are returned, a broken pack or a time-out raises StageError."""
    date.fromisoformat(today)  # a malformed `today` is the caller's error, before clingo sees it
    messages: list[str] = []
    control = clingo.Control(["--warn=none"], logger=lambda _c, m: messages.append(m))
    for rule_file in pack.rule_files:
        control.load(str(rule_file))
    control.add("base", [], pack.facts() + f"today({clingo.String(today)}).\n" + checked.text)
    try:
        control.ground([("base", [])], context=Helpers(pack))
        with control.solve(yield_=True, async_=True) as handle:
            if not handle.wait(time_limit_s):
                handle.cancel()
                raise StageError("materialize", "internal", f"clingo took longer than {time_limit_s:g} s")
            model = handle.model()
            symbols = list(model.symbols(shown=True)) if model is not None else None
    except RuntimeError as exc:
        detail = "; ".join(messages) or str(exc)
        raise StageError("materialize", "internal", f"the rule pack failed: {detail}") from None
    if symbols is None:
        raise StageError("materialize", "domain_error", "the rule pack has no model for this IR")
    return _read_model(symbols, pack)


def _read_model(symbols: list[clingo.Symbol], pack: Pack) -> Materialized:
    by_name: dict[str, list[clingo.Symbol]] = {}
    for s in sorted(symbols):
        by_name.setdefault(s.name, []).append(s)
    goals = {str(g.arguments[0]): str(g.arguments[1]) for g in by_name.get("goal", [])}
    bindings: dict[str, dict[str, Binding]] = {g: {} for g in goals}
    for s in by_name.get("arg", []):
        bindings[str(s.arguments[0])][str(s.arguments[1])] = Binding(kind="value", value=s.arguments[2].string)
    for s in by_name.get("ref", []):
        bindings[str(s.arguments[0])][str(s.arguments[1])] = Binding(kind="ref", ref=str(s.arguments[2]))
    for s in by_name.get("missing", []):
        bindings[str(s.arguments[0])][str(s.arguments[1])] = Binding(kind="missing")
    errors = [describe_error(e.arguments[0], pack) for e in by_name.get("error", [])]
    unreadable = [f"{s.arguments[0]}.{s.arguments[1]}: {_text(s.arguments[2])!r}"
                  for s in by_name.get("unreadable", [])]
    misread = {(str(s.arguments[0]), str(s.arguments[1])) for s in by_name.get("unreadable", [])}
    calls = []
    for goal_id in sorted(goals, key=_goal_order):
        api = goals[goal_id]
        args = _with_defaults(goal_id, pack.spec.apis[api], bindings[goal_id], misread)
        calls.append(GoalCall(goal_id=goal_id, api=api,
                              args={a: args[a] for a in pack.spec.apis[api].arguments if a in args}))
    return Materialized(goals=calls, errors=errors, unreadable=unreadable,
                        atoms="".join(f"{s}.\n" for s in sorted(symbols)))


def _with_defaults(goal_id: str, api, bindings: dict[str, Binding], misread: set[tuple[str, str]],
                   ) -> dict[str, Binding]:
    """An optional argument the request does not give is never asked for: it carries the pack's default,
    or is left out of the call when it has none. Words given for it that its normaliser cannot read are
    still asked about (the user meant something; a default would silently replace it). Done here, after
    the rules, so that it holds for every pack's rules, hand-written ones included."""
    out = dict(bindings)
    for argument, default in api.optional.items():
        if out.get(argument, Binding(kind="missing")).kind != "missing" or (goal_id, argument) in misread:
            continue
        out[argument] = Binding(kind="default", value=default) if default is not None else Binding(kind="omitted")
    return out


def require_plannable(materialized: Materialized, why_not: str = "") -> None:
    """Error atoms and goal-less models end the run here, with the reason for the user (`why_not`: what the
    language analysis found the request asks that the domain does not do)."""
    if materialized.errors:
        raise StageError("materialize", "domain_error", "; ".join(materialized.errors))
    if not materialized.goals:
        raise StageError("materialize", "out_of_domain", f"{OUT_OF_DOMAIN}: {why_not}" if why_not else OUT_OF_DOMAIN)
