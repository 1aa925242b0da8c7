"""An OpenAI-compatible chat endpoint over the `hf` backend (`nesyplan serve-llm`): many workers share one
loaded model. Besides the standard fields it reads `grammar` (EBNF), as llama.cpp's server does."""

from __future__ import annotations

import time
import uuid

from fastapi import FastAPI, HTTPException
from pydantic import BaseModel, Field


class Message(BaseModel):
    role: str
    content: str


class ChatRequest(BaseModel):
    model: str = "nesyplan"
    messages: list[Message] = Field(..., min_length=1)
    max_tokens: int | None = Field(256, ge=1, le=4096)
    temperature: float | None = 0.0
    grammar: str | None = Field(None, description="EBNF (GBNF) the answer must follow")


def make_app(model: str | None = None, gguf_file: str | None = None) -> FastAPI:
    from pipeline.llm.backends import get_backend

    app = FastAPI(title="nesyplan LLM server", description="OpenAI-compatible chat completions")
    state: dict = {}

    def backend():
        if "backend" not in state:
            state["backend"] = get_backend("hf", model=model, gguf_file=gguf_file)
        return state["backend"]

    @app.get("/v1/models")
    def models() -> dict:
        return {"object": "list", "data": [{"id": "nesyplan", "object": "model", "owned_by": "nesyplan"}]}

    @app.post("/v1/chat/completions")
    def chat(body: ChatRequest) -> dict:
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
