# Quick start: `make demo` and `make test`. Both create .venv on first use.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test lint install clean bench

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

# Reinstall when the dependency list changes.
$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e '.[all,dev]'
	touch $(STAMP)

install: $(STAMP)

# The whole job on bundled MT-Bench data, offline: blind, replay GPT-4's recorded verdicts in
# both orders, calibrate GPT-4 against the expert votes, compare the six systems, write the
# report (runs/mt-bench-demo/report.html).
demo: $(STAMP)
	$(BIN)/judge run configs/demo.yaml --quiet

test: $(STAMP)
	$(BIN)/python -m pytest -q

lint: $(STAMP)
	$(BIN)/ruff check judge calibration tests bench scripts
	$(BIN)/ruff format --check judge calibration tests bench scripts

bench: $(STAMP)
	@for f in bench/*.py; do echo "== $$f"; $(BIN)/python $$f || exit 1; done

clean:
	rm -rf $(VENV) runs .pytest_cache
