# The reuse benchmarks of issue 10, sourced by bench.sh (which defines measure, say, have, $bin,
# $work, $runs, $meta and $repo): a backup set's second run on an unchanged tree and on a tree
# with 1% of its files changed, against the set's first (full) run and against restic's second
# snapshot of the same tree; and the archive of the second run against that of a --reread run.
#
# Every measured run starts from the same state: the first run from an empty set, the others
# from a set holding one full backup (what a run adds is removed before the next).

# The names of the rows; bench/report knows them.
reuse_first="reuse: first set run (full)"
reuse_second="reuse: second set run, unchanged tree"
reuse_reread="reuse: second set run, --reread"
reuse_changed="reuse: second set run, 1% of files changed"
reuse_floor="reuse: floor of a second run, unchanged tree (bench/reusefloor)"
reuse_floor_manifests="reuse: floor of a second run with its manifests, unchanged tree (bench/reusefloor -manifests)"
restic_first="reuse: restic backup, first snapshot"
restic_second="reuse: restic backup, second snapshot"
reuse_first_1M="reuse: 1,000,000 files, first set run (full)"
reuse_second_1M="reuse: 1,000,000 files, second set run, unchanged"

# set_save SET: remember what SET holds and where its LATEST points, for set_reset.
set_save() {
	ls -A "$1" >"$1.files"
	cp "$1/LATEST" "$1.latest"
}

# set_reset SET: back to what set_save saw; what runs added since is removed.
set_reset() {
	local f
	comm -13 <(sort "$1.files") <(ls -A "$1" | sort) | while IFS= read -r f; do rm -rf "${1:?}/$f"; done
	cp "$1.latest" "$1/LATEST"
}

# take_latest SET DEST: moves the archive LATEST names out of SET to DEST (after noting how
# many files it says it reused under the key KEY of the meta file), then resets SET.
take_latest() {
	local set=$1 dest=$2 key=$3 name
	name=$(cat "$set/LATEST")
	if [ "$name" = "$(cat "$set.latest")" ]; then
		say "$set: the run made no new backup"
		rm -f "$dest"
	else
		echo "$key=$(reused_of "$set/$name.receipt.json")" >>"$meta"
		mv "$set/$name" "$dest"
	fi
	set_reset "$set"
}

# reused_of RECEIPT: "REUSED of FILES" from the receipt's counts.
reused_of() {
	local reused files
	reused=$(grep -o '"reused": *[0-9]*' "$1" | grep -o '[0-9]*$')
	files=$(grep -o '"files": *[0-9]*' "$1" | grep -o '[0-9]*$')
	echo "$reused of $files"
}

# change_one_percent DIR: every 100th file in sorted order gets a line appended, so that its
# size and mtime change; the changed files are spread over the whole tree.
change_one_percent() {
	local f n=0
	while IFS= read -r f; do
		echo "changed by bench/reuse.sh" >>"$1/$f"
		n=$((n + 1))
	done < <(cd "$1" && find . -type f | LC_ALL=C sort | awk 'NR % 100 == 0')
	echo "reuse_changed_files=$n" >>"$meta"
}

# same_archives: the second run's archive against the --reread run's, noted in the meta file;
# a difference is also said at once.
same_archives() {
	local verdict
	if verdict=$("$work/zipsame" "$work/reuse/second.zip" "$work/reuse/reread.zip"); then
		echo "reuse_identical=$verdict" >>"$meta"
	else
		say "the reusing run and the --reread run wrote different archives: $verdict"
		echo "reuse_differ=$verdict" >>"$meta"
	fi
}

# reuse_floor_run RUN: the two floors (without the manifests' work and with it) where the second
# run is measured, each right after a first set run of its own (on this kind of machine a run
# that follows a first run spends more system time writing than one that runs alone: see
# bench/notes.md).
reuse_floor_run() {
	local r=$work/reuse name
	for name in "$reuse_floor" "$reuse_floor_manifests"; do
		rm -rf "$r/set"
		(cd "$work" && "$bin" create -q --output-dir reuse/set corpus)
		if [ "$name" = "$reuse_floor" ]; then
			measure "$name" "$1" - "$work/reusefloor" "reuse/set/$(cat "$r/set/LATEST")" corpus reuse/floor.zip
		else
			measure "$name" "$1" - "$work/reusefloor" -manifests "reuse/set/$(cat "$r/set/LATEST")" corpus reuse/floor.zip
		fi
		rm -rf "$r/floor.zip" "$r/set"
	done
}

