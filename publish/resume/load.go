package resume

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"sync"

	"gopkg.in/yaml.v3"
)

// MaxFile is the largest session or handoff file Load reads.
const MaxFile = 64 << 20

// Loaded is what a file held: a session (session.json) or a structured
// handoff (YAML or JSON with goal and now).
type Loaded struct {
	Session *Session
	Handoff *Handoff
}

// AsSession returns the session, converting a handoff.
func (l Loaded) AsSession() Session {
	if l.Session != nil {
		return *l.Session
	}
	return l.Handoff.ToSession()
}

// LoadFile reads and validates a session.json or a structured handoff.
// Errors never quote the file's content.
func LoadFile(path string) (Loaded, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return Loaded{}, err
	}
	if !fi.Mode().IsRegular() {
		return Loaded{}, fmt.Errorf("%s is not a regular file", path)
	}
	if fi.Size() > MaxFile {
		return Loaded{}, fmt.Errorf("%s is %d bytes; the limit is %d", path, fi.Size(), MaxFile)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return Loaded{}, err
	}
	return Parse(b)
}

// Parse decodes b as a session.json (JSON with "conversation" or "task")
// or a structured handoff (YAML or JSON with "goal"), and validates it.
func Parse(b []byte) (Loaded, error) {
	var probe map[string]any
	if t := bytes.TrimSpace(b); len(t) > 0 && t[0] == '{' {
		if err := json.Unmarshal(b, &probe); err != nil {
			return Loaded{}, fmt.Errorf("the file is not valid JSON: %s", jsonErr(err))
		}
	} else if err := yaml.Unmarshal(b, &probe); err != nil || probe == nil {
		return Loaded{}, ErrUnknownFormat
	}
	switch {
	case hasKey(probe, "conversation", "task"):
		var s Session
		if err := json.Unmarshal(b, &s); err != nil {
			return Loaded{}, fmt.Errorf("session.json: %s", jsonErr(err))
		}
		return Loaded{Session: &s}, s.Validate()
	case hasKey(probe, "goal", "now") || probe["status"] != nil:
		var h Handoff
		dec := yaml.NewDecoder(bytes.NewReader(b))
		dec.KnownFields(true)
		if err := dec.Decode(&h); err != nil {
			return Loaded{}, fmt.Errorf("handoff: %s", yamlErr(err))
		}
		return Loaded{Handoff: &h}, h.Validate()
	}
	return Loaded{}, ErrUnknownFormat
}

// hasKey reports whether m holds any of keys, even with a null value.
func hasKey(m map[string]any, keys ...string) bool {
	for _, k := range keys {
		if _, ok := m[k]; ok {
			return true
		}
	}
	return false
}

// quotedRE is compiled at first use, not at process start.
var quotedRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile("`[^`]*`") })

// jsonErr describes a decode error by position and type, not content.
func jsonErr(err error) string {
	switch e := err.(type) {
	case *json.SyntaxError:
		return fmt.Sprintf("syntax error at byte %d", e.Offset)
	case *json.UnmarshalTypeError:
		return fmt.Sprintf("field %s: expected %s", e.Field, e.Type)
	}
	return "cannot decode"
}

func yamlErr(err error) string {
	if te, ok := err.(*yaml.TypeError); ok {
		// yaml.v3 quotes the offending value between backticks: hide it.
		return fmt.Sprintf("%d field error(s), first: %s", len(te.Errors), quotedRE().ReplaceAllString(te.Errors[0], "`…`"))
	}
	return "cannot decode"
}
