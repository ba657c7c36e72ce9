package adapters

// topLevel calls fn for each key of the top-level JSON object in b with the
// raw bytes of its value, without decoding or validating values. It lets a
// parser pick the few fields it needs from a large line (Claude's
// toolUseResult repeats whole files) at memory-scan speed and hand only
// those to encoding/json. It stops at the first malformed byte; callers
// still validate what they decode.
func topLevel(b []byte, fn func(key, val []byte)) {
	i := skipWS(b, 0)
	if i >= len(b) || b[i] != '{' {
		return
	}
	i++
	for {
		i = skipWS(b, i)
		if i >= len(b) || b[i] != '"' {
			return
		}
		ks := i + 1
		i = skipString(b, i)
		if i < 0 {
			return
		}
		key := b[ks : i-1]
		i = skipWS(b, i)
		if i >= len(b) || b[i] != ':' {
			return
		}
		i = skipWS(b, i+1)
		vs := i
		i = skipValue(b, i)
		if i < 0 {
			return
		}
		fn(key, b[vs:i])
		i = skipWS(b, i)
		if i >= len(b) || b[i] != ',' {
			return
		}
		i++
	}
}

func skipWS(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// skipString returns the index after the string starting at b[i] == '"'.
func skipString(b []byte, i int) int {
	for i++; i < len(b); i++ {
		switch b[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return -1
}

// skipValue returns the index after the value starting at b[i].
func skipValue(b []byte, i int) int {
	if i >= len(b) {
		return -1
	}
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		depth := 0
		for ; i < len(b); i++ {
			switch b[i] {
			case '"':
				j := skipString(b, i)
				if j < 0 {
					return -1
				}
				i = j - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
		}
		return -1
	default:
		for ; i < len(b); i++ {
			switch b[i] {
			case ',', '}', ']', ' ', '\t', '\n', '\r':
				return i
			}
		}
		return i
	}
}

// pickFields builds a small JSON object from the top-level fields of b
// whose keys are in keep, for a single json.Unmarshal.
func pickFields(b []byte, keep map[string]bool) []byte {
	out := make([]byte, 0, 256)
	out = append(out, '{')
	topLevel(b, func(k, v []byte) {
		if !keep[string(k)] {
			return
		}
		if len(out) > 1 {
			out = append(out, ',')
		}
		out = append(out, '"')
		out = append(out, k...)
		out = append(out, '"', ':')
		out = append(out, v...)
	})
	return append(out, '}')
}
