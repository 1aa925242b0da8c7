"""Domain packs: `domains/<name>/pack.yaml`, `asp_rules/<name>/*.lp`, `pddl/<name>/domain.pddl`.

A pack is loaded once into a typed `Pack`; every stage reads what it needs from it. Line numbers of the
YAML keys are kept so that `nesyplan validate` can point at the line that is wrong.
"""

from __future__ import annotations

import difflib
import os
import re
from contextlib import contextmanager
from functools import cached_property, lru_cache
from pathlib import Path
from typing import Literal, get_args

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from pipeline.packs.flows import FlowDomain

PROJECT_ROOT = Path(__file__).resolve().parents[2]
NAME = re.compile(r"[a-z][a-z0-9_]*")  # a pack, goal, API or argument name
BooleanValue = Literal["true", "false"]  # a yes/no argument's values, as JSON writes them
BOOLEAN_VALUES: tuple[str, ...] = get_args(BooleanValue)


def packs_root() -> Path:
    """Where `domains/`, `asp_rules/` and `pddl/` live: NESYPLAN_PACKS_DIR, else this checkout."""
    return Path(os.environ.get("NESYPLAN_PACKS_DIR", PROJECT_ROOT)).resolve()


@contextmanager
def using_packs_root(root: Path):
    """Load packs from `root` inside the block (a generator validating what it wrote in a scratch folder;
    an evaluation over packs it imported). Not for threads: it sets NESYPLAN_PACKS_DIR."""
    before = os.environ.get("NESYPLAN_PACKS_DIR")
    os.environ["NESYPLAN_PACKS_DIR"] = str(root)
    try:
        yield Path(root)
    finally:
        if before is None:
            os.environ.pop("NESYPLAN_PACKS_DIR", None)
        else:
            os.environ["NESYPLAN_PACKS_DIR"] = before


class StrictModel(BaseModel):
    """A key the format does not have is an error (a typo such as `synonym:` would otherwise drop its
    content without a word)."""
    model_config = ConfigDict(extra="forbid")


class PackError(Exception):
    """A pack that cannot be loaded; `problems` holds (file, line, message) for each reason."""

    def __init__(self, message: str, problems: list[tuple[str, int | None, str]] | None = None):
        super().__init__(message)
        self.problems = problems or [("", None, message)]


class Goal(StrictModel):
    api: str
    description: str
    examples: list[str] = []
    workflow: list[str] = Field([], description="a workflow goal: the APIs it carries out, in order; its IR "
                                               "gives the workflow's slots, and is expanded into one call per API")
    internal: bool = Field(False, description="one step of a workflow goal: never asked for by itself")


class HttpBinding(StrictModel):
    """How the `http` executor carries an API out: a request under the pack's base URL; the call's output
    is one field of the JSON answer."""
    method: Literal["GET", "POST", "PUT", "PATCH", "DELETE"] = "POST"
    path: str = Field(description="URL path; `{argument}` is replaced by that argument's value")
    body: dict[str, str] = Field({}, description="JSON body field -> argument (POST, PUT, PATCH)")
    query: dict[str, str] = Field({}, description="query parameter -> argument")
    headers: dict[str, str] = Field({}, description="request header -> argument")
    form: bool = Field(False, description="the body is sent as a form (application/x-www-form-urlencoded), "
                                          "not JSON")
    multipart: bool = Field(False, description="the form is sent as multipart/form-data (an upload's fields)")
    types: dict[str, Literal["integer", "number", "boolean", "array", "date", "dates", "digits"]] = Field(
        {}, description="argument -> the JSON type its value is sent as in a JSON body (else a string; an "
                        "array from a comma-separated value); a date is sent as YYYY-MM-DD, in a query too, "
                        "dates as a list of them, digits as a string of its digits alone")
    output: str = Field("", description="the field of the JSON answer that is the call's output (of its first "
                                        "item when the answer is a list; `results[].id`: the id of the first "
                                        "item of its `results`); empty: the answer has none to give")
    outputs: dict[str, str] = Field({}, description="argument -> the field of the answer a later argument of "
                                                    "that name takes instead of the output (`networks[].id` for "
                                                    "a network_id): another thing's identifier inside it")
    auth: str = Field("", description="the name of the pack's `http_auths` entry this API is sent with; empty: "
                                      "the pack's `http_auth`")


