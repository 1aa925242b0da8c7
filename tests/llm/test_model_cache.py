"""The dequantized-model cache: a GGUF is dequantized once, saved as safetensors keyed by its hash, and the
saved copy is the same model (same weights, same tokenizer and chat template)."""

import torch
from transformers import AutoModelForCausalLM, AutoTokenizer

from pipeline.llm.backends import DEFAULT_GGUF, dequantized, packaged_model_dir


def test_a_dequantized_copy_is_made_once_and_is_the_same_model(tmp_path, monkeypatch):
    monkeypatch.setenv("NESYPLAN_MODEL_CACHE_DIR", str(tmp_path))
    model_dir = str(packaged_model_dir())
    saved = dequantized(model_dir, DEFAULT_GGUF, torch.float32)
    assert saved.parent == tmp_path and (saved / "model.safetensors").is_file()
    written = (saved / "model.safetensors").stat().st_mtime_ns
    assert dequantized(model_dir, DEFAULT_GGUF, torch.float32) == saved  # found, not made again
    assert (saved / "model.safetensors").stat().st_mtime_ns == written
    assert [p.name for p in tmp_path.iterdir()] == [saved.name]  # no staging folder left behind

    from_gguf = AutoModelForCausalLM.from_pretrained(model_dir, gguf_file=DEFAULT_GGUF, dtype=torch.float32)
    from_cache = AutoModelForCausalLM.from_pretrained(str(saved), dtype=torch.float32)
    gguf_weights, cached_weights = from_gguf.state_dict(), from_cache.state_dict()
    assert gguf_weights.keys() == cached_weights.keys()
    assert all(torch.equal(gguf_weights[k], cached_weights[k]) for k in gguf_weights)

    gguf_tokenizer = AutoTokenizer.from_pretrained(model_dir, gguf_file=DEFAULT_GGUF)
    cached_tokenizer = AutoTokenizer.from_pretrained(str(saved))
    chat = [{"role": "system", "content": "Write IR facts."}, {"role": "user", "content": "invoice 2k, 50% off?"}]
    assert cached_tokenizer.apply_chat_template(chat, tokenize=False) == \
        gguf_tokenizer.apply_chat_template(chat, tokenize=False)
    text = gguf_tokenizer.apply_chat_template(chat, tokenize=False, add_generation_prompt=True)
    assert cached_tokenizer(text)["input_ids"] == gguf_tokenizer(text)["input_ids"]


def test_a_model_that_is_no_local_gguf_is_not_cached(tmp_path, monkeypatch):
    monkeypatch.setenv("NESYPLAN_MODEL_CACHE_DIR", str(tmp_path))
    assert dequantized(str(tmp_path / "nowhere"), DEFAULT_GGUF, torch.float32) is None
    assert list(tmp_path.iterdir()) == []
