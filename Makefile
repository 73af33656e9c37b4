# The two set-up commands of the README: `make run` and `make test`; `make docs` builds the site.
PYTHON   ?= python3
VENV     ?= .venv
PY       := $(VENV)/bin/python
PORT     ?= 8501
CHROMIUM ?= /usr/bin/chromium

.PHONY: run test browser docs

$(PY):
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip

$(VENV)/.run-deps: pyproject.toml | $(PY)
	$(PY) -m pip install --quiet -e .
	touch $@

$(VENV)/.docs-deps: pyproject.toml | $(PY)
	$(PY) -m pip install --quiet -e '.[docs]'
	touch $@ $(VENV)/.run-deps

$(VENV)/.test-deps: pyproject.toml | $(PY)
	$(PY) -m pip install --quiet -e '.[test]'
	touch $@ $(VENV)/.run-deps $(VENV)/.docs-deps

# make run: this machine only (127.0.0.1). make run HOST=0.0.0.0 serves every network interface;
# so does the class mode, make run DEMO=1 (a lecture on one server: every session starts with the
# reproducible demo seed on). On a server reachable from the network a private upload needs the
# password set in the environment variable PRIVATE_LABEL_LAB_PASSWORD (none: uploads are off, and
# Streamlit's upload limit drops to 1 MB per file, the smallest it takes: app_pages/_serving.py).
# Only the command line opens the network: HOST is set with "=", not "?=", so a HOST variable that
# a shell happens to export (often the machine's name) is ignored, and the class mode is on only
# for DEMO=1 typed on make's command line (an exported DEMO, or DEMO=0, leaves it off).
# make run LEDGER=path: the ledger store of real jobs (default: $PRIVATE_LABEL_LAB_LEDGER, else
# ~/.local/share/private-label-lab/ledger.sqlite).
CLASS := $(if $(and $(filter command line,$(origin DEMO)),$(filter 1,$(strip $(DEMO)))),1)
HOST = $(if $(CLASS),0.0.0.0,127.0.0.1)
run: $(VENV)/.run-deps
	@$(PY) -m app_pages._serving '$(HOST)' '$(PORT)'
	$(if $(CLASS),PRIVATE_LABEL_LAB_DEMO_SEED=1 )$(if $(LEDGER),PRIVATE_LABEL_LAB_LEDGER='$(LEDGER)' )$(PY) -m streamlit run app.py --server.address '$(HOST)' --server.port $(PORT) $$($(PY) -m app_pages._serving --streamlit-options '$(HOST)') --server.headless true --browser.gatherUsageStats false

# The documentation site, built offline into site/ (open site/index.html). The test suite builds
# it with --strict (tests/test_docs.py): a broken link, anchor or API reference fails it.
docs: $(VENV)/.docs-deps
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs build --clean --site-dir site

# The browser tests drive Debian's chromium. This is the one place that installs it: with
# apt-get as root (or through sudo without a password); anywhere else make test stops
# here, before any test runs, with one line saying what to run.
browser:
	@if [ -x "$(CHROMIUM)" ]; then exit 0; fi; \
	if [ "$$(id -u)" -eq 0 ]; then SUDO=""; \
	elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then SUDO="sudo -n"; \
	else echo "make test: the browser tests need Debian's chromium at $(CHROMIUM); run 'sudo apt-get install chromium', then make test again" >&2; exit 1; fi; \
	if ! command -v apt-get >/dev/null 2>&1; then \
	  echo "make test: the browser tests need Debian's chromium at $(CHROMIUM) and this machine has no apt-get; install chromium there (or set CHROMIUM=/path/to/chromium), then make test again" >&2; exit 1; fi; \
	echo "make test: installing Debian's chromium for the browser tests (apt-get install chromium)"; \
	export DEBIAN_FRONTEND=noninteractive; \
	$$SUDO apt-get update -qq && $$SUDO apt-get install -y -qq chromium >/dev/null \
	  || { echo "make test: 'apt-get install chromium' failed; install Debian's chromium by hand, then make test again" >&2; exit 1; }; \
	[ -x "$(CHROMIUM)" ] || { echo "make test: chromium installed but $(CHROMIUM) is missing; set CHROMIUM=/path/to/chromium" >&2; exit 1; }

# pytest exits 5 when it collected no test: treated as a failure, never as a pass.
# Three workers on two cores: the browser, served-app and cluster tests spend much of their time
# waiting on their own processes (measured: 897 s with three, about 940 s with two).
test: $(VENV)/.test-deps browser
	@CHROMIUM="$(CHROMIUM)" $(PY) -m pytest -n 3 --dist loadgroup; rc=$$?; \
	if [ $$rc -eq 5 ]; then echo "make test: pytest collected no tests - failing on purpose"; exit 1; fi; \
	exit $$rc
