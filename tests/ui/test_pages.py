"""The web page in a real headless browser (Debian's chromium driven by Playwright) against the real
service: submit from the form, watch the run succeed, open every artifact, count the plan graph against
the plan, see a failure at its stage, and check that the page asks nothing of any other server.

NESYPLAN_SCREENSHOTS=1 also writes the screenshot the docs show (workers/static/screenshot-run.png; docs/service.md)."""

import os
import shutil

import pytest
import redis

from pipeline.packs.pack import PROJECT_ROOT
from tests.harness import EXAMPLES, Service

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium is not installed (.ci/run installs it)")
SCREENSHOT = PROJECT_ROOT / "workers" / "static" / "screenshot-run.png"


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        yield browser
        browser.close()


@pytest.fixture
def service(tmp_path):
    url = os.environ["NESYPLAN_REDIS_URL"]
    redis.Redis.from_url(url).flushdb()
    svc = Service(url, tmp_path)
    svc.start_worker("ui")
    yield svc
    svc.close()


@pytest.fixture
def page(browser, service):
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.requested = []
    page.on("request", lambda request: page.requested.append(request.url))
    yield page
    assert page.requested and all(url.startswith(service.url + "/") for url in page.requested), \
        [url for url in page.requested if not url.startswith(service.url + "/")]
    context.close()


# A report, and an agent to talk to about it: one output taken by the next call, one value to ask for.
REPORT_THEN_AGENT = """_goal(g1, invoice_sales_report).
_period(g1, "last month").
_goal(g2, contact_agent).
_contact_topic(g2, g1).
"""


def submit_from_the_form(page, service, ir, query):
    page.goto(service.url + "/ui/new")
    page.fill("textarea[name=query]", query)
    page.fill("input[name=today]", "2024-10-15")
    page.fill("textarea[name=ir]", ir if "(" in ir else (EXAMPLES / ir).read_text())
    page.click("button[type=submit]")
    page.wait_for_url("**/ui/runs/*")
    return page.url.rsplit("/", 1)[1]


def test_a_run_submitted_from_the_form_succeeds_and_shows_every_stage(page, service):
    run_id = submit_from_the_form(page, service, REPORT_THEN_AGENT, "last month's sales, and someone to talk to")
    page.wait_for_selector("#status.succeeded", timeout=60_000)  # the page refreshes itself while it runs
    run = service.http.get(f"/v1/plans/{run_id}").json()
    for stage in ("check", "materialize", "compile", "plan"):
        assert page.locator(f"#stage-{stage} .time").count() >= 1
    # The graph: a node per call, a dashed node per question, an edge per ref and per question.
    calls = run["plan"]["calls"]
    refs = sum(arg["ref"] is not None for call in calls for arg in call["args"].values())
    asks = sum(arg["get_info"] is not None for call in calls for arg in call["args"].values())
    assert page.locator(".plan-graph .node.call").count() == len(calls) >= 2
    assert page.locator(".plan-graph .node.ask").count() == asks >= 1
    assert page.locator(".plan-graph line.edge").count() == refs + asks and refs >= 1
    assert page.locator(".tok-predicate").count() > 0  # ASP and PDDL are highlighted
    assert f"@{run['pack_digest'][:12]}" in page.locator(".meta").first.inner_text()  # the pack version that made it
    if os.environ.get("NESYPLAN_SCREENSHOTS"):
        page.screenshot(path=str(SCREENSHOT), full_page=True)
    links = page.locator("a.download")
    names = sorted({links.nth(i).get_attribute("data-artifact") for i in range(links.count())})
    assert names == sorted(["ir.lp", "checked_ir.lp", "materialized.lp", "task.pddl", "domain.pddl", "plan.txt",
                            "plan.json"])
    for name in names:  # each download is the API's artifact of the same name
        response = page.goto(f"{service.url}/ui/runs/{run_id}/artifacts/{name}")
        assert response.status == 200
        assert response.text() == service.http.get(f"/v1/plans/{run_id}/artifacts/{name}").text


