# make demo: build and back up the bundled example tree. make test: everything CI runs.
GO ?= go
BIN := bin/backup

.PHONY: build test lint demo bench fuzz clean

build:
	$(GO) build -o $(BIN) .

lint:
	@out=$$(gofmt -l .); if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...

test: lint
	$(GO) test -race -shuffle=on ./...

demo: build
	@./testdata/demo.sh $(BIN)

bench: build
	@echo "bench: not written yet (issue 4)"

clean:
	rm -rf bin
