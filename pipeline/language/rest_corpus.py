"""Requests people write to REST APIs, each with the operations it needs: goal pairs for the goal head
beside SGD's, so that what it learns of asking for a service also covers a company's own API.

SGD's services are a schema's intents ("FindRestaurants"); an imported OpenAPI document's goals are its
operations ("update a customer", "list a project's tasks"), named and described the way their authors wrote
them. A head trained on SGD alone judges every REST request from intents' words. The corpus file
(`data/rest_requests.json`) holds, for each API, each operation's words as `descriptions.goal_text` makes
them from the imported pack (what the head is shown at run time), and requests written from the API's
documentation with the operations they need (none: the API cannot serve it). It is made by
`nesyplan rest-corpus` (`authoring.request_corpus`) from the documents and a request file; the documents
themselves stay where they are (their sources are listed in `data/README.md`).

>>> corpus = RestCorpus(goals={"shop": {"list_orders": "list orders: List orders", "add_order": "add order"}},
...                     requests=[RestRequest("shop", "what did i order?", ["list_orders"])])
>>> [(p.text, p.label) for p in corpus.pairs(first_turn=10, foreign=0)[1]]
[('add order', 0), ('list orders: List orders', 1)]
"""

from __future__ import annotations

import json
import random
from dataclasses import asdict, dataclass, field
from pathlib import Path

from pipeline.language.sgd_corpus import GoalPair

REST_CORPUS = Path(__file__).parent / "data" / "rest_requests.json"
SERVICE_PREFIX = "rest:"  # an API's requests go by this name beside SGD's services (`--exclude rest:<api>`)


@dataclass
class RestRequest:
    api: str
    text: str
    goals: list[str]  # the operations it needs, as the imported pack names them; none: out of scope
    # the values it gives, as written, under the names the document gives their parameters or body fields:
    # what a reader of values for imported APIs can learn spans from (recorded for the APIs added on 2026-12-07, not the first 31)
    values: dict[str, str] = field(default_factory=dict)


@dataclass
class RestCorpus:
    goals: dict[str, dict[str, str]] = field(default_factory=dict)  # api -> goal -> its words
    requests: list[RestRequest] = field(default_factory=list)

    def services(self) -> list[str]:
        """Per request: the name its API goes by beside SGD's services."""
        return [SERVICE_PREFIX + r.api for r in self.requests]

    def pairs(self, first_turn: int, foreign: int = 3, seed: int = 0) -> tuple[list[str], list[GoalPair]]:
        """The requests' texts and their goal pairs, numbered as turns from `first_turn`: each request
        against every operation of its API (those it needs are positive), and `foreign` operations of
        other APIs (negative), as SGD's turns are paired (`sgd_corpus.goal_pairs`)."""
        rng = random.Random(seed)
        apis = sorted(self.goals)
        pairs = []
        for k, request in enumerate(self.requests):
            turn = first_turn + k
            pairs += [GoalPair(turn, words, int(goal in request.goals))
                      for goal, words in sorted(self.goals[request.api].items(), key=lambda kv: kv[1])]
            strangers = [a for a in apis if a != request.api]
            for stranger in rng.sample(strangers, min(foreign, len(strangers))):
                pairs.append(GoalPair(turn, rng.choice(sorted(self.goals[stranger].values())), 0))
        return [r.text for r in self.requests], pairs

    def save(self, path: Path = REST_CORPUS) -> Path:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps({"goals": self.goals, "requests": [_written(r) for r in self.requests]},
                                   indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
        return path


def _written(request: RestRequest) -> dict:
    """A request as the file holds it: no `values` where it gives none, so the file stays as it was."""
    row = asdict(request)
    if not row["values"]:
        del row["values"]
    return row


def read_corpus(path: Path = REST_CORPUS) -> RestCorpus:
    """The corpus file, or an empty corpus where there is none."""
    if not path.is_file():
        return RestCorpus()
    raw = json.loads(path.read_text(encoding="utf-8"))
    return RestCorpus(raw["goals"], [RestRequest(**r) for r in raw["requests"]])
