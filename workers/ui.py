"""The web page (`/ui`): recent runs, one run as the pipeline (each stage's artifact and time, ASP and PDDL
highlighted, the plan as a dataflow graph), a form to submit, and conversations. Server-rendered with
jinja2; the page loads nothing from outside the server (its one stylesheet is ours, the graph is SVG made
here). With API keys configured it asks for one once and keeps a session id (`ui_sessions.py`) in an
HttpOnly, SameSite=Strict cookie (Secure over HTTPS), never the key; /ui/logout ends it. A form post from
another site's page is refused by its Origin (keyless mode has no cookie to guard it)."""

from __future__ import annotations

import html
import re
from urllib.parse import urlsplit
from datetime import date
from pathlib import Path

from fastapi import APIRouter, Depends, Form, HTTPException, Request
from fastapi.responses import HTMLResponse, PlainTextResponse, RedirectResponse
from fastapi.templating import Jinja2Templates
from markupsafe import Markup

from workers.packs_api import visible_domains
from pipeline.records import Plan, Run
from pipeline.settings import settings
from workers.api import TRANSLATORS, PlanRequest, get_owned_run, get_owned_session, owned_artifact, submit
from workers.artifacts import ARTIFACTS
from workers.auth import LOCAL, address, count_failed_key, key_digests, key_id, rate_limit, refused_address
from workers.ui_sessions import caller_of, close_session, open_session

HERE = Path(__file__).resolve().parent
COOKIE = "nesyplan_session"
router = APIRouter(prefix="/ui", include_in_schema=False)
templates = Jinja2Templates(directory=HERE / "templates" / "ui")


class NeedsKey(Exception):
    """A page asked for with no valid key: the handler sends the browser to the key form."""


def page_caller(request: Request) -> str:
    from workers.tasks import store

    if not key_digests():
        rate_limit(f"page:{address(request)}")
        return LOCAL
    who = caller_of(store().client, request.cookies.get(COOKIE, ""))
    if who is None or who not in {digest[:16] for digest in key_digests()}:  # a key since removed ends it
        raise NeedsKey
    rate_limit(who)  # the pages count against the key's rate, as its API calls do
    return who


def same_origin(request: Request) -> None:
    """Refuse a form post that another site's page sent. A browser says so in Sec-Fetch-Site, else in
    Origin (`null` when that page hides where it is: refused too; our pages send their origin, their
    referrer policy being same-origin). A client that is no browser sends neither, and needs a key."""
    site = request.headers.get("sec-fetch-site")
    origin = request.headers.get("origin")
    foreign = site not in (None, "same-origin", "none") or (
        origin is not None and urlsplit(origin).netloc != request.headers.get("host", ""))
    if foreign:
        raise HTTPException(status_code=403, detail="a form of another site cannot post here")


# --- highlighting -------------------------------------------------------------------------------------
_ASP = re.compile(r'(?P<comment>%[^\n]*)|(?P<string>"(?:[^"\\\n]|\\.)*")|(?P<error>\berror\b)'
                  r"|(?P<predicate>\b_?[a-z][A-Za-z0-9_]*(?=\())|(?P<number>\b\d+\b)")
_PDDL = re.compile(r"(?P<comment>;[^\n]*)|(?P<keyword>:[a-z-]+)|(?P<variable>\?[\w-]+)"
                   r"|(?P<predicate>(?<=\()[a-z][\w-]*)")


def highlight(text: str | None, language: str) -> Markup:
    """HTML of the text with spans per token class (comments, strings, predicates, PDDL keywords)."""
    if not text:
        return Markup("")
    pattern = _ASP if language == "asp" else _PDDL
    out, last = [], 0
    for match in pattern.finditer(text):
        out.append(html.escape(text[last:match.start()]))
        out.append(f'<span class="tok-{match.lastgroup}">{html.escape(match.group())}</span>')
        last = match.end()
    out.append(html.escape(text[last:]))
    return Markup("".join(out))


