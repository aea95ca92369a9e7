#!/usr/bin/env bash
# Open the notebooks in JupyterLab without ever writing the book's notebooks.
#
#   bash scripts/lab.sh [--fresh] [JUPYTER LAB ARGS ...]
#
# The book renders the outputs stored in notebooks/*.ipynb, and JupyterLab saves (and
# autosaves) whatever it has open. So the lab never opens them: it opens working copies
# in lab/ (untracked: .gitignore lists it), one per notebook, copied from notebooks/ the
# first time and kept afterwards, so that a reader's edits and outputs survive from one
# session to the next. A copy differs from its notebook in one place: MyST front matter
# atop its first cell numbers its figures and exercises as the book does ("Fig. 5.1",
# "Exercise 5.1", not jupyterlab-myst's "Figure 1"; scripts/lab_copy.py). JupyterLab's
# root is lab/: the tracked notebooks are outside it, and no save, autosave or "Save As"
# of the session can reach them. lab/ sits beside notebooks/, so the notebooks' relative
# paths (../book/data, ../examples) still resolve.
#
#   --fresh   copy every notebook again, replacing the working copies (edits are lost).
#
# Each page has a Chinese working copy beside it, lab/NN_x.zh.ipynb (lab_copy.py --zh):
# the Chinese edition's prose, with its figures drawn in Chinese.
#
# A working copy older than its notebook (after a git pull) is kept and named on start;
# use --fresh to replace it. Set-up first (scripts/setup.sh, idempotent), then
# `jupyter lab lab/` from .venv, with --allow-root when run as root (JupyterLab refuses
# root without it, as in many containers). jupyterlab-myst (the notebooks extra) draws
# the prose as MyST, numbers included; the cells the book hides open collapsed. Other
# arguments go to jupyter lab, e.g. `bash scripts/lab.sh --ip=0.0.0.0 --no-browser` in a
# container. To change a page of the book, edit notebooks/NN_x.ipynb itself, outside the
# lab (CONTRIBUTING.md, "Writing a notebook").
set -euo pipefail
cd "$(dirname "$0")/.."

fresh=0
if [ "${1:-}" = "--fresh" ]; then fresh=1; shift; fi

bash scripts/setup.sh

LAB=lab
mkdir -p "$LAB"
stale=()
for src in notebooks/*.ipynb; do
  stem="$(basename "$src" .ipynb)"
  # the English copy, and the Chinese edition's beside it when the page has a catalog
  editions=("$LAB/$stem.ipynb:")
  catalog="locales/zh_CN/notebooks/$stem.yml"
  if [ -e "$catalog" ]; then editions+=("$LAB/$stem.zh.ipynb:--zh"); fi
  for edition in "${editions[@]}"; do
    copy="${edition%%:*}"; flag="${edition#*:}"
    if [ "$fresh" -eq 1 ] || ! [ -e "$copy" ]; then
      .venv/bin/python scripts/lab_copy.py $flag "$src" "$copy"
    elif [ "$src" -nt "$copy" ] || { [ -n "$flag" ] && [ "$catalog" -nt "$copy" ]; }; then
      stale+=("$copy")
    fi
  done
done
if [ "${#stale[@]}" -gt 0 ]; then
  echo "lab: kept your working copies ${stale[*]}, older than their notebooks in" \
       "notebooks/; bash scripts/lab.sh --fresh replaces every copy" >&2
fi
echo "lab: JupyterLab opens working copies in $LAB/ (untracked); notebooks/ is never written" >&2

args=()
if [ "$(id -u)" -eq 0 ]; then args+=(--allow-root); fi
exec .venv/bin/jupyter lab "${args[@]}" "$@" "$LAB/"
