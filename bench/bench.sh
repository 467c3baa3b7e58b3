#!/usr/bin/env bash
# make bench: time backup against the tools people would use instead, on the same corpus, in
# the same run, and write BENCHMARKS.md. No network: the corpus is the Go toolchain's own
# source tree plus generated files (bench/gencorpus).
#
#   bench/bench.sh BIN          BIN is the backup binary (make bench builds bin/backup)
#
# Environment: BENCH_RUNS (default 3) runs of each tool, interleaved so that other load on
# the machine falls on every tool alike; medians are reported. BENCH_SCALE=0 skips the
# 1,000,000-file and 5 GiB runs. BENCH_LEVELS=0 skips the table of levels. BENCH_DIR is the
# scratch folder (default: a new one under /tmp, removed at the end). BENCH_OUT is the report
# (default: BENCHMARKS.md in the repository). BENCH_CORPUS copies an existing corpus instead
# of laying out a new one. BENCH_ONLY=reuse runs only the reuse benchmarks (issue 10) and
# rewrites only their rows and section of an existing BENCH_OUT; BENCH_ONLY=seal likewise
# the encryption benchmarks (issue 23; with VERSITYGW set, the bucket's too). Results go to
# BENCH_DIR/results.tsv and meta.txt (results-reuse.tsv, meta-reuse.txt… for BENCH_ONLY).
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
bin=$(realpath "${1:-$repo/bin/backup}")
runs=${BENCH_RUNS:-3}
scale=${BENCH_SCALE:-1}
levels=${BENCH_LEVELS:-1}
only=${BENCH_ONLY:-}
case $only in
"" | reuse | seal) ;;
*) echo "bench: BENCH_ONLY=$only: only reuse or seal can be run alone" >&2 && exit 2 ;;
esac
out=${BENCH_OUT:-$repo/BENCHMARKS.md}
work=${BENCH_DIR:-}
if [ -z "$work" ]; then
	work=$(mktemp -d /tmp/backup-bench.XXXXXX)
	trap 'rm -rf "$work"' EXIT
fi
mkdir -p "$work"
export PATH="$PATH:/usr/local/go/bin"
# A BENCH_ONLY run keeps files of its own, so that one run in the BENCH_DIR of a full run
# leaves the full run's results there to render again (with bench/report) once the notes
# are edited.
results=$work/results${only:+-$only}.tsv
meta=$work/meta${only:+-$only}.txt
: >"$results"
: >"$meta"

say() { echo "bench: $*" >&2; }

