"""The `openai` backend against a real OpenAI-compatible server on loopback: `nesyplan serve-llm`,
which serves the packaged model."""

import concurrent.futures
import os
import signal
import socket
import subprocess
import sys
import time

import httpx
import openai
import pytest

from pipeline.llm.backends import OpenAIBackend
from pipeline.stages.check import check_ir
from pipeline.stages.translate import translate


def start_server(log_dir, env=None, headers=None):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    log = open(log_dir / "server.log", "w")
    proc = subprocess.Popen([sys.executable, "-m", "nesyplan.cli", "serve-llm", "--port", str(port)],
                            env={**os.environ, **(env or {})}, stdout=log, stderr=subprocess.STDOUT,
                            start_new_session=True)
    url = f"http://127.0.0.1:{port}/v1"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"{url}/models", headers=headers, timeout=1).status_code == 200:
                break
        except httpx.TransportError:
            time.sleep(0.5)
    return proc, url


def stop_server(proc):
    os.killpg(proc.pid, signal.SIGTERM)
    proc.wait(timeout=30)


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    proc, url = start_server(tmp_path_factory.mktemp("llm"))
    yield url
    stop_server(proc)


def test_the_server_follows_a_grammar(server):
    client = openai.OpenAI(base_url=server, api_key="none")
    response = client.chat.completions.create(
        model="nesyplan", temperature=0, max_tokens=5, extra_body={"grammar": 'root ::= "yes" | "no"'},
        messages=[{"role": "user", "content": "Is Paris in France?"}])
    assert response.choices[0].message.content in ("yes", "no")
    assert response.usage.completion_tokens >= 1


def test_concurrent_requests_get_what_each_gets_alone(server, pack):
    """The server's main thread decodes the requests of its HTTP threads together."""
    from concurrent.futures import ThreadPoolExecutor

    backend = OpenAIBackend(base_url=server, model="nesyplan", send_grammar=True)
    queries = ["invoice 300 dollars for piano lessons", "what did we spend in March 2024?",
               "email Dana about the overdue invoice", "show me last quarter's profit and loss"]
    alone = [translate(q, pack, backend, "2024-10-15").raw for q in queries]
    with ThreadPoolExecutor(len(queries)) as pool:
        together = list(pool.map(lambda q: translate(q, pack, backend, "2024-10-15").raw, queries))
    assert together == alone and all(alone)


def test_translate_through_the_openai_backend_with_a_grammar(server, pack):
    backend = OpenAIBackend(base_url=server, model="nesyplan", send_grammar=True)
    translation = translate("invoice 300 dollars for piano lessons", pack, backend, "2024-10-15")
    facts = check_ir(translation.ir, pack).facts
    assert facts[0].arguments == ["g1", "create_invoice"] and translation.attempts == 1


def test_a_server_without_grammars_gets_checked_and_one_retry(server, pack):
    backend = OpenAIBackend(base_url=server, model="nesyplan", send_grammar=False)
    translation = translate("invoice 300 dollars for piano lessons", pack, backend, "2024-10-15", max_new_tokens=60)
    assert translation.attempts == (1 if translation.stats["first_output_valid"] else 2)
    assert translation.raw  # every answer is kept, the rejected one too


def test_bad_requests_are_refused_clearly(server):
    client = openai.OpenAI(base_url=server, api_key="none", max_retries=0)
    with pytest.raises(openai.BadRequestError):
        client.chat.completions.create(model="nesyplan", temperature=0.9, max_tokens=5,
                                       messages=[{"role": "user", "content": "hi"}])
    with pytest.raises(openai.BadRequestError):
        client.chat.completions.create(model="nesyplan", temperature=0, max_tokens=5,
                                       extra_body={"grammar": "root ::= ("},
                                       messages=[{"role": "user", "content": "hi"}])

    with pytest.raises(openai.NotFoundError):  # only its own model: another name is no alias for it
        client.chat.completions.create(model="gpt-4o", max_tokens=5, messages=[{"role": "user", "content": "hi"}])
    with pytest.raises(openai.BadRequestError):  # a clear no, not an empty stream
        client.chat.completions.create(model="nesyplan", max_tokens=5, stream=True,
                                       messages=[{"role": "user", "content": "hi"}])
    streamed = httpx.post(f"{server}/chat/completions", timeout=30,
                          json={"model": "nesyplan", "stream": True, "messages": [{"role": "user", "content": "hi"}]})
    assert streamed.status_code == 400 and "streaming" in streamed.json()["detail"]
    response = httpx.post(f"{server}/chat/completions", timeout=30,
                          json={"model": "nesyplan", "messages": [{"role": "user", "content": "x" * 100_000}]})
    assert response.status_code == 413 and "characters" in response.json()["detail"]


def test_keys_guard_it_and_requests_past_the_waiting_bound_get_429(tmp_path):
    key = "llm-key-5be1"
    proc, url = start_server(tmp_path, env={"NESYPLAN_API_KEYS": key, "NESYPLAN_LLM_MAX_WAITING": "1"},
                             headers={"Authorization": f"Bearer {key}"})
    try:
        assert httpx.get(f"{url}/models", timeout=10).status_code == 401
        client = openai.OpenAI(base_url=url, api_key=key, max_retries=0, timeout=120)
        with pytest.raises(openai.AuthenticationError):
            openai.OpenAI(base_url=url, api_key="wrong", max_retries=0).chat.completions.create(
                model="nesyplan", max_tokens=5, messages=[{"role": "user", "content": "hi"}])

        def ask(_):
            try:
                client.chat.completions.create(model="nesyplan", max_tokens=48,
                                               messages=[{"role": "user", "content": "count to twenty"}])
                return 200
            except openai.RateLimitError:
                return 429

        with concurrent.futures.ThreadPoolExecutor(max_workers=6) as pool:
            statuses = list(pool.map(ask, range(6)))
        assert 200 in statuses and 429 in statuses, statuses
    finally:
        stop_server(proc)


def test_without_keys_it_refuses_a_public_address():
    out = subprocess.run([sys.executable, "-m", "nesyplan.cli", "serve-llm", "--host", "0.0.0.0"],
                         env={**os.environ, "NESYPLAN_API_KEYS": ""}, capture_output=True, text=True, timeout=60)
    assert out.returncode == 2 and "refusing" in out.stderr
