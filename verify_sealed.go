package main

import (
	"context"
	"fmt"
	"io"

	"backup/archive"
	"backup/format"
	"backup/seal"
)

// verifyCiphertext verifies what can be verified of an encrypted archive without a key: its
// age header parses, and its size and SHA-256 are what its receipt records (when there is
// one). It says that the contents were not checked: that takes --identity.
func verifyCiphertext(ctx context.Context, cfg verifyConfig, ref archiveRef, receiptPath string, rc *format.Receipt, stdout, stderr io.Writer) int {
	f, err := ref.file(ctx)
	if err != nil {
		return cfg.readFailed(ctx, err, true, stdout, stderr)
	}
	defer f.Close()
	var want *format.Summary
	if rc != nil {
		sum, _ := rc.Summary() // ref.receipt returns only a receipt that records an archive
		want = &sum
	}
	h, err := seal.CheckCiphertext(ctx, f, f.Size(), want)
	if ctx.Err() != nil {
		return cfg.interrupted(true, stdout, stderr)
	}
	res := &archive.VerifyResult{ArchiveChecked: want != nil, Problems: []archive.Problem{}}
	if err != nil {
		res.Problems = append(res.Problems, archive.Problem{Reason: err.Error()})
	}
	out := verifyJSON{Archive: cfg.archive, OK: res.OK(), Encrypted: true, VerifyResult: res}
	return cfg.finish(out, ciphertextLine(h, receiptPath), stdout, stderr)
}

// ciphertextLine is verify's line for an encrypted archive checked without a key.
func ciphertextLine(h seal.Header, receiptPath string) string {
	line := fmt.Sprintf("ok: encrypted archive (age, for %s): ", format.Plural(h.Recipients, "recipient", "recipients"))
	if receiptPath == "" {
		return line + "its header parses, and no receipt was found to check its SHA-256 against; contents not checked (give --identity)"
	}
	return line + "ciphertext matches " + format.QuoteName(receiptPath) + "; contents not checked (give --identity)"
}
