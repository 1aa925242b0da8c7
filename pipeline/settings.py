"""Settings from the environment (prefix NESYPLAN_), e.g. NESYPLAN_PLANNER_TIMEOUT_S=30."""

from __future__ import annotations

from functools import lru_cache

from pydantic_settings import BaseSettings, SettingsConfigDict


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="NESYPLAN_")

    clingo_timeout_s: float = 10.0
    planner_timeout_s: float = 20.0
    planner_alias: str = "lama-first"
    plan_cache_size: int = 1024             # plans kept per process, by task structure (0: no cache)
    redis_url: str = "redis://127.0.0.1:6379/0"
    # Translation: `hf` (in process; CUDA when present) or `openai` (any OpenAI-compatible server).
    translator: str = "hf"
    hf_model: str | None = None             # smollm2-135m (default), gemma3-270m, or a model id or local path
    hf_gguf_file: str | None = None         # with hf_model: the GGUF file inside it
    openai_base_url: str = "http://127.0.0.1:8001/v1"
    openai_model: str = "nesyplan"
    openai_api_key: str = "none"
    openai_grammar: bool = True             # the server enforces a grammar sent with the request
    # ... in which field: grammar (llama.cpp, serve-llm), structured_outputs (vLLM >= 0.12), guided_grammar
    openai_grammar_field: str = "grammar"
    # `retrieve`: retrieval picks the goals, the LLM fills arguments; `shortlist`: the LLM picks among the
    # top `shortlist_k` retrieved goals; `llm`: the LLM picks among all of the pack's goals.
    goal_choice: str = "retrieve"
    shortlist_k: int = 3                    # wider for a large model, narrow for the packaged one
    retrieval_method: str = "hybrid"        # dense | sparse | hybrid
    # An imported API's goals are retrieved with the encoder trained on requests to many APIs
    # (`retrieval.api_encoder`), where one is shipped and the pack has no retriever trained for it.
    api_retrieval: bool = True
    # The learned heads (`nesyplan train-language`): which goal a text asks for, which span is which value.
    # Off, the rules alone decide (what the heads are measured against). The goal head is off by default:
    # on services it never saw it picks worse than retrieval does (docs/design/language.md).
    learned_goals: bool = False
    learned_values: bool = True
    learned_tagger: bool = True             # the argument tagger reads values where one is trained
    learned_gate: bool = True               # the goal head takes in a request retrieval found no goal for
    language_weights: str | None = None     # a folder of heads (train-language --out) instead of the package's
    constrain: bool = True                  # grammar-constrained decoding
    jump_forward: bool = True               # hf: text the grammar forces goes in one forward pass
    hf_dtype: str = "auto"                  # hf: auto (float16 on CUDA, float32 on CPU), or a torch dtype
    llm_batch_rows: int = 0                 # hf: requests decoded together (0: 8 on CPU, 32 on CUDA; 1: none)
    cuda_graphs: bool = True                # hf on CUDA: decoding steps replayed as captured CUDA graphs
    run_ttl_s: int = 7 * 24 * 3600          # how long the store keeps a Run record
    # A message taken by a worker that dies is given to another after this long: keep it above the
    # longest stage's hard time limit, or a slow stage would run twice.
    visibility_timeout_s: float = 600.0
    restore_interval_s: float = 5.0         # how often workers look for such messages
    # The lock a worker holds while it gives such messages back. A worker killed inside that moment leaves
    # it held: kombu's default (300 s) would then stop every redelivery for five minutes.
    restore_lock_s: float = 10.0
    heartbeat_s: float = 5.0                # how often a worker says it is alive (/healthz counts them)
    sweep_interval_s: float = 10.0          # how often a worker looks for runs and turns that stopped moving
    sweep_after_s: float = 600.0            # ... for this long (the broker's own redelivery horizon)
    max_resends: int = 5                    # a run sent again this many times and still not moving is failed
    ui_session_s: int = 12 * 3600           # how long a sign-in to the web page lasts
    stage_time_limit_s: float = 120.0       # hard limit of a symbolic stage in a worker
    warm_up_domains: str = "quickbooks"     # packs a worker loads at start (comma-separated; empty: none)
    # Conversations: how calls are carried out (`simulated`: offline outputs; `http`: the pack's APIs).
    session_executor: str = "simulated"
    http_base_url: str | None = None        # overrides every pack's `http_base_url`
    http_timeout_s: float = 10.0            # per attempt
    http_retries: int = 2                   # attempts after the first, on connection errors, timeouts, 5xx
    session_ttl_s: int = 24 * 3600          # how long the store keeps an idle session
    session_reply_timeout_s: float = 120.0  # how long POST .../messages waits for the turn's reply
    max_waits_per_key: int = 4              # replies one key may wait for at once; past it a message gets 202
    max_connections: int = 500              # connections `serve` holds at once; past it, 503
    # Access (workers/auth.py). With no key configured the API serves only on a loopback address.
    api_keys: str = ""                      # comma-separated keys (plain, or `sha256:` + hex digest)
    api_keys_file: str | None = None        # one key per line, plain or sha256 hex; `#` comments
    # The names clients reach the API by (the Host header); any other gets 400. `*` allows every name. On a
    # public address set the names clients use (`serve` warns when only loopback names are allowed).
    allowed_hosts: str = "localhost,127.0.0.1,::1"
    rate_limit_per_s: float = 20.0          # per key, token bucket in Redis (0: no limit)
    rate_burst: int = 60
    auth_fail_per_s: float = 0.5            # failed keys per client address (0: no limit); past the burst the
    auth_fail_burst: int = 20               # address is refused (429) until the bucket refills, right key or not
    max_body_bytes: int = 64 * 1024         # larger request bodies get 413
    max_pack_bytes: int = 8 * 1024 * 1024   # ... but a pack upload (POST /v1/packs): an API spec can be large
    pack_import_timeout_s: float = 120.0    # an upload's import and validation, in a process of its own
    pack_import_memory_mb: int = 4096       # ... and the memory that process may take
    max_queued_runs: int = 200              # per key: runs not yet ended
    max_session_messages: int = 60          # per session
    llm_max_prompt_chars: int = 16000       # serve-llm: larger prompts get 413
    llm_max_waiting: int = 64               # serve-llm: requests in or waiting for the model; more get 429
    # Traces (pipeline/observability/tracing.py): `auto` exports over OTLP/HTTP when OTEL_EXPORTER_OTLP_ENDPOINT
    # (or ..._TRACES_ENDPOINT) is set and is off otherwise; `otlp`, `console` (spans as JSON on stdout), `off`.
    tracing: str = "auto"


@lru_cache(maxsize=1)
def settings() -> Settings:
    return Settings()
