package format

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// TestReceiptSealed: the stored receipt of an encrypted archive is v2 and names no path; it
// parses back; a v2 receipt without encryption is refused; a plain receipt is stored as is.
func TestReceiptSealed(t *testing.T) {
	full := &Receipt{Schema: ReceiptSchema, Status: Failed, StartedAt: time.Unix(0, 0).UTC(),
		Sources:    []string{"/srv/secret-app"},
		Archive:    &ArchiveInfo{Path: "/backups/set/20261201T030000Z.zip.age", Size: 10, SHA256: "ab"},
		Skipped:    []Skipped{{Path: "secret-app/run.sock", Kind: "socket"}},
		Excluded:   []Excluded{{Path: "secret-app/cache", Rule: "CACHEDIR.TAG"}},
		Warnings:   []Warning{{Path: "secret-app/key", Op: "open", Error: "permission denied"}},
		Error:      "source /srv/secret-app: gone",
		Hooks:      []Hook{{When: "after", Command: "curl https://hc/secret-app", ExitCode: 3}},
		Encryption: &Encryption{Format: AgeFormat, Recipients: []string{"age1xyz"}, ReadBack: ReadBackCiphertext}}
	data, err := full.Stored().Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(data), "secret-app") || strings.Contains(string(data), "/backups") {
		t.Errorf("the stored receipt names a path:\n%s", data)
	}
	var keys map[string]any
	json.Unmarshal(data, &keys)
	for _, k := range []string{"sources", "skipped", "excluded", "warnings"} {
		if _, ok := keys[k]; ok {
			t.Errorf("the stored receipt has %q", k)
		}
	}
	rc, err := ParseReceipt("r", data)
	if err != nil {
		t.Fatal(err)
	}
	if rc.Schema != SealedReceiptSchema || rc.Archive.Path != "20261201T030000Z.zip.age" || rc.Error != SealedError || rc.Hooks[0].ExitCode != 3 || rc.Encryption.ReadBack != ReadBackCiphertext {
		t.Errorf("parsed back: %+v", rc)
	}
	if full.Schema != ReceiptSchema || full.Sources == nil || full.Error == SealedError {
		t.Error("Stored changed the run's receipt")
	}
	interrupted := *full
	interrupted.Error = ErrorInterrupted
	if got := interrupted.Stored().Error; got != ErrorInterrupted {
		t.Errorf("an interrupted run's stored error %q", got)
	}
	if _, err := ParseReceipt("r", []byte(`{"schema": "backup.receipt/v2", "status": "complete"}`)); err == nil {
		t.Error("a v2 receipt without encryption was taken")
	}
	plain := *full
	plain.Encryption = nil
	if plain.Stored() != &plain {
		t.Error("a plain receipt is not stored as it is")
	}
}
