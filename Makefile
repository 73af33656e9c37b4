# The two set-up commands of the README: `make run` and `make test`.
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
PORT   ?= 8501

.PHONY: run test

$(PY):
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip

$(VENV)/.run-deps: pyproject.toml | $(PY)
	$(PY) -m pip install --quiet -e .
	touch $@

$(VENV)/.test-deps: pyproject.toml | $(PY)
	$(PY) -m pip install --quiet -e '.[test]'
	touch $@ $(VENV)/.run-deps

run: $(VENV)/.run-deps
	$(PY) -m streamlit run app.py --server.port $(PORT) --server.headless true --browser.gatherUsageStats false

# pytest exits 5 when it collected no test: treated as a failure, never as a pass.
test: $(VENV)/.test-deps
	@$(PY) -m pytest -n 2 --dist loadgroup; rc=$$?; \
	if [ $$rc -eq 5 ]; then echo "make test: pytest collected no tests - failing on purpose"; exit 1; fi; \
	exit $$rc
