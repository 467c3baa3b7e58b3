#!/usr/bin/env bash
# make bench-sqlite: time backup's snapshot of a 1 GiB SQLite database against Debian's
# sqlite3 .backup (the same online backup API, in C) in the same run, and print a Markdown
# table for BENCHMARKS.md.
#
#   bench/sqlite.sh BIN         BIN is the backup binary
#
# Environment: BENCH_RUNS (default 3) runs of each command, interleaved so that other load
# falls on all of them alike; medians are printed. BENCH_DIR is the scratch folder (default:
# a new one under /tmp, removed at the end; it needs about 4 GiB).
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
bin=$(realpath "${1:-$repo/bin/backup}")
runs=${BENCH_RUNS:-3}
work=${BENCH_DIR:-}
if [ -z "$work" ]; then
	work=$(mktemp -d /tmp/backup-bench-sqlite.XXXXXX)
	trap 'rm -rf "$work"' EXIT
fi
command -v sqlite3 >/dev/null || { echo "bench: needs sqlite3 (Debian package sqlite3)" >&2; exit 1; }
[ -x /usr/bin/time ] || { echo "bench: needs /usr/bin/time (GNU time)" >&2; exit 1; }

# 1,024 rows of 1 MiB, each half random and half zeros (so deflate has something to do), in
# a WAL database.
mkdir -p "$work/app"
sqlite3 "$work/app/big.db" >/dev/null <<'SQL'
PRAGMA journal_mode = wal;
CREATE TABLE t (id INTEGER PRIMARY KEY, v BLOB);
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 1024)
INSERT INTO t (v) SELECT randomblob(524288) || zeroblob(524288) FROM n;
SQL
size=$(stat -c %s "$work/app/big.db")

# measure NAME CMD...: wall seconds and peak RSS (KiB) of CMD, appended to results.tsv.
measure() {
	local name=$1
	shift
	rm -f "$work"/out.*
	sync
	/usr/bin/time -f "%e %M" -o "$work/time.txt" "$@" >/dev/null 2>"$work/stderr.txt" ||
		{ cat "$work/stderr.txt" >&2; exit 1; }
	read -r wall rss <"$work/time.txt"
	printf '%s\t%s\t%s\n' "$name" "$wall" "$rss" >>"$work/results.tsv"
}

: >"$work/results.tsv"
cd "$work"
for _ in $(seq "$runs"); do
	measure "sqlite3 .backup" sqlite3 app/big.db ".backup out.db"
	measure "backup create --level 0" "$bin" create -q --level 0 -o out.zip app
	measure "backup create (level 6)" "$bin" create -q -o out.zip app
	measure "backup create --sqlite off --level 0" "$bin" create -q --sqlite off --level 0 -o out.zip app
done

median() { sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
peer=$(awk -F'\t' '$1 == "sqlite3 .backup" { print $2 }' results.tsv | median)
echo "1 GiB database ($size bytes, WAL mode), $runs runs each, interleaved; medians."
echo
echo "| command | wall s | ÷ sqlite3 .backup | peak RSS MiB |"
echo "| --- | --- | --- | --- |"
for name in "sqlite3 .backup" "backup create --level 0" "backup create (level 6)" "backup create --sqlite off --level 0"; do
	wall=$(awk -F'\t' -v n="$name" '$1 == n { print $2 }' results.tsv | median)
	rss=$(awk -F'\t' -v n="$name" '$1 == n { print $3 }' results.tsv | median)
	awk -v n="$name" -v w="$wall" -v p="$peer" -v r="$rss" \
		'BEGIN { printf "| `%s` | %.2f | %.2f | %d |\n", n, w, w / p, r / 1024 }'
done
