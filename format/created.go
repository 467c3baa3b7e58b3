package format

import (
	"encoding/json"
	"errors"
	"fmt"
)

// Created is a path a restore created in its destination, as the before-state of that
// restore records it (Manifest.Created): restoring the before-state removes it again, if it
// still holds what the restore wrote. Type is "file" (with the Size and SHA256 written),
// "dir" or "symlink" (with its Target).
type Created struct {
	Path   string
	Type   string
	Size   int64
	SHA256 string
	Target string
}

// The types of Created.
const (
	CreatedFile    = "file"
	CreatedDir     = "dir"
	CreatedSymlink = "symlink"
)

type createdJSON struct {
	jsonPath
	Type      string `json:"type"`
	Size      int64  `json:"size,omitempty"`
	SHA256    string `json:"sha256,omitempty"`
	Target    string `json:"target,omitempty"`
	TargetB64 string `json:"target_b64,omitempty"`
}

func (j createdJSON) value() (Created, error) {
	path, err := j.decode()
	if err != nil {
		return Created{}, err
	}
	target, err := jsonPath{Path: j.Target, PathB64: j.TargetB64}.decode()
	if err != nil {
		return Created{}, fmt.Errorf("created %q: target: %w", path, err)
	}
	c := Created{Path: path, Type: j.Type, Size: j.Size, SHA256: j.SHA256, Target: target}
	return c, c.check()
}

func (c Created) check() error {
	switch {
	case c.Path == "":
		return fmt.Errorf("a created path has no path")
	case c.Type == CreatedFile && (c.Size < 0 || !isHexSHA256(c.SHA256)):
		return fmt.Errorf("created file %q has size %d and sha256 %q", c.Path, c.Size, c.SHA256)
	case c.Type != CreatedFile && c.Type != CreatedDir && c.Type != CreatedSymlink:
		return fmt.Errorf("created %q has type %q, want file, dir or symlink", c.Path, c.Type)
	}
	return nil
}

// replacedValue is a record of Manifest.Replaced: a file's, or a symlink's.
func replacedValue(j createdJSON) (Created, error) {
	if j.Path == "" && j.PathB64 == "" {
		return Created{}, errors.New("a replaced file has no path")
	}
	c, err := j.value()
	if err == nil && c.Type != CreatedFile && c.Type != CreatedSymlink {
		err = fmt.Errorf("replaced %q has type %q, want file or symlink", c.Path, c.Type)
	}
	return c, err
}

// MarshalJSON writes the path and the target losslessly (path_b64 beside a path that is not
// UTF-8).
func (c Created) MarshalJSON() ([]byte, error) {
	t := encodePath(c.Target)
	return json.Marshal(createdJSON{encodePath(c.Path), c.Type, c.Size, c.SHA256, t.Path, t.PathB64})
}

// UnmarshalJSON reads what MarshalJSON writes.
func (c *Created) UnmarshalJSON(data []byte) error {
	return unmarshalRecord(data, c, createdJSON.value)
}
