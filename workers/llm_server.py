"""An OpenAI-compatible chat endpoint over the `hf` backend (`nesyplan serve-llm`): many workers share one
loaded model. Besides the standard fields it reads `grammar` (EBNF), as llama.cpp's server does.

It is guarded like the API: the same keys (a Bearer key when keys are configured; without keys the CLI
serves only on a loopback address), a prompt-size limit (413), a bound on requests waiting for the model
(429 with Retry-After), no streaming (a clear 400, not an empty stream) and only its own model name.
GET /metrics: its prompt-prefix cache, for Prometheus (with the same key)."""

from __future__ import annotations

import threading
import time
import uuid

from fastapi import Depends, FastAPI, HTTPException, Request, Response
from fastapi.middleware.trustedhost import TrustedHostMiddleware
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from pydantic import BaseModel, Field

from pipeline.observability.metrics import exposition
from pipeline.settings import settings
from workers.auth import allowed_hosts, key_digests, key_id

MODEL_ID = "nesyplan"
_bearer = HTTPBearer(auto_error=False)


def _require_key(credentials: HTTPAuthorizationCredentials | None = Depends(_bearer)) -> None:
    if key_digests() and (credentials is None or key_id(credentials.credentials) is None):
        raise HTTPException(status_code=401, detail="a valid API key is required (Authorization: Bearer KEY)",
                            headers={"WWW-Authenticate": "Bearer"})


class Message(BaseModel):
    role: str
    content: str


class ChatRequest(BaseModel):
    model: str = MODEL_ID
    stream: bool = False
    messages: list[Message] = Field(..., min_length=1)
    max_tokens: int | None = Field(256, ge=1, le=4096)
    temperature: float | None = 0.0
    grammar: str | None = Field(None, description="EBNF (GBNF) the answer must follow")


def make_app(model: str | None = None, gguf_file: str | None = None) -> FastAPI:
    from pipeline.llm.backends import get_backend

    app = FastAPI(title="nesyplan LLM server", description="OpenAI-compatible chat completions",
                  dependencies=[Depends(_require_key)])
    app.add_middleware(TrustedHostMiddleware, allowed_hosts=allowed_hosts())  # as the API: named hosts only
    state: dict = {}
    waiting = threading.BoundedSemaphore(settings().llm_max_waiting)  # requests in the model or waiting for it

    def backend():
        if "backend" not in state:
            state["backend"] = get_backend("hf", model=model, gguf_file=gguf_file)
        return state["backend"]

    @app.get("/v1/models")
    def models() -> dict:
        return {"object": "list", "data": [{"id": MODEL_ID, "object": "model", "owned_by": "nesyplan"}]}

    @app.get("/metrics", include_in_schema=False)
    def metrics(request: Request) -> Response:
        """This process's metrics for Prometheus: its model's prompt-prefix cache lookups."""
        body, content_type = exposition(request.headers.get("accept"))
        return Response(content=body, media_type=content_type)

    @app.post("/v1/chat/completions")
    def chat(body: ChatRequest) -> dict:
        if body.model != MODEL_ID:
            raise HTTPException(status_code=404, detail=f"unknown model {body.model[:80]!r}; served: {MODEL_ID}")
        if body.stream:
            raise HTTPException(status_code=400, detail="streaming is not served: send stream=false")
        size = sum(len(m.content) for m in body.messages)
        if size > settings().llm_max_prompt_chars:
            raise HTTPException(status_code=413, detail=f"the prompt has {size} characters; at most "
                                                        f"{settings().llm_max_prompt_chars} are served")
        if not waiting.acquire(blocking=False):
            raise HTTPException(status_code=429, detail="too many requests are waiting for the model",
                                headers={"Retry-After": "2"})
        try:
            return _complete(body)
        finally:
            waiting.release()

    def _complete(body: ChatRequest) -> dict:
        system = "\n".join(m.content for m in body.messages if m.role == "system")
        user = "\n".join(m.content for m in body.messages if m.role == "user")
        if not user or any(m.role not in ("system", "user", "assistant") for m in body.messages):
            raise HTTPException(status_code=400, detail="messages need a user message; roles: system, user")
        if body.temperature not in (None, 0, 0.0):
            raise HTTPException(status_code=400, detail="only greedy decoding (temperature 0) is served")
        try:
            completion = backend().complete(system, user, body.grammar, body.max_tokens or 256)
        except RuntimeError as exc:  # a grammar xgrammar cannot compile
            raise HTTPException(status_code=400, detail=f"cannot decode with this grammar: {exc}") from None
        return {
            "id": f"chatcmpl-{uuid.uuid4().hex}", "object": "chat.completion", "created": int(time.time()),
            "model": body.model,
            "choices": [{"index": 0, "message": {"role": "assistant", "content": completion.text},
                         "finish_reason": "stop" if completion.new_tokens < (body.max_tokens or 256) else "length"}],
            "usage": {"prompt_tokens": completion.prompt_tokens, "completion_tokens": completion.new_tokens,
                      "total_tokens": completion.prompt_tokens + completion.new_tokens},
        }

    return app
