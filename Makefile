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

run: $(STAMP)
	$(BIN)/recall-tui $(VAULT)

test: $(STAMP)
	$(BIN)/python -m pytest -q -p no:cacheprovider

lint: $(STAMP)
	$(BIN)/ruff check .

check: $(STAMP)
	$(BIN)/recall-tui check $(VAULT)

index: $(STAMP)
	$(BIN)/recall-tui index $(VAULT)

eval: $(STAMP)
	$(BIN)/recall-tui eval --vault $(VAULT) --queries $(VAULT)/golden.jsonl \
	  --preset default --preset bastra --preset abmind --preset memoryvault \
	  --preset memoturn --preset memoria

bench: $(STAMP)
	$(BIN)/recall-tui bench

screenshots: $(STAMP)
	$(BIN)/python scripts/screenshots.py

clean:
	rm -rf $(VENV) .pytest_cache build *.egg-info $(VAULT)/.recall
