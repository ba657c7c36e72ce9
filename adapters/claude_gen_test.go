package adapters

import (
	"strings"
	"testing"
)

// FuzzClaudeDifferentialGen is FuzzClaudeDifferential with lines built
// from the fuzz input by a small grammar of transcript lines: byte-level
// mutation seldom turns a line into one with a repeated key, a key in
// another case or spelled with escapes, or a value of the wrong type, and
// those are where a hand-written decoder and encoding/json part ways.
//
//	go test ./adapters/ -run XXX -fuzz FuzzClaudeDifferentialGen -fuzztime 120s
func FuzzClaudeDifferentialGen(f *testing.F) {
	for _, s := range []string{"", "\x00", "\x01\x02\x03", "user", "assistant tool_use", strings.Repeat("\x07\x13\xff", 20)} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, choices []byte) {
		g := &lineGen{in: choices}
		line := g.line()
		if d := claudeDiff([]byte(line), 7); d != "" {
			t.Fatalf("%q: %s", line, d)
		}
	})
}

// lineGen writes a transcript line, taking its choices from in.
type lineGen struct {
	in  []byte
	out strings.Builder
}

// pick returns a choice in [0, n).
func (g *lineGen) pick(n int) int {
	if len(g.in) == 0 {
		return 0
	}
	c := int(g.in[0])
	g.in = g.in[1:]
	return c % n
}

func (g *lineGen) w(s string) { g.out.WriteString(s) }

// ws writes white space now and then.
func (g *lineGen) ws() {
	if g.pick(8) == 0 {
		g.w([]string{" ", "\n", "\t ", "\r"}[g.pick(4)])
	}
}

func (g *lineGen) line() string {
	// Mostly the fields rows need (so that lines make rows), then any
	// fields, repeats and other spellings included, in any order.
	var keys []string
	for _, k := range []string{"type", "message", "uuid", "promptSource", "timestamp"} {
		if g.pick(8) != 0 {
			keys = append(keys, k)
		}
	}
	for i, n := 0, g.pick(5); i < n; i++ {
		keys = append(keys, []string{"type", "subtype", "uuid", "timestamp", "isSidechain", "isMeta", "isCompactSummary",
			"isApiErrorMessage", "promptSource", "agentId", "parentUuid", "message", "attachment", "compactMetadata",
			"toolUseResult", "Type", "MESSAGE", "message", "type"}[g.pick(19)])
	}
	for i := range keys {
		j := i + g.pick(len(keys)-i)
		keys[i], keys[j] = keys[j], keys[i]
	}
	g.w("{")
	for i, key := range keys {
		if i > 0 {
			g.w(",")
		}
		g.ws()
		g.w(`"` + key + `":`)
		g.ws()
		switch strings.ToLower(key) {
		case "type":
			g.str([]string{"user", "assistant", "user", "assistant", "system", "attachment", "queue-operation", "us\\u0065r", "USER", "mode"})
		case "subtype":
			g.str([]string{"compact_boundary", "other", "compact\\u005fboundary"})
		case "issidechain", "ismeta", "iscompactsummary", "isapierrormessage":
			g.boolean()
		case "message":
			g.valueOr(g.message)
		case "attachment":
			g.valueOr(g.attachment)
		case "compactmetadata":
			g.valueOr(func() {
				g.object([]string{"trigger", "preTokens", "PRETOKENS", "pre\u212aTokens", "x"}, func(k string) {
					if strings.Contains(strings.ToLower(k), "tokens") || strings.Contains(k, "\u212a") {
						g.number()
					} else {
						g.text()
					}
				})
			})
		case "tooluseresult":
			g.any(2)
		default: // uuid, timestamp, promptSource, agentId, parentUuid
			if g.pick(4) == 0 {
				g.str([]string{"2026-11-21T08:59:37.203Z", "2026-11-21T08:59:37+02:00", "bad"})
			} else {
				g.valueOr(g.text)
			}
		}
		g.ws()
	}
	g.w("}")
	s := g.out.String()
	switch g.pick(16) {
	case 0: // cut short
		s = s[:g.pick(len(s)+1)]
	case 1: // one byte broken
		if len(s) > 0 {
			i := g.pick(len(s))
			const junk = "x\"{}[],:\\\x01\xff"
			j := g.pick(len(junk))
			s = s[:i] + junk[j:j+1] + s[i+1:]
		}
	}
	return s
}

// valueOr writes what fn writes, or (now and then) a value of another type.
func (g *lineGen) valueOr(fn func()) {
	if g.pick(10) == 0 {
		g.any(1)
		return
	}
	fn()
}

// any writes a value of any type, nested up to depth.
func (g *lineGen) any(depth int) {
	switch g.pick(7) {
	case 0:
		g.w("null")
	case 1:
		g.boolean()
	case 2:
		g.number()
	case 3, 4:
		g.text()
	case 5:
		if depth > 0 {
			g.w("[")
			for i, n := 0, g.pick(3); i < n; i++ {
				if i > 0 {
					g.w(",")
				}
				g.any(depth - 1)
			}
			g.w("]")
		} else {
			g.w("[]")
		}
	default:
		if depth > 0 {
			g.object([]string{"a", "type", "text", "content"}, func(string) { g.any(depth - 1) })
		} else {
			g.w("{}")
		}
	}
}

func (g *lineGen) boolean() {
	g.w([]string{"true", "false", "null", `"true"`, "1"}[g.pick(5)])
}

