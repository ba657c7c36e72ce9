package hookconf

// Stub is one carryover hook command as the agent's config holds it.
type Stub struct {
	// Event is the native event the agent runs it on.
	Event string
	// Command is the command line exactly as written in the file.
	Command string
}

// Stubs lists carryover's stubs in t's hook config, in file order: every
// command of exactly StubCommand's form for this tool and event, whatever
// absolute binary it runs (a stub left pointing at a moved binary is listed
// too: `doctor` runs them to find out). A file the agent could not parse is
// an error.
func Stubs(t Target, files FS) ([]Stub, error) {
	if t.Path == "" || t.Layout == nil {
		return nil, nil
	}
	if t.Layout.Whole() {
		return wholeStubs(t, files)
	}
	f, b, exists, err := load(t, files)
	if err != nil || !exists || blank(b) {
		return nil, err
	}
	root, err := parseJSON(b)
	if err != nil {
		return nil, err
	}
	if _, _, err := f.scan(root, stubID{tool: t.Tool}); err != nil {
		return nil, err
	}
	_, hooks := root.member("hooks")
	if hooks == nil {
		return nil, nil
	}
	return f.stubsIn(hooks, t.Tool), nil
}

// stubsIn lists the stubs of tool in a "hooks" object, in file order.
func (f format) stubsIn(hooks *jnode, tool string) []Stub {
	var out []Stub
	for _, m := range hooks.members {
		if m.val.kind != '[' {
			continue
		}
		for _, e := range m.val.elems {
			for _, n := range f.handlers(e) {
				if c := f.command(n); isStub(c, tool, m.key) {
					out = append(out, Stub{Event: m.key, Command: c})
				}
			}
		}
	}
	return out
}

// handlers are the handler nodes of an event list's entry: the entry
// itself, or for a grouped format those in its "hooks" list.
func (f format) handlers(e *jnode) []*jnode {
	if !f.grouped {
		return []*jnode{e}
	}
	if e.kind != '{' {
		return nil
	}
	if _, hs := e.member("hooks"); hs != nil && hs.kind == '[' {
		return hs.elems
	}
	return nil
}

func isStub(cmd, tool, event string) bool {
	_, ok := parseStub(cmd, tool, event)
	return ok
}
