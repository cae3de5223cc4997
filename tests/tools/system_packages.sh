#!/usr/bin/env bash
# What `make test` needs outside the virtual environment, checked before any apt step.
#
#   tests/tools/system_packages.sh chromium prometheus redis node
#
# Each name is checked; what is present is left alone (no apt step at all). What is missing is said
# in one sentence first: as root the Debian packages are installed with apt-get (waiting up to
# 2 minutes for another apt or dpkg run's lock); otherwise, or when apt-get fails, the script ends
# with a sentence saying what to install, never with make's bare "Error 100".
# CHROMIUM (the browser's path) and APT_GET (the apt-get command) can be set, for the tests.
set -uo pipefail

chromium=${CHROMIUM:-/usr/bin/chromium}
apt_get=${APT_GET:-apt-get}
packages=()
for need in "$@"; do
  case $need in
    chromium)
      [ -x "$chromium" ] || packages+=(chromium fonts-dejavu-core) ;;
    prometheus)
      { command -v promtool && command -v prometheus; } >/dev/null || packages+=(prometheus) ;;
    redis)
      command -v redis-server >/dev/null || packages+=(redis-server) ;;
    node)
      major=$(node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0)
      if ! command -v npm >/dev/null || [ "$major" -lt 20 ]; then
        echo "make test needs Node.js 20 or later with npm (22 or later avoids npm's engine warnings) for the TypeScript, browser table and interop tests: install it (Debian: apt-get install nodejs npm; or from https://nodejs.org) and run make test again." >&2
        exit 1
      fi ;;
    *)
      echo "system_packages.sh: unknown need '$need' (chromium, prometheus, redis, node)" >&2
      exit 2 ;;
  esac
done
[ ${#packages[@]} -eq 0 ] && exit 0

list=${packages[*]}
if [ "$(id -u)" != 0 ]; then
  echo "make test needs the Debian packages $list for the browser, Prometheus and token ledger tests and can install them only as root: run it as root, or install them first (sudo apt-get install --no-install-recommends $list) and run make test again." >&2
  exit 1
fi
echo "make test needs the Debian packages $list for the browser, Prometheus and token ledger tests: installing them with apt-get."
if ! { $apt_get -o DPkg::Lock::Timeout=120 update -q &&
       DEBIAN_FRONTEND=noninteractive $apt_get -o DPkg::Lock::Timeout=120 install -y -q --no-install-recommends "${packages[@]}"; }; then
  echo "apt-get could not install $list (another apt or dpkg run may still hold its lock, or the package sources cannot be reached): install them yourself (apt-get install --no-install-recommends $list) and run make test again." >&2
  exit 1
fi
