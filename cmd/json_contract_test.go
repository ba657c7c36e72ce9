package cmd

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"
)

var snakeKey = regexp.MustCompile(`^[a-z0-9_][a-z0-9_.-]*$`)

// checkJSONContract is the --json contract: one JSON object, schema_version
// first and equal to jsonSchemaVersion, every key snake_case (data keys
// such as agent names may carry - or .), no value that is TOML text.
func checkJSONContract(b []byte) error {
	var top any
	if err := json.Unmarshal(b, &top); err != nil {
		return fmt.Errorf("not JSON: %v", err)
	}
	m, ok := top.(map[string]any)
	if !ok {
		return fmt.Errorf("not an object (lists go under a named key): %.40s", b)
	}
	if v, ok := m["schema_version"].(float64); !ok || v != jsonSchemaVersion {
		return fmt.Errorf("schema_version is %v, want %d", m["schema_version"], jsonSchemaVersion)
	}
	if !strings.HasPrefix(strings.TrimSpace(string(b)), `{
  "schema_version"`) {
		return fmt.Errorf("schema_version is not the first key")
	}
	return walkJSON("", top)
}

func walkJSON(path string, v any) error {
	switch x := v.(type) {
	case map[string]any:
		for k, y := range x {
			if !snakeKey.MatchString(k) {
				return fmt.Errorf("key %s.%s is not snake_case", path, k)
			}
			if err := walkJSON(path+"."+k, y); err != nil {
				return err
			}
		}
	case []any:
		for i, y := range x {
			if err := walkJSON(fmt.Sprintf("%s[%d]", path, i), y); err != nil {
				return err
			}
		}
	case string:
		// A TOML literal where a value belongs: "\"ask\"", "[…]", "{a = 1}".
		if len(x) > 1 && (x[0] == '"' && x[len(x)-1] == '"' || x[0] == '{' && strings.Contains(x, " = ")) {
			return fmt.Errorf("%s is TOML text %q, not a JSON value", path, x)
		}
	}
	return nil
}

// TestJSONScriptCoversEveryCommand: every command with a --json flag is
// run by testdata/script/json_contract.txtar, so a new command cannot skip
// the contract.
func TestJSONScriptCoversEveryCommand(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "testdata", "script", "json_contract.txtar"))
	if err != nil {
		t.Fatal(err)
	}
	var walk func(prefix string, cs []*cli.Command)
	walk = func(prefix string, cs []*cli.Command) {
		for _, c := range cs {
			name := strings.TrimSpace(prefix + " " + c.Name)
			for _, f := range c.Flags {
				if f.Names()[0] == "json" && !strings.Contains(string(b), "exec carryover-exe "+name+" ") {
					t.Errorf("json_contract.txtar does not run `carryover %s --json`", name)
				}
			}
			walk(name, c.Subcommands)
		}
	}
	walk("", NewApp(&Env{Getenv: func(string) string { return "" }}).Commands)
}

// TestEveryCommandHasAnExample: every command's --help ends with examples.
func TestEveryCommandHasAnExample(t *testing.T) {
	var walk func(prefix string, cs []*cli.Command)
	walk = func(prefix string, cs []*cli.Command) {
		for _, c := range cs {
			name := strings.TrimSpace(prefix + " " + c.Name)
			if !strings.Contains(c.Description, "EXAMPLES:\n") {
				t.Errorf("carryover %s --help has no example (add one to commandExamples)", name)
			}
			walk(name, c.Subcommands)
		}
	}
	walk("", NewApp(&Env{Getenv: func(string) string { return "" }}).Commands)
}

func TestCheckJSONContractRejects(t *testing.T) {
	for _, bad := range []string{
		`[]`,
		`{"sessions": []}`,
		"{\n  \"schema_version\": 1,\n  \"shortId\": \"x\"\n}",
		"{\n  \"schema_version\": 1,\n  \"Resume\": \"\"\n}",
		"{\n  \"schema_version\": 1,\n  \"value\": \"\\\"ask\\\"\"\n}",
	} {
		if checkJSONContract([]byte(bad)) == nil {
			t.Errorf("accepted %s", bad)
		}
	}
	if err := checkJSONContract([]byte("{\n  \"schema_version\": 1,\n  \"by_tool\": {\"copilot-cli\": 1}\n}")); err != nil {
		t.Error(err)
	}
}
