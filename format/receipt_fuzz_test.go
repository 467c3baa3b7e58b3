package format

import (
	"testing"
)

// FuzzParseReceipt reads arbitrary bytes as a receipt: nothing panics, and what it takes has
// one of this tool's schemas and statuses, an encrypted one says how, and its summary is
// what its archive record says.
func FuzzParseReceipt(f *testing.F) {
	f.Add([]byte(`{"schema":"backup.receipt/v1","status":"complete","archive":{"path":"a.zip","size":3,"sha256":"ab"}}`))
	f.Add([]byte(`{"schema":"backup.receipt/v2","status":"incomplete","encryption":{"format":"age"}}`))
	f.Add([]byte(`{"schema":"backup.receipt/v1","status":"failed","archive":null,"error":"x"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		rc, err := ParseReceipt("r.json", data)
		if err != nil {
			return
		}
		switch {
		case rc.Schema != ReceiptSchema && rc.Schema != SealedReceiptSchema:
			t.Fatalf("schema %q taken", rc.Schema)
		case rc.Status != Complete && rc.Status != Incomplete && rc.Status != Failed:
			t.Fatalf("status %q taken", rc.Status)
		case rc.Schema == SealedReceiptSchema && rc.Encryption == nil:
			t.Fatal("v2 taken without encryption")
		}
		sum, ok := rc.Summary()
		if ok != (rc.Archive != nil) || ok && (sum.Size != rc.Archive.Size || sum.SHA256 != rc.Archive.SHA256) {
			t.Fatalf("summary %+v, %v of archive %+v", sum, ok, rc.Archive)
		}
	})
}