# --- the plan as a dataflow graph ----------------------------------------------------------------------
def plan_graph(plan: Plan | None) -> Markup:
    """SVG: a node per call, a dashed node per `get_info_api` question; an edge per ref (output -> the call
    that takes it) and per question (-> the call that needs the answer). Columns by dataflow depth."""
    if plan is None or not plan.calls:
        return Markup("")
    depth: list[int] = []  # a call's column: after every call it takes an output from
    for call in plan.calls:
        refs = [a.ref for a in call.args.values() if a.ref is not None and a.ref < len(depth)]
        depth.append(1 + max((depth[r] for r in refs), default=-1))
    # A question sits in the column before its call: a first call with a question moves everything right.
    if any(d == 0 and any(a.get_info for a in c.args.values()) for d, c in zip(depth, plan.calls)):
        depth = [d + 1 for d in depth]
    width, height, gap_x, gap_y = 190, 44, 70, 26
    rows: dict[int, int] = {}
    nodes, edges, boxes = [], [], {}

    def place(column: int) -> tuple[int, int]:
        row = rows.get(column, 0)
        rows[column] = row + 1
        return 20 + column * (width + gap_x), 20 + row * (height + gap_y)

    for i, call in enumerate(plan.calls):
        x, y = place(depth[i])
        boxes[i] = (x, y)
        label = f"{call.var} = {call.api}"
        # Hovering a call lists what it carries; an optional argument's default is marked as one.
        carried = [f"{name} = {arg.value}" + (" (default)" if arg.default else "")
                   for name, arg in call.args.items() if arg.value is not None]
        defaults = " ".join(name for name, arg in call.args.items() if arg.default)
        nodes.append(f'<g class="node call" data-call="{i}" data-defaults="{html.escape(defaults)}"><rect x="{x}" '
                     f'y="{y}" width="{width}" height="{height}" rx="6"/><text x="{x + 10}" y="{y + 27}">'
                     f"{html.escape(label[:26])}</text><title>{html.escape(chr(10).join([label, *carried]))}</title></g>")
    for i, call in enumerate(plan.calls):
        x, y = boxes[i]
        for name, arg in call.args.items():
            if arg.ref is not None and arg.ref in boxes:
                sx, sy = boxes[arg.ref]
                edges.append(f'<line class="edge ref" x1="{sx + width}" y1="{sy + height / 2}" x2="{x}" '
                             f'y2="{y + height / 2}" marker-end="url(#arrow)"><title>{html.escape(name)}</title></line>')
            elif arg.get_info is not None:
                ax, ay = place(depth[i] - 1)
                nodes.append(f'<g class="node ask" data-ask="{html.escape(arg.get_info)}"><rect x="{ax}" y="{ay}" '
                             f'width="{width}" height="{height}" rx="6"/><text x="{ax + 10}" y="{ay + 27}">'
                             f'ask: {html.escape(arg.get_info[:20])}</text></g>')
                edges.append(f'<line class="edge asked" x1="{ax + width}" y1="{ay + height / 2}" x2="{x}" '
                             f'y2="{y + height / 2}" marker-end="url(#arrow)"/>')
    total_w = 40 + (max(rows) + 1) * (width + gap_x)
    total_h = 40 + max(rows.values()) * (height + gap_y)
    return Markup(f'<svg class="plan-graph" xmlns="http://www.w3.org/2000/svg" width="{total_w}" height="{total_h}">'
                  '<defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="8" markerHeight="8" '
                  'orient="auto"><path d="M0,0 L10,5 L0,10 z"/></marker></defs>'
                  + "".join(edges) + "".join(nodes) + "</svg>")


templates.env.globals.update(highlight=highlight, plan_graph=plan_graph, artifacts=list(ARTIFACTS))
ENDED = ("succeeded", "failed")


def _render(request: Request, name: str, **context) -> HTMLResponse:
    signed_in = bool(key_digests()) and bool(request.cookies.get(COOKIE))
    return templates.TemplateResponse(request, name, {"signed_in": signed_in, **context})


