package main

import (
	"fmt"
	"io"
	"strings"
)

// The rows of the encryption benchmarks (issue 23), as bench/seal.sh names them; every name
// and Targets measure of theirs starts with sealPrefix, which -only seal finds them by.
const (
	sealPrefix      = "seal: "
	sealPlain       = "seal: plain create"
	sealCreate      = "seal: encrypted create"
	sealVerifyPlain = "seal: plain verify"
	sealVerify      = "seal: verify --identity"
	sealHeading     = "## Encryption"
)

func isSeal(name string) bool { return strings.HasPrefix(name, sealPrefix) }

// sealTargets writes issue 23's rows of the Targets table.
func (r *report) sealTargets(w io.Writer) {
	v, t := r.ratio(sealCreate, sealPlain, wall)
	r.targetRow(w, "seal: encrypted create vs plain create on the corpus", "≤ 1.10", 1.10, v, t)
	v, t = r.ratio(sealVerify, sealVerifyPlain, wall)
	r.targetRow(w, "seal: `verify --identity` of the encrypted archive vs `verify` of the plain one", "≤ 1.15", 1.15, v, t)
	v, t = r.fetched("seal_s3_encrypted")
	r.targetRow(w, "seal: `restore --include` of 100 KiB from a 1 GiB encrypted archive in a bucket, share fetched", "< 2%", 2, v, t)
}

// fetched reads a "BYTES PERCENT" meta value of seal.sh's bucket benchmark.
func (r *report) fetched(key string) (float64, string) {
	var bytes, pct float64
	if _, err := fmt.Sscan(r.meta[key], &bytes, &pct); err != nil {
		return 0, "not measured (needs VERSITYGW)"
	}
	return pct, fmt.Sprintf("%.3f%% (%.2f MB)", pct, bytes/1e6)
}

// seal writes the section of the encryption benchmarks, when there are any.
func (r *report) seal(w io.Writer) {
	if _, ok := r.samples[sealCreate]; !ok {
		return
	}
	m := r.meta
	fmt.Fprintf(w, "%s\n\n`backup create --recipient KEY` encrypts the archive with age as it is written (issue 23). "+
		"Measured by `bench/bench.sh` (`BENCH_ONLY=seal` runs only this) on %s, at commit %s, %s runs of each case interleaved, medians; "+
		"load average %s before, %s after. The plain and the encrypted create write the same zip to a file (`-o`), "+
		"the encrypted one through age (X25519) to the file; each verify reads its own archive back whole, with the key for the encrypted one "+
		"(its ciphertext hashed against nothing, its zip decrypted 64 KiB chunk by chunk).\n\n",
		sealHeading, m["seal_date"], orName(m["commit"], "(not recorded)"), m["runs"], m["seal_load_before"], m["seal_load_after"])
	fmt.Fprint(w, "| case | wall s | CPU s | peak RSS MiB | output MB | ÷ plain, wall | ÷ plain, CPU |\n| --- | --: | --: | --: | --: | --: | --: |\n")
	for _, c := range []struct{ name, plain string }{
		{sealPlain, sealPlain}, {sealCreate, sealPlain}, {sealVerifyPlain, sealVerifyPlain}, {sealVerify, sealVerifyPlain},
	} {
		r.sealRow(w, c.name, c.plain)
	}
	fmt.Fprintln(w)
	_, plain := r.fetched("seal_s3_plain")
	_, sealed := r.fetched("seal_s3_encrypted")
	fmt.Fprintf(w, "`restore --include` of one 100 KiB file from a 1 GiB archive (64 random files of 16 MiB, stored) in a set on versitygw, "+
		"counted at the S3 layer (the bytes the server sent, through a counting proxy; `go test -bench S3RestoreInclude`): "+
		"encrypted %s, plain %s. The encrypted restore reads whole age chunks (64 KiB and a 16-byte tag) through the same 1 MiB ranged reads.\n\n",
		sealed, plain)
}

func (r *report) sealRow(w io.Writer, name, plain string) {
	label := strings.TrimPrefix(name, sealPrefix)
	m, ok := r.median(name)
	if !ok {
		fmt.Fprintf(w, "| %s | failed | | | | | |\n", label)
		return
	}
	wallRatio, cpuRatio := "—", "—"
	if p, ok := r.median(plain); ok && name != plain && p.wall > 0 && p.cpu > 0 {
		wallRatio, cpuRatio = fmt.Sprintf("%.3f", m.wall/p.wall), fmt.Sprintf("%.3f", m.cpu/p.cpu)
	}
	out := "—"
	if m.size > 0 {
		out = fmt.Sprintf("%.1f", m.size/1e6)
	}
	fmt.Fprintf(w, "| %s | %.2f | %.2f | %.0f | %s | %s | %s |\n", label, m.wall, m.cpu, m.rssKiB/1024, out, wallRatio, cpuRatio)
}