def test_a_failed_run_shows_its_stage_and_reason_and_the_list_filters(page, service):
    failed = submit_from_the_form(page, service, "4_error.lp", "a report that ends before it starts")
    page.wait_for_selector("#status.failed", timeout=60_000)
    stage = page.locator(".stage.failed-here")
    assert stage.count() == 1 and stage.get_attribute("id") == "stage-materialize"
    assert "ends before it starts" in stage.locator(".reason").inner_text()
    assert page.locator(".plan-graph").count() == 0
    succeeded = submit_from_the_form(page, service, "1_complete.lp", "a complete request")
    page.wait_for_selector("#status.succeeded", timeout=60_000)
    page.goto(service.url + "/ui?status=failed")
    rows = page.locator("tr.run")
    assert rows.count() == 1 and rows.first.get_attribute("data-status") == "failed"
    assert f"/ui/runs/{failed}" in rows.first.inner_html()
    page.goto(service.url + "/ui")
    assert page.locator("tr.run").count() == 2 and succeeded in page.content()


def test_with_keys_the_page_asks_for_one(browser, tmp_path):
    url = os.environ["NESYPLAN_REDIS_URL"]
    redis.Redis.from_url(url).flushdb()
    keyed = Service(url, tmp_path, env={"NESYPLAN_API_KEYS": "ui-test-key"})
    try:
        page = browser.new_page()
        page.goto(keyed.url + "/ui")
        assert page.url.endswith("/ui/login")
        page.fill("input[name=key]", "wrong")
        page.click("button[type=submit]")
        # The click returns before the redirect's page is loaded: wait for its message, not for content().
        page.wait_for_url(lambda url: url.endswith("/ui/login?wrong=1"))
        assert "not one of this server's keys" in page.locator("p.error").inner_text()
        page.fill("input[name=key]", "ui-test-key")
        page.click("button[type=submit]")
        page.wait_for_url("**/ui")
        assert page.locator("h1").inner_text() == "Recent runs"
        page.close()
    finally:
        keyed.close()


def test_a_conversation_shows_each_turn_with_its_plan_and_the_calls_carried_out(page, service):
    from pipeline.sessions.engine import SessionEngine
    from workers.store import RunStore, SessionStore

    engine = SessionEngine("hf")
    state = engine.open("restaurant_reservation", "2025-03-10")
    state.owner = "local"
    messages = ["I'd like a table at The Oak Room for 4 people on March 14 at 7pm", "Ana Lopez", "617-555-0199", "yes"]
    for message in messages:
        _, run = engine.advance(state, engine.translate(state, message))
        run.owner = state.owner
        RunStore().save(run)
    SessionStore().save(state)
    SessionStore().index(state.owner, state.id)
    page.goto(service.url + "/ui")
    assert page.locator(f"a[href='/ui/sessions/{state.id}']").count() == 1  # the list links to it
    # Opened by its address: the list page refreshes itself while a run is not ended, and a refresh racing
    # a click could leave the browser on the list.
    page.goto(f"{service.url}/ui/sessions/{state.id}")
    assert page.locator("section.turn").count() == len(messages)
    assert page.locator("section.turn .plan-graph").count() == len(messages)
    assert page.locator("ol.executed li").count() == len(state.executed) >= 2
    assert page.locator("section.turn .agent").nth(2).inner_text().startswith("confirm")  # the read-back
    assert page.locator("section.turn .agent").last.inner_text().startswith(state.turns[-1].reply.kind)
    assert page.locator(".end-reason").inner_text() == f"Ended: {state.end_reason}"


def test_a_translated_run_shows_its_analysis(page, service):
    from pipeline.run import run_pipeline
    from workers.store import RunStore

    run = run_pipeline("our sales last month, and then can someone call me", "quickbooks", "2025-03-10")
    run.owner = "local"
    RunStore().save(run)
    page.goto(f"{service.url}/ui/runs/{run.id}")
    section = page.locator("#analysis")
    assert section.locator("table.clauses tr").count() == len(run.analysis.clauses) + 1 >= 3  # a header row
    assert section.locator("table.values tr.kept").count() == sum(v.kept for v in run.analysis.values) >= 1
    # each chosen goal with the words it came from and the judge that chose it
    chosen = page.locator("table.shortlist tr")
    assert chosen.count() == len(run.shortlist) + 1 >= 2
    assert chosen.nth(1).locator("td.words").inner_text() == run.shortlist[0]["source"] != ""
    assert chosen.nth(1).locator("td.chosen-by").inner_text() == run.shortlist[0]["chosen_by"] == "retrieval"
    response = page.goto(f"{service.url}/ui/runs/{run.id}/artifacts/analysis.json")
    assert response.status == 200 and '"clauses"' in response.text()
