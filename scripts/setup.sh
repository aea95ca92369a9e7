#!/usr/bin/env bash
# Set up what the book and the tests need, skipping whatever is already there:
#  - Debian packages: Chromium (the browser tests) and a CJK font (the glossary's
#    Chinese column), installed with --no-install-recommends;
#  - a virtual environment in .venv with passk installed editable with every extra
#    (`pip install -e .[dev]`), redone only when pyproject.toml changed (its SHA-256 is
#    kept in .venv/.passk-setup-stamp) or passk no longer imports.
# Idempotent: a second run does nothing and takes about a second.
set -euo pipefail
cd "$(dirname "$0")/.."

APT_PACKAGES=(chromium fonts-noto-cjk fonts-dejavu-core)

missing=()
for pkg in "${APT_PACKAGES[@]}"; do
  status=$(dpkg-query -W -f='${db:Status-Status}' "$pkg" 2>/dev/null || true)
  [ "$status" = "installed" ] || missing+=("$pkg")
done
if [ "${#missing[@]}" -gt 0 ]; then
  if [ "$(id -u)" -eq 0 ]; then SUDO=(); else SUDO=(sudo); fi
  echo "setup: installing ${missing[*]} (apt-get, --no-install-recommends)"
  # another apt-get or dpkg (an unattended upgrade, a second terminal) may hold the package
  # manager's locks: wait for them (up to 10 minutes) instead of failing at once
  wait_lock=(-o DPkg::Lock::Timeout=600)
  for try in $(seq 60); do
    "${SUDO[@]}" apt-get "${wait_lock[@]}" update -qq && break
    [ "$try" -lt 60 ] || { echo "setup: apt-get update kept failing" >&2; exit 1; }
    echo "setup: apt-get update failed (the package lists' lock is held?): retrying in 10 s" >&2
    sleep 10
  done
  DEBIAN_FRONTEND=noninteractive "${SUDO[@]}" apt-get "${wait_lock[@]}" install -y -qq \
    --no-install-recommends "${missing[@]}" >/dev/null
fi

STAMP=.venv/.passk-setup-stamp
want=$(sha256sum pyproject.toml | cut -d' ' -f1)
have=$(cat "$STAMP" 2>/dev/null || true)
installed() {   # passk installed editable from this checkout (no numpy import: fast)
  .venv/bin/python -I -c "import importlib.util as u, sys; s = u.find_spec('passk'); \
sys.exit(not (s and s.origin.startswith('$PWD/')))" 2>/dev/null
}
if [ "$want" != "$have" ] || ! installed; then
  if ! [ -x .venv/bin/python ]; then
    echo "setup: creating .venv"
    python3 -m venv .venv
    .venv/bin/python -m pip install -q --upgrade pip
  fi
  # the distribution was called passk before it became passk-reliability: remove the old
  # one, whose entry points and console script would otherwise stay beside the new one's
  if .venv/bin/python -m pip show -q passk >/dev/null 2>&1; then
    .venv/bin/python -m pip uninstall -q -y passk
  fi
  rm -rf passk.egg-info   # its build metadata: seen from the root, its entry points too
  echo "setup: pip install -e '.[dev]' (pyproject.toml changed or passk is not installed)"
  .venv/bin/python -m pip install -q -e ".[dev]"
  echo "$want" > "$STAMP"
fi
# setuptools leaves passk_reliability.egg-info in the checkout when it builds the editable
# install; from the checkout's root (on sys.path) it shadows the installed dist-info, which
# alone says the install is editable, and Inspect then names passk's reducer and metric
# without "passk/"
rm -rf passk.egg-info passk_reliability.egg-info

echo "setup: ready: $(.venv/bin/python --version), passk $(.venv/bin/python -c \
'import importlib.metadata as m; print(m.version("passk-reliability"))'), chromium \
$(dpkg-query -W -f='${Version}' chromium), $(fc-list :lang=zh family | grep -c . || true) CJK fonts"
