"""What the agent says in a repair move, and the bounds that keep a conversation from looping: a read-back
of the calls about to run, the summary handed to a person, the form a value takes."""

from __future__ import annotations

from pipeline.packs.pack import ArgumentType, Pack
from pipeline.sessions.records import Call, ExecutedCall, SessionState

MAX_STRIKES = 2       # answers in a row that leave one question standing before a handoff
MAX_ASIDES = 3        # off-topic messages in a row before a handoff
MAX_MESSAGES = 30     # user messages in a session before a handoff


# What a value of a normaliser looks like, for a question asked again when the pack gives no examples.
VALUE_FORMS = {"integer": "a number, such as 4", "time": "a time, such as 7:30 pm", "date": "a day, such as June 12",
               "future_date": "a day, such as next Friday or June 12", "amount": "an amount, such as 250",
               "decimal": "a number, such as 45.47",
               "date_time": "a day and a time, such as June 12 at 3 pm",
               "phone": "a phone number, such as 415-555-0123", "email": "an email address",
               "e164": "a phone number with its country code, such as +14155550123",
               "digits": "the number, in digits", "person_name": "a name, such as Ana Lopez",
               "identifier": "its id, as the service shows it, such as 1183 or 4ef9a417-02e9-4d39-ad75-9611e0fcc33c",
               "url": "a web address, such as https://example.org/photo.jpg"}


def what_it_takes(spec: ArgumentType | None) -> str:
    """What a value may look like, for a question asked again: the closed list, else examples, else the
    form of its normaliser's values."""
    if spec is None:
        return ""
    if spec.values:
        return "It is one of: " + ", ".join(spec.values[:8]) + "."
    if spec.examples:
        return "For example: " + ", ".join(f"'{e}'" for e in spec.examples[:3]) + "."
    return f"It is {VALUE_FORMS[spec.normalizer]}." if spec.normalizer in VALUE_FORMS else ""


def _values_behind(pool: list[Call], call: Call) -> list[str]:
    """A call's values in words; an output it takes is the field of a found record it names, else it
    stands for the values the earlier call was given. `pool`: the calls its refs point into."""
    parts: list[str] = []
    for argument, value in call.args.items():
        words = argument.replace("_", " ")
        if not isinstance(value, dict):
            found = [f"the {words} {value}"]
        elif argument in getattr(pool[value["ref"]], "fields", {}):  # a found record's field: a value itself
            found = [f"the {words} {pool[value['ref']].fields[argument]}"]
        elif isinstance(pool[value["ref"]], ExecutedCall):  # found already: the id itself, and how it was found
            found = [f"the {words} {pool[value['ref']].value_for(argument)}", *_values_behind(pool, pool[value["ref"]])]
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
    listed = ", ".join(parts[:-1]) + (" and " if len(parts) > 1 else "") + (parts[-1] if parts else "")
    return f"I am about to carry this out: {what}" + (f", with {listed}" if listed else "") + ". Shall I go ahead?"


def summary(pack: Pack, state: SessionState) -> str:
    """What the session has so far, for the person it is handed to."""
    goals = "; ".join(f"{g.goal.replace('_', ' ')}" + (" with " + ", ".join(
        f"{a.replace('_', ' ')} {v}" for a, v in (g.normalized or g.values).items()) if g.values else "")
        for g in state.goals) or "no request understood"
    done = ", ".join(c.api.replace("_", " ") for c in state.executed) or "nothing"
    return f"So far: {goals}. Carried out: {done}."
