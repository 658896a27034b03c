#!/usr/bin/env bash
# Debian packages that some end-to-end tests use: GNU Backgammon (external-player client test) and
# Chromium (web page test). Installed only when missing and when running as root.
set -u
need=()
{ command -v gnubg || [ -x /usr/games/gnubg ]; } >/dev/null 2>&1 || need+=(gnubg)
command -v chromium >/dev/null 2>&1 || need+=(chromium)
[ ${#need[@]} -eq 0 ] && exit 0
[ "$(id -u)" = 0 ] || exit 1
export DEBIAN_FRONTEND=noninteractive
apt-get -o DPkg::Lock::Timeout=600 update -qq >/dev/null && apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends "${need[@]}" >/dev/null
