// Command zipsame tells whether two archives of backup hold the same bytes, as a reusing run
// and a --reread run of one tree must: byte for byte, or else entry for entry (headers and
// compressed bytes) with only the timestamps in the manifest allowed to differ.
//
//	zipsame A B
//
// It prints its verdict on one line and exits 1 when the archives differ.
package main

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"reflect"
	"strings"
)

const manifestName = ".backup-manifest.json"

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: zipsame A B")
		os.Exit(2)
	}
	verdict, err := compare(os.Args[1], os.Args[2])
	if err != nil {
		fmt.Println("differ:", err)
		os.Exit(1)
	}
	fmt.Println(verdict)
}

// compare returns the verdict for two archives that are the same, or what differs first.
func compare(a, b string) (string, error) {
	da, err := os.ReadFile(a)
	if err != nil {
		return "", err
	}
	db, err := os.ReadFile(b)
	if err != nil {
		return "", err
	}
	if bytes.Equal(da, db) {
		return "byte-identical", nil
	}
	za, err := zip.NewReader(bytes.NewReader(da), int64(len(da)))
	if err != nil {
		return "", fmt.Errorf("%s: %w", a, err)
	}
	zb, err := zip.NewReader(bytes.NewReader(db), int64(len(db)))
	if err != nil {
		return "", fmt.Errorf("%s: %w", b, err)
	}
	if len(za.File) != len(zb.File) {
		return "", fmt.Errorf("%d entries against %d", len(za.File), len(zb.File))
	}
	for i, fa := range za.File {
		if err := sameEntry(fa, zb.File[i]); err != nil {
			return "", err
		}
	}
	return "identical except the manifest's timestamps", nil
}

func sameEntry(a, b *zip.File) error {
	if a.Name != b.Name {
		return fmt.Errorf("entry %q against %q", a.Name, b.Name)
	}
	if a.Name == manifestName {
		return sameManifest(a, b)
	}
	if !reflect.DeepEqual(a.FileHeader, b.FileHeader) {
		return fmt.Errorf("%s: the headers differ", a.Name)
	}
	ra, err := rawBytes(a)
	if err != nil {
		return err
	}
	rb, err := rawBytes(b)
	if err != nil {
		return err
	}
	if !bytes.Equal(ra, rb) {
		return fmt.Errorf("%s: the compressed bytes differ", a.Name)
	}
	return nil
}

func rawBytes(f *zip.File) ([]byte, error) {
	r, err := f.OpenRaw()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", f.Name, err)
	}
	return io.ReadAll(r)
}

// sameManifest compares the manifests as JSON with every timestamp taken out.
func sameManifest(a, b *zip.File) error {
	ma, err := untimed(a)
	if err != nil {
		return err
	}
	mb, err := untimed(b)
	if err != nil {
		return err
	}
	if !reflect.DeepEqual(ma, mb) {
		return fmt.Errorf("the manifests differ in more than their timestamps")
	}
	return nil
}

func untimed(f *zip.File) (any, error) {
	r, err := f.Open()
	if err != nil {
		return nil, err
	}
	defer r.Close()
	var v any
	if err := json.NewDecoder(r).Decode(&v); err != nil {
		return nil, fmt.Errorf("manifest: %w", err)
	}
	dropTimes(v)
	return v, nil
}

// dropTimes deletes every key that holds a time (mtime_nsec, ctime_ns, started_at...).
func dropTimes(v any) {
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			if isTime(k) {
				delete(v, k)
			} else {
				dropTimes(e)
			}
		}
	case []any:
		for _, e := range v {
			dropTimes(e)
		}
	}
}

func isTime(key string) bool {
	return strings.Contains(key, "time") || strings.HasSuffix(key, "_ns") || strings.HasSuffix(key, "_nsec") || strings.HasSuffix(key, "_at")
}
