package engine_test

import (
	"archive/zip"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"filippo.io/age"

	"backup/engine"
	"backup/format"
	"backup/seal"
)

// keyPair is an age key pair as the engine's options take it.
func keyPair(t *testing.T) (*seal.Recipients, *seal.Identities, *age.X25519Identity) {
	t.Helper()
	id, err := age.GenerateX25519Identity()
	if err != nil {
		t.Fatal(err)
	}
	var r seal.Recipients
	if err := r.Add(id.Recipient().String()); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "key")
	if err := os.WriteFile(path, []byte(id.String()+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var ids seal.Identities
	if _, err := ids.ReadFile(path); err != nil {
		t.Fatal(err)
	}
	return &r, &ids, id
}

// TestRunSealed: with Recipients, the file Output is one age file holding the zip a plain
// run writes; Sum is the ciphertext's; the read-back checks the contents with an identity
// of the recipients and the ciphertext alone without one.
func TestRunSealed(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "app")
	tree(t, src, map[string]string{"a": "alpha", "sub/b": string(bytes.Repeat([]byte("beta"), 100000))})
	rcpts, ids, id := keyPair(t)
	_, strangers, _ := keyPair(t)
	for _, c := range []struct {
		name   string
		ids    *seal.Identities
		checks string
	}{{"with identity", ids, format.ReadBackContents}, {"without", nil, format.ReadBackCiphertext}, {"another's identity", strangers, format.ReadBackCiphertext}} {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "app.zip.age")
			var l log
			e := engine.New(engine.Options{Sources: []engine.Source{{Path: src, Name: "app"}}, Level: 6,
				Output: engine.Output{Path: path}, Recipients: rcpts, Identities: c.ids, Verify: true})
			e.Hooks = l.hooks()
			res, err := e.Run(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			if err := res.Commit(); err != nil {
				t.Fatal(err)
			}
			if got := leftIn(t, filepath.Dir(path)); !slices.Equal(got, []string{"app.zip.age"}) {
				t.Errorf("output folder holds %q, want only the archive", got)
			}
			data, _ := os.ReadFile(path)
			sum := sha256.Sum256(data)
			if res.Sum.Size != int64(len(data)) || res.Sum.SHA256 != hex.EncodeToString(sum[:]) {
				t.Errorf("Sum %d %s, want the ciphertext's %d %x", res.Sum.Size, res.Sum.SHA256, len(data), sum)
			}
			plain, err := age.Decrypt(bytes.NewReader(data), id)
			if err != nil {
				t.Fatal(err)
			}
			zipData, _ := io.ReadAll(plain)
			zr, err := zip.NewReader(bytes.NewReader(zipData), int64(len(zipData)))
			if err != nil {
				t.Fatal(err)
			}
			if got, want := entries(t, zr), []string{"app/", "app/a", "app/sub/", "app/sub/b"}; !slices.Equal(got, want) {
				t.Errorf("entries %q, want %q", got, want)
			}
			if res.ReadBackChecks() != c.checks {
				t.Errorf("ReadBackChecks %q, want %q", res.ReadBackChecks(), c.checks)
			}
			if err := res.ReadBack(t.Context(), path); err != nil {
				t.Errorf("ReadBack: %v", err)
			}
			data[len(data)-1] ^= 1
			os.WriteFile(path, data, 0o600)
			if err := res.ReadBack(t.Context(), path); err == nil {
				t.Error("ReadBack of a damaged archive passed")
			}
		})
	}
}

// TestRunSealedReference: an encrypted reference gives its unchanged entries with an
// identity, and a full run (said to NoReuse) without.
func TestRunSealedReference(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "app")
	tree(t, src, map[string]string{"a": "alpha", "b": "beta"})
	rcpts, ids, _ := keyPair(t)
	run := func(ids *seal.Identities, ref, out string) (*log, *engine.Result) {
		var l log
		e := engine.New(engine.Options{Sources: []engine.Source{{Path: src, Name: "app"}}, Level: 6, Reference: ref,
			Output: engine.Output{Path: out}, Recipients: rcpts, Identities: ids})
		e.Hooks = l.hooks()
		res, err := e.Run(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if err := res.Commit(); err != nil {
			t.Fatal(err)
		}
		return &l, res
	}
	first := filepath.Join(dir, "first.zip.age")
	_, res := run(nil, "", first)
	rc := &format.Receipt{Schema: format.ReceiptSchema, Status: format.Complete, Archive: &format.ArchiveInfo{Path: first, Size: res.Sum.Size, SHA256: res.Sum.SHA256}}
	data, _ := rc.Marshal()
	os.WriteFile(format.ReceiptPath(first), data, 0o600)

	l, _ := run(ids, first, filepath.Join(dir, "second.zip.age"))
	reused := 0
	for _, f := range l.files {
		if f.Reused {
			reused++
		}
	}
	if reused != 2 || len(l.noReuse) != 0 {
		t.Errorf("with an identity: %d reused, NoReuse %v; want 2, none", reused, l.noReuse)
	}
	l, _ = run(nil, first, filepath.Join(dir, "third.zip.age"))
	if len(l.noReuse) != 1 {
		t.Errorf("without an identity: NoReuse %v, want one reason", l.noReuse)
	}
}