func (g *lineGen) number() {
	g.w([]string{"0", "7", "-3", "1.5", "1e3", "123456789", "9223372036854775807", "9223372036854775808", "-0", `"5"`, "null"}[g.pick(11)])
}

func (g *lineGen) str(choices []string) {
	g.w(`"` + choices[g.pick(len(choices))] + `"`)
}

// text writes a string with the kinds of content rows care about.
func (g *lineGen) text() {
	parts := []string{"", "x", "hello world", "  ", "\\n", "caf\\u00e9", "\\ud83d\\ude00", "\\ud83d", "\\udc00", "\xff", "\xe2\x82",
		"[CARRYOVER] Last updated now", "\\u005bCARRYOVER]", "<command-name>", "<local-command-x>", "exit code 3", "Exited with code: -2",
		"\\\"", "\\\\", "\\t", strings.Repeat("word ", 300), strings.Repeat("\\u00e9", 700), strings.Repeat("ab\\n", 800)}
	g.w(`"`)
	for i, n := 0, 1+g.pick(3); i < n; i++ {
		g.w(parts[g.pick(len(parts))])
	}
	g.w(`"`)
}

// object writes an object with keys from keys, values by val.
func (g *lineGen) object(keys []string, val func(key string)) {
	g.w("{")
	for i, n := 0, g.pick(6); i < n; i++ {
		if i > 0 {
			g.w(",")
		}
		g.ws()
		k := keys[g.pick(len(keys))]
		g.w(`"` + k + `":`)
		g.ws()
		val(k)
	}
	g.w("}")
}

func (g *lineGen) message() {
	keys := []string{"id", "role", "model", "content", "usage", "ID", "Content", "conten\\u0074", "stop_reason", "content", "content"}
	g.object(keys, func(k string) {
		switch strings.ToLower(k) {
		case "content", "conten\\u0074":
			switch g.pick(4) {
			case 0:
				g.valueOr(g.text)
			default:
				g.valueOr(g.blocks)
			}
		case "usage":
			g.valueOr(func() {
				g.object([]string{"input_tokens", "output_tokens", "cache_creation_input_tokens", "cache_read_input_tokens", "INPUT_TOKENS", "service_tier", "cache_creation"}, func(string) {
					g.valueOr(g.number)
				})
			})
		case "model":
			g.str([]string{"claude-x", "<synthetic>"})
		default:
			g.valueOr(g.text)
		}
	})
}

func (g *lineGen) blocks() {
	g.w("[")
	for i, n := 0, g.pick(4); i < n; i++ {
		if i > 0 {
			g.w(",")
		}
		if g.pick(8) == 0 {
			g.any(1)
			continue
		}
		g.block(2)
	}
	g.w("]")
}

func (g *lineGen) block(depth int) {
	keys := []string{"type", "text", "id", "name", "input", "tool_use_id", "content", "is_error", "TYPE", "Text", "i\u017f_error", "type"}
	g.object(keys, func(k string) {
		switch strings.ToLower(k) {
		case "type":
			g.str([]string{"text", "tool_use", "tool_result", "thinking", "TEXT", "te\\u0078t"})
		case "name":
			g.str([]string{"Bash", "Write", "Edit", "MultiEdit", "NotebookEdit", "Read", "Ba\\u0073h"})
		case "is_error", "i\u017f_error":
			g.boolean()
		case "input":
			g.valueOr(g.input)
		case "content":
			switch {
			case depth > 0 && g.pick(3) == 0:
				g.w("[")
				for i, n := 0, g.pick(3); i < n; i++ {
					if i > 0 {
						g.w(",")
					}
					g.block(depth - 1)
				}
				g.w("]")
			default:
				g.valueOr(g.text)
			}
		default:
			g.valueOr(g.text)
		}
	})
}

func (g *lineGen) input() {
	keys := []string{"file_path", "notebook_path", "command", "description", "content", "new_string", "edits", "FILE_PATH", "old_string"}
	g.object(keys, func(k string) {
		if k != "edits" {
			g.valueOr(g.text)
			return
		}
		g.valueOr(func() {
			g.w("[")
			for i, n := 0, g.pick(4); i < n; i++ {
				if i > 0 {
					g.w(",")
				}
				if g.pick(6) == 0 {
					g.any(0)
					continue
				}
				g.object([]string{"new_string", "NEW_STRING", "old_string"}, func(string) { g.valueOr(g.text) })
			}
			g.w("]")
		})
	})
}

func (g *lineGen) attachment() {
	g.object([]string{"type", "stdout", "content", "hookEvent", "TYPE", "prompt", "commandMode", "origin"}, func(k string) {
		switch strings.ToLower(k) {
		case "type":
			g.str([]string{"hook_success", "hook_additional_context", "skill_listing", "queued_command"})
		case "commandmode":
			g.str([]string{"prompt", "task-notification", "bash"})
		case "origin":
			g.w(`{"kind":`)
			g.str([]string{"human", "task-notification"})
			g.w("}")
		case "content", "prompt":
			if g.pick(2) == 0 {
				g.w("[")
				for i, n := 0, g.pick(3); i < n; i++ {
					if i > 0 {
						g.w(",")
					}
					g.valueOr(g.text)
				}
				g.w("]")
			} else {
				g.valueOr(g.text)
			}
		default:
			g.valueOr(g.text)
		}
	})
}
