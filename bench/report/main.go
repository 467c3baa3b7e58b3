// Command report renders the measurements of bench/bench.sh as BENCHMARKS.md: medians per
// tool, ratios against the named peers from the same run, and the targets.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
)

func main() {
	results := flag.String("results", "", "tab-separated measurements: name, run, wall s, peak RSS KiB, output bytes, status, CPU s")
	meta := flag.String("meta", "", "key=value lines: machine, versions, corpus")
	profile := flag.String("profile", "", "pprof -top output for the pipeline on the corpus")
	notes := flag.String("notes", "bench/notes.md", "hand-written notes appended to the report")
	only := flag.String("only", "", "reuse (or seal): write the report -into names with only the reuse (encryption) rows and section replaced")
	into := flag.String("into", "BENCHMARKS.md", "the existing report that -only rewrites a part of")
	flag.Parse()
	r, err := load(*results, *meta)
	switch {
	case err != nil:
	case *only == "reuse" || *only == "seal":
		var old []byte
		if old, err = os.ReadFile(*into); err == nil && *only == "reuse" {
			err = r.spliceReuse(old, os.Stdout)
		} else if err == nil {
			err = r.spliceSeal(old, os.Stdout)
		}
	case *only != "":
		err = fmt.Errorf("-only %q: only reuse or seal can be run alone", *only)
	default:
		r.profile, _ = os.ReadFile(*profile)
		r.notes, _ = os.ReadFile(*notes)
		err = r.write(os.Stdout)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "report:", err)
		os.Exit(1)
	}
}

// sample is one run of one tool.
type sample struct {
	wall   float64
	rssKiB float64
	size   float64
	cpu    float64 // user + system seconds
	failed bool
}

type report struct {
	order   []string
	samples map[string][]sample
	meta    map[string]string
	missing []string
	profile []byte
	notes   []byte
}

func load(results, meta string) (*report, error) {
	r := &report{samples: map[string][]sample{}, meta: map[string]string{}}
	err := eachLine(results, func(line string) error {
		var s sample
		f := strings.Split(line, "\t")
		if len(f) != 7 {
			return fmt.Errorf("bad result line %q", line)
		}
		if _, err := fmt.Sscan(f[2]+" "+f[3]+" "+f[4]+" "+f[6], &s.wall, &s.rssKiB, &s.size, &s.cpu); err != nil {
			return fmt.Errorf("bad result line %q: %w", line, err)
		}
		s.failed = f[5] != "ok"
		if _, ok := r.samples[f[0]]; !ok {
			r.order = append(r.order, f[0])
		}
		r.samples[f[0]] = append(r.samples[f[0]], s)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return r, eachLine(meta, func(line string) error {
		k, v, _ := strings.Cut(line, "=")
		if k == "missing" {
			r.missing = append(r.missing, v)
		} else {
			r.meta[k] = v
		}
		return nil
	})
}

func eachLine(path string, fn func(string) error) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if line := strings.TrimSpace(sc.Text()); line != "" {
			if err := fn(line); err != nil {
				return err
			}
		}
	}
	return sc.Err()
}

// median is the median of each measure over the tool's runs; ok is false when the tool has
// no runs or any run failed.
func (r *report) median(name string) (m sample, ok bool) {
	runs := r.samples[name]
	if len(runs) == 0 {
		return m, false
	}
	pick := func(get func(sample) float64) float64 {
		v := make([]float64, len(runs))
		for i, s := range runs {
			v[i] = get(s)
		}
		return medianOf(v)
	}
	m.wall = pick(func(s sample) float64 { return s.wall })
	m.rssKiB = pick(func(s sample) float64 { return s.rssKiB })
	m.size = pick(func(s sample) float64 { return s.size })
	m.cpu = pick(func(s sample) float64 { return s.cpu })
	for _, s := range runs {
		if s.failed {
			return m, false
		}
	}
	return m, true
}

func medianOf(v []float64) float64 {
	for i := 1; i < len(v); i++ { // insertion sort: three values
		for j := i; j > 0 && v[j] < v[j-1]; j-- {
			v[j], v[j-1] = v[j-1], v[j]
		}
	}
	if len(v)%2 == 1 {
		return v[len(v)/2]
	}
	return (v[len(v)/2-1] + v[len(v)/2]) / 2
}

func (r *report) write(w io.Writer) error {
	bw := bufio.NewWriter(w)
	r.header(bw)
	r.targets(bw)
	r.tools(bw)
	r.levels(bw)
	r.scale(bw)
	r.readers(bw)
	r.reuse(bw)
	r.seal(bw)
	if len(r.profile) > 0 {
		fmt.Fprintf(bw, "## Where the time goes\n\nCPU profile of the archive pipeline at the default level on the corpus "+
			"(`go test -bench WriterDir -cpuprofile`, `BACKUP_BENCH_DIR` set to the corpus; `go tool pprof -top`):\n\n```\n%s```\n\n", r.profile)
	}
	bw.Write(r.notes)
	return bw.Flush()
}
