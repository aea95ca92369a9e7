#!/usr/bin/env bash
# Open the notebooks in JupyterLab: set up whatever is missing (scripts/setup.sh,
# idempotent), then `jupyter lab notebooks/` from .venv, with --allow-root when run as
# root (JupyterLab refuses root without it, as in many containers). jupyterlab-myst (the
# notebooks extra) draws the prose as MyST, numbers included; the cells the book hides
# open collapsed. Extra arguments go to jupyter lab, e.g. `bash scripts/lab.sh --ip=0.0.0.0
# --no-browser` in a container.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/setup.sh
args=()
if [ "$(id -u)" -eq 0 ]; then args+=(--allow-root); fi
exec .venv/bin/jupyter lab "${args[@]}" "$@" notebooks/
