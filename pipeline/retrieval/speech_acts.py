"""Asking vs telling: which clauses of a request ask for something, and which tell its story.

Customers write context around what they want ("our biggest client just left and i'm nervous, what did we
spend in june"). Goals come only from clauses that ask: a question, an imperative, a want or need, a
please, or a bare noun phrase ("P&L for March"). A clause with a subject and a finite verb that does none
of these ("we changed our pricing", "my accountant says ...") tells, and names no goal, even when it
mentions one's words. The rules are about English, not about any pack: they hold for every domain. A
pack adds its own words to the lists a `Vocabulary` holds ("invoice" as a verb; `pack.yaml`'s `lexicon:`):
without it, a clause that opens with such a word is only a noun phrase.

>>> speech_act("invoice Ann Lee for the grooming"), speech_act("invoice Ann Lee for the grooming", Vocabulary.of_words(request_verbs={"invoice"}))
('phrase', 'asks')
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cached_property
from typing import Literal, get_args

from pipeline.language.openings import FILLERS, POLITE, after_fillers, opening, words
from pipeline.language.words import FUNCTION_WORDS, pack_word_list, word_list
from pipeline.values.lexicon import any_of
from pipeline.values.spans import without_values

# The word lists are general English kept as data (pipeline/language/lexicon/<name>.yaml); those of this
# module's own rules are `speech_acts.yaml`'s.


def _said(part: str) -> frozenset[str]:
    return word_list("speech_acts", part)


def _any(part: str) -> str:
    """A regex group of a list of `speech_acts.yaml` (an apostrophe in it matching a typographic one too)."""
    return any_of("speech_acts", part, curly=True)


# A clause that opens with one of these is a question (and so asks), whatever follows ("is there").
QUESTION_OPENERS = word_list("question_openers")

# The verbs a request opens with (imperative): what people ask a service to do or give.
REQUEST_VERBS = word_list("request_verbs")
_CHANGE_VERBS = word_list("change_verbs")  # make, change or end something: some are adjectives too ("lower")

# Whom or over what one asks to talk ("someone", "an agent", "on the phone"), after "a", "an", "on the".
TALK_PARTNERS = word_list("talk_partners")

# A want or need in the first person ("what we need is ...", "i'd like", "we wanna", "i'm looking to"). "I'm
# looking for" is left to tell: read as a request on SGD train, it dropped the values of the story after it.
_SOFTLY = rf"(?:\w+ly\s+|{_any('want_softeners')}\s+)?"
_WANT = re.compile(rf"\b{_any('want_subjects')}\s+{_SOFTLY}{_any('want_verbs')}\b"
                   rf"|\b{_any('looking_subjects')} {_SOFTLY}{_any('looking_to')}\b"
                   rf"|\b{_any('asking_modals')} {_any('asked_persons')}\b|\b{_any('asking_words')}\b", re.I)

# The subjects a statement opens with (pronouns, demonstratives, possessives).
SUBJECTS = word_list("subjects")

# Finite verb forms that make a clause a statement when nothing in it asks.
FINITE = word_list("finite")

# Words that open a subordinate clause (a reason, a time, a condition): context, not a request.
SUBORDINATORS = word_list("subordinators")
# "so" opens a purpose ("so we can plan ahead"): context, not a request.
PURPOSE = _said("purpose")

# Words that open a clause inside a clause: its verbs are not the outer clause's.
NESTED = _said("nested_openers")

# Words that point back at something or someone the request already named ("generate it", "find that
# charge", "update her record").
REFERENCES = _said("references")


@dataclass(frozen=True)
class Clause:
    text: str
    asks: bool
    refers_back: bool
    # Asks only weakly: by being a bare noun phrase ("an expense report too", "not sure of the amount"), or by
    # wanting to learn about the story ("i want to find out why it dropped"). Such a clause names a goal only
    # when it names one clearly.
    bare: bool = False


ASKS, ASKS_BY_PHRASE, TELLS = "asks", "phrase", "tells"


def speech_act(text: str, vocabulary: Vocabulary | None = None) -> str:
    """ASKS (a question, an imperative, a want, a please), ASKS_BY_PHRASE (a bare noun phrase), or TELLS."""
    verbs = (vocabulary or ENGLISH).request_verbs
    tokens = words(text)
    if not tokens:
        return TELLS
    if text.rstrip().endswith("?"):
        return ASKS
    first = after_fillers(tokens)
    head, rest = tokens[first], tokens[first + 1:]
    if head in SUBORDINATORS:  # "before we close the month", "because the totals seem off"
        return ASKS if _WANT.search(text) and not _is_purpose(tokens[first:]) else TELLS
    if head == "have" and rest and rest[0] in _SOMEONE:
        return ASKS  # "have someone call me"
    if head in QUESTION_OPENERS or head in verbs or _WANT.search(text):
        return ASKS
    if head in _CHANGE_VERBS and imperative_verb(text) == head:
        return ASKS  # a verb of a change before its object ("lower the price", "mark it as sold"), no adjective
    if head in SUBJECTS or head in PURPOSE or head in _said("denials"):
        return TELLS
    # No opener: a bare noun phrase ("expense report for Q3") asks; one with a finite verb ("sales were
    # up", "payroll went out wrong", "partner thinks ...") or a participle ("applying for a loan") tells.
    if head in FINITE or len(head) > 4 and head.endswith("ed"):  # "moved offices", not "red"
        return TELLS
    # A participle that leads into what it does tells ("applying for a loan", "trying to"); one before a
    # noun names a thing ("grooming service, $85", "cleaning supplies"), not "ring".
    if len(head) > 4 and head.endswith("ing") and (not rest or rest[0] in _AFTER_PARTICIPLE):
        return TELLS
    # Only the clause's own verbs count, not those of a clause inside it ("advice on whether we can ...").
    nested = next((i for i, t in enumerate(rest) if t in NESTED), len(rest))
    own = rest[:nested]
    if any(len(t) > 4 and (t.endswith("ing") and nxt in _PARTICLES or t.endswith("ed") and prev not in _DETERMINERS)
           for prev, t, nxt in zip([head, *own], own, [*own[1:], ""])):
        return TELLS  # "bills stacking up", "some costs landed late", not "a detailed report"
    if any(_third_person_verb(prev, t, nxt) for prev, t, nxt in zip([head, *rest], rest, [*rest[1:], ""])):
        return TELLS  # "the rush messes up our books", "the client swears they paid"
    if head.endswith("'s") and rest and (rest[0] in _AFTER_IS or rest[0].endswith(("ing", "ed"))):
        return TELLS  # "year's almost over", "cash's getting tight": "is", not a possessive
    return TELLS if any(t in FINITE or t.endswith("n't") for t in own) else ASKS_BY_PHRASE


# What follows a participle that opens a story: a preposition, an article, a pronoun, a particle or an
# adverb ("working on taxes", "getting the books", "hoping you can", "running low on cash").
_AFTER_PARTICIPLE = _said("after_participle")

_TIME_NOUNS = _said("time_nouns")
_SOMEONE = _said("someone")
_PARTICLES = _said("particles")
_DETERMINERS = _said("determiners")
_OBJECT_OPENERS = word_list("asking_frames", "object_openers")  # "refund *my* order": a verb before it
# Words between an article and "one" that count or place it rather than qualify it ("the only one", "a
# table for one").
_NOT_QUALIFYING = _said("not_qualifying")
_AFTER_IS = _said("after_is")


# After a word in -s, these make it a verb: a particle ("messes up"), its object ("wears us out") or the
# subject of a clause it introduces ("swears they paid", "says we owe"). After a noun in -s they do not
# follow a determiner: "the invoices we sent" is a noun phrase.
_VERB_PARTICLES = _said("verb_particles")
_CLAUSE_SUBJECTS = _said("clause_subjects")


def _third_person_verb(prev: str, token: str, nxt: str) -> bool:
    """Whether `token` reads as a verb in the third person singular ("messes up", "swears they")."""
    if len(token) < 4 or not token.endswith("s") or token.endswith(("ss", "'s", "us", "is")):
        return False
    return (nxt in _VERB_PARTICLES or nxt in _CLAUSE_SUBJECTS) and prev not in _DETERMINERS and not prev.isdigit()


def _is_purpose(tokens: list[str]) -> bool:
    return len(tokens) > 1 and tokens[0] in _said("reason_openers") and tokens[1] in SUBJECTS


_COPULAS = _said("copulas")


def states_value(text: str) -> bool:
    """Whether a clause only says what a value is: a label of one or two words, a copula, an amount or a
    period ("the amount is $375.25", "total is $1,200", "the period is Q3"), and nothing else."""
    rest = without_values(text)
    if rest == text:
        return False
    tokens = words(rest)
    label = [t for t in tokens if t not in _DETERMINERS and t not in _COPULAS]
    return bool(tokens) and tokens[-1] in _COPULAS and 1 <= len(label) <= 2


def refers_back(text: str) -> bool:
    """Whether a clause points back at something named before ("look it up", "find that charge"); the
    words of a value or of a time are not a reference ("this weekend", "that morning")."""
    tokens = words(without_values(text))
    return any(t in REFERENCES and nxt not in _TIME_NOUNS for t, nxt in zip(tokens, [*tokens[1:], ""])) \
        or _one_for_a_thing(words(text))


def picks_one(text: str) -> bool:
    """Whether a clause ends in "one" standing for one of the things named before ("open the newest one").

    >>> picks_one("open the newest one"), picks_one("a table for one")
    (True, False)
    """
    return _one_for_a_thing(words(text))


def _one_for_a_thing(tokens: list[str]) -> bool:
    """Whether the clause ends in "one" standing for a thing named before ("find me a good one", "the
    cheapest one", "another one"), which values would read as a count: an article or a word it qualifies
    comes before it, not a preposition ("a table for one").

    >>> [_one_for_a_thing(words(t)) for t in ("could you pick a cheap one", "a table for one", "just the one")]
    [True, False, False]
    """
    if len(tokens) < 2 or tokens[-1] != "one":
        return False
    before, earlier = tokens[-2], tokens[-3] if len(tokens) > 2 else ""
    if before in _DETERMINERS | _said("one_pickers"):
        return earlier not in _NOT_QUALIFYING  # "just the one" counts
    return earlier in _DETERMINERS and before not in _NOT_QUALIFYING


def imperative_verb(text: str) -> str | None:
    """The verb an imperative clause opens with, past its fillers, a please and a "can you", where its object
    follows it as one does (an article, a possessive, a pronoun: "refund *my* order", "book *me* a cab"):
    "refund" of "ok, can you please refund my order"; None where the clause opens with no verb of its own (a
    question, a want, a statement) or with a word that may be a name ("Avatar versus Heat").

    >>> imperative_verb("ok, can you please refund my order"), imperative_verb("Kindly play some jazz")
    ('refund', 'play')
    >>> imperative_verb("what is my balance?"), imperative_verb("I need a cab"), imperative_verb("order 12 please")
    (None, None, None)
    """
    tokens = words(text)
    i = opening(tokens)
    if i >= len(tokens):
        return None
    word, after = tokens[i], tokens[i + 1] if i + 1 < len(tokens) else ""
    if not word.isalpha() or word in QUESTION_OPENERS | SUBJECTS | SUBORDINATORS | FILLERS | POLITE | FUNCTION_WORDS:
        return None
    return word if after in _OBJECT_OPENERS else None


def object_words(text: str, verb: str) -> str:
    """The words of the object after a clause's verb, past its opening words, to the first small word after
    them: "the ticket price" of "drop the ticket price of event 5"; "number" of "take a number off the list".

    >>> object_words("take a number off the safe list", "take"), object_words("book me a visit for Rex", "book")
    ('number', 'visit')
    """
    tokens = words(text)
    i = tokens.index(verb) + 1 if verb in tokens else len(tokens)
    while i < len(tokens) and tokens[i] in _OBJECT_OPENERS:
        i += 1
    j = i
    while j < len(tokens) and tokens[j] not in FUNCTION_WORDS | _PARTICLES:
        j += 1
    return " ".join(tokens[i:j])


def requests_action(text: str, vocabulary: Vocabulary | None = None) -> bool:
    """Whether a clause asks the agent to do something (an imperative, a want, "can you ..."), not a
    question about the business ("do you charge for this?", "are you open sundays?")."""
    tokens = words(text)
    return bool(tokens) and (tokens[after_fillers(tokens)] in (vocabulary or ENGLISH).request_verbs
                             or _WANT.search(text) is not None)


_HOW = re.compile(rf"\b{_any('how_asks')} {_any('first_persons')}\b|^(?:\w+ )?(?:{_any('me')} )?{_any('how_to')}\b", re.I)
# Asking whether to do something is asking for a judgement, whatever it names ("should we raise prices",
# "is it worth leasing", "is this wise"). So is asking what one should do, or how much of it ("how much should
# a bakery keep in reserve", "should my shop register as an LLC"): "should" asks for advice, not for records.
_WHETHER_TO = re.compile(rf"\b{_any('advice_modals')} {_any('first_persons')}\b"
                         rf"|\b{_any('judging_copulas')} {_any('judged_things')} (?:\w+ )?(?:a )?{_any('judgements')}\b"
                         rf"|\b{_any('advice_phrases')}\b|\b{_any('ought_modals')} {_any('generic_subjects')}\b"
                         rf"|\b{_any('how_much')}(?: \w+)? {_any('ought')}\b", re.I)
QuestionKind = Literal["how", "whether to"]  # a question about doing something, not for records
HOW, WHETHER_TO = get_args(QuestionKind)


def asks_how(text: str) -> bool:
    """Whether a clause asks how to do something ("how do i void a check", "show me how to ...")."""
    return _HOW.search(text.strip()) is not None


def question_kind(text: str) -> str | None:
    """WHETHER_TO for a question whether to do something ("should i rent or own the space"), else HOW for one how to
    do it ("how do i void a check"), else None."""
    if _WHETHER_TO.search(text):
        return WHETHER_TO
    return HOW if asks_how(text) else None


_ASKING_ONLY = _said("asking_only")


# What any report is made of: a clause asking only for these asks for nothing new ("i want the actual numbers").
_RESULTS = _said("results")
_OF_RESULTS = _said("of_results")


def asks_only_for_results(text: str, vocabulary: Vocabulary | None = None) -> bool:
    """Whether a clause asks for numbers, details or figures and names nothing they are of ("i want the actual
    numbers", "send me the details"): the request before it, said again, not a request of its own."""
    named = [t for t in words(without_values(text)) if t not in (vocabulary or ENGLISH).not_what_results_are_of]
    return bool(named) and all(t in _RESULTS for t in named)


def names_nothing(text: str, vocabulary: Vocabulary | None = None) -> bool:
    """Whether a clause is only the asking ("can you pull them", "pls update that too"): a request verb, a
    reference, who asks and who does; no word that could name what is asked for."""
    return all(t in (vocabulary or ENGLISH).only_asking for t in words(without_values(text)))


# A want whose object is to learn something ("i want to find out why it dropped", "we wanna check whether it paid off").
_WANTS_TO_LEARN = re.compile(rf"\b{_any('want_to')} {_any('learning_verbs')} {_any('question_words')}\b", re.I)
# The pro-form of a request already made ("could you handle that", "do this one").
_DO_THAT = re.compile(rf"\b{_any('restating')}\b", re.I)


def restates(text: str) -> bool:
    """Whether a clause asks again for what the clause before it asked ("could you do this one for us")."""
    return _DO_THAT.search(text) is not None


def classify(clauses: list[str], vocabulary: Vocabulary | None = None) -> list[Clause]:
    acts = [speech_act(c, vocabulary) for c in clauses]
    # A want to learn about what the story told ("..., i want to find out why it dropped") asks, like a bare phrase,
    # only for a goal it names clearly: what it wants to learn is mostly what the other clauses ask for.
    return [Clause(c, act != TELLS, refers_back(c),
                   act == ASKS_BY_PHRASE or act == ASKS and refers_back(c) and _WANTS_TO_LEARN.search(c) is not None)
            for c, act in zip(clauses, acts)]


# What a request to talk is about is its topic (an argument), not what it asks for: "a meeting to go over
# the budget" asks for a meeting.
_TOPIC = re.compile(rf"\s+{_any('topic_openers')}\s+(?P<topic>.*)$", re.I)


def topic(text: str) -> str | None:
    """What a request to talk is about ("book me a call about the P&L" -> "the P&L"), or None."""
    found = _TOPIC.search(text)
    return found.group("topic") if found and without_topic(text) is not None else None


# A request to talk: a talking verb, and a person to talk with or a medium ("speak to someone", "set up a
# video chat").
_TALK = re.compile(rf"\b{_any('talk_verbs')}\b", re.I)
_WITH = re.compile(rf"\b{_any('talk_with')}\b", re.I)
_TALK_PARTNER = re.compile(rf"\b{_any('partner_openers')} ([a-z]+)\b", re.I)


def asks_to_talk(text: str, vocabulary: Vocabulary | None = None) -> bool:
    """Whether the clause asks to talk with someone ("may I speak to a person", "put me through on the phone")."""
    if _TALK.search(text) is None:
        return False
    partners = (vocabulary or ENGLISH).talk_partners
    return _WITH.search(text) is not None or any(m.group(1).lower() in partners for m in _TALK_PARTNER.finditer(text))


def without_topic(text: str) -> str | None:
    """The clause without its topic ("set up a call about the budget" -> "set up a call"), or None when
    it names none."""
    head = _TOPIC.sub("", text)
    return head if head != text and len(words(head)) >= 2 else None


@dataclass(frozen=True)
class Vocabulary:
    """The open word lists the rules above read, English's with a pack's own added (`lexicon:` in
    pack.yaml, by the list's name): the verbs a request opens with, whom or over what one asks to talk."""
    request_verbs: frozenset[str] = REQUEST_VERBS
    talk_partners: frozenset[str] = TALK_PARTNERS

    @classmethod
    def of_words(cls, **added: set[str]) -> Vocabulary:
        return cls(**{name: getattr(ENGLISH, name) | frozenset(words) for name, words in added.items()})

    @classmethod
    def of(cls, pack) -> Vocabulary:
        """The pack's vocabulary, made once per loaded pack (the retriever and the session share it)."""
        if not hasattr(pack, "_speech"):
            object.__setattr__(pack, "_speech", cls(pack_word_list(pack, "request_verbs"),
                                                    pack_word_list(pack, "talk_partners")))
        return pack._speech

    @cached_property
    def asking_words(self) -> frozenset[str]:
        """The words that only ask: who asks and who does, the request verb, the fillers around it ("can you
        pull me")."""
        return FILLERS | QUESTION_OPENERS | SUBJECTS | self.request_verbs | _SOMEONE | _PARTICLES | _ASKING_ONLY

    @cached_property
    def only_asking(self) -> frozenset[str]:
        return self.asking_words | REFERENCES  # "pls update that too": the asking and what it points back at

    @cached_property
    def not_what_results_are_of(self) -> frozenset[str]:
        return self.asking_words | _DETERMINERS | _OF_RESULTS


ENGLISH = Vocabulary()
