# Quick start: `make demo` and `make test`. Both create .venv on first use, and install what
# their job needs: the demo the core package only, the tests everything.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
CORE := $(VENV)/.installed-core
FULL := $(VENV)/.installed-full

.PHONY: demo test lint install lock clean bench

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

# The core package: what `judge run` needs offline (no LiteLLM, no service stack, no test
# tools). Reinstalled when the dependency list changes.
$(CORE): pyproject.toml constraints.txt | $(BIN)/python
	$(BIN)/python -m pip install --quiet -c constraints.txt -e .
	touch $(CORE)

# Everything: LiteLLM and the service (`[all]`) and the test tools (`[dev]`). It holds the core
# install too, so its stamp is refreshed as well: `make demo` after `make test` installs
# nothing, and `make test` after `make demo` adds the extras.
$(FULL): pyproject.toml constraints.txt | $(BIN)/python
	$(BIN)/python -m pip install --quiet -c constraints.txt -e '.[all,dev]'
	touch $(CORE) $(FULL)

install: $(FULL)

# constraints.txt pins every distribution `[all,dev]` brings to one set known to install
# together. Without it pip's resolver gives up on the full extras from a fresh venv
# (resolution-too-deep after ~9 min, 2026-12-04), though each extra resolves in seconds when
# added to an existing install. So the lock is made that way: the older extras first, then
# each newer one, in a throwaway venv. Run after changing the dependencies in pyproject.toml.
LOCK_VENV := .venv-lock
lock:
	rm -rf $(LOCK_VENV) && $(PYTHON) -m venv $(LOCK_VENV)
	$(LOCK_VENV)/bin/python -m pip install --quiet --upgrade pip
	$(LOCK_VENV)/bin/python -m pip install --quiet -e '.[litellm,service,ray,dev]'
	for x in gemini inspect promptfoo hf otel mlflow weave; do \
		$(LOCK_VENV)/bin/python -m pip install --quiet -e ".[litellm,service,ray,dev,$$x]" || exit 1; done
	$(LOCK_VENV)/bin/python -m pip check
	{ echo "# Made by \`make lock\` (see the Makefile); every make install step reads it (pip -c)."; \
	  $(LOCK_VENV)/bin/python -m pip freeze --exclude-editable | grep -v '^-e'; } > constraints.txt
	rm -rf $(LOCK_VENV)

# The whole job on bundled MT-Bench data, offline: blind, replay GPT-4's recorded verdicts in
# both orders, calibrate GPT-4 against the expert votes, compare the six systems, write the
# report (runs/mt-bench-demo/report.html).
# The demo replays recorded verdicts (nothing is paid), so a demo dir an older demo config left
# (`judge run` refuses it: "prepared from a different config") is rebuilt rather than kept.
# stderr is shown as it comes (the replay notice is the run's first line) and kept to look for
# the message above: bash for pipefail, so the run's exit status survives the tee.
demo: SHELL := /bin/bash
demo: $(CORE)
	@err=$$(mktemp); set -o pipefail; \
	{ $(BIN)/judge run configs/demo.yaml --quiet 2>&1 1>&3 | tee $$err >&2; } 3>&1; status=$$?; \
	if [ $$status -eq 2 ] && grep -q "prepared from a different config" $$err; then \
		rm -f $$err; echo "rebuilding runs/mt-bench-demo (left by an older demo config)"; \
		rm -rf runs/mt-bench-demo && $(BIN)/judge run configs/demo.yaml --quiet; \
	else rm -f $$err; exit $$status; fi

# The suite also needs Chromium and PostgreSQL from the system: .ci/system-deps installs them
# (apt-get) when absent, or stops at once with the command to run.
# Two workers, a test file each at a time (module fixtures are shared within a file): much of
# the suite waits on servers, browsers and child processes, so 2 cores run it in ~2/3 the time.
test: $(FULL)
	@.ci/system-deps
	$(BIN)/python -m pytest -q -n 2 --dist loadfile

lint: $(FULL)
	$(BIN)/ruff check judge calibration tests bench scripts
	$(BIN)/ruff format --check judge calibration tests bench scripts

bench: $(FULL)
	@for f in bench/*.py; do echo "== $$f"; $(BIN)/python $$f || exit 1; done

clean:
	rm -rf $(VENV) runs .pytest_cache
