# `make check` is the inner loop: ruff, the type checker, import-linter and the fast test tier
# (pytest -m "not slow"), each a target of its own too; all of them are .ci/check's steps.
# `make test` is the whole suite, README's command (what CI's .ci/run runs after a fresh install).
PYTHON ?= python
export PYTHON

.PHONY: check ruff types imports fast test

check:
	.ci/check

ruff types imports fast:
	.ci/check $@

test:
	$(PYTHON) -m pytest -q -p no:cacheprovider
