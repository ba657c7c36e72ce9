package adapters

import "time"

// What listers share to describe a session.

// describeAll describes files (through the cache) and keeps the sessions
// in project.
func describeAll(env Env, tool string, files []string, project string, describe func(string) (NativeSession, error)) []NativeSession {
	var out []NativeSession
	for _, f := range files {
		if s, err := DescribeCached(env, tool, f, describe); err == nil && InProject(s.Project, project) {
			out = append(out, s)
		}
	}
	return out
}

// lastActive is the newest "timestamp" of the sampled lines, else the
// file's modification time.
func (fs fileSample) lastActive() time.Time {
	if t := newestTimestamp(append(lines(fs.head), lines(fs.tail)...), "timestamp"); !t.IsZero() {
		return t
	}
	return fs.modTime
}

// newerTime is the later of t and the RFC 3339 time v (t when v is none).
func newerTime(t time.Time, v string) time.Time {
	if u, err := time.Parse(time.RFC3339Nano, v); err == nil && u.After(t) {
		return u
	}
	return t
}

// firstPrompt is the text of the first prompt row.
func firstPrompt(rows []Row) (string, bool) {
	for _, r := range rows {
		if r.Kind == KindPrompt {
			return r.Text, true
		}
	}
	return "", false
}

// noteRows counts the prompts and replies of rows in a listed session,
// takes the first prompt as its preview and the newest time as its last
// activity.
func (s *NativeSession) noteRows(rows []Row) {
	for _, r := range rows {
		if r.Kind == KindPrompt || r.Kind == KindText {
			s.MessageCount++
		}
		if r.Kind == KindPrompt && s.Preview == "" {
			s.Preview = preview(r.Text)
		}
		if r.Time.After(s.LastActive) {
			s.LastActive = r.Time
		}
	}
}