# Peers missing on a Debian machine are installed when we are root; otherwise their rows say
# "not installed".
install_peers() {
	local need=()
	command -v zip >/dev/null || need+=(zip)
	command -v unzip >/dev/null || need+=(unzip)
	command -v pigz >/dev/null || need+=(pigz)
	command -v zstd >/dev/null || need+=(zstd)
	command -v 7z >/dev/null || need+=(p7zip-full)
	[ -x /usr/bin/time ] || need+=(time)
	command -v restic >/dev/null || need+=(restic)
	if [ ${#need[@]} -gt 0 ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
		say "installing ${need[*]}"
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null 2>&1 ||
			{ apt-get update -qq >/dev/null 2>&1 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null 2>&1; } ||
			say "could not install ${need[*]}"
	fi
	if [ ! -x /usr/bin/time ]; then
		say "/usr/bin/time (GNU time) is needed for wall time and peak RSS"
		exit 1
	fi
}

# measure NAME RUN OUTPUT CMD...: runs CMD in $work, records wall seconds, peak RSS (KiB) and
# the size of OUTPUT (- for none). A command that fails is recorded as failed. Each command
# runs after a sync, so that none is timed while the kernel writes out what the ones before
# it wrote: it starts on pages 30 s old (dirty_expire), and in the table of tools 7z's
# output turned 30 s old as backup's next round began, after python and readall (backup
# took 2.5 to 4.0 s there, 2.2 to 2.7 s after a sync, on 2026-12-06).
measure() {
	local name=$1 run=$2 output=$3
	shift 3
	[ "$output" = - ] || { output=$work/$output && rm -f "$output"; }
	sync
	local status=ok
	(cd "$work" && /usr/bin/time -f '%e %M %U %S' -o "$work/time.txt" "$@" >/dev/null 2>"$work/stderr.txt") || status=failed
	# A backup run that is complete or only incomplete (exit 3, e.g. an unreadable file) counts.
	if [ $status = failed ] && grep -q 'non-zero status 3' "$work/time.txt"; then status=ok; fi
	local wall rss user sys size=0
	read -r wall rss user sys < <(tail -n 1 "$work/time.txt")
	[ "$output" = - ] || size=$(stat -c %s "$output" 2>/dev/null || echo 0)
	if [ $status = failed ]; then
		say "$name failed: $(head -c 300 "$work/stderr.txt")"
	fi
	local cpu
	cpu=$(awk -v u="$user" -v s="$sys" 'BEGIN {print u + s}')
	printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$name" "$run" "$wall" "$rss" "$size" "$status" "$cpu" >>"$results"
}

have() { command -v "$1" >/dev/null; }

# tree_meta KEY DIR: records how many files DIR holds and their bytes, as KEY_files and
# KEY_bytes.
tree_meta() {
	echo "$1_files=$(find "$2" -type f | wc -l)" >>"$meta"
	echo "$1_bytes=$(find "$2" -type f -printf '%s\n' | awk '{s+=$1} END {print s}')" >>"$meta"
}

layout_corpus() {
	local corpus=$work/corpus
	say "laying out the corpus in $corpus"
	# A BENCH_DIR used before holds a corpus: copying into it would nest a second one.
	if [ -n "${BENCH_CORPUS:-}" ] && [ "$(realpath -m "$BENCH_CORPUS")" = "$(realpath -m "$corpus")" ]; then
		: # the corpus is already in place
	elif [ -n "${BENCH_CORPUS:-}" ]; then
		rm -rf "$corpus"
		cp -a "$BENCH_CORPUS" "$corpus"
	else
		rm -rf "$corpus"
		mkdir -p "$corpus"
		cp -r "$(go env GOROOT)/src" "$corpus/go-src"
		(cd "$repo" && go run ./bench/gencorpus "$corpus/gen")
	fi
	(cd "$repo" && go build -o "$work/readall" ./bench/readall && go build -o "$work/entryfloor" ./bench/entryfloor &&
		go build -o "$work/createfloor" ./bench/createfloor)
	tree_meta corpus "$corpus"
	echo "corpus_go=$(go env GOVERSION)" >>"$meta"
	say "corpus: $(grep corpus_files "$meta" | cut -d= -f2) files, $(grep corpus_bytes "$meta" | cut -d= -f2) bytes"
	"$work/readall" "$corpus" >/dev/null # warm the page cache: every tool reads from memory
}

python_zip() {
	python3 - "$@" <<'EOF'
import os, sys, zipfile
src, out = sys.argv[1], sys.argv[2]
base = os.path.dirname(os.path.abspath(src))
with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
    for root, dirs, files in os.walk(src):
        dirs.sort()
        for name in sorted(files):
            p = os.path.join(root, name)
            if os.path.isfile(p) and not os.path.islink(p):
                z.write(p, os.path.relpath(p, base))
EOF
}
export -f python_zip

# The tools, each as NAME<tab>OUTPUT<tab>COMMAND, run from $work on the folder corpus.
tools() {
	local t=$'\t'
	echo "backup${t}out/backup.zip${t}$bin create -q --force -o out/backup.zip corpus"
	echo "create floor (bench/createfloor)${t}out/floor.bin${t}$work/createfloor corpus out/floor.bin"
	echo "backup --level 1${t}out/backup1.zip${t}$bin create -q --force --level 1 -o out/backup1.zip corpus"
	echo "backup --method zstd${t}out/backupz.zip${t}$bin create -q --force --method zstd -o out/backupz.zip corpus"
	have zip && echo "zip -r -q${t}out/zip.zip${t}zip -r -q out/zip.zip corpus"
	have zip && echo "zip -r -q -1${t}out/zip1.zip${t}zip -r -q -1 out/zip1.zip corpus"
	have gzip && echo "tar -cf - | gzip${t}out/t.tar.gz${t}tar -cf - corpus | gzip >out/t.tar.gz"
	have pigz && echo "tar -cf - | pigz${t}out/t.tar.pigz.gz${t}tar -cf - corpus | pigz >out/t.tar.pigz.gz"
	have zstd && echo "tar -cf - | zstd -1 -T0${t}out/t.tar.zst${t}tar -cf - corpus | zstd -q -1 -T0 >out/t.tar.zst"
	have 7z && echo "7z a -tzip${t}out/7z.zip${t}7z a -tzip -bd -bso0 -bsp0 out/7z.zip corpus"
	have python3 && echo "python zipfile ZIP_DEFLATED${t}out/py.zip${t}python_zip corpus out/py.zip"
	echo "read limit (readall)${t}-${t}$work/readall corpus"
}

run_peers() {
	mkdir -p "$work/out"
	local list
	list=$(tools)
	for run in $(seq "$runs"); do
		say "run $run of $runs"
		while IFS=$'\t' read -r name output cmd; do
			measure "$name" "$run" "$output" bash -c "$cmd"
		done <<<"$list"
	done
	for t in zip pigz zstd 7z python3 gzip; do
		have $t || echo "missing=$t" >>"$meta"
	done
}

# layout_second: a second corpus, like the one issue 24 set its targets on: the standard
# library of the python3 on the PATH (its __pycache__ folders included, site-packages left
# out) and two files of 18 MB of random data (fixed seeds). Nothing when there is no python3.
layout_second() {
	have python3 || return 0
	local c=$work/second lib
	lib=$(python3 -c 'import sysconfig; print(sysconfig.get_paths()["stdlib"])')
	rm -rf "$c" && mkdir -p "$c/lib" "$c/random"
	(cd "$lib" && tar --exclude=./site-packages --exclude=./dist-packages -cf - .) | (cd "$c/lib" && tar -xf -)
	python3 - "$c/random" <<'EOF2'
import random, sys
for seed, name in ((1, "a.bin"), (2, "b.bin")):
    with open(f"{sys.argv[1]}/{name}", "wb") as f:
        f.write(random.Random(seed).randbytes(18_000_000))
EOF2
	tree_meta second "$c"
	"$work/readall" "$c" >/dev/null
}

# run_second: backup and zip -r -q on the second corpus, interleaved.
run_second() {
	have python3 || return 0
	say "the second corpus: Python's standard library and random data"
	layout_second
	for run in $(seq "$runs"); do
		measure "backup, second corpus" "$run" out/second.zip "$bin" create -q --force -o out/second.zip second
		have zip && measure "zip -r -q, second corpus" "$run" out/second-zip.zip zip -r -q out/second-zip.zip second
	done
	# The tree stays until the scratch folder goes: removing 7,700 files here would slow the
	# restores that follow (see run_restore).
	rm -f "$work/out/second.zip" "$work/out/second-zip.zip"
}

run_verify() {
	if "$bin" verify --help >/dev/null 2>&1; then
		for run in $(seq "$runs"); do
			measure "backup verify" "$run" - "$bin" verify out/backup.zip
			measure "unzip -tqq" "$run" - unzip -tqq out/backup.zip
			measure "verify floor (bench/entryfloor)" "$run" - "$work/entryfloor" verify out/backup.zip
		done
	else
		echo "verify=pending" >>"$meta"
	fi
}

# run_restore: backup restore, unzip -qo and the two floors of a restore (bench/entryfloor:
# without restore's rules, and with them) of the default archive, each into a folder that does
# not exist yet.
run_restore() {
	local d=$work/restored
	rm -rf "$d" && mkdir -p "$d"
	if fresh_fs_ok; then
		echo "restore_fs=fresh" >>"$meta"
	else
		echo "restore_fs=shared" >>"$meta"
	fi
	# Each round begins with another tool, so that a slow spell (the page cache filling, a
	# deletion elsewhere) does not fall on one tool's runs.
	for run in $(seq "$runs"); do
		for k in 0 1 2 3; do
			case $(((run + k) % 4)) in
			0) restore_one "backup restore" "$run" backup "$bin" restore out/backup.zip ;;
			1) restore_one "unzip -qo" "$run" unzip unzip -qo out/backup.zip -d ;;
			2) restore_one "restore floor (bench/entryfloor)" "$run" floor "$work/entryfloor" restore out/backup.zip ;;
			3) restore_one "restore floor with its rules (bench/entryfloor restore-rules)" "$run" rules "$work/entryfloor" restore-rules out/backup.zip ;;
			esac
		done
	done
	rm -rf "$d"
}