class HttpAuth(StrictModel):
    """How every request of the pack proves who sends it; the secret is read from the environment when the
    call runs, never written in the pack."""
    scheme: Literal["bearer", "basic", "header", "query"]
    name: str = Field("", description="the header or query parameter an API key goes in")
    env: str = Field(description="the environment variable holding the token, the key, or user:password")


class RestSemantics(StrictModel):
    """What an imported REST operation does, and to what (`authoring.rest_semantics`)."""
    action: Literal["create", "read", "list", "search", "update", "delete", "action"]
    resource: str = ""
    finds: str = Field("", description="a search or a list: where its answer holds the ids of its resource "
                                       "(`results[].id`); the planner may call it to find an id the request "
                                       "names instead of asking for it")
    picks: list[str] = Field([], description="a list's words for which of its resource's things it lists "
                                             "(`/movie/top_rated`: top, rated): a request that says them finds "
                                             "the thing it names by this list rather than by a search")
    selector: str = Field("", description="a list of whichever resource one argument names (`/trending/{media_type}`): "
                                          "that argument")
    selects: dict[str, str] = Field({}, description="the selector's values -> the resource each lists (`tv` -> tv): "
                                                    "it feeds only the ids of the resource its words name")
    one: bool = Field(False, description="it needs no value and answers one thing, not a list of them (`/me`, "
                                        "`/movie/latest`): the one there is now; where its path names no resource "
                                        "(`/me`: a read of the current user) the planner may call it to find that "
                                        "thing's id when the words name nothing to find it through")
    answers: list[str] = Field([], description="what its answer holds (its fields but identifiers: a film's credits "
                                               "`cast`, `crew`): words retrieval matches a request with beside "
                                               "the operation's own")


class Api(StrictModel):
    arguments: list[str] = Field([], description="every argument it takes, in call order (optional ones too)")
    produces: str
    description: str = ""
    optional: dict[str, str | None] = Field({}, description="argument -> its default: the plan never asks for "
                                            "an optional argument; a value the user gives replaces the default, "
                                            "else the call carries the default (null: the call leaves it out)")
    operation: str = Field("", description="the name the service itself gives this call (an SGD intent), when "
                                           "it differs from the API's")
    returns: list[str] = Field([], description="the fields of the call's answer (SGD result slots); a later "
                                               "argument of the same name takes that field of the output")
    after: list[str] = Field([], description="APIs that must have run before this one (a PDL precondition)")
    effects: bool = Field(False, description="it changes the world (books, pays, sends, creates, updates): in a "
                                             "conversation the agent reads its values back and runs it only on a yes")
    http: HttpBinding | None = None
    rest: RestSemantics | None = None


class ArgumentType(StrictModel):
    description: str = ""
    question: str | None = Field(None, description="what the agent asks when the value is missing (else a "
                                                   "sentence made from the description)")
    normalizer: str
    values: list[str] = []
    synonyms: dict[str, list[str]] = {}
    examples: list[str] = []
    accepts_output: list[str] = []


class IrExtra(StrictModel):
    description: str
    gives: list[str]
    normalizer: str = Field(description="how its words are read: 'period' or 'full_name'")
    examples: list[str] = []


