# make demo: build and back up the bundled example tree. make test: everything CI runs.
GO ?= go
BIN := bin/backup

.PHONY: build test lint demo bench fuzz clean

build:
	$(GO) build -o $(BIN) .

lint:
	@out=$$(gofmt -l .); if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...

test: lint fuzz
	$(GO) test -race -shuffle=on ./...

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

bench: build
	@echo "bench: not written yet (issue 4)"

clean:
	rm -rf bin
