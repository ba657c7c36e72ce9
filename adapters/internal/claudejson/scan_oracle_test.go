package claudejson

// The lenient scan as it was first written (adapters/claude.go at commit
// 64e4689), the reference FuzzLenientScan holds topLevel, skipString and
// skipValue to. adapters/claude_oracle_test.go keeps its own copy: the
// row-level oracle uses it to pick fields, and stays independent of the
// code it checks. Do not "fix" either; their quirks are the specification.

func oracleTopLevel(b []byte, fn func(key, val []byte)) {
	i := oracleSkipWS(b, 0)
	if i >= len(b) || b[i] != '{' {
		return
	}
	i++
	for {
		i = oracleSkipWS(b, i)
		if i >= len(b) || b[i] != '"' {
			return
		}
		ks := i + 1
		i = oracleSkipString(b, i)
		if i < 0 {
			return
		}
		key := b[ks : i-1]
		i = oracleSkipWS(b, i)
		if i >= len(b) || b[i] != ':' {
			return
		}
		i = oracleSkipWS(b, i+1)
		vs := i
		i = oracleSkipValue(b, i)
		if i < 0 {
			return
		}
		fn(key, b[vs:i])
		i = oracleSkipWS(b, i)
		if i >= len(b) || b[i] != ',' {
			return
		}
		i++
	}
}

func oracleSkipWS(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// oracleSkipString returns the index after the string starting at b[i] == '"'.
func oracleSkipString(b []byte, i int) int {
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

// oracleSkipValue returns the index after the value starting at b[i].
func oracleSkipValue(b []byte, i int) int {
	if i >= len(b) {
		return -1
	}
	switch b[i] {
	case '"':
		return oracleSkipString(b, i)
	case '{', '[':
		depth := 0
		for ; i < len(b); i++ {
			switch b[i] {
			case '"':
				j := oracleSkipString(b, i)
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