class PackSpec(StrictModel):
    """pack.yaml as written."""

    name: str
    description: str = ""
    goals: dict[str, Goal]
    apis: dict[str, Api]
    arguments: dict[str, ArgumentType] = {}
    ir_extra: dict[str, IrExtra] = {}
    errors: dict[str, str] = Field({}, description="error atom name -> what it tells the user")
    out_of_scope: list[str] = Field([], description="requests near the domain that it does not serve (a "
                                    "payment, a refund): a clause closer to one of these than to every goal "
                                    "asks for nothing here")
    flow: dict | None = Field(None, description="flow packs: the APIs and each goal's (intent's) flow steps")
    http_base_url: str | None = Field(None, description="where the `http` executor sends the APIs' requests "
                                                          "(NESYPLAN_HTTP_BASE_URL overrides it)")
    http_auth: HttpAuth | None = None
    http_auths: dict[str, HttpAuth] = Field({}, description="other credentials by name, for the APIs whose "
                                                            "`http.auth` names one (a spec's reads by API key, "
                                                            "its writes by OAuth token)")
    max_goals: int = Field(3, ge=1, le=3, description="goals one request may ask for (flow packs: 1, one "
                                                      "conversation follows one flow)")
    lexicon: dict[str, list[str]] = Field({}, description="words this pack adds to a list of the English layer "
                                          "(pipeline/language/lexicon/NAME.yaml), by the list's name: its "
                                          "domain's words, so the English lists stay domain-free")


class Pack(BaseModel):
    spec: PackSpec
    yaml_path: Path
    rule_files: list[Path]
    domain_pddl: Path
    examples_dir: Path
    key_lines: dict[str, int] = Field(default_factory=dict, description="dotted YAML key -> line (1-based)")

    @property
    def name(self) -> str:
        return self.spec.name

    @cached_property
    def normalizers(self) -> dict[str, str]:
        """argument -> the normaliser that reads it."""
        return {name: spec.normalizer for name, spec in self.spec.arguments.items()}

    @cached_property
    def flow_domain(self) -> FlowDomain | None:
        """A flow pack's APIs and flows, or None for a pack of single calls."""
        if self.spec.flow is None:
            return None
        return FlowDomain(name=self.spec.name, **self.spec.flow)

    def ir_predicates(self) -> dict[str, int]:
        """The only predicates an IR may use, with their arity."""
        names = ["goal", *self.spec.arguments, *self.spec.ir_extra]
        return {f"_{name}": 2 for name in names}

    def value_spec(self, predicate: str) -> ArgumentType | IrExtra:
        """How an IR predicate's words are read: its argument type, or the period-like fact's."""
        return self.spec.arguments.get(predicate) or self.spec.ir_extra[predicate]

    def has_examples(self) -> bool:
        """Whether some goal a request may ask for has example requests (a pack written by hand, not made
        from a schema alone)."""
        return any(self.spec.goals[g].examples for g in self.requestable_goals())

    def requestable_goals(self) -> list[str]:
        """The goals a request may ask for (not the steps of a workflow)."""
        return [name for name, goal in self.spec.goals.items() if not goal.internal]

    def goal_takes(self, goal: str) -> list[str]:
        """The arguments a goal's IR may give: its API's, or for a workflow goal its steps' slots (every
        argument of its APIs that no earlier step produces), in order."""
        spec = self.spec.goals[goal]
        if not spec.workflow:
            return list(self.spec.apis[spec.api].arguments)
        produced, slots = set(), []
        for api in spec.workflow:
            slots += [a for a in self.spec.apis[api].arguments if a not in produced and a not in slots]
            produced.add(self.spec.apis[api].produces)
        return slots

    def api_of_goal(self, goal: str) -> str:
        return self.spec.goals[goal].api

    def goal_has_effects(self, goal: str) -> bool:
        """Whether the goal's API changes something (a booking, a payment), not only reads."""
        return self.spec.apis[self.spec.goals[goal].api].effects

    @cached_property
    def is_rest_api(self) -> bool:
        """Whether its APIs are a REST API's operations (imported with their REST semantics)."""
        return any(api.rest is not None for api in self.spec.apis.values())

    def goal_of_api(self, api: str) -> str:
        for name, goal in self.spec.goals.items():
            if goal.api == api and not goal.workflow:
                return name
        raise KeyError(api)

    def api_of_operation(self, operation: str) -> str | None:
        """The API a service's own operation name (an SGD intent) is, or None."""
        return next((name for name, api in self.spec.apis.items() if (api.operation or name) == operation), None)

    def line_of(self, dotted_key: str) -> int | None:
        return self.key_lines.get(dotted_key)

    def facts(self) -> str:
        """The pack's vocabulary as ASP facts, so the rules never repeat what pack.yaml says."""
        lines = []
        for name, goal in self.spec.goals.items():
            lines.append(f"goal_api({name}, {goal.api}).")
        for api, spec in self.spec.apis.items():
            lines.append(f"produces({api}, {spec.produces}).")
            lines += [f"api_arg({api}, {i}, {arg})." for i, arg in enumerate(spec.arguments, 1)]
            lines += [f"optional_arg({api}, {arg})." for arg in spec.optional]
        for arg, spec in self.spec.arguments.items():
            lines += [f"accepts_output({arg}, {kind})." for kind in spec.accepts_output]
        for extra, spec in self.spec.ir_extra.items():
            lines.append(f"ir_extra({extra}).")
            lines += [f"ir_extra_gives({extra}, {arg})." for arg in spec.gives]
        return "\n".join(lines) + "\n"


