"""A role and what it is of: "the date of birth of the *director of* the film Heat" asks for something of a person
known only by a role in another thing. The words split into the role's noun (with the words that qualify it:
"lead actor"), the phrase of what it belongs to ("the film Heat"), and the rest ("Tell me the date of birth of
the ... ?"), which may ask something of the person, or only who it is.

A title in the phrase runs over capitalised words (and the small words between them: "Sea of Trees");
the words after it belong to the rest again ("... of Heat born?"). With no capitalised title, or with a
possessive ("Ana Ruiz's second film"), the phrase runs to the end.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from pipeline.language.picks import content_stems, stems
from pipeline.language.words import EDGE_WORDS, FUNCTION_WORDS, word_list
from pipeline.values.normalizers import _stem

_LINKS = word_list("role_links")
_SMALL = word_list("function_words") | EDGE_WORDS  # the language's own words ("show" is no such word: a noun too)
_GRAMMAR = {_stem(w) for w in _SMALL}
_CLAUSE_LINKS = word_list("relative_pronouns")  # ... followed by the verb of the clause ("that produced")
# A request's opening verb that asks for what follows and changes nothing ("list", "show"): no more asked.
_BARE_ASKING = word_list("request_verbs") - {w for change in ("create", "update", "delete")
                                             for w in word_list("operation_words", change)}
_TOKEN = re.compile(r"[A-Za-z0-9][A-Za-z0-9'’&:.-]*")


@dataclass
class RolePhrase:
    noun: str       # the role's noun as written ("actor")
    belongs: str    # what it is of ("the film Heat")
    before: str     # the words before the role ("Tell me the date of birth of the")
    after: str      # the words after what it is of ("born?")
    titled: bool    # what it is of has a title ("Heat"), not only words about it ("the film showing now")

    @property
    def rest(self) -> str:
        return f"{self.before} {self.after}".strip()

    def asks_more(self, also_known: set[str]) -> bool:
        """Whether the rest asks something of the role's holder (a date of birth, a photo), beyond who it is: a
        word before the role that asks for no call, or a word after what it is of ("... look?"). A request's
        opening verb that only asks for them ("List the films of ...") asks nothing more."""
        known = {_stem(w) for w in also_known}
        before = self.before.split()
        if before and before[0].lower() in _BARE_ASKING:
            before = before[1:]
        return bool(content_stems(" ".join(before)) - known or stems(self.after) - _GRAMMAR - known)


def role_phrase(words: str, nouns: set[str], plain: set[str] = frozenset()) -> RolePhrase | None:
    """The first of `nouns` in the words followed by a word that joins it to what it belongs to, or said as
    someone's ("Ana Ruiz's film": it belongs to Ana Ruiz); `plain`: words that are no part of a title though
    written in capitals (the API's own nouns: "TV").

    >>> p = role_phrase("Tell me the date of birth of the main actor of the film Heat?", {"actor"})
    >>> p.noun, p.belongs, p.rest
    ('actor', 'the film Heat', 'Tell me the date of birth of the ?')
    >>> role_phrase("How did the main actor of Heat look?", {"actor"}).asks_more(set())
    True
    >>> role_phrase("the cast of the third movie of the Blue Moon collection", {"movie"}, {"collection"}).belongs
    'the Blue Moon collection'
    >>> role_phrase("the director of Ana Ruiz's second film", {"director"}).belongs
    "Ana Ruiz's second film"
    >>> role_phrase("Where was the director of Sea of Trees born?", {"director"}).rest
    'Where was the born?'
    >>> role_phrase("I want the main actor in the top rated TV show", {"actor"}, {"tv"}).asks_more(set())
    False
    >>> role_phrase("List the films of the Blue Moon collection", {"film"}, {"collection"}).asks_more(set())
    False
    >>> p = role_phrase("Tell me about Ana Ruiz's latest film, please", {"film"})
    >>> p.noun, p.belongs, p.before, p.after, p.titled
    ('film', 'Ana Ruiz', 'Tell me about', ', please', True)
    >>> role_phrase("Tell me about Ana Ruiz's latest film awards", {"film"}) is None
    True
    >>> role_phrase("What is Ana Ruiz's best TV show?", {"tv"}) is None
    True
    >>> role_phrase("the films of Ana Ruiz", {"actor"}) is None
    True
    """
    tokens = list(_TOKEN.finditer(words))
    folded = {_stem(n.lower()) for n in nouns}
    owned = _owned(tokens, folded)
    for i, token in enumerate(tokens[:-2]):
        if owned is not None and owned[0] < i:
            break  # a possessive first ("Ana Ruiz's films of 2020")
        if _stem(token.group().lower()) not in folded or tokens[i + 1].group().lower() not in _LINKS:
            continue
        first = i  # the words that qualify the role ("lead") are the role's
        while first > 0 and tokens[first - 1].group().lower() not in FUNCTION_WORDS | _LINKS and \
                not tokens[first - 1].group()[0].isupper():
            first -= 1
        k = i + 2 + (tokens[i + 1].group().lower() in _CLAUSE_LINKS)
        end, titled = _title_end(tokens, k, plain)
        return RolePhrase(token.group(), words[tokens[i + 1].end():end].strip(),
                          words[:tokens[first].start()].strip(), words[end:].strip(), titled)
    return None if owned is None else _possessive(words, tokens, *owned)


_POSSESSIVE = re.compile(r"['’]s$|s['’]$")


def _owned(tokens: list[re.Match], folded: set[str]) -> tuple[int, int] | None:
    """(where, where its possessive is) of the first of the nouns said as someone's ("Ana Ruiz's *films*",
    "Ana Ruiz's latest *film*"): after a capitalised possessive, with at most two words that qualify it
    between them, and the last word of its phrase: in "Ana Ruiz's film awards" the film qualifies the noun
    after it."""
    for i, token in enumerate(tokens):
        if _stem(token.group().lower()) not in folded:
            continue
        if i + 1 < len(tokens) and tokens[i + 1].group().lower() not in _SMALL | _LINKS and \
                not re.search(r"[,.;:!?]", token.string[token.end():tokens[i + 1].start()]):
            continue
        for k in range(i - 1, max(i - 4, -1), -1):
            word = tokens[k].group()
            if _POSSESSIVE.search(word):
                return (i, k) if word[0].isupper() else None
            if word.lower() in FUNCTION_WORDS or word[0].isupper():
                break
    return None


def _possessive(words: str, tokens: list[re.Match], i: int, k: int) -> RolePhrase:
    """The role phrase of the noun at `i` said as someone's (the possessive at `k`): what it belongs to is the
    capitalised run ending at the possessive, without its "'s"."""
    noun, first = tokens[i], k
    while first > 0 and tokens[first - 1].group()[0].isupper():
        first -= 1
    owner = words[tokens[first].start():tokens[k].end()]
    return RolePhrase(noun.group(), _POSSESSIVE.sub("", owner), words[:tokens[first].start()].strip(),
                      words[noun.end():].strip(), True)


def _title_end(tokens: list[re.Match], start: int, plain: set[str]) -> tuple[int, bool]:
    """Where the phrase from `start` ends: after the run of capitalised words (a title) in it, else at the end;
    and whether it has one."""
    def titled(t: re.Match) -> bool:
        return (t.group()[0].isupper() or t.group()[0].isdigit()) and t.group().lower() not in plain
    j = next((j for j in range(start, len(tokens)) if titled(tokens[j])), None)
    if j is None or any(re.search(r"['’]s?$", t.group()) for t in tokens[start:]):
        return (len(tokens[-1].string) if tokens else 0), j is not None  # one's own thing ("Ana Ruiz's film")
    small = FUNCTION_WORDS | _LINKS
    while True:  # the title goes on over small words between capitalised ones ("The Owl and the Moon")
        gap = next((g for g in range(j + 1, min(j + 4, len(tokens))) if tokens[g].group().lower() not in small), None)
        if gap is None or not titled(tokens[gap]):
            break
        j = gap
    while j + 1 < len(tokens) and tokens[j + 1].group().lower() in plain:
        j += 1  # ... and over the API's noun for it ("Star Wars collection")
    return tokens[j].end(), True
