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
	"math"
	"strings"
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
