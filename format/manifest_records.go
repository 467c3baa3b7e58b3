package format

// The fast parser of the manifest's big lists: a record of files, dirs or symlinks as
// backup writes it (fields named exactly, values of their types, no nulls, no xattrs or
// snapshot), decoded into the record as encoding/json would decode it. It says no to
// anything else, having set only fields that encoding/json would have set the same way
// first; encoding/json then decodes the whole record again.

func parseFileRecord(j *fileJSON, l *lexer) bool {
	return l.record(func(key []byte) bool {
		switch string(key) {
		case "path", "path_b64":
			return j.jsonPath.set(l, key)
		case "size":
			return l.int(&j.Size)
		case "sha256":
			return l.digest(&j.SHA256)
		case "raw_sha256":
			return l.digest(&j.RawSHA256)
		case "link":
			n := int64(j.Link)
			ok := l.int(&n)
			j.Link = int(n)
			return ok
		}
		// encoding/json allocates the embedded Meta for a key of its fields.
		m := j.Meta
		if m == nil {
			m = l.newMeta()
		}
		if !m.set(l, key) {
			return false
		}
		j.Meta = m
		return true
	})
}

func parseDirRecord(j *dirJSON, l *lexer) bool {
	return l.record(func(key []byte) bool {
		return j.jsonPath.set(l, key) || j.Meta.set(l, key)
	})
}

func parseSymlinkRecord(j *symlinkJSON, l *lexer) bool {
	return l.record(func(key []byte) bool {
		switch string(key) {
		case "target":
			return l.str(&j.Target)
		case "target_b64":
			return l.str(&j.TargetB64)
		}
		return j.jsonPath.set(l, key) || j.Meta.set(l, key)
	})
}

// A run that met many sockets, FIFOs or unreadable files lists each: a million warnings
// through encoding/json took 10 s to read.

func parseSkippedRecord(j *skippedJSON, l *lexer) bool {
	return l.record(func(key []byte) bool {
		if string(key) == "kind" {
			return l.str(&j.Kind)
		}
		return j.jsonPath.set(l, key)
	})
}

func parseExcludedRecord(j *excludedJSON, l *lexer) bool {
	return l.record(func(key []byte) bool {
		switch string(key) {
		case "rule":
			return l.str(&j.Rule)
		case "rule_b64":
			return l.str(&j.RuleB64)
		}
		return j.jsonPath.set(l, key)
	})
}

func parseWarningRecord(j *warningJSON, l *lexer) bool {
	return l.record(func(key []byte) bool {
		switch string(key) {
		case "op":
			return l.str(&j.Op)
		case "error":
			return l.str(&j.Error)
		case "lost":
			return l.boolean(&j.Lost)
		}
		return j.jsonPath.set(l, key)
	})
}

// An undo's before-state lists every path its restore created.
func parseCreatedRecord(j *createdJSON, l *lexer) bool {
	return l.record(func(key []byte) bool {
		switch string(key) {
		case "type":
			return l.str(&j.Type)
		case "size":
			return l.int(&j.Size)
		case "sha256":
			return l.str(&j.SHA256)
		case "target":
			return l.str(&j.Target)
		case "target_b64":
			return l.str(&j.TargetB64)
		}
		return j.jsonPath.set(l, key)
	})
}

func (p *jsonPath) set(l *lexer, key []byte) bool {
	switch string(key) {
	case "path":
		return l.str(&p.Path)
	case "path_b64":
		return l.str(&p.PathB64)
	}
	return false
}

// set reads the value of the field key; false for a key that is not Meta's, or a value
// left to encoding/json.
func (m *Meta) set(l *lexer, key []byte) bool {
	switch string(key) {
	case "uid":
		return l.uint32(&m.UID)
	case "gid":
		return l.uint32(&m.GID)
	case "mode":
		return l.uint32(&m.Mode)
	case "mtime_nsec":
		n := int64(m.MtimeNsec)
		ok := l.int(&n)
		m.MtimeNsec = int(n)
		return ok
	case "mtime_sec":
		return l.int(&m.MtimeSec)
	case "ctime_ns":
		return l.int(&m.CtimeNsec)
	case "ino":
		return l.uint(&m.Ino)
	case "dev":
		return l.uint(&m.Dev)
	case "user":
		return l.repeated(&m.User, &l.user)
	case "group":
		return l.repeated(&m.Group, &l.group)
	}
	return false
}

// record reads the object at the start of b, handing each field to field, which reads the
// value.
func (l *lexer) record(field func(key []byte) bool) bool {
	if !l.byte('{') {
		return false
	}
	if l.byte('}') {
		return true
	}
	for {
		key, ok := l.key()
		if !ok || !l.byte(':') || !l.space() || !field(key) {
			return false
		}
		if l.byte('}') {
			return true
		}
		if !l.byte(',') {
			return false
		}
	}
}
