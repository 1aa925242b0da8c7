"""What the agent says in a repair move, and the bounds that keep a conversation from looping: a read-back
of the calls about to run, the summary handed to a person, the form a value takes."""

from __future__ import annotations

from pipeline.observability import metrics
from pipeline.packs.pack import ArgumentType, Pack
from pipeline.sessions.records import Call, ExecutedCall, Reply, SessionState
from pipeline.sessions.replies import listed, say, value_form

MAX_STRIKES = 2       # answers in a row that leave one question standing before a handoff
MAX_ASIDES = 3        # off-topic messages in a row before a handoff
MAX_MESSAGES = 30     # user messages in a session before a handoff


def what_it_takes(spec: ArgumentType | None) -> str:
    """What a value may look like, for a question asked again: the closed list, else examples, else the
    form of its normaliser's values."""
    if spec is None:
        return ""
    if spec.values:
        return say("one_of", values=", ".join(spec.values[:8]))
    if spec.examples:
        return say("for_example", examples=", ".join(f"'{e}'" for e in spec.examples[:3]))
    form = value_form(spec.normalizer)
    return say("value_form", form=form) if form else ""


def _values_behind(pool: list[Call], call: Call) -> list[str]:
    """A call's values in words; an output it takes is the field of a found record it names, else it
    stands for the values the earlier call was given. `pool`: the calls its refs point into."""
    parts: list[str] = []
    for argument, value in call.args.items():
        words = argument.replace("_", " ")
        if not isinstance(value, dict):
            found = [say("value_read_back", argument=words, value=value)]
        elif argument in getattr(pool[value["ref"]], "fields", {}):  # a found record's field: a value itself
            found = [say("value_read_back", argument=words, value=pool[value["ref"]].fields[argument])]
        elif isinstance(pool[value["ref"]], ExecutedCall):  # found already: the id itself, and how it was found
            found = [say("value_read_back", argument=words, value=pool[value["ref"]].value_for(argument)),
                     *_values_behind(pool, pool[value["ref"]])]
        else:  # an id still to be made: the values it will be made from
            found = _values_behind(pool, pool[value["ref"]])
        parts += [p for p in found if p not in parts]
    return parts


def read_back(pack: Pack, calls: list[Call], state: SessionState) -> str:
    """Calls about to run, in words: what each with effects does, and every value behind them (those of
    the calls whose outputs they take too: an id means nothing to the user), before the user says yes."""
    pool = [*state.executed, *calls]
    parts: list[str] = []
    for call in calls:
        if pack.spec.apis[call.api].effects:
            parts += [p for p in _values_behind(pool, call) if p not in parts]
    what = "; ".join((pack.spec.apis[c.api].description or c.api.replace("_", " ")).rstrip(".")
                     for c in calls if pack.spec.apis[c.api].effects)
    values = listed(parts, "both")
    return say("read_back_with_values", what=what, values=values) if values else say("read_back", what=what)


def summary(pack: Pack, state: SessionState) -> str:
    """What the session has so far, for the person it is handed to."""
    goals = "; ".join(say("summary_goal_with_values", goal=g.goal.replace("_", " "), values=", ".join(
        say("summary_value", argument=a.replace("_", " "), value=v) for a, v in (g.normalized or g.values).items()))
        if g.values else say("summary_goal", goal=g.goal.replace("_", " ")) for g in state.goals) or say("no_goals")
    done = ", ".join(c.api.replace("_", " ") for c in state.executed) or say("nothing_done")
    return say("summary", goals=goals, done=done)


def end(state: SessionState, kind: str, text: str, reason: str, code: str) -> Reply:
    """End the session: `reason` is told, `code` counted (metrics: a few fixed words)."""
    state.ended, state.end_reason, state.pending, state.awaiting = kind, reason, None, None
    metrics.session_ended(kind, code)
    return Reply(kind=kind, text=text, executed=state.calls())


def handoff(state: SessionState, pack: Pack, why: str, code: str) -> Reply:
    """Hand the conversation to a person, saying why and what it has so far."""
    return end(state, "handoff", say("handoff", why=why, summary=summary(pack, state)), why, code)
