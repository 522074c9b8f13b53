#!/usr/bin/env bash
# Installs the Debian packages that are missing, through apt-get when root;
# otherwise says what to run and fails. Used by the Makefile's deps targets.
#
#   Tools/apt-install.sh "WHAT NEEDS THEM" PACKAGE...
set -euo pipefail
who=$1; shift
missing=""
for pkg in "$@"; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing="$missing $pkg"
done
[ -z "$missing" ] && exit 0
if [ "$(id -u)" = "0" ]; then
  echo "Installing$missing"
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $missing >/dev/null
else
  echo "$who needs:$missing"
  echo "Run: sudo apt-get install -y$missing"
  exit 1
fi