# fresh_fs_ok says whether each restore can have a file system of its own: root, with
# mkfs.ext4 and loop devices.
fresh_fs_ok() {
	[ "$(id -u)" = 0 ] && have mkfs.ext4 && have losetup && [ -e /dev/loop-control ]
}

# restore_one NAME RUN LABEL COMMAND...: measures COMMAND with a new folder appended as its
# last argument. What a file system costs to make a file depends on its past: ext4 without a
# journal (this machine's /) skips inodes freed in the last 60 s (360 s while their inode
# table block is dirty), checking each such inode on every allocation, and one restore fills
# the inode tables the next one searches. So, where it can, each restore writes into an ext4
# made for it alone, journaled and empty, as mkfs.ext4 makes it (its tables written at once,
# so that no lazy initialisation runs beside the tool), and taken down once measured. Without
# root, each writes into a new folder of the scratch folder, and nothing is deleted until the
# end; leave 6 minutes after a large rm -rf before make bench.
restore_one() {
	local name=$1 run=$2 label=$3
	shift 3
	local mnt=$work/restored/$label$run
	if ! fresh_fs_ok; then
		measure "$name" "$run" - "$@" "restored/$label$run"
		return
	fi
	mkdir -p "$mnt"
	truncate -s 1G "$mnt.img"
	mkfs.ext4 -q -F -E lazy_itable_init=0,lazy_journal_init=0 "$mnt.img"
	mount -o loop "$mnt.img" "$mnt"
	measure "$name" "$run" - "$@" "restored/$label$run/tree"
	umount "$mnt"
	rm -f "$mnt.img"
}

