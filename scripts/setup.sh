#!/usr/bin/env bash
# Set up a fresh machine: Debian's Chromium (for the browser test), a virtual
# environment in .venv, and passk installed editable with every extra.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! [ -x /usr/bin/chromium ]; then
  if [ "$(id -u)" -eq 0 ]; then SUDO=""; else SUDO="sudo"; fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq chromium fonts-dejavu-core >/dev/null
fi

[ -x .venv/bin/python ] || python3 -m venv .venv
.venv/bin/python -m pip install -q --upgrade pip
.venv/bin/python -m pip install -q -e ".[dev]"
echo "set up: $(.venv/bin/python --version), passk $(.venv/bin/python -c 'import passk; print(passk.__version__)'), $(/usr/bin/chromium --version)"