@router.get("/login", response_class=HTMLResponse)
def login_page(request: Request, wrong: bool = False) -> HTMLResponse:
    rate_limit(f"page:{address(request)}")
    return _render(request, "login.html", wrong=wrong)


@router.post("/login", dependencies=[Depends(same_origin)])
def login(request: Request, key: str = Form(...)) -> RedirectResponse:
    from workers.tasks import store

    refused_address(request)
    who = key_id(key) if key_digests() else LOCAL
    if who is None:
        count_failed_key(request)
        return RedirectResponse("/ui/login?wrong=1", status_code=303)
    response = RedirectResponse("/ui", status_code=303)
    response.set_cookie(COOKIE, open_session(store().client, who), httponly=True, samesite="strict", path="/ui",
                        secure=request.url.scheme == "https", max_age=settings().ui_session_s)
    return response


@router.post("/logout", dependencies=[Depends(same_origin)])
def logout(request: Request) -> RedirectResponse:
    from workers.tasks import store

    close_session(store().client, request.cookies.get(COOKIE, ""))
    response = RedirectResponse("/ui/login", status_code=303)
    response.delete_cookie(COOKIE, path="/ui")
    return response


def needs_key(_request: Request, _exc: NeedsKey) -> RedirectResponse:
    """The app's handler for NeedsKey (registered in workers/app.py): to the key form."""
    return RedirectResponse("/ui/login", status_code=303)


@router.get("", response_class=HTMLResponse)
def runs_page(request: Request, domain: str = "", status: str = "", who: str = Depends(page_caller)):
    from workers.tasks import session_store, store

    runs = [r for r in store().recent(who) if (not domain or r.domain == domain) and (not status or r.status == status)]
    return _render(request, "runs.html", runs=runs, domain=domain, status=status, domains=visible_domains(who),
                   live=any(r.status not in ENDED for r in runs), sessions=session_store().recent(who, 20))


@router.get("/new", response_class=HTMLResponse)
def new_page(request: Request, who: str = Depends(page_caller)):
    return _render(request, "new.html", domains=visible_domains(who), translators=TRANSLATORS, today=date.today().isoformat())


@router.post("/new", dependencies=[Depends(same_origin)])
def new_submit(request: Request, query: str = Form(...), domain: str = Form("quickbooks"), today: str = Form(""),
               translator: str = Form("hf"), ir: str = Form(""), who: str = Depends(page_caller)):
    try:
        body = PlanRequest(query=query, domain=domain, today=today or None, translator=None if ir.strip() else translator,
                           ir=ir if ir.strip() else None)
        run = submit(body, who)
    except HTTPException as exc:
        return _render(request, "new.html", domains=visible_domains(who), translators=TRANSLATORS, today=today,
                       error=exc.detail, query=query, ir=ir)
    except ValueError as exc:  # the form's fields did not validate
        return _render(request, "new.html", domains=visible_domains(who), translators=TRANSLATORS, today=today,
                       error=str(exc), query=query, ir=ir)
    return RedirectResponse(f"/ui/runs/{run.id}", status_code=303)


@router.get("/runs/{run_id}", response_class=HTMLResponse)
def run_page(request: Request, run_id: str, who: str = Depends(page_caller)):
    run = get_owned_run(run_id, who)
    return _render(request, "run.html", run=run, live=run.status not in ENDED, total=sum(run.timings_ms.values()))


@router.get("/runs/{run_id}/artifacts/{name}", response_class=PlainTextResponse)
def artifact(run_id: str, name: str, who: str = Depends(page_caller)):
    return PlainTextResponse(owned_artifact(run_id, name, who), headers={"Content-Disposition": f'inline; filename="{name}"'})


@router.get("/sessions/{session_id}", response_class=HTMLResponse)
def session_page(request: Request, session_id: str, who: str = Depends(page_caller)):
    from workers.tasks import store

    state = get_owned_session(session_id, who)
    runs: dict[str, Run] = {t.run_id: store().load(t.run_id) for t in state.turns if t.run_id}
    return _render(request, "session.html", state=state, runs=runs)