run_levels() {
	for run in $(seq "$runs"); do
		say "levels, run $run of $runs"
		for level in 1 2 3 4 5 6 7 8 9; do
			measure "level $level" "$run" out/level.zip "$bin" create -q --force --level "$level" -o out/level.zip corpus
		done
	done
}

run_scale() {
	say "5 GiB sparse file"
	mkdir -p "$work/big"
	truncate -s 5G "$work/big/disk.img"
	for run in $(seq "$runs"); do
		measure "5 GiB sparse file" "$run" out/big.zip "$bin" create -q --force -o out/big.zip big/disk.img
	done
	rm -f "$work/out/big.zip" "$work/big/disk.img"
	say "100,000 and 1,000,000 files of 100 bytes (making them takes a minute or two)"
	(cd "$repo" && go run ./bench/gencorpus -files 100000 -size 100 "$work/many100k")
	(cd "$repo" && go run ./bench/gencorpus -files 1000000 -size 100 "$work/many1M")
	for run in $(seq "$runs"); do
		measure "100000 files of 100 bytes" "$run" out/many.zip "$bin" create -q --force -o out/many.zip many100k
		measure "1000000 files of 100 bytes" "$run" out/many.zip "$bin" create -q --force -o out/many.zip many1M
		measure "verify, 1000000 files of 100 bytes" "$run" - "$bin" verify out/many.zip
		measure "list, 1000000 files of 100 bytes" "$run" - "$bin" list out/many.zip
	done
	# One restore: removing a million files takes minutes, and its peak RSS is what the row
	# is for. Its tree goes once everything is measured (see run_restore on a large rm).
	measure "restore, 1000000 files of 100 bytes" 1 - "$bin" restore -q out/many.zip restored1M
	rm -rf "$work/many100k" "$work/out/many.zip" # many1M stays for run_reuse_scale
}

