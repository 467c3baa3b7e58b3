#!/usr/bin/env bash
# Lays out the example tree in a temp folder, adds what git cannot hold (a unix socket, a
# FIFO, a symlink), backs it up and shows where the archive and the receipt are.
set -euo pipefail
bin=$(realpath "$1")
here=$(dirname "$(realpath "$0")")
work=$(mktemp -d -t backup-demo-XXXXXX)
trap 'rm -rf "$work"' EXIT # the demo leaves nothing behind
cp -r "$here/demo/app" "$work/app"
mkfifo "$work/app/run/queue"
ln -s ../config/app.toml "$work/app/current.toml"
python3 - "$work/app/run/ctl.sock" <<'PY' 2>/dev/null || echo "(no python3: demo runs without a socket)"
import os, socket, sys
os.chdir(os.path.dirname(sys.argv[1]))
socket.socket(socket.AF_UNIX).bind(os.path.basename(sys.argv[1]))
PY
echo "example tree: $work/app"
echo "\$ backup create --exclude-caches --output-dir $work/backups $work/app"
set +e
"$bin" create --exclude-caches --output-dir "$work/backups" "$work/app"
code=$?
set -e
echo "exit code: $code"
echo
echo "--output-dir made $work/backups a backup set: the run read its new archive back, then"
echo "wrote the archive's name into the file LATEST, the pointer that restore, verify and"
echo "status follow (\"LATEST -> ...\" above); it names only complete, verified backups (unless --activate-incomplete)."
echo
ls -l "$work/backups"
echo
echo "receipt:"
cat "$work/backups"/*.receipt.json
echo
echo "\$ backup verify $work/backups"
"$bin" verify "$work/backups"
echo
echo "(the demo's temp folder $work is removed now)"
exit $code
