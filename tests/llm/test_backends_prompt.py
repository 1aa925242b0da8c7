"""How the hf backend lays out a prompt, with the packaged model's real tokenizer."""

import pytest

from pipeline.llm.backends import PACKAGED_MODELS, HFBackend, packaged_tokenizer


@pytest.fixture()
def backend():
    made = HFBackend.__new__(HFBackend)  # the layout needs the tokenizer only, not the weights
    made.tokenizer = packaged_tokenizer()
    return made


def test_a_chat_model_gets_its_template_split_at_the_request(backend):
    prefix, rest = backend._split_prompt("SYSTEM TEXT", "Request: x\nFacts:")
    assert "SYSTEM TEXT" in prefix and "Request: x" not in prefix and "Request: x" in rest
    assert backend.tokenizer.chat_template and prefix != "SYSTEM TEXT\n"


def test_a_base_model_without_a_chat_template_reads_plain_text(backend):
    backend.tokenizer.chat_template = None
    prefix, rest = backend._split_prompt("SYSTEM TEXT", "Request: x\nFacts:")
    assert prefix == (backend.tokenizer.bos_token or "") + "SYSTEM TEXT\n" and rest == "Request: x\nFacts:\n"


def test_the_local_models_are_known_by_name():
    assert {"smollm2-135m", "gemma3-270m"} <= set(PACKAGED_MODELS)
    folder, gguf = PACKAGED_MODELS["smollm2-135m"]()
    assert gguf.endswith(".gguf")
