# make demo: build and back up the bundled example tree. make test: lint and every test with
# the race detector; make test-long: fuzzing and the slow zip64 tests. CI runs both.
GO ?= go
BIN := bin/backup

.PHONY: build test test-long lint demo bench bench-sqlite fuzz clean

build:
	$(GO) build -o $(BIN) .

lint:
	@out=$$(gofmt -l .); if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...

# go test prints one line per package, in the order given: the quick packages first, so
# that lines show while the end-to-end tests (the root package, the slowest) still run.
TEST_PKGS = $(shell $(GO) list ./... | grep -vx -e backup -e backup/archive) ./archive .

test: lint
	$(GO) test -race -shuffle=on $(TEST_PKGS)

# The zip64 tests (a 5 GiB sparse file, 70,000 entries) skip themselves under the race
# detector, which would make them take many minutes, so they run here without it; so does the
# peak RSS of a 1 GiB SQLite snapshot, which runs only here (BACKUP_TEST_LONG=1).
test-long: fuzz
	$(GO) test -count=1 -run 'Zip64' ./archive
	BACKUP_TEST_LONG=1 $(GO) test -count=1 -run 'SQLiteLarge' .

# Each fuzz target for FUZZTIME, one at a time (go test takes one -fuzz per run); the seed
# corpora in */testdata/fuzz also run as plain tests in every go test.
FUZZTIME ?= 8s
FUZZ_TARGETS := archive:FuzzParseManifest archive:FuzzCheckName archive:FuzzCheckNames archive:FuzzReader skiprules:FuzzMatch

fuzz:
	@for t in $(FUZZ_TARGETS); do \
		pkg=$${t%%:*}; fn=$${t#*:}; echo "fuzz $$fn ($(FUZZTIME))"; \
		out=$$($(GO) test -run='^$$' -fuzz="^$$fn\$$" -fuzztime=$(FUZZTIME) ./$$pkg 2>&1) || \
		{ echo "$$out"; exit 1; }; \
	done

demo: build
	@./testdata/demo.sh $(BIN)

# make bench: lay out the corpus in a temp folder and time backup against zip, tar+gzip,
# tar+pigz, tar+zstd, 7z and Python's zipfile; writes BENCHMARKS.md. BENCH_SCALE=0 skips the
# 1,000,000-file and 5 GiB runs.
bench: build
	@./bench/bench.sh $(BIN)

# make bench-sqlite: the snapshot of a 1 GiB SQLite database against sqlite3 .backup; prints
# the table of BENCHMARKS.md's "SQLite snapshots".
bench-sqlite: build
	@./bench/sqlite.sh $(BIN)

clean:
	rm -rf bin
