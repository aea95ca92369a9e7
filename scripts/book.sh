#!/usr/bin/env bash
# Build the book: set up whatever is missing (scripts/setup.sh, idempotent), then build
# the HTML with any warning an error. The build renders the outputs stored in the
# notebooks (execute_notebooks: "off" in _config.yml); it does not run them. The test
# command (scripts/test.sh) re-executes every notebook with nbval and fails when a stored
# output differs, which keeps what the book shows current. Extra arguments go to
# jupyter-book. The book lands in _build/html/index.html, its Chinese edition in
# _build/html/zh/index.html.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/setup.sh
export VIRTUAL_ENV="$PWD/.venv" PATH="$PWD/.venv/bin:$PATH"   # no need to activate
start=$SECONDS
jupyter-book build . -W -n --keep-going "$@"
echo "book: built in $((SECONDS - start)) s: $PWD/_build/html/index.html"
# The Chinese edition: the same notebooks with the prose of locales/zh_CN/ and the
# stored outputs; only the figures are drawn again, by the same code in Chinese (each
# notebook with figures executed once, cached in _build/zh-figures/), built with -W into
# _build/html/zh/ (CONTRIBUTING.md).
python scripts/zh_book.py build "$@"
