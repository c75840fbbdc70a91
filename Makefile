# Two entry points a fresh machine needs: `make demo` and `make test`.
# Both create .venv and build the Rust core into it on first use.

VENV ?= .venv
PY := $(VENV)/bin/python
PIP := $(VENV)/bin/pip
STAMP := $(VENV)/.spacetp-built

.PHONY: demo test build lint rust-test py-test clean

$(VENV)/bin/python:
	python3 -m venv $(VENV)
	$(PIP) install --quiet --upgrade pip
	$(PIP) install --quiet "maturin>=1.5,<2" pytest ruff

# The Cargo profile of the Python extension: `release` (whole-program LTO) for the demo and for
# use; `make test` builds it with `tests` (no LTO), the profile of the Rust tests it runs
# first, so the two share their compiled dependencies instead of building them twice.
PROFILE ?= release

$(STAMP): $(VENV)/bin/python pyproject.toml Cargo.toml $(shell find crates python -name '*.rs' -o -name '*.py' -o -name 'Cargo.toml' 2>/dev/null)
	MATURIN_PEP517_ARGS="--profile $(PROFILE)" $(PIP) install --quiet -e ".[dev,orbits]"
	. $(VENV)/bin/activate && maturin develop --profile $(PROFILE) --skip-install --quiet
	touch $(STAMP)

build: $(STAMP)

demo: build
	$(VENV)/bin/spacetp reproduce altman --quick --out results/altman

# Clippy in the Rust tests' profile: the build scripts and proc macros it compiles are then
# the ones `cargo test --profile tests` uses (from scratch on 2 cores: lint and the test
# build 362 s, against 519 s with clippy in the dev profile).
lint: $(VENV)/bin/python
	cargo fmt --all -- --check
	cargo clippy --profile tests --workspace --all-targets -- -D warnings
	$(VENV)/bin/ruff check python tests
	$(VENV)/bin/ruff format --check python tests

rust-test:
	cargo test --workspace --profile tests

py-test: build
	$(VENV)/bin/pytest -q -rs --durations=15 tests

test: PROFILE = tests
test: lint rust-test py-test

clean:
	rm -rf $(VENV) target
