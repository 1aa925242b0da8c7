"""REST naming facts every layer may read: a noun's singular, and the resource an identifier names.

>>> singular("companies"), singular("boards"), singular("addresses"), singular("status")
('company', 'board', 'address', 'status')
>>> identified("person_id"), identified("ServiceSid"), identified("query"), identified("id")
('person', 'service', '', '')
>>> identified("album_ids"), identified("track_uris"), identified("ids"), identified("kids")
('album', 'track', '', '')
>>> path_identifiers("/v2/Services/{service_sid}/RateLimits/{rate_limit_sid}/Buckets/{sid}")
{'service_sid': 'service', 'rate_limit_sid': 'limit', 'sid': 'bucket'}
"""

from __future__ import annotations

import re

from pipeline.values.lexicon import words_of

# an identifier's name ends so; a list of them in plural (`album_ids`), and a URI names one as well (`track_uri`)
ID_SUFFIX = re.compile(r"(?:^|_)(?:sid|key|ids?|uuids?|uris?)$")
LISTED = re.compile(r"(?:^|_)(?:ids|uuids|uris)$")  # the name of a list of identifiers


def singular(word: str) -> str:
    """`companies` -> company, `boards` -> board, `addresses` -> address; `status` stays."""
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith(words_of("plurals", "es_after")):
        return word[:-2]
    if word.endswith("s") and not word.endswith(words_of("plurals", "kept")) and len(word) > 3:
        return word[:-1]
    return word


def snake_words(text: str) -> str:
    """`ServiceSid` -> service_sid, `movie-credits` -> movie_credits."""
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", text).replace("-", "_").lower()


def identified(argument: str) -> str:
    """The resource an identifier argument's name says it identifies; '' for an argument that is none."""
    name = snake_words(argument)
    if not ID_SUFFIX.search(name):
        return ""
    core = re.sub(r"_?(?:sid|key|ids?|uuids?|uris?)$", "", name).strip("_")
    return last_noun(core) if core else ""


def last_noun(snake: str) -> str:
    """The noun a snake_case name ends with, singular: `rate_limits` -> limit."""
    return singular(snake.rsplit("_", 1)[-1])


def path_identifiers(path: str) -> dict[str, str]:
    """Each argument of a URL path that stands right after a literal part, and the resource that part
    names (its last word, singular): `/services/{sid}` identifies a service by sid, whatever sid's own name
    says, so the user names it by the resource's word ("service VA12...")."""
    parts = [p for p in path.split("/") if p]
    return {part[1:-1]: last_noun(snake_words(before))
            for before, part in zip(parts, parts[1:])
            if part.startswith("{") and part.endswith("}") and not before.startswith("{")}


def paged_resource(path: str) -> str:
    """The resource whose page an answer holds an identifier in, by the key the page is under
    (`tracks.items[].id` -> track); '' where the identifier is in no page of an object's key.

    >>> paged_resource("tracks.items[].id"), paged_resource("top_tracks.items[].id"), paged_resource("results[].id")
    ('track', 'track', '')
    """
    keys = path.split(".")
    return last_noun(snake_words(keys[-3].removesuffix("[]"))) if len(keys) >= 3 and keys[-2].endswith("[]") else ""


def words_after_the_identifier(path: str) -> list[str]:
    """The words of a path after its first parameter, lower case; none without one.

    >>> words_after_the_identifier("/tv/{tv_id}/top_rated"), words_after_the_identifier("/tv/popular")
    (['top', 'rated'], [])
    """
    found = re.search(r"\{[^}]+\}(.*)$", path or "")
    return re.findall(r"[a-z]+", re.sub(r"\{[^}]*\}", "", found.group(1).lower())) if found else []