# restic, on a repository in the scratch folder (measure runs commands from $work).
restic_cmd=(env RESTIC_PASSWORD=bench restic -r reuse/restic --cache-dir reuse/restic-cache)

run_reuse() {
	local r=$work/reuse
	say "reuse: a set's first and second runs, restic's first and second snapshots"
	rm -rf "$r" && mkdir -p "$r"
	(cd "$repo" && go build -o "$work/zipsame" ./bench/zipsame && go build -o "$work/reusefloor" ./bench/reusefloor)
	# The 1% run changes files, so it runs on a copy, whose set holds a backup made before.
	cp -a "$work/corpus" "$r/corpus"
	"$bin" create -q --output-dir "$r/changed.set" "$r/corpus"
	set_save "$r/changed.set"
	change_one_percent "$r/corpus"
	"$work/readall" "$r/corpus" >/dev/null
	echo "reuse_date=$(date -u '+%Y-%m-%d %H:%M UTC')" >>"$meta"
	echo "reuse_load_before=$(cut -d' ' -f1-3 /proc/loadavg)" >>"$meta"
	for run in $(seq "$runs"); do
		say "reuse, run $run of $runs"
		rm -rf "$r/set" "$r/set.files" "$r/set.latest"
		measure "$reuse_first" "$run" - "$bin" create -q --output-dir reuse/set corpus
		[ -f "$r/set/LATEST" ] || { say "the first set run made no backup"; return 1; }
		set_save "$r/set"
		measure "$reuse_second" "$run" - "$bin" create -q --output-dir reuse/set corpus
		take_latest "$r/set" "$r/second.zip" reuse_reused
		measure "$reuse_reread" "$run" - "$bin" create -q --reread --output-dir reuse/set corpus
		take_latest "$r/set" "$r/reread.zip" reuse_reread_reused
		same_archives
		measure "$reuse_changed" "$run" - "$bin" create -q --output-dir reuse/changed.set reuse/corpus
		take_latest "$r/changed.set" "$r/changed.zip" reuse_changed_reused
		reuse_floor_run "$run"
		if have restic; then
			rm -rf "$r/restic" "$r/restic-cache"
			(cd "$work" && "${restic_cmd[@]}" init >/dev/null)
			measure "$restic_first" "$run" - "${restic_cmd[@]}" backup -q corpus
			measure "$restic_second" "$run" - "${restic_cmd[@]}" backup -q corpus
		fi
	done
	echo "reuse_load_after=$(cut -d' ' -f1-3 /proc/loadavg)" >>"$meta"
	have restic || echo "missing=restic" >>"$meta"
	rm -rf "$r"
}

# run_reuse_scale: a set's first and second runs at 1,000,000 files of 100 bytes, once each.
run_reuse_scale() {
	say "reuse at 1,000,000 files (making them takes a minute or two; each run takes minutes, ten on a busy machine)"
	[ -d "$work/many1M" ] || (cd "$repo" && go run ./bench/gencorpus -files 1000000 -size 100 "$work/many1M")
	mkdir -p "$work/reuse"
	rm -rf "$work/reuse/set1M"
	echo "reuse_1M_date=$(date -u '+%Y-%m-%d %H:%M UTC')" >>"$meta"
	echo "reuse_1M_commit=$(git -C "$repo" describe --always --dirty 2>/dev/null)" >>"$meta"
	echo "reuse_1M_load_before=$(cut -d' ' -f1-3 /proc/loadavg)" >>"$meta"
	measure "$reuse_first_1M" 1 - "$bin" create -q --output-dir reuse/set1M many1M
	measure "$reuse_second_1M" 1 - "$bin" create -q --output-dir reuse/set1M many1M
	echo "reuse_1M_reused=$(reused_of "$work/reuse/set1M/$(cat "$work/reuse/set1M/LATEST").receipt.json")" >>"$meta"
	rm -rf "$work/reuse" "$work/many1M"
}
