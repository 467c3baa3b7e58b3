package archive

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
)

// WriteTo writes m as json.MarshalIndent(m, "", "  ") would, but one file at a time: the
// manifest of a million files is hundreds of MB of JSON, which need never be in memory at
// once.
func (m *Manifest) WriteTo(w io.Writer) (int64, error) {
	head := *m
	head.Schema = ManifestSchema
	head.Files = nil
	b, err := json.MarshalIndent(&head, "", "  ")
	if err != nil {
		return 0, err
	}
	// Every other field is marshalled as usual, so that a field added to Manifest is never
	// left out here; the files are spliced in where the empty list was.
	before, after, _ := bytes.Cut(b, []byte(`"files": null`))
	cw := new(countWriter)
	bw := bufio.NewWriterSize(io.MultiWriter(w, cw), 64<<10)
	bw.Write(before)
	if err := writeFiles(bw, m.Files); err != nil {
		return int64(*cw), err
	}
	bw.Write(after)
	err = bw.Flush()
	return int64(*cw), err
}

func writeFiles(w *bufio.Writer, files []File) error {
	if files == nil {
		_, err := w.WriteString(`"files": null`)
		return err
	}
	if len(files) == 0 {
		_, err := w.WriteString(`"files": []`)
		return err
	}
	w.WriteString(`"files": [`)
	for i := range files {
		// The record File.MarshalJSON writes, without the method's second encoding pass.
		f := &files[i]
		b, err := json.MarshalIndent(f.record(), "    ", "  ")
		if err != nil {
			return err
		}
		if i > 0 {
			w.WriteByte(',')
		}
		w.WriteString("\n    ")
		w.Write(b)
	}
	_, err := w.WriteString("\n  ]")
	return err
}
