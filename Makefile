# Two commands do all the set-up: `make demo` and `make test`; `make check` is the fast tier (CONTRIBUTING.md).
PYTHON ?= python3.11
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: venv check test demo release docs clean

venv: $(STAMP)

# The lock pins every package (torch 2.13.0 is the CPU build on local disk);
# pyproject.toml keeps the package's own ranges loose.
$(STAMP): requirements.lock requirements-dev.lock pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -r requirements.lock -r requirements-dev.lock
	$(PY) -m pip install --quiet --no-deps --no-build-isolation -e .
	touch $(STAMP)

# The fast tier, well under two minutes: ruff over the project's Python (pyproject.toml says what), the
# documentation site built strictly, mypy over the package ([tool.mypy] says what), then the unit and
# reference tests on every core.
check: venv docs
	$(VENV)/bin/ruff check --quiet
	$(PY) -m mypy
	PYTHONDONTWRITEBYTECODE=1 $(PY) -m pytest -q -n auto -m "not slow" tests/unit tests/reference

# Everything (about 14 minutes): test files run on every core (pytest-xdist), each file in one worker;
# nothing writes __pycache__.
test: venv
	PYTHONDONTWRITEBYTECODE=1 $(PY) -m pytest -q -n auto --dist loadfile

# Grade a bundled sample class and print the class table (reports in .demo/reports/).
demo: venv
	$(PY) -m tools.demo

# Regenerate release/ (nbgrader) and solutions/ (executed answer keys) from assignments/.
release: venv
	$(PY) -m tools.release

# Build the documentation site from docs/ into site/ (mkdocs.yml); any warning fails the build.
docs: venv
	$(PY) -m mkdocs build --strict

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache site
