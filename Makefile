# Two commands for a newcomer: `make run` and `make test`. Both create the virtualenv first.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

# Python keeps compiled modules in __pycache__/ (which git ignores) unless
# PYTHONDONTWRITEBYTECODE is set, as some CI images and sandboxes do: then every test process,
# and every program a test starts, compiles Berth and its ~300 test modules again (collecting
# the suite took 18 s a process instead of 8 s).
unexport PYTHONDONTWRITEBYTECODE

.PHONY: run test test-fast test-changed lint install screenshots github-openapi github-openapi-if-npm \
	backstage backstage-if-npm ci-recipes ci-recipes-if-npm

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e ".[dev]"
	touch $(STAMP)

# GitHub's OpenAPI description, which the forge stand-in (forgesandbox) validates against: from
# npm, kept out of git in .cache/. Without npm, `make install` says so and the tests that
# need it are skipped, naming this target.
GITHUB_OPENAPI_PACKAGE := @octokit/openapi@23.0.2
GITHUB_OPENAPI := .cache/octokit-openapi-23.0.2/api.github.com.json

$(GITHUB_OPENAPI):
	@command -v npm >/dev/null || { echo "make github-openapi needs npm (apt-get install npm)"; exit 1; }
	mkdir -p $(@D)
	cd $(@D) && npm pack --silent $(GITHUB_OPENAPI_PACKAGE) >/dev/null \
		&& tar -xzf octokit-openapi-23.0.2.tgz --strip-components=2 package/generated/api.github.com.json \
		&& rm octokit-openapi-23.0.2.tgz

github-openapi: $(GITHUB_OPENAPI)

# Fetched once when npm is there; otherwise a note (the tests that need it skip, saying so).
github-openapi-if-npm:
	@if command -v npm >/dev/null; then $(MAKE) -s --no-print-directory github-openapi \
		|| echo "could not fetch $(GITHUB_OPENAPI_PACKAGE): the forge stand-in's validating tests will be skipped"; \
	elif [ ! -f $(GITHUB_OPENAPI) ]; then \
		echo "npm is not here: the forge stand-in's validating tests will be skipped (make github-openapi)"; fi

# Berth for Backstage (integrations/backstage): Backstage's catalog model, which Berth's catalog
# is validated with, and the backend module (berth:request, the reader of Berth's catalog),
# compiled by tsc into dist/: installed from its lock file and built when npm is there;
# otherwise their tests are skipped, saying so.
BACKSTAGE := integrations/backstage
BACKSTAGE_MODULES := $(BACKSTAGE)/node_modules/.package-lock.json
BACKSTAGE_BUILD := $(BACKSTAGE)/dist/.tsbuildinfo

$(BACKSTAGE_MODULES): $(BACKSTAGE)/package-lock.json
	@command -v npm >/dev/null || { echo "make backstage needs npm (apt-get install npm)"; exit 1; }
	cd $(BACKSTAGE) && npm ci --no-audit --no-fund --silent