run_profile() {
	say "profiling the pipeline on the corpus"
	(cd "$repo/archive" && BACKUP_BENCH_DIR=$work/corpus go test -run '^$' -bench WriterDir -benchtime 2x \
		-cpuprofile "$work/cpu.pprof" -o "$work/archive.test" . >/dev/null) &&
		go tool pprof -top -nodecount 12 "$work/archive.test" "$work/cpu.pprof" 2>/dev/null |
		sed -n '/flat%/,$p' >"$work/profile.txt" || : >"$work/profile.txt"
}

machine() {
	echo "cores=$(nproc)"
	echo "cpu=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
	echo "mem=$(free -g | awk '/Mem:/ {print $2}') GiB"
	echo "kernel=$(uname -r)"
	echo "date=$(date -u +%Y-%m-%d)"
	echo "backup=$("$bin" version 2>&1 | head -n 1)"
	echo "commit=$(git -C "$repo" describe --always --dirty 2>/dev/null)"
	echo "runs=$runs"
	have zip && echo "v_zip=$(zip -v | sed -n 2p | awk '{print $3, $4}')"
	have gzip && echo "v_gzip=$(gzip --version | head -n 1)"
	have pigz && echo "v_pigz=$(pigz --version 2>&1 | head -n 1)"
	have zstd && echo "v_zstd=zstd $(zstd --version | grep -o 'v[0-9.]*' | head -n 1)"
	have 7z && echo "v_7z=$(7z i | grep -m1 -o '7-Zip[^:]*')"
	have python3 && echo "v_python=$(python3 --version)"
	have unzip && echo "v_unzip=$(unzip -v | head -n 1 | awk '{print $1, $2}')"
	have restic && echo "v_restic=$(restic version | awk '{print $1, $2}')"
	true
}

install_peers
machine >>"$meta"
layout_corpus
if [ "$only" = seal ]; then
	[ -f "$out" ] || { say "BENCH_ONLY=seal rewrites a section of $out, which does not exist"; exit 1; }
	source "$repo/bench/seal.sh"
	run_seal
	(cd "$repo" && go run ./bench/report -results "$results" -meta "$meta" -only seal -into "$out") >"$out.new"
	mv "$out.new" "$out"
	say "rewrote the encryption rows and section of $out"
	exit 0
fi
if [ "$only" = reuse ]; then
	[ -f "$out" ] || { say "BENCH_ONLY=reuse rewrites a section of $out, which does not exist"; exit 1; }
	source "$repo/bench/reuse.sh"
	run_reuse
	[ "$scale" = 0 ] || run_reuse_scale
	(cd "$repo" && go run ./bench/report -results "$results" -meta "$meta" -only reuse -into "$out") >"$out.new"
	mv "$out.new" "$out"
	say "rewrote the reuse rows and section of $out"
	exit 0
fi
run_peers
run_second
run_verify
run_restore
[ "$levels" = 0 ] || run_levels
[ "$scale" = 0 ] || run_scale
source "$repo/bench/reuse.sh"
run_reuse
[ "$scale" = 0 ] || run_reuse_scale
source "$repo/bench/seal.sh"
run_seal
run_profile
(cd "$repo" && go run ./bench/report -results "$results" -meta "$meta" -profile "$work/profile.txt") >"$out"
say "wrote $out"
rm -rf "$work/restored1M"
