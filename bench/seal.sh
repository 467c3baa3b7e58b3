# The encryption benchmarks of issue 23, sourced by bench.sh (which defines measure, say,
# $bin, $work, $runs, $meta and $repo): an encrypted create of the corpus against a plain one,
# and verify --identity of the encrypted archive against verify of the plain one, interleaved
# in one run; then, when versitygw is there ($VERSITYGW), how much of a 1 GiB encrypted
# archive in a bucket restore --include fetches for one 100 KiB file (go test -bench
# S3RestoreInclude, which counts the bytes the server sends), beside a plain archive's.

# The names of the rows; bench/report knows them.
seal_plain="seal: plain create"
seal_create="seal: encrypted create"
seal_verify_plain="seal: plain verify"
seal_verify="seal: verify --identity"

run_seal() {
	mkdir -p "$work/seal"
	(cd "$repo" && go run ./bench/agekey "$work/seal")
	local rcpt run
	rcpt=$(cat "$work/seal/recipient")
	echo "seal_date=$(date -u '+%Y-%m-%d %H:%M UTC')" >>"$meta"
	echo "seal_load_before=$(cut -d' ' -f1-3 /proc/loadavg)" >>"$meta"
	for run in $(seq "$runs"); do
		say "encryption, run $run of $runs"
		measure "$seal_plain" "$run" seal/plain.zip "$bin" create -q --force -o seal/plain.zip corpus
		measure "$seal_create" "$run" seal/sealed.zip.age "$bin" create -q --force --recipient "$rcpt" -o seal/sealed.zip.age corpus
		measure "$seal_verify_plain" "$run" - "$bin" verify -q seal/plain.zip
		measure "$seal_verify" "$run" - "$bin" verify -q -i seal/key.txt seal/sealed.zip.age
	done
	echo "seal_load_after=$(cut -d' ' -f1-3 /proc/loadavg)" >>"$meta"
	rm -f "$work/seal/plain.zip" "$work/seal/sealed.zip.age"
	run_seal_s3
}

# run_seal_s3 records seal_s3_plain and seal_s3_sealed: "BYTES PERCENT" fetched by restore
# --include of the small file, from the plain and from the encrypted 1 GiB archive.
run_seal_s3() {
	if [ -z "${VERSITYGW:-}" ]; then
		say "restore --include from a bucket: not measured (set VERSITYGW to a versitygw binary)"
		return
	fi
	say "restore --include of 100 KiB from a 1 GiB archive in a bucket, plain and encrypted"
	local out kind
	if ! out=$(cd "$repo" && go test -run '^$' -bench 'S3RestoreInclude' -benchtime 1x . 2>&1); then
		say "go test -bench S3RestoreInclude failed: $(echo "$out" | tail -n 5)"
		return
	fi
	for kind in plain encrypted; do
		echo "seal_s3_$kind=$(echo "$out" | awk -v k="RestoreInclude/$kind" '$1 ~ k {
			for (i = 2; i <= NF; i++) { if ($i == "fetched-bytes/op") b = $(i-1); if ($i == "fetched-%/op") p = $(i-1) }
			print b, p }')" >>"$meta"
	done
}
