"""The `openai` backend against a real OpenAI-compatible server on loopback: `nesyplan serve-llm`,
which serves the packaged model."""

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


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    log = open(tmp_path_factory.mktemp("llm") / "server.log", "w")
    proc = subprocess.Popen([sys.executable, "-m", "nesyplan.cli", "serve-llm", "--port", str(port)],
                            stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    url = f"http://127.0.0.1:{port}/v1"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"{url}/models", timeout=1).status_code == 200:
                break
        except httpx.TransportError:
            time.sleep(0.5)
    yield url
    os.killpg(proc.pid, signal.SIGTERM)
    proc.wait(timeout=30)


def test_the_server_follows_a_grammar(server):
    client = openai.OpenAI(base_url=server, api_key="none")
    response = client.chat.completions.create(
        model="nesyplan", temperature=0, max_tokens=5, extra_body={"grammar": 'root ::= "yes" | "no"'},
        messages=[{"role": "user", "content": "Is Paris in France?"}])
    assert response.choices[0].message.content in ("yes", "no")
    assert response.usage.completion_tokens >= 1


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
