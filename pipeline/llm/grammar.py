"""The pack compiled into a grammar of valid IR (FARS-style constrained decoding), per request.

Only the pack's goal names (or the retrieved ones) can be written; each goal only its own argument
predicates, in a fixed order, with a period-like IR predicate (`_period`) instead of the arguments it gives.
Values are holes restricted to what the request grounds: a span of the request that the argument's own
normaliser can read ("last quarter" for a date, "75 bucks" for an amount, "link my bank" for a help topic),
or the value that span normalises to. So the model copies rather than invents, and cannot write a value
the request does not give: an argument with no such span cannot be written at all and stays missing.
Arguments that accept another call's output may also name another goal's id. The output is EBNF for
xgrammar (GBNF-compatible, so llama.cpp-style servers accept it too).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from datetime import date

from pipeline.language.linking import learned_parts
from pipeline.language.names import labelled_parts, written_as_name
from pipeline.language.readers import candidate_strings, choice_readings, reader, value_readings
from pipeline.language.readings import Reading, Readings
from pipeline.language.values import link_values, with_values_named, written_as_a_name
from pipeline.language.words import REQUEST_WORDS
from pipeline.language.picks import picked_words, stems, value_said
from pipeline.packs.pack import ArgumentType, Pack
from pipeline.packs.rest import identified, paged_resource, path_identifiers, singular, snake_words
from pipeline.values.normalizers import NORMALIZERS, _stem
from pipeline.values.spans import TOKEN

MAX_GOALS = 3
NONE_LINE = "% no goal of this domain covers the request"


def _literal(text: str) -> str:
    """An EBNF string literal (JSON escaping is what xgrammar's EBNF reads)."""
    return json.dumps(text, ensure_ascii=False)


def _asp_string(text: str) -> str:
    """The ASP string literal of a value, as the IR writes it."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def value_candidates(pack: Pack, text: str, today: date, record: list[Reading] | None = None,
                     arguments: set[str] | None = None, unjudged: frozenset[str] = frozenset(),
                     named_by: dict[str, frozenset[str]] | None = None) -> dict[str, list[str]]:
    """For each argument (and period-like IR predicate), the values the text grounds: each maximal span its
    normaliser reads, and what it reads it as, less the spans the learned slot head says are no value of
    that argument (`language.values`). Free text (an invoice's detail) may be any short span. `record`
    receives every reading, kept or dropped and why. `unjudged`: arguments whose readings the slot head does
    not drop (what a lookup searches by: SGD, which the head learned from, has no such slot). `named_by`:
    argument -> the words of what it identifies in a path of the goals in play (`identified_in_paths`)."""
    # only these compete for the words, when named (the module's `ir_grammar` says when)
    readings = with_values_named(pack, text, value_readings(pack, text, today, only=arguments), named_by)
    readings = link_values(pack, text, readings, unjudged=unjudged, named_by=named_by)
    if record is not None:
        record += [r for found in readings.values() for r in found.items]
    return candidate_strings(readings)


def _choice_candidates(spec: ArgumentType, text: str, tokens: list[re.Match]) -> list[str]:
    return choice_readings(spec, text, tokens, Readings("", text)).strings()


def _names_person(pack: Pack, predicate: str, candidates: dict[str, list[str]]) -> bool:
    """Whether a full-name predicate has a whole name written as one among the goal's values."""
    return reader(pack.value_spec(predicate).normalizer).parts and any(
        written_as_name(v) for v in candidates.get(predicate, []))


def _naming_words(pack: Pack, goal: str) -> set[str]:
    """The words that name a goal's output ("invoice" for create_invoice, "report" and "expense" for
    expense_report), folded like the closed-value matcher folds them."""
    api = pack.spec.apis[pack.spec.goals[goal].api]
    return {_stem(w) for w in [*goal.split("_"), api.produces]} - {_stem(w) for w in REQUEST_WORDS}


def _without_picks(pack: Pack, candidates: dict[str, list[str]], lookups: list[str]) -> dict[str, list[str]]:
    """Where a list the request picks by is looked up (`retrieval.lookups`), the words that pick it ("best rated"
    of "the best rated album") are no value of an argument that list finds: they say which list, not which id."""
    for goal in lookups:
        api = pack.spec.apis[pack.spec.goals[goal].api]
        picked = set(picked_words(api.rest))
        if not picked:
            continue
        for name, values in list(candidates.items()):
            spec = pack.spec.arguments.get(name)
            if spec is not None and api.produces in spec.accepts_output:
                candidates[name] = [v for v in values if not stems(v) & picked]
    return candidates


def _without_references(pack: Pack, candidates: dict[str, list[str]], others: list[str]) -> dict[str, list[str]]:
    """Where another goal of the request produces what an argument accepts, words naming that goal's output
    ("about the invoice") refer to it: they are not a value ("Invoicing") of the argument."""
    naming = set().union(*(_naming_words(pack, g) for g in others)) if others else set()
    result = dict(candidates)
    for name, spec in pack.spec.arguments.items():
        if not reader(spec.normalizer).closed or not any(_feeds(pack, g, spec) for g in others):
            continue
        # The candidates are the words and the values they read as; a value may be written as itself ("tax").
        kept = [v for v in candidates[name] if not any(_stem(w.lower()) in naming for w in TOKEN.findall(v))]
        values = {NORMALIZERS["choice"](v, values=spec.values, synonyms=spec.synonyms) for v in kept}
        result[name] = [v for v in candidates[name] if v in values or v in kept and v not in spec.values]
    return result


def _feeds(pack: Pack, goal: str, spec: ArgumentType) -> bool:
    """Whether the goal's output is something the argument accepts."""
    return pack.spec.apis[pack.spec.goals[goal].api].produces in spec.accepts_output


def _feeds_any(pack: Pack, goal: str, other: str) -> bool:
    """Whether some argument of the other goal accepts the goal's output."""
    return any(_feeds(pack, goal, pack.spec.arguments[a]) for a in pack.goal_takes(other) if a in pack.spec.arguments)


def _may_take(pack: Pack, goals: list[str], position: int, other: int, spec: ArgumentType,
              lookups: Mapping[str, str]) -> bool:
    """Whether an argument of the goal at `position` may name the goal at `other` (1-based): its output is
    something the argument accepts, and, where each goal could take the other's output (a search and a
    booking of one service), the data flows one way only, or a reference each way would be a circle no
    plan satisfies: from a lookup to the goals it was found for (`lookups`), from a call without effects to
    one with them (the search feeds the booking), and between two alike (two searches) from the earlier to
    the later."""
    goal, source = goals[position - 1], goals[other - 1]
    if not _feeds(pack, source, spec):
        return False
    feeds, fed = goal in _finds_for(source, lookups), source in _finds_for(goal, lookups)
    if feeds or fed:
        return feeds  # a lookup feeds what it was found for, never the reverse
    if not _feeds_any(pack, goal, source):
        return True
    effects = [pack.goal_has_effects(g) for g in (goal, source)]
    return effects == [True, False] or (effects[0] == effects[1] and other < position)


def _lists_the_kind(pack: Pack, goal: str, argument: str, candidates: dict[str, list[str]]) -> bool:
    """Whether a goal may give the argument an id: any goal but a list of whichever resource its selector
    names (`RestSemantics.selects`) whose words name others only ("trending shows" give no person's id)."""
    rest = pack.spec.apis[pack.spec.goals[goal].api].rest
    if rest is None or not rest.selector:
        return True
    spec = pack.spec.arguments[rest.selector]
    named = {rest.selects.get(NORMALIZERS["choice"](v, values=spec.values, synonyms=spec.synonyms))
             for v in candidates.get(rest.selector, [])} - {None}
    return not named or identified(argument) in named


def _as_looked_up(goals: list[str], position: int, outputs: list[int], lookups: Mapping[str, str]) -> list[int]:
    """Of the goals (1-based positions) an argument may take an id from, the lookups found for its goal, when
    any is among them: each was added to find this goal's id, and another goal's answer holding ids of that
    kind (a search of people lists the films they are known for) is not what the words name."""
    return [k for k in outputs if lookups.get(goals[k - 1]) == goals[position - 1]] or outputs


def _kind_looked_up(pack: Pack, lookup: str, consumer: str) -> dict[str, list[str]]:
    """A search across kinds found for one kind (`lookups._search_of`): its required closed argument that
    says which kinds (`type`), given the value naming the kind the consumer needs (`tracks.items[].id`
    feeds a track's id: "track"), whatever the words say; none where it is no such search."""
    api, takes = pack.spec.apis[pack.spec.goals[lookup].api], set(pack.goal_takes(consumer))
    if api.http is None:
        return {}
    kinds = {paged_resource(path) for argument, path in api.http.outputs.items() if argument in takes} - {""}
    return {argument: [value] for argument in api.arguments if argument not in api.optional
            for value in pack.value_spec(argument).values if singular(snake_words(value)) in kinds}


def _finds_for(goal: str, lookups: Mapping[str, str]) -> set[str]:
    """The goals a lookup finds an id for, in turn (a search finds a person, whose films find a film)."""
    chain, consumer = set(), lookups.get(goal)
    while consumer is not None and consumer not in chain:
        chain.add(consumer)
        consumer = lookups.get(consumer)
    return chain


def _referred_to(pack: Pack, source: str, goals: list[str], outputs: list[int], has_value: bool) -> list[int]:
    """Of the goals (1-based positions) whose output an argument may take, those its words refer to: the
    ones they name ("a call over the spending report" is about the report, not the invoice); with none
    named, any of them, unless the words give the argument a value of its own ("a call about tax")."""
    said = {_stem(w.lower()) for w in TOKEN.findall(source)}
    named = [k for k in outputs if _naming_words(pack, goals[k - 1]) & said]
    return named or ([] if has_value else outputs)


def _with_context(pack: Pack, own: dict[str, list[str]], context: dict[str, list[str]]) -> dict[str, list[str]]:
    """A clause's own values, and for each argument it gives no value of, the values of the words it points
    back at ("a $40 charge hit us on Monday, look it up"). Never free text: what a pointed-at clause is
    about is seldom what the goal's free text names."""
    def free_text(name: str) -> bool:
        spec = pack.spec.arguments.get(name)
        return spec is not None and reader(spec.normalizer).prose
    return {**own, **{name: values for name, values in context.items()
                      if values and not own.get(name) and not free_text(name)}}


def _with_the_rest(by_position: dict[int, dict[str, list[str]]], whole: dict[str, list[str]], query: str,
                   apart: bool = False) -> dict[int, dict[str, list[str]]]:
    """Each goal's own values, and for each argument its words give none of, what the rest of the request
    gives it that no other goal's words do ("a rental in Banff. We are a big family, so it has to have 4
    bedrooms."). Only where the slot head judged the readings: it read each value in the words around it,
    so a value outside the goal's clause is still that argument's; the rules alone know a value's goal
    only by the clause it is in. Words written once in the request that the goal's own words already give
    one argument give no other: read in the whole request, the head may have matched that one mention to
    another argument, and one mention is one argument's value. `apart`: the goals are calls of an API, each
    reading its own words (`ir_grammar`): a value another goal's own words give is that goal's, whichever of
    its arguments it is."""
    out = {}
    for i, own in by_position.items():
        theirs = {v for j, other in by_position.items() if j != i for values in other.values() for v in values}
        elsewhere = {name: theirs if apart else {v for j, other in by_position.items() if j != i
                                                 for v in other.get(name, [])} for name in whole}
        given = {v for values in own.values() for v in values if query.count(v) == 1}
        rest = {name: [v for v in values if v not in elsewhere[name] and (v not in given or v in own.get(name, []))]
                for name, values in whole.items()}
        out[i] = {**own, **{name: values for name, values in rest.items() if values and not own.get(name)}}
    return out


def identified_in_paths(pack: Pack, goals: list[str]) -> dict[str, frozenset[str]]:
    """Argument -> the resources the goals' URL paths identify by it (`/entities/{identity}`: entity)."""
    named: dict[str, set[str]] = {}
    for goal in goals:
        http = pack.spec.apis[pack.spec.goals[goal].api].http
        for argument, resource in (path_identifiers(http.path) if http else {}).items():
            named.setdefault(argument, set()).add(resource)
    return {argument: frozenset(resources) for argument, resources in named.items()}


def _own(pack: Pack, goals: list[str], position: int, lookups: Mapping[str, str], in_play: set[str] | None,
         words: str = "") -> set[str] | None:
    """The arguments in play that the goal at `position` (1-based) reads words for (`words`: its own)."""
    if in_play is None or position > len(goals):
        return in_play
    return in_play & set(_reads(pack, goals[position - 1], goals[position - 1] in lookups, words))


def _reads(pack: Pack, goal: str, lookup: bool, words: str = "") -> list[str]:
    """The arguments a goal takes words for: all of its API's; a lookup's required ones, the free words a
    search finds its things by (`search_text`: `?query=`, `?q=`, optional or not), and those of its own the
    words give a value of by their terms (`picks.value_said`: the pets by status, "that are sold")."""
    api = pack.spec.apis[pack.spec.goals[goal].api]
    return [a for a in api.arguments if not lookup or a not in api.optional or pack.normalizers.get(a) == "search_text"
            or words and value_said(pack, a, words)]


def _naming(values: list[str], text: str) -> list[str]:
    """Of a search's words, those that name a thing: a name, an address, a number, words in quotes."""
    return [v for v in values
            if written_as_a_name(v) or "@" in v or any(f"{a}{v}{b}" in text for a, b in ('""', "“”"))]


def _named_words_only(pack: Pack, candidates: dict[str, list[str]], text: str) -> dict[str, list[str]]:
    """A lookup's search words are what the request calls the thing (`_naming`), never a phrase in lower
    case, which only a search asked for itself looks for ("boards about sprint planning"): "remove one of
    our webhooks" names no webhook to search for ("remove" is none), so its id is asked."""
    return {name: _naming(values, text) if pack.normalizers.get(name) == "search_text" else values
            for name, values in candidates.items()}


def _picks(pack: Pack, goal: str) -> bool:
    """Whether the goal is a search or a list (a REST API's read of several things): its own words for
    what to look for, or which of its things, are no identifier of another thing's."""
    rest = pack.spec.apis[pack.spec.goals[goal].api].rest
    return rest is not None and rest.action in ("search", "list")


def ir_grammar(pack: Pack, query: str, today: date, goals: list[str] | None = None, fixed: bool = False,
               sources: list[str] | None = None, max_goals: int = MAX_GOALS, allow_none: bool = True,
               contexts: list[str] | None = None, record: list[Reading] | None = None,
               lookups: Mapping[str, str] | None = None) -> str:
    """EBNF of the IRs a translator may write for this request.

    `goals`: the goals it may name (default: all of the pack's). `fixed`: it names exactly these, in this
    order, and only fills their arguments (goals chosen by retrieval), each from its own words
    (`sources[i]`, default the whole request), and from the words it points back at (`contexts[i]`) the
    arguments its own words do not give; otherwise it names one to `max_goals` of them, none twice,
    or writes the no-goal line (unless `allow_none` is false: retrieval already found the request in the
    domain). `record` receives every value reading of the words read, kept or dropped and why. `lookups`: goals
    added to find an id another goal needs (`retrieval.lookups`), each with the goal it finds it for; they take
    the words they need and nothing else, and give that goal its id."""
    lookups = lookups or {}
    goals = [g for g in (pack.requestable_goals() if goals is None else goals) if g in pack.spec.goals]
    whole, by_position = _goal_candidates(pack, query, today, goals, fixed, sources, contexts, record, lookups)
    writer = _GrammarWriter(pack, query, goals, fixed, sources, lookups, whole, by_position,
                            len(goals) if fixed else min(max_goals, len(goals)))
    return writer.fixed_grammar() if fixed else writer.open_grammar(allow_none)


def _goal_candidates(pack: Pack, query: str, today: date, goals: list[str], fixed: bool, sources: list[str] | None,
                     contexts: list[str] | None, record: list[Reading] | None,
                     lookups: Mapping[str, str]) -> tuple[dict[str, list[str]], dict[int, dict[str, list[str]]]]:
    """The values the words ground per argument: for the whole request, and (goals chosen by retrieval,
    `fixed`) for each goal's position from its own words, what they point back at, and, for a lookup, only
    the words it needs to find what it finds."""
    # A REST API's operations each read the request alone: an argument of an operation nobody asked for
    # does not take words from the goals in play (TMDB's discover filters would take every film's title).
    # A lookup takes the words it needs to find what it finds ("the movie The Matrix": its query), not its
    # filters: a search's region or year would take the same name from the query.
    own_words = dict(zip(goals, sources or [])) if fixed else {}
    in_play = ({a for g in goals for a in _reads(pack, g, g in lookups, own_words.get(g, query))}
               if fixed and pack.is_rest_api else None)
    kinds = {g: _kind_looked_up(pack, g, lookups[g]) for g in goals if g in lookups}
    if in_play is not None:  # the kind a search across kinds looks for is set below, and takes no words:
        # "follow the artist Ana Ruiz" says the follow's type, not the search's
        in_play -= {a for kind in kinds.values() for a in kind}
    # What a lookup, or a search or a list asked for itself, is told to pick by is no slot of SGD's for the
    # head to judge ("the pets that are sold": the pets by status; "boards about sprint planning": the query).
    searched_by = frozenset(a for g in goals if g in lookups or _picks(pack, g)
                            for a in _reads(pack, g, True, own_words.get(g, query))
                            if g in lookups or not identified(a))
    named_by = identified_in_paths(pack, goals) if in_play is not None else None
    whole = value_candidates(pack, query, today, record, in_play, searched_by, named_by)
    # A goal's own words are read for its own arguments: a name said there is its name, not one of another
    # goal's arguments of the same kind ("a service called X and a rate limit named Y": X is the service's).
    by_position = {i: value_candidates(pack, src, today, record, _own(pack, goals, i, lookups, in_play, src),
                                       searched_by, named_by) if src != query else whole
                   for i, src in enumerate(sources or [], 1)} if fixed else {}
    judged = learned_parts(pack)["value"]
    for i, context in enumerate(contexts or [], 1):
        if fixed and context and i in by_position:
            pointed_at = value_candidates(pack, context, today, record, in_play, named_by=named_by)
            if judged:  # read alone, a story loses the words around it: the head's reading of the whole decides
                pointed_at = {name: [v for v in values if v in whole.get(name, [])]
                              for name, values in pointed_at.items()}
            # A listed value may be named across the two ("lost an account I deleted; how to recover it").
            if sources:
                joined = f"{context}, {sources[i - 1]}"
                tokens = list(TOKEN.finditer(joined))
                pointed_at.update({name: _choice_candidates(spec, joined, tokens)
                                   for name, spec in pack.spec.arguments.items()
                                   if reader(spec.normalizer).closed and not pointed_at.get(name)})
            by_position[i] = _with_context(pack, by_position[i], pointed_at)
    if fixed and judged and sources:
        by_position = _with_the_rest(by_position, whole, query, apart=in_play is not None)
    if fixed:
        for i, goal in enumerate(goals, 1):
            others = [g for j, g in enumerate(goals, 1) if j != i]
            by_position[i] = _without_picks(pack, _without_references(pack, by_position.get(i, whole), others),
                                            [g for g in goals if g in lookups])
            if goal in lookups:
                named = _named_words_only(pack, by_position[i], query)
                if len([g for g in goals if g not in lookups]) == 1:  # one thing asked: a name the request
                    # writes elsewhere ("I'm watching the show X, any recommendations?") is what is looked up
                    named = {name: values or _naming(whole.get(name, []), query)
                             if pack.normalizers.get(name) == "search_text" else values for name, values in named.items()}
                by_position[i] = {**named, **kinds[goal]}
    return whole, by_position


class _GrammarWriter:
    """Writes the EBNF rules of `ir_grammar`: a rule per goal at each position it may take (its `_goal`
    fact, then a fact per argument its words can fill), a rule per argument's values there, and the root
    that strings the goals together (in order where `fixed`, else any `count` of them, none twice)."""

    def __init__(self, pack: Pack, query: str, goals: list[str], fixed: bool, sources: list[str] | None,
                 lookups: Mapping[str, str], whole: dict[str, list[str]],
                 by_position: dict[int, dict[str, list[str]]], count: int):
        self.pack, self.query, self.goals, self.fixed, self.sources = pack, query, goals, fixed, sources
        self.lookups, self.whole, self.by_position, self.count = lookups, whole, by_position, count
        self.judged = learned_parts(pack)["value"]
        self.rules: list[str] = []
        self.defined: set[str] = set()

    def fixed_grammar(self) -> str:
        none = _literal(NONE_LINE + "\n")
        body = " ".join(self.goal_rule(goal, i) for i, goal in enumerate(self.goals, 1)) if self.goals else none
        return "\n".join([f"root ::= {body}", *self.rules]) + "\n"

    def open_grammar(self, allow_none: bool) -> str:
        none = _literal(NONE_LINE + "\n")
        root = (f"root ::= {self.rest(())}" + (f" | {none}" if allow_none else "")) if self.goals \
            else f"root ::= {none}"
        return "\n".join([root, *self.rules]) + "\n"

    def define(self, name: str, body: str) -> str:
        if name not in self.defined:
            self.defined.add(name)
            self.rules.append(f"{name} ::= {body}")
        return name

    def candidates(self, position: int) -> dict[str, list[str]]:
        return self.by_position.get(position, self.whole)

    def fact(self, predicate: str, gid: str, argument: str, position: int) -> str | None:
        """The fact giving one argument, or None when nothing can fill it."""
        pack, goals, lookups = self.pack, self.goals, self.lookups
        candidates = self.candidates(position)
        # A whole name is what gives its parts, never one part ("Ana Ruiz" is no family name).
        wholes = {v for extra, spec in pack.spec.ir_extra.items() if argument in spec.gives
                  and reader(spec.normalizer).parts for v in candidates.get(extra, []) if written_as_name(v)}
        options = [_literal(_asp_string(v)) for v in candidates.get(argument, []) if v not in wholes]
        spec = pack.spec.arguments.get(argument)
        if spec is not None and spec.accepts_output and self.count > 1:
            # Only a goal whose output the argument accepts (a customer profile is no topic to discuss).
            outputs = [k for k in range(1, self.count + 1) if k != position and (
                not self.fixed or _may_take(pack, goals, position, k, spec, lookups))]
            outputs = _as_looked_up(goals, position, outputs, lookups)
            outputs = [k for k in outputs if _lists_the_kind(pack, goals[k - 1], argument, self.candidates(k))]
            if self.fixed and self.sources:
                outputs = _referred_to(pack, self.sources[position - 1], goals, outputs, bool(options))
            if options:  # a lookup finds what the request does not give: never in place of a value it gives
                outputs = [k for k in outputs if goals[k - 1] not in lookups]
            options += [_literal(f"g{k}") for k in outputs]
        if not options:
            return None
        values = self.define(f"v_{argument}_{position}", " | ".join(options))
        return f"{_literal(f'_{predicate}({gid}, ')} {values} {_literal(').' + chr(10))}"

    def optional(self, argument: str, rule: str, position: int) -> str:
        spec = self.pack.value_spec(argument)
        # Judged by the slot head, the words it kept are the argument's value, whatever their kind.
        forced = self.judged or reader(spec.normalizer).forced or \
            _names_person(self.pack, argument, self.candidates(position))
        return f"({rule})" if self.fixed and forced else f"({rule})?"

    def goal_rule(self, goal: str, position: int) -> str:
        name = f"goal{position}_{goal}"
        if name in self.defined:
            return name
        gid = f"g{position}"
        takes = self.pack.goal_takes(goal)
        parts = [_literal(f"_goal({gid}, {goal}).\n")]
        given_by_extra: set[str] = set()
        for extra, extra_spec in self.pack.spec.ir_extra.items():
            if set(extra_spec.gives) <= set(takes):
                part = self.period_like(extra, extra_spec, gid, position)
                if part:
                    parts.append(part)
                given_by_extra |= set(extra_spec.gives)
        for argument in takes:
            if argument not in given_by_extra and (f := self.fact(argument, gid, argument, position)):
                parts.append(self.optional(argument, f, position))
        return self.define(name, " ".join(parts))

    def period_like(self, extra: str, extra_spec, gid: str, position: int) -> str | None:
        """A fact that gives several arguments (a period, a whole name): either it, or the arguments it
        gives, one by one."""
        together = self.fact(extra, gid, extra, position)
        each = [f for a in extra_spec.gives if (f := self.fact(a, gid, a, position))]
        # The arguments one by one: at least the first written, the others optional after it. One
        # period in the words gives every end or none: "expenses for 2024" is no end date alone.
        one_by_one = [" ".join([f"({each[i]})"] + [f"({f})?" for f in each[i + 1:]]) for i in range(len(each))]
        if reader(extra_spec.normalizer).ends and len(self.candidates(position).get(extra, [])) == 1:
            one_by_one = [" ".join(f"({f})" for f in each)] if len(each) == len(extra_spec.gives) else []
        alternatives = ([together] if together else []) + one_by_one
        if self.fixed and together and _names_person(self.pack, extra, self.candidates(position)):
            alternatives = [together]  # written whole ("Ana Ruiz"): the name, not a guess at its parts
        labelled = labelled_parts(self.sources[position - 1] if self.sources else self.query) \
            if self.fixed and reader(extra_spec.normalizer).parts else set()
        if labelled and len(each) == len(extra_spec.gives):
            # Parts the words label ("first name Ana, last name Ruiz") are written, each as its part.
            return " ".join(f"({f})" if i in labelled else f"({f})?" for i, f in enumerate(each))
        if alternatives:
            return self.optional(extra, " | ".join(f"({a})" for a in alternatives), position)
        return None

    def rest(self, used: tuple[str, ...]) -> str:
        """After the goals used so far: another unused one, or the end."""
        options = []
        for goal in self.goals:
            if goal not in used:
                follow = self.rest(used + (goal,)) if len(used) + 1 < self.count else ""
                options.append(f"{self.goal_rule(goal, len(used) + 1)} {follow}".strip())
        name = "rest_" + "_".join(used) if used else "first"
        if name not in self.defined:
            body = " | ".join(options) if options else '""'
            self.define(name, f"({body})?" if used and options else body)
        return name