def key_lines(node: yaml.Node | None, prefix: str = "") -> dict[str, int]:
    """Dotted key (list items by index: `slots.2.type`) -> its 1-based line in the YAML text."""
    lines: dict[str, int] = {}
    if isinstance(node, yaml.MappingNode):
        for key, value in node.value:
            dotted = f"{prefix}.{key.value}" if prefix else str(key.value)
            lines[dotted] = key.start_mark.line + 1
            lines.update(key_lines(value, dotted))
    elif isinstance(node, yaml.SequenceNode):
        for i, item in enumerate(node.value):
            dotted = f"{prefix}.{i}" if prefix else str(i)
            lines[dotted] = item.start_mark.line + 1
            lines.update(key_lines(item, dotted))
    return lines


def line_of(lines: dict[str, int], dotted: str) -> int:
    """The key's line, or its nearest parent's; the document's first line for a missing top-level key."""
    return next((lines[k] for k in _prefixes(dotted) if k in lines), 1)


def validation_problems(exc: ValidationError, lines: dict[str, int], known_keys: list[str]) -> list[tuple[int, str]]:
    """(line, message) for each error of a YAML document's validation; an unknown key names the closest
    key the format has."""
    out = []
    for err in exc.errors():
        dotted = ".".join(str(p) for p in err["loc"])
        message = err["msg"]
        if err["type"] == "extra_forbidden":
            message = "unknown key" + did_you_mean(str(err["loc"][-1]), known_keys)
        out.append((line_of(lines, dotted), f"{dotted}: {message}"))
    return out


def did_you_mean(name: str, known) -> str:
    """' (did you mean 'x'?)' for the closest known name, or ''."""
    close = difflib.get_close_matches(name, list(known), n=1)
    return f" (did you mean {close[0]!r}?)" if close else ""


def model_keys(*models: type[BaseModel]) -> list[str]:
    """The keys a file may write for the models' fields: their names and their aliases."""
    return sorted({key for model in models for name, field in model.model_fields.items()
                   for key in (name, field.alias) if key})


def pack_names() -> list[str]:
    root = packs_root() / "domains"
    return sorted(p.parent.name for p in root.glob("*/pack.yaml"))


_HEADER_LINE = re.compile(r"^% (\w+): (.*)$", re.MULTILINE)  # an example's `% key: value` lines


def examples(domain: str) -> list[tuple[str, str, str]]:
    """(query, today, IR file) from the `% query:` / `% today:` header of each example."""
    found = []
    for file in sorted(load_pack(domain).examples_dir.glob("*.lp")):
        text = file.read_text(encoding="utf-8")
        header: dict[str, str] = {}
        for key, value in _HEADER_LINE.findall(text):
            header.setdefault(key, value.strip())
        if "query" in header and "today" in header:
            found.append((header["query"], header["today"], str(file)))
    return found


