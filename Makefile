# Quick start: `make run` and `make test`. Both create .venv and install what they need.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-stamp
VAULT  ?= sample-vault

.PHONY: run test lint index check eval bench screenshots clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $(STAMP)

run: $(STAMP)  # a private copy of the sample (recall-tui demo): the tracked one is never edited
	$(BIN)/recall-tui demo

# The Claude Code CLI, for the tests that run the hooks under it (skipped without npm).
CLAUDE := $(VENV)/claude/node_modules/.bin/claude

$(CLAUDE):
	@if command -v npm >/dev/null 2>&1; then \
	  npm install --silent --no-fund --no-audit --prefix $(VENV)/claude @anthropic-ai/claude-code \
	    || echo "could not install the Claude Code CLI: its tests will be skipped"; \
	else echo "npm not found: the Claude Code CLI tests will be skipped"; fi

# The suite runs in TEST_WORKERS processes (pytest-xdist), a test file per worker at a time:
# most tests wait on a subprocess, a terminal or the UI, so three workers on two cores took
# 13 min where one took 22-23 (tests/conftest.py keeps one network guard log per worker).
TEST_WORKERS ?= 3

test: $(STAMP) $(CLAUDE)
	$(BIN)/python -m pytest -q -p no:cacheprovider -n $(TEST_WORKERS) --dist loadfile

# ruff, then mypy as a ratchet (strict packages at zero, the others never above
# tests/mypy_baseline.json; tests/test_types.py runs the same check in the suite)
lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/python tests/test_types.py

check: $(STAMP)
	$(BIN)/recall-tui check $(VAULT)

index: $(STAMP)
	$(BIN)/recall-tui index $(VAULT)

# Every preset on the three judged vaults, per category, with the clock pinned and the local
# embedder, then on the held-out raw-turn vault, which no tuning reads (docs/evaluation.md holds
# this output).
EVAL_NOW ?= 2026-11-21T09:00:00Z
EVAL_PRESETS := --preset default --preset bastra --preset abmind --preset memoryvault \
	  --preset memoturn --preset memoria

eval: $(STAMP)
	@echo "# $$(date -u +%Y-%m-%dT%H:%MZ), load average $$(cut -d' ' -f1-3 /proc/loadavg)"
	$(BIN)/recall-tui eval --vault sample-vault --queries sample-vault/golden.jsonl \
	  --now $(EVAL_NOW) --embedder local $(EVAL_PRESETS)
	$(BIN)/recall-tui eval --vault sample-vault-chat --queries sample-vault-chat/questions.jsonl \
	  --now $(EVAL_NOW) --embedder local $(EVAL_PRESETS)
	$(BIN)/recall-tui eval --vault sample-vault-turns --queries sample-vault-turns/questions.jsonl \
	  --now $(EVAL_NOW) --embedder local $(EVAL_PRESETS)
	@echo "# HELD OUT: sample-vault-turns-heldout is never used by tune; the default was not chosen on it"
	$(BIN)/recall-tui eval --vault sample-vault-turns-heldout \
	  --queries sample-vault-turns-heldout/questions.jsonl --now $(EVAL_NOW) --embedder local $(EVAL_PRESETS)

bench: $(STAMP)
	$(BIN)/recall-tui bench

screenshots: $(STAMP)
	$(BIN)/python scripts/screenshots.py

clean:
	rm -rf $(VENV) .pytest_cache build *.egg-info $(VAULT)/.recall
