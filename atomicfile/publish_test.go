package atomicfile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"syscall"
	"testing"
)

func TestPublishRollsBack(t *testing.T) {
	layouts := []struct {
		name       string
		old, apart bool
	}{
		{"no old pair", false, false},
		{"old pair replaced", true, false},
		{"receipt in another folder", false, true},
		{"old pair, receipt in another folder", true, true},
	}
	for _, l := range layouts {
		for _, noExchange := range []bool{false, true} {
			// Fail, one run at a time, each rename and each folder sync a good run makes.
			renames := countRenames(t, l.old, l.apart, noExchange)
			var faults []fault
			for n := 1; n <= renames; n++ {
				faults = append(faults, fault{op: "rename", n: n, noExchange: noExchange})
			}
			for n := 1; n <= 1+btoi(l.apart); n++ {
				faults = append(faults, fault{op: "sync", n: n, noExchange: noExchange})
			}
			for _, f := range faults {
				t.Run(fmt.Sprintf("%s/no exchange %v/%s %d fails", l.name, noExchange, f.op, f.n), func(t *testing.T) {
					p := layout(t, l.old, l.apart)
					files := p.stage(t, true)
					inject(t, f)
					err := Publish(files...)
					var pe *Error
					if !errors.As(err, &pe) || !errors.Is(err, syscall.EIO) {
						t.Fatalf("Publish: %v; want an *Error wrapping EIO", err)
					}
					if !strings.HasSuffix(err.Error(), "; the final paths are as they were") || len(pe.Stuck) > 0 {
						t.Errorf("error %q, stuck %q; want it to say the final paths are as they were", err, pe.Stuck)
					}
					p.assertOld(t)
				})
			}
		}
	}
}

// TestPublishRollbackFails makes every rename after the receipt's fail, so the archive
// cannot be put back: the error must say what is at its final path and where the old one
// is.
func TestPublishRollbackFails(t *testing.T) {
	tests := []struct {
		name       string
		old        bool
		noExchange bool
		failFrom   int    // the receipt's first rename
		aside      string // the suffix of the old archive's name after a failed rollback
	}{
		{"no old pair", false, false, 2, ""},
		{"old pair", true, false, 2, ""},
		{"old pair, no exchange", true, true, 3, ".old"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := layout(t, tt.old, false)
			files := p.stage(t, true)
			inject(t, fault{op: "rename", n: tt.failFrom, sticky: true, noExchange: tt.noExchange})
			err := Publish(files...)
			var pe *Error
			if !errors.As(err, &pe) || len(pe.Stuck) != 1 {
				t.Fatalf("Publish: %v; want an *Error with the archive stuck", err)
			}
			if got := content(t, p.archive); got != "new archive" {
				t.Errorf("archive holds %q, want the new one, as the error says", got)
			}
			if got := content(t, p.receipt); got != p.oldReceipt {
				t.Errorf("receipt holds %q, want %q", got, p.oldReceipt)
			}
			want := p.archive + " holds the new file"
			if tt.old {
				want += " and its old one is at " + files[0].Temp + tt.aside
				if got := content(t, files[0].Temp+tt.aside); got != p.oldArchive {
					t.Errorf("the old archive's copy holds %q, want %q", got, p.oldArchive)
				}
			}
			if !strings.Contains(err.Error(), want) {
				t.Errorf("error %q does not say %q", err, want)
			}
		})
	}
}

func TestPublish(t *testing.T) {
	tests := []struct {
		name                   string
		old, apart, noExchange bool
	}{
		{"no old pair", false, false, false},
		{"old pair replaced", true, false, false},
		{"old pair replaced without RENAME_EXCHANGE", true, false, true},
		{"receipt in another folder", true, true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := layout(t, tt.old, tt.apart)
			inject(t, fault{noExchange: tt.noExchange})
			if err := Publish(p.stage(t, true)...); err != nil {
				t.Fatal(err)
			}
			if got := content(t, p.archive); got != "new archive" {
				t.Errorf("archive holds %q, want the new one", got)
			}
			if got := content(t, p.receipt); got != "new receipt" {
				t.Errorf("receipt holds %q, want the new one", got)
			}
			p.assertOnly(t)
		})
	}
}

func TestPublishRefuses(t *testing.T) {
	t.Run("existing archive without replace", func(t *testing.T) {
		p := layout(t, true, false)
		err := Publish(p.stage(t, false)...)
		if !errors.Is(err, fs.ErrExist) {
			t.Fatalf("Publish: %v; want fs.ErrExist", err)
		}
		if got := content(t, p.archive); got != p.oldArchive {
			t.Errorf("archive holds %q, want %q", got, p.oldArchive)
		}
		p.assertOnly(t)
	})
	t.Run("receipt at the archive's path", func(t *testing.T) {
		p := layout(t, false, false)
		p.receipt, p.oldArchive = p.archive, "old archive"
		writeFile(t, p.archive, p.oldArchive)
		err := Publish(p.stage(t, true)...)
		if err == nil || !strings.Contains(err.Error(), "two files at "+p.archive) {
			t.Fatalf("Publish: %v; want a refusal naming %s", err, p.archive)
		}
		if got := content(t, p.archive); got != p.oldArchive {
			t.Errorf("archive holds %q, want %q", got, p.oldArchive)
		}
		p.assertOnly(t)
	})
	t.Run("a folder at the receipt's path", func(t *testing.T) {
		p := layout(t, false, false)
		files := p.stage(t, true)
		if err := os.Mkdir(p.receipt, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := Publish(files...); !errors.Is(err, syscall.EISDIR) {
			t.Fatalf("Publish: %v; want EISDIR", err)
		}
		if exists(p.archive) {
			t.Error("the new archive is in place without its receipt")
		}
		p.assertOnly(t)
	})
}
