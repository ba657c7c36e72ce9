// Package claudejson is the Claude Code transcript line decoder behind
// adapters/claude.go: a hand-written, span-based reader that is ~6x
// encoding/json and gives exactly its results. It is a speed exception;
// a new adapter copies adapters/codex.go (plain encoding/json) instead.
// It knows nothing of rows: adapters/claude.go builds them from the spans,
// and the row-level differential tests there (claude_diff_test.go,
// claude_gen_test.go, against the old parser in claude_oracle_test.go)
// hold the two to the same rows. The scanner's and key matcher's own
// fuzz tests live here (jsonscan_fuzz_test.go).
package claudejson

import (
	"bytes"
	"encoding/binary"
	"math"
	"math/bits"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// The Claude line decoder.
//
// It reads the fields the Claude adapter's ParseLine needs from a transcript line without
// encoding/json, and gives the same results as the code it replaced:
// pickFields (copy the kept top-level fields into a small object) followed
// by json.Unmarshal into plain structs. "The same" includes encoding/json's
// corner cases, because a transcript line is untrusted input and rows must
// not depend on which decoder read it:
//
//   - top-level fields are found by the lenient topLevel scan and matched
//     by their exact raw key (as pickFields did); nested keys match struct
//     fields as encoding/json matches them: exact name first, else
//     case-insensitively (foldKey), escapes decoded;
//   - any syntax error in a kept value (anywhere inside it, including
//     nested fields nobody reads) rejects the whole line: Unmarshal checks
//     the whole input before decoding anything;
//   - a value of the wrong type leaves its field as it was and decoding
//     goes on (Unmarshal remembers only the first such error; ParseLine
//     cares whether that first one was a string message.content);
//   - a repeated key decodes again into the same field: the last scalar
//     wins, nested objects merge, null resets pointers and slices;
//   - a slice decoded twice reuses its elements, including ones a shorter
//     decode in between had cut off (reflect.Value.SetLen exposes them
//     again); see Message.Blocks.
//
// Strings are kept raw (spans of the line, still escaped) and are unquoted
// only when a row keeps them, and only as far as it keeps them
// (claudeRows in adapters/claude.go).

// Line is what the adapter (adapters/claude.go) reads of a line. String fields are spans of
// the line holding the raw JSON string content (between the quotes, still
// escaped); absent and "" are both empty.
type Line struct {
	Type, Subtype, UUID, Timestamp, PromptSource, AgentID Span

	IsSidechain, IsMeta, IsCompactSummary, IsAPIError bool

	// hasParent is parentUuid != null (it was a *string: null and absent
	// are nil; any other value, even of the wrong type, allocates it).
	HasParent bool

	HasMessage bool // message is a non-nil pointer
	Message    Message

	Attachment Span // raw JSON value (json.RawMessage); empty when absent
	Origin     Span // raw JSON value of 2.1's "origin" ({"kind":…}); empty when absent

	HasCompact bool // compactMetadata is a non-nil pointer
	Compact    struct {
		Trigger   Span
		PreTokens int64
	}
}

type Message struct {
	ID, Role, Model Span

	// blocks[:nBlocks] is content when it is a list. blocks itself is
	// every element decoded since content was last reset (null or []):
	// encoding/json decodes a second list into the same slice, element by
	// element, and a longer second list reuses the elements a shorter one
	// in between had cut off. Only repeated content keys (or repeated
	// messages) can see the difference.
	Blocks  []Block
	NBlocks int

	// text is content when it is a string (isText); see Decoder.sc.
	Text   Span
	IsText bool

	HasUsage bool
	Usage    struct{ Input, Output, CacheCreation, CacheRead int64 }
}

type Block struct {
	Type, Text, ID, Name, ToolUseID Span
	Input                           Input
	Content                         Span // raw JSON value (string or list of parts)
	IsError                         bool
}

// Input is the part of a tool_use input carryover reads.
type Input struct {
	FilePath, NotebookPath, Command, Description, Content, NewString Span
	BashID, TaskID                                                   Span // the background shell BashOutput, TaskOutput read
	Todos                                                            Span // TodoWrite's list, raw JSON
	// edits[:nEdits] are the new_string of each MultiEdit edit (same
	// reuse rules as Message.Blocks).
	Edits  []Span
	NEdits int
}

// typeErrors records encoding/json's UnmarshalTypeErrors: Unmarshal
// reports only the first, and any makes a separate Unmarshal fail.
type typeErrors struct {
	n int
	// firstContentString: the first was a string at message.content (a
	// string content, or a string element of a content list), the one
	// error the old ParseLine recovered from.
	firstContentString bool
}

// Decoder decodes one line at a time; the adapter keeps them in a
// pool so their buffers are reused.
type Decoder struct {
	Raw  []byte
	r    jsonReader
	Line Line
	errs typeErrors
	// sc mirrors the old code's second Unmarshal, run when the first type
	// error was a string content: into struct{Message struct{Content
	// string}}. It succeeds unless a message is neither an object nor null
	// or a content in one is neither a string nor null; then the content
	// is the last string one.
	scFail bool
	scText Span

	parts   []Block // tool_result content parts (adapters: claudeRows.toolResultText)
	Scratch []byte  // unquoting space
}

// Reset forgets the previous line (and drops the reference to it) but
// keeps the buffers.
func (d *Decoder) Reset() {
	// A freak line must not leave huge buffers in the pool.
	const maxBlocks, maxScratch = 1024, 1 << 20
	if cap(d.Line.Message.Blocks) > maxBlocks {
		d.Line.Message.Blocks = nil
	}
	if cap(d.parts) > maxBlocks {
		d.parts = nil
	}
	if cap(d.Scratch) > maxScratch {
		d.Scratch = nil
	}
	d.Raw = nil
	d.Line = Line{Message: Message{Blocks: d.Line.Message.Blocks[:0]}}
	d.errs = typeErrors{}
	d.scFail, d.scText = false, Span{}
	d.parts = d.parts[:0]
	d.r.reset(nil, 0, 0)
}

// Decode reads line; false means a syntax error (the line is skipped).
func (d *Decoder) Decode(line []byte) bool {
	ok, sure := d.decodeFast(line)
	if !sure {
		ok = d.decodeCareful(line)
	}
	if !ok {
		return false
	}
	l := &d.Line
	if d.errs.n > 0 && d.errs.firstContentString && l.HasMessage && !d.scFail {
		l.Message.Text, l.Message.IsText = d.scText, true
	}
	return true
}

// decodeCareful is the reference decode: it cuts the top-level fields as
// pickFields did (topLevelNext) and rejects the line unless each kept
// value is exactly one valid JSON value, as json.Unmarshal of the picked
// object would have.
func (d *Decoder) decodeCareful(line []byte) bool {
	d.Reset()
	d.Raw = line
	for i := topLevelStart(line); i >= 0; {
		key, vs, ok := topLevelKey(line, i)
		if !ok {
			break
		}
		end := skipValue(line, vs)
		if end < 0 {
			break
		}
		// Read the value with the line cut after it: it must end there.
		d.r.reset(line[:end], vs, 1)
		if d.topField(key) && (d.r.bad || d.r.i != end) {
			return false
		}
		i = topLevelAfter(line, end)
	}
	return true
}

// decodeFast gives decodeCareful's result without its lenient pass over
// the kept values: it reads them strictly straight from the line. When a
// kept value is valid, the lenient cut would have ended exactly where the
// strict read did (for a string, object or array the lenient scan agrees
// on valid input; a number or literal must be followed by a byte the
// lenient scan stops at), so the results agree. Otherwise (a syntax error,
// a truncated line) sure is false and decodeCareful must decide.
func (d *Decoder) decodeFast(line []byte) (ok, sure bool) {
	d.Reset()
	d.Raw = line
	d.r.reset(line, 0, 0)
	for i := topLevelStart(line); i >= 0; {
		key, vs, ok := topLevelKey(line, i)
		if !ok {
			break
		}
		var end int
		d.r.i, d.r.depth = vs, 1 // r.bad is false: it would have returned
		if d.topField(key) {
			if d.r.bad {
				return false, false
			}
			end = d.r.i
			if c := line[vs]; c != '"' && c != '{' && c != '[' && end < len(line) && !endsLenientScalar(line[end]) {
				return false, false
			}
		} else if end = skipValue(line, vs); end < 0 {
			break
		}
		i = topLevelAfter(line, end)
	}
	return true, true
}

// mismatch records a type error: a value that does not fit its field
// (json.Unmarshal leaves the field as it was and goes on).
func (d *Decoder) mismatch(contentString bool) {
	if d.errs.n == 0 {
		d.errs.firstContentString = contentString
	}
	d.errs.n++
}

// topField decodes the value at r.i into the top-level field key, if
// ParseLine keeps that field (key is raw: only exact names are kept). It
// leaves r after the value, or bad on a syntax error.
func (d *Decoder) topField(key []byte) (kept bool) {
	l := &d.Line
	switch string(key) {
	case "parentUuid":
		d.parentUUID()
	case "message":
		d.messageField()
	case "attachment":
		d.rawValue(&l.Attachment)
	case "origin":
		d.rawValue(&l.Origin)
	case "compactMetadata":
		d.compactField()
	default:
		return d.topScalar(key)
	}
	return true
}

// topScalar is topField for the top-level strings and booleans.
func (d *Decoder) topScalar(key []byte) (kept bool) {
	l := &d.Line
	switch string(key) {
	case "type":
		d.str(&l.Type)
	case "subtype":
		d.str(&l.Subtype)
	case "uuid":
		d.str(&l.UUID)
	case "timestamp":
		d.str(&l.Timestamp)
	case "promptSource":
		d.str(&l.PromptSource)
	case "agentId":
		d.str(&l.AgentID)
	case "isSidechain":
		d.boolean(&l.IsSidechain)
	case "isMeta":
		d.boolean(&l.IsMeta)
	case "isCompactSummary":
		d.boolean(&l.IsCompactSummary)
	case "isApiErrorMessage":
		d.boolean(&l.IsAPIError)
	default:
		return false // not kept: never validated, as pickFields dropped it
	}
	return true
}

// parentUuid: null, or a string (any other value still counts as a parent).
func (d *Decoder) parentUUID() {
	l := &d.Line
	switch c := d.r.peek(); c {
	case 'n':
		d.r.literal()
		l.HasParent = false
	case '"':
		d.r.str()
		l.HasParent = true
	default:
		l.HasParent = true
		d.mismatch(false)
		d.r.skip()
	}
}

// messageField: null (no message), or an object.
func (d *Decoder) messageField() {
	l := &d.Line
	switch c := d.r.peek(); c {
	case 'n':
		d.r.literal()
		l.HasMessage = false
		blocks := l.Message.Blocks[:0]
		l.Message = Message{Blocks: blocks}
	case '{':
		l.HasMessage = true
		d.message(&l.Message)
	default:
		l.HasMessage = true
		d.scFail = true
		d.mismatch(false)
		d.r.skip()
	}
}

// compactField: compactMetadata, null or an object.
func (d *Decoder) compactField() {
	l := &d.Line
	switch c := d.r.peek(); c {
	case 'n':
		d.r.literal()
		l.HasCompact = false
		l.Compact.Trigger, l.Compact.PreTokens = Span{}, 0
	case '{':
		l.HasCompact = true
		d.compactMetadata()
	default:
		l.HasCompact = true
		d.mismatch(false)
		d.r.skip()
	}
}

// Struct fields by JSON name, for matching keys (fieldIndex).
type fieldSet struct {
	names, folded []string
	lengths       uint64 // bit n set: some name is n bytes long
}

func newFieldSet(names ...string) fieldSet {
	fs := fieldSet{names: names}
	for _, n := range names {
		fs.folded = append(fs.folded, strings.ToUpper(n)) // the names are ASCII
		fs.lengths |= 1 << len(n)
	}
	return fs
}

// plainKey reports a key of ASCII without escapes.
func plainKey(rawKey []byte) bool {
	for _, c := range rawKey {
		if c == '\\' || c >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// asciiFoldedIndex is fieldIndex for a plain key without an exact match,
// compared in place.
func (fs *fieldSet) asciiFoldedIndex(rawKey []byte) int {
	if len(rawKey) >= 64 || fs.lengths&(1<<len(rawKey)) == 0 {
		return -1
	}
	for i, n := range fs.folded {
		if len(n) == len(rawKey) && asciiUpperEqual(rawKey, n) {
			return i
		}
	}
	return -1
}

// fieldIndex returns the index of the field encoding/json decodes the raw
// key into, or -1.
func (fs *fieldSet) fieldIndex(rawKey []byte) int {
	if len(rawKey) < 64 && fs.lengths&(1<<len(rawKey)) != 0 {
		for i, n := range fs.names {
			if string(rawKey) == n {
				return i
			}
		}
	}
	// No exact match: encoding/json still takes a key that matches
	// case-insensitively. Most keys are plain ASCII: compare those in place.
	if plainKey(rawKey) {
		return fs.asciiFoldedIndex(rawKey)
	}
	var buf [maxFoldedKey]byte
	k := foldKey(&buf, rawKey)
	for i, n := range fs.folded {
		if string(k) == n {
			return i
		}
	}
	return -1
}

// asciiUpperEqual reports whether the ASCII key upper-cased (letters only,
// as foldKey does) equals upper.
func asciiUpperEqual(key []byte, upper string) bool {
	for i, c := range key {
		if 'a' <= c && c <= 'z' {
			c -= 'a' - 'A'
		}
		if c != upper[i] {
			return false
		}
	}
	return true
}

var (
	messageFields = newFieldSet("id", "role", "model", "content", "usage")
	blockFields   = newFieldSet("type", "text", "id", "name", "input", "tool_use_id", "content", "is_error")
	inputFields   = newFieldSet("file_path", "notebook_path", "command", "description", "content", "new_string", "edits", "todos", "bash_id", "task_id")
	editFields    = newFieldSet("new_string")
	usageFields   = newFieldSet("input_tokens", "output_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")
	compactFields = newFieldSet("trigger", "preTokens")

	attachmentFields = newFieldSet("type", "content", "stdout", "hookEvent", "prompt", "commandMode", "origin")
)

// str decodes a string field: a string sets it, null leaves it.
func (d *Decoder) str(dst *Span) {
	switch d.r.peek() {
	case '"':
		*dst = d.r.str()
	case 'n':
		d.r.literal()
	default:
		d.mismatch(false)
		d.r.skip()
	}
}

func (d *Decoder) boolean(dst *bool) {
	switch c := d.r.peek(); c {
	case 't', 'f':
		d.r.literal()
		*dst = c == 't'
	case 'n':
		d.r.literal()
	default:
		d.mismatch(false)
		d.r.skip()
	}
}

// int64 decodes an int64 field: a fraction, an exponent or an overflow is
// a type error, as strconv.ParseInt decides in encoding/json.
func (d *Decoder) int64(dst *int64) {
	switch c := d.r.peek(); {
	case c == '-' || '0' <= c && c <= '9':
		num := d.r.number()
		if d.r.bad {
			return
		}
		n, ok := parseInt64(num)
		if !ok {
			d.mismatch(false)
			return
		}
		*dst = n
	case c == 'n':
		d.r.literal()
	default:
		d.mismatch(false)
		d.r.skip()
	}
}

// parseInt64 is strconv.ParseInt(string(num), 10, 64) == nil for a valid
// JSON number: false for a fraction, an exponent or an overflow.
func parseInt64(num []byte) (int64, bool) {
	neg := num[0] == '-'
	if neg {
		num = num[1:]
	}
	if len(num) > 19 {
		return 0, false // more digits than any int64 has (JSON has no leading zeros)
	}
	var u uint64
	for _, c := range num {
		if c < '0' || c > '9' {
			return 0, false
		}
		u = u*10 + uint64(c-'0') // 19 digits cannot overflow a uint64
	}
	switch {
	case !neg && u <= math.MaxInt64:
		return int64(u), true
	case neg && u <= -math.MinInt64:
		return -int64(u), true
	}
	return 0, false
}

// rawValue decodes a json.RawMessage field: the value's bytes, null
// included.
func (d *Decoder) rawValue(dst *Span) {
	d.r.peek()
	start := d.r.i
	d.r.skip()
	*dst = Span{start, d.r.i}
}

// message decodes the object at r.i into m (merging, as into an existing
// *Message).
func (d *Decoder) message(m *Message) {
	d.r.enter()
	for first := true; ; first = false {
		k, ok := d.r.nextKey(first)
		if !ok {
			return
		}
		switch messageFields.fieldIndex(k) {
		case 0:
			d.str(&m.ID)
		case 1:
			d.str(&m.Role)
		case 2:
			d.str(&m.Model)
		case 3: // content: []Block
			switch c := d.r.peek(); c {
			case '"':
				d.scText = d.r.str()
				d.mismatch(true)
			case 'n':
				d.r.literal()
				m.Blocks, m.NBlocks = m.Blocks[:0], 0
			case '[':
				d.scFail = true
				d.blockList(m)
			default:
				d.scFail = true
				d.mismatch(false)
				d.r.skip()
			}
		case 4: // usage: pointer to struct
			switch c := d.r.peek(); c {
			case 'n':
				d.r.literal()
				m.HasUsage = false
				m.Usage.Input, m.Usage.Output, m.Usage.CacheCreation, m.Usage.CacheRead = 0, 0, 0, 0
			case '{':
				m.HasUsage = true
				d.usage(m)
			default:
				m.HasUsage = true
				d.mismatch(false)
				d.r.skip()
			}
		default:
			d.r.skip()
		}
	}
}

// blockList decodes the list at r.i into m.blocks (see its comment for
// the reuse rules).
func (d *Decoder) blockList(m *Message) {
	d.r.enter()
	i := 0
	for first := true; d.r.nextElem(first); first = false {
		if i == len(m.Blocks) {
			m.Blocks = append(m.Blocks, Block{})
		}
		switch c := d.r.peek(); c {
		case '{':
			d.block(&m.Blocks[i])
		case 'n':
			d.r.literal()
		default:
			// A string element is reported as a string at
			// message.content, like a string content.
			d.mismatch(c == '"')
			d.r.skip()
		}
		i++
	}
	if i == 0 {
		m.Blocks = m.Blocks[:0] // [] makes a new empty slice
	}
	m.NBlocks = i
}

func (d *Decoder) block(b *Block) {
	d.r.enter()
	for first := true; ; first = false {
		k, ok := d.r.nextKey(first)
		if !ok {
			return
		}
		switch blockFields.fieldIndex(k) {
		case 0:
			d.str(&b.Type)
		case 1:
			d.str(&b.Text)
		case 2:
			d.str(&b.ID)
		case 3:
			d.str(&b.Name)
		case 4: // input: a struct value (null leaves it)
			switch c := d.r.peek(); c {
			case '{':
				d.input(&b.Input)
			case 'n':
				d.r.literal()
			default:
				d.mismatch(false)
				d.r.skip()
			}
		case 5:
			d.str(&b.ToolUseID)
		case 6:
			d.rawValue(&b.Content)
		case 7:
			d.boolean(&b.IsError)
		default:
			d.r.skip()
		}
	}
}

func (d *Decoder) input(in *Input) {
	d.r.enter()
	for first := true; ; first = false {
		k, ok := d.r.nextKey(first)
		if !ok {
			return
		}
		switch inputFields.fieldIndex(k) {
		case 0:
			d.str(&in.FilePath)
		case 1:
			d.str(&in.NotebookPath)
		case 2:
			d.str(&in.Command)
		case 3:
			d.str(&in.Description)
		case 4:
			d.str(&in.Content)
		case 5:
			d.str(&in.NewString)
		case 6: // edits: []struct{NewString string}
			switch c := d.r.peek(); c {
			case '[':
				d.editList(in)
			case 'n':
				d.r.literal()
				in.Edits, in.NEdits = in.Edits[:0], 0
			default:
				d.mismatch(false)
				d.r.skip()
			}
		case 7:
			d.rawValue(&in.Todos)
		case 8:
			d.str(&in.BashID)
		case 9:
			d.str(&in.TaskID)
		default:
			d.r.skip()
		}
	}
}

func (d *Decoder) editList(in *Input) {
	d.r.enter()
	i := 0
	for first := true; d.r.nextElem(first); first = false {
		if i == len(in.Edits) {
			in.Edits = append(in.Edits, Span{})
		}
		switch c := d.r.peek(); c {
		case '{':
			d.r.enter()
			for first := true; ; first = false {
				k, ok := d.r.nextKey(first)
				if !ok {
					break
				}
				if editFields.fieldIndex(k) == 0 {
					d.str(&in.Edits[i])
				} else {
					d.r.skip()
				}
			}
		case 'n':
			d.r.literal()
		default:
			d.mismatch(false)
			d.r.skip()
		}
		i++
	}
	if i == 0 {
		in.Edits = in.Edits[:0]
	}
	in.NEdits = i
}

func (d *Decoder) usage(m *Message) {
	d.r.enter()
	for first := true; ; first = false {
		k, ok := d.r.nextKey(first)
		if !ok {
			return
		}
		switch usageFields.fieldIndex(k) {
		case 0:
			d.int64(&m.Usage.Input)
		case 1:
			d.int64(&m.Usage.Output)
		case 2:
			d.int64(&m.Usage.CacheCreation)
		case 3:
			d.int64(&m.Usage.CacheRead)
		default:
			d.r.skip()
		}
	}
}

func (d *Decoder) compactMetadata() {
	c := &d.Line.Compact
	d.r.enter()
	for first := true; ; first = false {
		k, ok := d.r.nextKey(first)
		if !ok {
			return
		}
		switch compactFields.fieldIndex(k) {
		case 0:
			d.str(&c.Trigger)
		case 1:
			d.int64(&c.PreTokens)
		default:
			d.r.skip()
		}
	}
}

// separately runs fn as a separate json.Unmarshal of the value raw (a
// span of the line, already validated): with its own type errors, which
// make it fail.
func (d *Decoder) separately(raw Span, fn func()) (failed bool) {
	saved := d.errs
	d.errs = typeErrors{}
	d.r.reset(d.Raw[:raw.hi], raw.lo, 0)
	fn()
	failed = d.errs.n > 0 || d.r.bad || d.r.i != raw.hi
	d.errs = saved
	return failed
}

// ToolResultParts decodes a tool_result content list as the old code's
// json.Unmarshal into []claudeBlock did, returning the parts (valid until
// the next call), or ok false when that Unmarshal failed.
func (d *Decoder) ToolResultParts(raw Span) (parts []Block, ok bool) {
	d.parts = d.parts[:0]
	failed := d.separately(raw, func() {
		if d.r.peek() != '[' {
			d.mismatch(false)
			return
		}
		d.r.enter()
		for first := true; d.r.nextElem(first); first = false {
			d.parts = append(d.parts, Block{})
			switch d.r.peek() {
			case '{':
				d.block(&d.parts[len(d.parts)-1])
			case 'n':
				d.r.literal()
			default:
				d.mismatch(false)
				d.r.skip()
			}
		}
	})
	return d.parts, !failed
}

// AttachmentFields are the fields of an attachment line's
// attachment the old code decoded.
type AttachmentFields struct {
	Type, Stdout, Hook, CommandMode Span
	Content, Prompt, Origin         Span // raw JSON values; empty when absent
}

// Attachment decodes raw (json.RawMessage; empty when the line had no
// attachment) as the old json.Unmarshal into a struct did; ok false when
// that failed.
func (d *Decoder) Attachment(raw Span) (a AttachmentFields, ok bool) {
	if raw.Len() == 0 {
		return a, false // Unmarshal of no input fails
	}
	failed := d.separately(raw, func() {
		switch d.r.peek() {
		case 'n':
			d.r.literal()
			return
		case '{':
		default:
			d.mismatch(false)
			return
		}
		d.r.enter()
		for first := true; ; first = false {
			k, ok := d.r.nextKey(first)
			if !ok {
				return
			}
			switch attachmentFields.fieldIndex(k) {
			case 0:
				d.str(&a.Type)
			case 1:
				d.rawValue(&a.Content)
			case 2:
				d.str(&a.Stdout)
			case 3:
				d.str(&a.Hook)
			case 4:
				d.rawValue(&a.Prompt)
			case 5:
				d.str(&a.CommandMode)
			case 6:
				d.rawValue(&a.Origin)
			default:
				d.r.skip()
			}
		}
	})
	return a, !failed
}

// StringList decodes raw as the old json.Unmarshal into []string did:
// the raw elements (a null element is ""), or ok false when that failed
// (an empty raw, for an absent value, included).
func (d *Decoder) StringList(raw Span) (elems []Span, ok bool) {
	if raw.Len() == 0 {
		return nil, false
	}
	failed := d.separately(raw, func() {
		switch d.r.peek() {
		case 'n':
			d.r.literal()
			return
		case '[':
		default:
			d.mismatch(false)
			return
		}
		d.r.enter()
		for first := true; d.r.nextElem(first); first = false {
			var e Span
			d.str(&e)
			elems = append(elems, e)
		}
	})
	return elems, !failed
}

// This file holds two kinds of JSON scanning:
//
//   - lenient (topLevel, skipValue; the old pickFields): find where the fields of a
//     line's top-level object start and end without validating them, so a
//     parser can ignore big fields (Claude's toolUseResult repeats whole
//     files) at memory-scan speed;
//   - strict (jsonReader, AppendUnquoted, foldKey): validate and read the
//     few values a parser keeps exactly as encoding/json would, without
//     reflection and without allocating (the decoder in decode.go is
//     built on it).

// topLevel calls fn for each key of the top-level JSON object in b with the
// raw bytes of its value, without decoding or validating values. It lets a
// parser pick the few fields it needs from a large line (Claude's
// toolUseResult repeats whole files) at memory-scan speed and hand only
// those to encoding/json. It stops at the first malformed byte; callers
// still validate what they decode.
func topLevel(b []byte, fn func(key, val []byte)) {
	for i := topLevelStart(b); i >= 0; {
		key, val, next, ok := topLevelNext(b, i)
		if !ok {
			return
		}
		fn(key, val)
		i = next
	}
}

// topLevelStart returns the position topLevelNext reads the first field
// from, or -1 when b is not an object.
func topLevelStart(b []byte) int {
	i := skipWS(b, 0)
	if i >= len(b) || b[i] != '{' {
		return -1
	}
	return i + 1
}

// topLevelNext reads the field at b[i:] (i from topLevelStart or a
// previous topLevelNext): the raw key (between its quotes, escapes left
// as they are) and the raw value. ok is false when there is no field at i
// (end of object or a malformed byte); next is where the following field
// starts, or -1 when this one was the last (no comma after it).
func topLevelNext(b []byte, i int) (key, val []byte, next int, ok bool) {
	key, vs, ok := topLevelKey(b, i)
	if !ok {
		return nil, nil, -1, false
	}
	end := skipValue(b, vs)
	if end < 0 {
		return nil, nil, -1, false
	}
	return key, b[vs:end], topLevelAfter(b, end), true
}

// topLevelKey reads the key of the field at b[i:] and returns where its
// value starts.
func topLevelKey(b []byte, i int) (key []byte, valStart int, ok bool) {
	i = skipWS(b, i)
	if i >= len(b) || b[i] != '"' {
		return nil, 0, false
	}
	ks := i + 1
	i = skipString(b, i)
	if i < 0 {
		return nil, 0, false
	}
	key = b[ks : i-1]
	i = skipWS(b, i)
	if i >= len(b) || b[i] != ':' {
		return nil, 0, false
	}
	return key, skipWS(b, i+1), true
}

// topLevelAfter returns where the field after the value ending at b[end]
// starts, or -1 if there is none.
func topLevelAfter(b []byte, end int) int {
	next := skipWS(b, end)
	if next >= len(b) || b[next] != ',' {
		return -1
	}
	return next + 1
}

// endsLenientScalar reports whether skipValue ends a number or literal
// at c: the bytes skipValue's default case stops at.
func endsLenientScalar(c byte) bool {
	switch c {
	case ',', '}', ']', ' ', '\t', '\n', '\r':
		return true
	}
	return false
}

func skipWS(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// skipString returns the index after the string starting at b[i] == '"',
// or -1 if it does not end. It is lenient: a backslash escapes the next
// byte, nothing else is checked.
func skipString(b []byte, i int) int {
	i++
	// Most strings are short: look at 8 bytes at a time for a quote or a
	// backslash, for up to 64 bytes.
	for short := min(i+64, len(b)); i < short; {
		if i+8 <= len(b) {
			if m := quoteOrBackslash(binary.LittleEndian.Uint64(b[i:])); m != 0 {
				i += bits.TrailingZeros64(m) / 8
			} else {
				i += 8
				continue
			}
		} else if c := b[i]; c != '"' && c != '\\' {
			i++
			continue
		}
		if b[i] == '"' {
			return i + 1
		}
		i += 2
	}
	if i >= len(b) {
		return -1
	}
	// A long one (a file's content): jump from quote to quote with
	// bytes.IndexByte. A quote ends the string unless an odd run of
	// backslashes precedes it (`\\"` ends, `\\\"` does not). The byte at
	// start is not escaped (the scan above never stops inside an escape),
	// so runs are counted from there.
	for start := i; i < len(b); {
		q := bytes.IndexByte(b[i:], '"')
		if q < 0 {
			return -1
		}
		q += i
		n := 0
		for q-n-1 >= start && b[q-n-1] == '\\' {
			n++
		}
		if n%2 == 0 {
			return q + 1
		}
		i = q + 1
	}
	return -1
}

// quoteOrBackslash flags the bytes of w that are '"' or '\\' (the lowest
// flagged byte is exact; see stringStop).
func quoteOrBackslash(w uint64) uint64 {
	q := w ^ (swarOnes * '"')
	bs := w ^ (swarOnes * '\\')
	return (((q - swarOnes) &^ q) | ((bs - swarOnes) &^ bs)) & swarHigh
}

// skipValue returns the index after the value starting at b[i]. Like
// skipString it is lenient: brackets are counted, not matched.
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
			if endsLenientScalar(b[i]) {
				return i
			}
		}
		return i
	}
}

// maxJSONDepth is encoding/json's nesting limit (its scanner's
// maxNestingDepth): a document nesting deeper is a syntax error.
const maxJSONDepth = 10000

// Span is a part of the buffer a jsonReader reads: b[lo:hi]. Decoders
// record spans rather than slices: they hold no pointers, so recording a
// field costs no GC write barrier.
type Span struct{ lo, hi int }

// Of returns the bytes of s in b, the buffer it was read from.
func (s Span) Of(b []byte) []byte { return b[s.lo:s.hi] }

// Len is the length of s in bytes.
func (s Span) Len() int { return s.hi - s.lo }

// jsonReader reads JSON values strictly: it accepts exactly what
// encoding/json's scanner accepts (RFC 8259 grammar, no control bytes in
// strings, nesting at most maxJSONDepth deep; invalid UTF-8 is accepted
// and replaced when strings are unquoted). On the first syntax error it
// sets bad and moves to the end of the input, so every later read fails
// fast and callers only check bad once at the end.
type jsonReader struct {
	b     []byte
	i     int
	depth int // open objects and arrays, counting any enclosing ones
	bad   bool
	// open has one bit per nesting level skip is inside: 1 for an
	// object, 0 for an array.
	open [maxJSONDepth/64 + 1]uint64
}

// reset makes r read b from b[i], inside depth open objects and arrays.
func (r *jsonReader) reset(b []byte, i, depth int) {
	r.b, r.i, r.depth, r.bad = b, i, depth, false
}

func (r *jsonReader) fail() {
	r.bad = true
	r.i = len(r.b)
}

// peek skips whitespace and returns the next byte (0 at the end).
func (r *jsonReader) peek() byte {
	if r.i < len(r.b) && r.b[r.i] > ' ' {
		return r.b[r.i] // compact JSON: no white space to skip
	}
	r.i = skipWS(r.b, r.i)
	if r.i >= len(r.b) {
		return 0
	}
	return r.b[r.i]
}

// enter consumes the '{' or '[' at r.i.
func (r *jsonReader) enter() {
	r.i++
	r.depth++
	if r.depth > maxJSONDepth {
		r.fail()
	}
}

// nextKey reads up to the next member of the object entered last: it
// returns the raw key (between its quotes) with ok, or ok false after
// the closing '}' (or on a syntax error). first is true for the first call
// after enter.
func (r *jsonReader) nextKey(first bool) (key []byte, ok bool) {
	c := r.peek()
	if c == '}' {
		r.i++
		r.depth--
		return nil, false
	}
	if !first {
		if c != ',' {
			r.fail()
			return nil, false
		}
		r.i++
		c = r.peek()
	}
	if c != '"' {
		r.fail()
		return nil, false
	}
	key = r.str().Of(r.b)
	if r.peek() != ':' {
		r.fail()
		return nil, false
	}
	r.i++
	return key, !r.bad
}

// nextElem reads up to the next element of the array entered last; ok is
// false after the closing ']' (or on a syntax error).
func (r *jsonReader) nextElem(first bool) bool {
	c := r.peek()
	if c == ']' {
		r.i++
		r.depth--
		return false
	}
	if !first {
		if c != ',' {
			r.fail()
			return false
		}
		r.i++
	}
	return !r.bad
}

// SWAR ("SIMD within a register") constants: with these, one 64-bit word
// tests 8 bytes at once.
const (
	swarOnes = 0x0101010101010101
	swarHigh = 0x8080808080808080
)

// stringStop returns a mask with the high bit set in the bytes of w that a
// string scan must stop at ('"', '\\', control bytes < 0x20). Bytes above
// the lowest flagged one may be flagged wrongly (borrows), but the lowest
// flagged byte is always a real match, which is all callers use.
func stringStop(w uint64) uint64 {
	q := w ^ (swarOnes * '"')
	bs := w ^ (swarOnes * '\\')
	return ((q-swarOnes)&^q | (bs-swarOnes)&^bs | (w-swarOnes*0x20)&^w) & swarHigh
}

// str reads the string at r.i (r.b[r.i] == '"') and returns its raw
// content between the quotes, still escaped.
func (r *jsonReader) str() Span {
	b := r.b
	start := r.i + 1
	i := start
	for {
		for i+8 <= len(b) {
			if m := stringStop(binary.LittleEndian.Uint64(b[i:])); m != 0 {
				i += bits.TrailingZeros64(m) / 8
				break
			}
			i += 8
		}
		if i >= len(b) {
			r.fail()
			return Span{}
		}
		switch c := b[i]; {
		case c == '"':
			r.i = i + 1
			return Span{start, i}
		case c == '\\':
			n := escapeLen(b[i:])
			if n == 0 {
				r.fail()
				return Span{}
			}
			i += n
		case c < 0x20:
			r.fail()
			return Span{}
		default:
			i++
		}
	}
}

// escapeLen is the length of the escape sequence b starts with, 0 when
// it is not a valid one.
func escapeLen(b []byte) int {
	if len(b) < 2 {
		return 0
	}
	switch b[1] {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		return 2
	case 'u':
		if len(b) >= 6 && isHex(b[2]) && isHex(b[3]) && isHex(b[4]) && isHex(b[5]) {
			return 6
		}
	}
	return 0
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// number reads the number at r.i and returns its bytes.
func (r *jsonReader) number() []byte {
	b, start := r.b, r.i
	i := numberEnd(b, start)
	if i < 0 {
		r.fail()
		return nil
	}
	r.i = i
	return b[start:i]
}

// numberEnd is the index after the JSON number at b[i], -1 if there is
// none: an integer part (a leading 0 is the whole of it), a fraction and
// an exponent.
func numberEnd(b []byte, i int) int {
	if i < len(b) && b[i] == '-' {
		i++
	}
	if i < len(b) && b[i] == '0' {
		i++
	} else if i = skipDigits(b, i); i < 0 {
		return -1
	}
	if i < len(b) && b[i] == '.' {
		if i = skipDigits(b, i+1); i < 0 {
			return -1
		}
	}
	if i >= len(b) || b[i] != 'e' && b[i] != 'E' {
		return i
	}
	i++
	if i < len(b) && (b[i] == '+' || b[i] == '-') {
		i++
	}
	return skipDigits(b, i)
}

// skipDigits returns the index after the one or more digits at b[i:], or
// -1 if there is none.
func skipDigits(b []byte, i int) int {
	j := i
	for j < len(b) && '0' <= b[j] && b[j] <= '9' {
		j++
	}
	if j == i {
		return -1
	}
	return j
}

// literal reads true, false or null at r.i.
func (r *jsonReader) literal() {
	var want string
	switch r.b[r.i] {
	case 't':
		want = "true"
	case 'f':
		want = "false"
	default:
		want = "null"
	}
	if len(r.b)-r.i < len(want) || string(r.b[r.i:r.i+len(want)]) != want {
		r.fail()
		return
	}
	r.i += len(want)
}

// scalar reads the string, number or literal at r.i, whose first byte is
// c; anything else is a syntax error.
func (r *jsonReader) scalar(c byte) {
	switch {
	case c == '"':
		r.str()
	case c == 't' || c == 'f' || c == 'n':
		r.literal()
	case c == '-' || '0' <= c && c <= '9':
		r.number()
	default:
		r.fail()
	}
}

// skip validates and steps over the next value, whatever it is. Nesting
// is tracked in r.open, not on the Go stack, so deep input cannot
// overflow it.
func (r *jsonReader) skip() {
	level := 0 // containers opened by this call and still open
	for {
		// A value.
		switch c := r.peek(); c {
		case '{', '[':
			r.enter()
			if r.bad {
				return
			}
			if c == '{' {
				r.open[level/64] |= 1 << (level % 64)
			} else {
				r.open[level/64] &^= 1 << (level % 64)
			}
			level++
			if c == '{' {
				if _, ok := r.nextKey(true); ok {
					continue // read the member's value
				}
			} else if r.nextElem(true) {
				continue // read the element
			}
			// Empty container (or a syntax error): closed already.
			level--
		default:
			r.scalar(c)
		}
		// After a value: close containers until one has another member.
		for {
			if r.bad || level == 0 {
				return
			}
			inObject := r.open[(level-1)/64]&(1<<((level-1)%64)) != 0
			var more bool
			if inObject {
				_, more = r.nextKey(false)
			} else {
				more = r.nextElem(false)
			}
			if more {
				break
			}
			level--
		}
	}
}

// AppendUnquoted appends the JSON string content raw (the bytes between
// the quotes) to dst, unescaped exactly as encoding/json does it: escapes
// decoded, \uXXXX surrogate pairs combined, a lone or mismatched surrogate
// and every byte of invalid UTF-8 replaced by U+FFFD.
//
// With limit >= 0 it stops once it has appended at least limit bytes; more
// then reports that raw was not used up. What it appends is always a
// prefix of the full result: it only stops between units (a character, an
// escape, a surrogate pair), and it looks at the bytes after the unit it
// ends on just like the full decode would. ok is false for an incomplete
// or invalid escape (raw was cut short), as encoding/json would reject it.
func AppendUnquoted(dst, raw []byte, limit int) (out []byte, more, ok bool) {
	start := len(dst)
	r := 0
	for r < len(raw) {
		room := len(raw) // bytes that may still be appended
		if limit >= 0 {
			room = limit - (len(dst) - start)
			if room <= 0 {
				return dst, true, true
			}
		}
		c := raw[r]
		switch {
		case c == '\\':
			var ok bool
			if dst, r, ok = appendEscape(dst, raw, r); !ok {
				return dst, false, false
			}
		case c < utf8.RuneSelf:
			// A run of plain ASCII is copied as it is.
			end := ASCIIRun(raw, r)
			if end-r > room {
				end = r + room
			}
			dst = append(dst, raw[r:end]...)
			r = end
		default:
			rr, size := utf8.DecodeRune(raw[r:])
			if rr == utf8.RuneError && size == 1 {
				dst = append(dst, "\uFFFD"...)
			} else {
				dst = append(dst, raw[r:r+size]...)
			}
			r += size
		}
	}
	return dst, false, true
}

// unescapes maps the byte after a backslash to the byte it stands for
// (0: none; \u is read apart).
var unescapes = [256]byte{'"': '"', '\\': '\\', '/': '/', '\'': '\'', 'b': '\b', 'f': '\f', 'n': '\n', 'r': '\r', 't': '\t'}

// appendEscape appends what the escape at raw[r] stands for and returns
// the index after it; ok is false for an invalid escape. A lone or
// invalid surrogate is U+FFFD.
func appendEscape(dst, raw []byte, r int) (_ []byte, next int, ok bool) {
	if r+1 >= len(raw) {
		return dst, r, false
	}
	if v := unescapes[raw[r+1]]; v != 0 {
		return append(dst, v), r + 2, true
	}
	if raw[r+1] != 'u' {
		return dst, r, false
	}
	rr := getu4(raw[r:])
	if rr < 0 {
		return dst, r, false
	}
	r += 6
	if utf16.IsSurrogate(rr) {
		if dec := utf16.DecodeRune(rr, getu4(raw[r:])); dec != unicode.ReplacementChar {
			return utf8.AppendRune(dst, dec), r + 6, true // a valid pair
		}
		rr = unicode.ReplacementChar
	}
	return utf8.AppendRune(dst, rr), r, true
}

// ASCIIRun returns the end of the run of ASCII bytes other than '\\'
// starting at raw[i] (8 bytes at a time).
func ASCIIRun(raw []byte, i int) int {
	for i+8 <= len(raw) {
		w := binary.LittleEndian.Uint64(raw[i:])
		bs := w ^ (swarOnes * '\\')
		if m := (w | ((bs - swarOnes) &^ bs)) & swarHigh; m != 0 {
			return i + bits.TrailingZeros64(m)/8
		}
		i += 8
	}
	for i < len(raw) && raw[i] < utf8.RuneSelf && raw[i] != '\\' {
		i++
	}
	return i
}

// getu4 decodes \uXXXX from the beginning of s, or returns -1.
func getu4(s []byte) rune {
	if len(s) < 6 || s[0] != '\\' || s[1] != 'u' {
		return -1
	}
	var r rune
	for _, c := range s[2:6] {
		switch {
		case '0' <= c && c <= '9':
			c = c - '0'
		case 'a' <= c && c <= 'f':
			c = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			c = c - 'A' + 10
		default:
			return -1
		}
		r = r*16 + rune(c)
	}
	return r
}

// plainString reports whether the raw string content needs no unquoting:
// no escapes and valid UTF-8, so its bytes are the decoded string.
func plainString(raw []byte) bool {
	return bytes.IndexByte(raw, '\\') < 0 && utf8.Valid(raw)
}

// maxFoldedKey bounds the keys foldKey folds: longer ones cannot match
// any struct field name the decoders know (the longest is 27 bytes, and
// folding shrinks a key at most threefold: "K" is 3 bytes for 'k').
const maxFoldedKey = 96

// foldKey returns the raw object key (escaped, between its quotes)
// unescaped and case-folded the way encoding/json matches keys to struct
// fields: a key matches a field when foldKey(key) == the field name in
// upper case (ASCII letters are upper-cased, other runes mapped to the
// smallest rune of their case-folding orbit, so "K" (Kelvin) folds to
// 'K' and "ſ" to 'S'). buf is scratch space for the result; a key that
// cannot match any field (too long) folds to nil.
func foldKey(buf *[maxFoldedKey]byte, raw []byte) []byte {
	key := raw
	if !plainString(raw) {
		var dec [maxFoldedKey + 8]byte // room for the last rune past the limit
		d, more, ok := AppendUnquoted(dec[:0], raw, maxFoldedKey+1)
		if more || !ok || len(d) > maxFoldedKey {
			return nil
		}
		key = d
	}
	if len(key) > maxFoldedKey {
		return nil
	}
	out := buf[:0]
	for i := 0; i < len(key); {
		if c := key[i]; c < utf8.RuneSelf {
			if 'a' <= c && c <= 'z' {
				c -= 'a' - 'A'
			}
			out = append(out, c)
			i++
			continue
		}
		r, n := utf8.DecodeRune(key[i:])
		out = utf8.AppendRune(out, foldRune(r))
		i += n
	}
	return out
}

// foldRune returns the smallest rune of r's case-folding orbit (as
// encoding/json's fold.go does).
func foldRune(r rune) rune {
	for {
		r2 := unicode.SimpleFold(r)
		if r2 <= r {
			return r2
		}
		r = r2
	}
}