def load_pack(name: str) -> Pack:
    """Load a pack by name; raise PackError naming the file and line of what is wrong."""
    if not NAME.fullmatch(name or ""):
        raise PackError(f"unknown domain {name!r}: a domain name is lower case letters, digits and _")
    root = packs_root()
    if not (root / "domains" / name / "pack.yaml").is_file():
        known = ", ".join(pack_names()) or "none"
        raise PackError(f"unknown domain {name!r} (installed: {known})")
    return load_pack_at(root, name)


def load_pack_at(root: Path, name: str) -> Pack:
    """Load a pack from a packs root of its own (a stored version this machine keeps), not the one
    NESYPLAN_PACKS_DIR names."""
    yaml_path = Path(root) / "domains" / name / "pack.yaml"
    if not yaml_path.is_file():
        raise PackError(f"unknown domain {name!r} (not under {root})")
    return _load_pack_cached(str(yaml_path), yaml_path.stat().st_mtime_ns)


@lru_cache(maxsize=32)
def _load_pack_cached(yaml_file: str, _mtime: int) -> Pack:
    yaml_path = Path(yaml_file)
    name = yaml_path.parent.name
    root = yaml_path.parent.parent.parent
    text = yaml_path.read_text(encoding="utf-8")
    try:
        node = yaml.compose(text)
        raw = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 1 if mark else 1
        raise PackError(f"{yaml_path}: invalid YAML: {exc}", [(str(yaml_path), line, f"invalid YAML: {exc}")])
    lines = key_lines(node)
    try:
        spec = PackSpec.model_validate(raw or {})
    except ValidationError as exc:
        problems = [(str(yaml_path), line, message) for line, message in
                    validation_problems(exc, lines, model_keys(PackSpec, Goal, Api, HttpBinding, HttpAuth, ArgumentType, IrExtra))]
        raise PackError(f"{yaml_path}: {problems[0][2]}", problems)
    problems = [(str(yaml_path), line_of(lines, key), message) for key, message in _broken_references(spec)]
    if problems:
        raise PackError(f"{yaml_path}: {problems[0][2]}", problems)
    if spec.name != name:
        raise PackError(f"{yaml_path}: name {spec.name!r} differs from its folder {name!r}",
                        [(str(yaml_path), lines.get("name", 1), f"name {spec.name!r} is not the folder {name!r}")])
    return Pack(spec=spec, yaml_path=yaml_path,
                rule_files=sorted((root / "asp_rules" / name).glob("*.lp")),
                domain_pddl=root / "pddl" / name / "domain.pddl",
                examples_dir=yaml_path.parent / "examples",
                key_lines=lines)


def _broken_references(spec: PackSpec) -> list[tuple[str, str]]:
    """(dotted key, message) for each name a goal or an API gives that the pack does not define: every
    stage looks these up, so a pack with one does not load."""
    out = []
    for name, goal in spec.goals.items():
        for i, api in enumerate([goal.api, *goal.workflow]):
            if api not in spec.apis:
                key = f"goals.{name}.api" if i == 0 else f"goals.{name}.workflow.{i - 1}"
                out.append((key, f"goal {name} names unknown api {api!r}"))
    for name, api in spec.apis.items():
        out += [(f"apis.{name}.after", f"api {name} comes after unknown api {before!r}")
                for before in api.after if before not in spec.apis]
        out += [(f"apis.{name}.optional.{argument}", f"api {name}: optional argument {argument!r} is not one of "
                                                     f"its arguments ({', '.join(api.arguments) or 'none'})")
                for argument in api.optional if argument not in api.arguments]
    return out


def _prefixes(dotted: str) -> list[str]:
    parts = dotted.split(".")
    return [".".join(parts[:i]) for i in range(len(parts), 0, -1)]
