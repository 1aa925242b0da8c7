"""The Schema-Guided Dialogue (SGD) schema format: services with slots and intents, read strictly
(an unknown key is an error that names its service, intent or slot and the closest known key).

>>> snake("FindRestaurants"), pack_name("Restaurants_2")
('find_restaurants', 'restaurants_2')
"""

from __future__ import annotations

import difflib
import json
import re
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError


class SgdSchemaError(Exception):
    """A schema or overlay that cannot become a pack; the message names the service, intent and slot."""


class StrictModel(BaseModel):
    model_config = ConfigDict(extra="forbid")


class SgdSlot(StrictModel):
    name: str
    description: str = ""
    is_categorical: bool = False
    possible_values: list[str] = []
    type: str | None = Field(None, description="our addition: the normaliser, instead of the inferred one")


class SgdIntent(StrictModel):
    name: str
    description: str = ""
    is_transactional: bool = False
    required_slots: list[str] = []
    optional_slots: dict[str, str] = {}
    result_slots: list[str] = []


class SgdService(StrictModel):
    service_name: str
    description: str = ""
    slots: list[SgdSlot]
    intents: list[SgdIntent]


def snake(name: str) -> str:
    """FindRestaurants -> find_restaurants; Restaurants_2 -> restaurants_2."""
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name).lower()


def pack_name(service: str) -> str:
    return snake(service)


def load_schema(path: Path) -> list[SgdService]:
    """The services of an SGD schema file; a service that does not fit the format is refused by name."""
    try:
        raw = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise SgdSchemaError(f"{path}: not a readable JSON schema: {exc}") from None
    if not isinstance(raw, list):
        raise SgdSchemaError(f"{path}: an SGD schema is a JSON list of services")
    services = []
    for i, item in enumerate(raw):
        name = item.get("service_name", f"service #{i + 1}") if isinstance(item, dict) else f"service #{i + 1}"
        try:
            services.append(SgdService.model_validate(item))
        except ValidationError as exc:
            where = "; ".join(f"{_path(item, e['loc'])}: {_message(e)}" for e in exc.errors())
            raise SgdSchemaError(f"{path}: {name}: {where}") from None
    return services


def _path(item: dict, loc: tuple) -> str:
    """A pydantic location in words: slots[2] is the slot's name when it has one."""
    parts, node = [], item
    for key in loc:
        if isinstance(key, int) and isinstance(node, list) and key < len(node):
            node = node[key]
            parts[-1] = f"{parts[-1][:-1]} {node.get('name', key)!r}" if isinstance(node, dict) else f"{parts[-1]}[{key}]"
        else:
            node = node.get(key) if isinstance(node, dict) else None
            parts.append(str(key))
    return " ".join(parts)


_KEYS = sorted({*SgdService.model_fields, *SgdSlot.model_fields, *SgdIntent.model_fields})


def _message(error: dict) -> str:
    if error["type"] == "extra_forbidden":
        return f"unknown key{closest_hint(str(error['loc'][-1]), _KEYS)}"
    return error["msg"]


def closest_hint(name: str, known: list[str]) -> str:
    close = difflib.get_close_matches(name, known, n=1)
    return f" (closest: {close[0]!r})" if close else ""
