// Package metrics writes Prometheus text-format files for node_exporter's textfile
// collector: it formats gauges with HELP and TYPE lines and replaces the file atomically, as
// the collector requires (it may read at any moment). It knows nothing of backups.
package metrics

import (
	"bufio"
	"bytes"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"backup/atomicfile"
)

// Gauge is one metric family of type gauge: a name (with its unit as suffix, per the
// Prometheus conventions), its help text and its samples.
type Gauge struct {
	Name, Help string
	Samples    []Sample
}

// Sample is one series of a gauge: its labels, in the order given, and its value.
type Sample struct {
	Labels []Label
	Value  float64
}

// Label is one name="value" pair of a series.
type Label struct {
	Name, Value string
}

// Format renders gauges in the Prometheus text exposition format (version 0.0.4).
func Format(gauges []Gauge) []byte {
	var b bytes.Buffer
	for _, g := range gauges {
		fmt.Fprintf(&b, "# HELP %s %s\n# TYPE %s gauge\n", g.Name, helpEscaper.Replace(g.Help), g.Name)
		for _, s := range g.Samples {
			b.WriteString(g.Name)
			writeLabels(&b, s.Labels)
			b.WriteString(" " + formatValue(s.Value) + "\n")
		}
	}
	return b.Bytes()
}

func writeLabels(b *bytes.Buffer, labels []Label) {
	if len(labels) == 0 {
		return
	}
	b.WriteByte('{')
	for i, l := range labels {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(b, "%s=\"%s\"", l.Name, labelEscaper.Replace(validUTF8(l.Value)))
	}
	b.WriteByte('}')
}

// The format escapes backslash and newline in HELP, and the double quote too in label values.
var (
	helpEscaper  = strings.NewReplacer(`\`, `\\`, "\n", `\n`)
	labelEscaper = strings.NewReplacer(`\`, `\\`, "\n", `\n`, `"`, `\"`)
)

// validUTF8 is s as a label value can carry it: the text format is UTF-8 (node_exporter
// drops a file that is not, and with it every series of the set), and a folder's name may
// be any bytes. Each byte that is not UTF-8 is written \xNN and, so that no name can read
// as another's, each backslash \\, as %q writes them; a name that is UTF-8 and holds no
// backslash is as it is.
func validUTF8(s string) string {
	if utf8.ValidString(s) && !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r == '\\':
			b.WriteString(`\\`)
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

func formatValue(v float64) string {
	switch {
	case math.IsInf(v, 1):
		return "+Inf"
	case math.IsInf(v, -1):
		return "-Inf"
	case math.IsNaN(v):
		return "NaN"
	case v == math.Trunc(v) && math.Abs(v) < 1e15:
		return strconv.FormatFloat(v, 'f', -1, 64) // timestamps and sizes in full, not 1.7e+09
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

// WriteFile replaces path with the gauges, through a synced temp file in the same folder and
// a rename: the collector reads the old file or the new one, never a part. The file is
// readable by all (0644), as node_exporter usually runs as its own user.
func WriteFile(path string, gauges []Gauge) error {
	return atomicfile.WriteFile(path, Format(gauges), 0o644)
}

// UpdateFile replaces path, as WriteFile does, with the gauges made from the file there
// now (nil when there is none, or when it could not be read: unread says why): a value
// carried over from it (Value) is read under the lock of the rename that replaces it, so
// it is never that of a file another run replaced meanwhile.
func UpdateFile(path string, gauges func(old []byte, unread error) []Gauge) error {
	return atomicfile.Update(path, 0o644, 1<<20, func(old []byte, unread error) []byte { return Format(gauges(old, unread)) })
}

// ReadValue returns the value of the first sample of the metric name in the file at path,
// and whether there was one.
func ReadValue(path, name string) (float64, bool) {
	data, err := atomicfile.ReadRegular(path, 1<<20)
	if err != nil {
		return 0, false
	}
	return Value(data, name)
}

// Value returns the value of the first sample of the metric name in a metrics file's data,
// and whether there was one: how a run carries over a value of the file it replaces.
func Value(data []byte, name string) (float64, bool) {
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		line := sc.Text()
		rest, ok := strings.CutPrefix(line, name)
		if !ok || rest == "" || (rest[0] != '{' && rest[0] != ' ') {
			continue
		}
		if v, err := strconv.ParseFloat(rest[strings.LastIndexByte(rest, ' ')+1:], 64); err == nil {
			return v, true
		}
	}
	return 0, false
}