$(BACKSTAGE_BUILD): $(BACKSTAGE_MODULES) $(BACKSTAGE)/tsconfig.json \
		$(wildcard $(BACKSTAGE)/src/*.ts $(BACKSTAGE)/test/*.ts $(BACKSTAGE)/test/support/*.ts)
	cd $(BACKSTAGE) && npm run build --silent
	touch $@

backstage: $(BACKSTAGE_BUILD)

backstage-if-npm:
	@if command -v npm >/dev/null; then $(MAKE) -s --no-print-directory backstage \
		|| echo "could not install or build $(BACKSTAGE): the Backstage tests will be skipped"; \
	else echo "npm is not here: the Backstage tests will be skipped (make backstage)"; fi

# The tools docs/automation.md's CI recipes are run with (gitlab-ci-local, GitHub's workflow
# parser): installed from integrations/ci's lock file when npm is there; otherwise the recipe
# tests that need them are skipped, saying so.
CI_RECIPES := integrations/ci
CI_RECIPES_MODULES := $(CI_RECIPES)/node_modules/.package-lock.json

$(CI_RECIPES_MODULES): $(CI_RECIPES)/package-lock.json
	@command -v npm >/dev/null || { echo "make ci-recipes needs npm (apt-get install npm)"; exit 1; }
	cd $(CI_RECIPES) && npm ci --no-audit --no-fund --silent

ci-recipes: $(CI_RECIPES_MODULES)

ci-recipes-if-npm:
	@if command -v npm >/dev/null; then $(MAKE) -s --no-print-directory ci-recipes \
		|| echo "could not install $(CI_RECIPES)'s packages: the CI recipe tests will be skipped"; \
	else echo "npm is not here: the CI recipe tests will be skipped (make ci-recipes)"; fi

install: $(STAMP) github-openapi-if-npm backstage-if-npm ci-recipes-if-npm

run: $(STAMP)
	$(BIN)/python -m portal.run

# Every core (pytest-xdist): tests that must share something carry an xdist_group mark, and
# --dist loadgroup keeps each group on one worker; tests/conftest.py hands out the longest first.
XDIST := -n auto --dist loadgroup
# make test runs one worker more than there are cores: its browsers, servers and worker
# processes keep a test waiting, and with one worker per core the cores stood idle a fifth
# of the time (vmstat: 22 %; 4 % with one more). test-fast's tests keep a core busy.
WORKERS_ALL := $(shell $(PYTHON) -c 'import os; print(len(os.sched_getaffinity(0)) + 1 if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1) + 1)')
test: $(STAMP) github-openapi-if-npm backstage-if-npm ci-recipes-if-npm
	$(BIN)/python -m pytest -n $(WORKERS_ALL) --dist loadgroup $(PYTEST_ARGS)

# What a change is checked with before the whole suite (docs/testing.md): the unit, API and
# page tests and the GitOps engine's (git on local repositories), spread over the cores; no
# browser, no server, worker or kubectl of a test's own (marked `processes`; a test that
# starts one unmarked fails here), no fuzzing, no engine at volume (`scale`), no PostgreSQL,
# Redis or worker.
FAST_MARKERS := not browser and not integration and not faults and not bench and not processes and not fuzz and not scale
test-fast: $(STAMP) github-openapi-if-npm
	$(BIN)/python -m pytest $(XDIST) -m "$(FAST_MARKERS)" --ignore=tests/system --ignore=tests/browser $(PYTEST_ARGS)

# Only the tests whose code changed since the last run of this target (pytest-testmon,
# .testmondata): the first run is the whole suite; a change that runs only inside a program
# a test starts (a worker, make run) is seen by make test, not here.
test-changed: $(STAMP) github-openapi-if-npm backstage-if-npm ci-recipes-if-npm
	$(BIN)/python -m pytest -n $(WORKERS_ALL) --dist loadgroup --testmon $(PYTEST_ARGS)

# Retake docs/screenshots/ with the browser tests that take them (a plain test run leaves the
# docs alone and keeps its pictures in artifacts/screenshots/).
CHROMIUM ?= $(or $(BERTH_CHROMIUM),/usr/bin/chromium)
screenshots: $(STAMP)
	@test -x $(CHROMIUM) || { echo "make screenshots needs Chromium at $(CHROMIUM) (apt-get install chromium)"; exit 1; }
	BERTH_SCREENSHOTS_DIR=$(CURDIR)/docs/screenshots BERTH_CHROMIUM=$(CHROMIUM) \
		$(BIN)/python -m pytest $$(grep -l docs_screenshot tests/browser/test_*.py) $(PYTEST_ARGS)

# The same checks pre-commit runs (.pre-commit-config.yaml): formatting, lint, types, layers.
# The contracts are checked without import-linter's cache: after branch switches it can hold
# a graph the files no longer have (seen reporting imports a module had dropped).
lint: $(STAMP)
	$(BIN)/ruff format --check .
	$(BIN)/ruff check .
	$(BIN)/pyright
	$(BIN)/lint-imports --no-cache
