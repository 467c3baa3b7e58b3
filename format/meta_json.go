package format

import (
	"encoding/json"
	"fmt"
)

type dirJSON struct {
	jsonPath
	Meta
}

func (j dirJSON) value() (Dir, error) {
	path, err := j.decode()
	return Dir{Path: path, Meta: j.Meta}, err
}

// MarshalJSON writes the path losslessly (path_b64 beside it when it is not UTF-8).
func (d Dir) MarshalJSON() ([]byte, error) { return json.Marshal(dirJSON{encodePath(d.Path), d.Meta}) }

// UnmarshalJSON reads what MarshalJSON writes.
func (d *Dir) UnmarshalJSON(data []byte) error { return unmarshalRecord(data, d, dirJSON.value) }

// symlinkJSON carries the target like a path: target_b64 beside it when it is not UTF-8.
type symlinkJSON struct {
	jsonPath
	Target    string `json:"target"`
	TargetB64 string `json:"target_b64,omitempty"`
	Meta
}

func (j symlinkJSON) value() (Symlink, error) {
	path, err := j.decode()
	if err != nil {
		return Symlink{}, err
	}
	target, err := jsonPath{Path: j.Target, PathB64: j.TargetB64}.decode()
	if err != nil {
		return Symlink{}, fmt.Errorf("symlink %q: target: %w", path, err)
	}
	return Symlink{Path: path, Target: target, Meta: j.Meta}, nil
}

// MarshalJSON writes the path and the target losslessly.
func (l Symlink) MarshalJSON() ([]byte, error) {
	t := encodePath(l.Target)
	return json.Marshal(symlinkJSON{encodePath(l.Path), t.Path, t.PathB64, l.Meta})
}

// UnmarshalJSON reads what MarshalJSON writes.
func (l *Symlink) UnmarshalJSON(data []byte) error {
	return unmarshalRecord(data, l, symlinkJSON.value)
}
