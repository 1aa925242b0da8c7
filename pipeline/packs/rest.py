"""REST naming facts every layer may read: a noun's singular, and the resource an identifier names.

>>> singular("companies"), singular("boards"), singular("addresses"), singular("status")
('company', 'board', 'address', 'status')
>>> identified("person_id"), identified("ServiceSid"), identified("query"), identified("id")
('person', 'service', '', '')
"""

from __future__ import annotations

import re

ID_SUFFIX = re.compile(r"(?:^|_)(?:id|sid|uuid|key)$")


def singular(word: str) -> str:
    """`companies` -> company, `boards` -> board, `addresses` -> address; `status` stays."""
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith(("sses", "xes", "ches", "shes")):
        return word[:-2]
    if word.endswith("s") and not word.endswith(("ss", "us", "is")) and len(word) > 3:
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
    core = re.sub(r"_?(?:id|sid|uuid|key)$", "", name).strip("_")
    return singular(core.rsplit("_", 1)[-1]) if core else ""
