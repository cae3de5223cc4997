#!/usr/bin/env bash
# Make sure Debian's chromium is installed (the HTML replay test drives it headless).
# Used by tests/test_replay_html.py's session fixture and by CI set-up; safe to run twice.
set -euo pipefail
if [ -x /usr/bin/chromium ]; then
  exit 0
fi
SUDO=""
if [ "$(id -u)" != "0" ]; then
  if command -v sudo >/dev/null 2>&1; then SUDO="sudo -n"; else echo "ensure_chromium: not root and no sudo" >&2; exit 1; fi
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends chromium fonts-dejavu-core >/dev/null
test -x /usr/bin/chromium
