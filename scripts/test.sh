#!/usr/bin/env bash
# Run every test: the workflow checked by actionlint, unit tests, doctests (package and
# README), the README's shell examples run and compared, every notebook re-executed
# and compared with its stored outputs (nbval), and every built page in offline headless
# Chromium (after scripts/book.sh; the browser test builds the book itself if it is
# missing). Works from a fresh shell: no need to activate .venv. Extra arguments go to
# pytest, e.g. `bash scripts/test.sh -x -k metrics`.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/setup.sh >/dev/null
export VIRTUAL_ENV="$PWD/.venv" PATH="$PWD/.venv/bin:$PATH"   # no need to activate
ruff check passk tests benchmarks scripts _ext   # lint: every rule but the ignores pyproject.toml gives reasons for (pinned ruff)
mypy --strict passk                         # types: strict, as [tool.mypy] says (scipy-stubs, types-tqdm)
lint-imports                                # the layers: no module imports a higher layer (pyproject.toml)
actionlint                                  # .github/workflows/*.yml (the lint extra; offline)
# The browser tests read the built books; build them first if they are missing, so that
# two test workers never build at once.
[ -f _build/html/index.html ] && [ -f _build/html/zh/index.html ] || bash scripts/book.sh
# -rs: every skip says why. Test files are spread over the cores, one file to a worker
# (--dist loadfile keeps a notebook's cells, and a module's fixtures, in one process).
# The tests marked slow (exhaustive proofs by enumeration, Monte Carlo studies, two of the
# JupyterLab sessions: about 4 more minutes on 2 cores) run with `bash scripts/test.sh --all`.
marker=(-m "not slow")
if [ "${1:-}" = "--all" ]; then marker=(); shift; fi
pytest --nbval -rs --numprocesses auto --maxprocesses 4 --dist loadfile "${marker[@]}" "$@"
