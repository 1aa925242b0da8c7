"""The openai translator against a stand-in server that speaks an OpenAI-compatible server's wire format:
the grammar travels in the field the configured server reads (vLLM's structured outputs, its older
guided_grammar, llama.cpp's and serve-llm's grammar), and the answer comes back to the stage."""

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from pipeline.llm.backends import OpenAIBackend
from pipeline.stages.translate import translate

ANSWER = '_goal(g1, expense_report).\n'


@pytest.fixture()
def stand_in():
    seen = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):  # noqa: N802 - the http.server hook
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            seen.append((self.path, body))
            reply = json.dumps({"id": "chatcmpl-1", "object": "chat.completion", "created": 0, "model": body["model"],
                                "choices": [{"index": 0, "finish_reason": "stop",
                                             "message": {"role": "assistant", "content": ANSWER}}],
                                "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(reply)))
            self.end_headers()
            self.wfile.write(reply)

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1", seen
    server.shutdown()


@pytest.mark.parametrize("field, where", [
    ("structured_outputs", lambda body: body["structured_outputs"]["grammar"]),
    ("guided_grammar", lambda body: body["guided_grammar"]),
    ("grammar", lambda body: body["grammar"]),
])
def test_the_grammar_travels_in_the_field_the_server_reads(stand_in, pack, field, where):
    url, seen = stand_in
    backend = OpenAIBackend(base_url=url, model="nesyplan", grammar_field=field)
    translation = translate("what did we spend in the first quarter of 2024?", pack, backend, "2024-10-15")
    (path, body), = seen
    assert path == "/v1/chat/completions"
    assert where(body).startswith("root ::=")  # the stage's own grammar, whole
    assert body["temperature"] == 0 and body["model"] == "nesyplan"
    assert [m["role"] for m in body["messages"]] == ["system", "user"]
    other_fields = {"structured_outputs", "guided_grammar", "grammar"} - {field}
    assert not other_fields & set(body)
    assert translation.raw == ANSWER and translation.attempts == 1  # enforced by the server: no retry


def test_without_a_grammar_the_server_gets_none_and_the_answer_is_checked(stand_in, pack):
    url, seen = stand_in
    backend = OpenAIBackend(base_url=url, model="nesyplan", send_grammar=False, grammar_field="structured_outputs")
    translate("what did we spend in the first quarter of 2024?", pack, backend, "2024-10-15")
    assert seen and not {"structured_outputs", "guided_grammar", "grammar"} & set(seen[0][1])
