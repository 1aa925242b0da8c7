"""On a CUDA device (`make gpu-check`; skipped elsewhere): the batch decoder's CUDA graphs write what the
loop through transformers' own cache writes, and many requests at once write what each writes alone. The
model is the packaged one where its GGUF was brought along (.gpu/gguf), else one of its shape built there."""

import os
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
pytestmark = [pytest.mark.gpu,
              pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")]

ASSETS = Path(os.environ.get("NESYPLAN_GPU_ASSETS", ".gpu"))


@pytest.fixture(scope="module")
def cuda_backend(tmp_path_factory):
    from pipeline.llm.backends import HFBackend
    from pipeline.llm.device_check import _model_source

    if not (ASSETS / "inputs.jsonl").is_file():
        pytest.skip(f"no GPU check assets in {ASSETS} (make gpu-assets)")
    model, gguf_file, _ = _model_source(ASSETS, tmp_path_factory.mktemp("model"))
    return HFBackend(model=model, gguf_file=gguf_file, device="cuda")


@pytest.fixture(scope="module")
def inputs():
    from pipeline.llm.load import load_inputs

    return load_inputs(ASSETS / "inputs.jsonl")[:16]


def test_graphed_decoding_writes_what_the_loop_through_the_model_cache_writes(cuda_backend, inputs):
    for item in inputs[:8]:
        alone = cuda_backend._complete_alone(item.system, item.user, item.grammar, item.max_new_tokens)
        graphed = cuda_backend.complete(item.system, item.user, item.grammar, item.max_new_tokens)
        assert graphed.text == alone.text, item.id
    assert cuda_backend.decoder.runner.graph_error is None
    assert cuda_backend.decoder.runner._captured  # the steps were graph replays


def test_many_requests_at_once_write_what_each_writes_alone(cuda_backend, inputs):
    from pipeline.llm.load import differences, replay

    alone = replay(cuda_backend, inputs, 1)
    together = replay(cuda_backend, inputs, 8)
    assert not together.errors
    assert differences(alone.outputs, together.outputs) == []
