package distill

import (
	"strings"
	"testing"
)

func TestErrorLine(t *testing.T) {
	for in, want := range map[string]string{
		"Traceback (most recent call last):\n  File \"a.py\", line 3, in <module>\n    f()\nAssertionError: expected 42":                         "AssertionError: expected 42",
		"Exit code 1\n\nFAIL: test_login (tests.test_auth)\nAssertionError":                                                                      "FAIL: test_login (tests.test_auth) — AssertionError",
		"E       NameError: name 'User' is not defined":                                                                                          "NameError: name 'User' is not defined",
		"ls: cannot access 'tests/': No such file or directory":                                                                                  "ls: cannot access 'tests/': No such file or directory",
		"error[E0425]: cannot find value `x` in this scope\n --> src/main.rs:2:5":                                                                "error[E0425]: cannot find value `x` in this scope",
		"--- FAIL: TestPool (0.00s)\n    pool_test.go:12: want 4, got 3\nFAIL":                                                                   "pool_test.go:12: want 4, got 3",
		"C:\\src\\app\\main.go:7:2: undefined: cfg":                                                                                              "C:\\src\\app\\main.go:7:2: undefined: cfg",
		"expected 3 rows\n    at Object.<anonymous> (test/rows.test.js:9:5)":                                                                     "expected 3 rows",
		"vite v5.2.0 building\nsrc/app.tsx (3:7): \"x\" is not exported by \"y.js\"\nerror during build:":                                        "src/app.tsx (3:7): \"x\" is not exported by \"y.js\"",
		"Exception in thread \"main\" java.lang.IllegalStateException: boom\n\tat com.x.Foo.bar(Foo.java:12)":                                    "Exception in thread \"main\" java.lang.IllegalStateException: boom",
		"e: file:///p/app/Api.kt:5:15 Unresolved reference: json\n\nFAILURE: Build failed with an exception.":                                    "e: file:///p/app/Api.kt:5:15 Unresolved reference: json",
		"--- FAIL: TestSum (0.00s)\n    sum_test.go:9: \n        \tError Trace:\t/p/sum_test.go:9\n        \tError:      \tShould be true\nFAIL": "Error: Should be true",
		"  Failed T.Parse [3 ms]\n  Error Message:\n   Assert.True() Failure\n  Stack Trace:\n     at T.Parse() in /p/T.cs:line 4":               "Error Message: Assert.True() Failure",
		"  1) cart\n       sums items:\n\n      AssertionError [ERR_ASSERTION]: 41 == 42\n      + expected - actual\n  1 failing":                "AssertionError [ERR_ASSERTION]: 41 == 42",
		"FAIL src/cart.test.js\n  ● cart › sums\n    expect(received).toBe(expected)\n\n    Expected: 42\n    Received: 41\nTests: 1 failed":     "Expected: 42, Received: 41",
		"There was 1 failure:\n1) CartTest::testTotal\nFailed asserting that false is true.\nTests: 3, Assertions: 3, Failures: 1.":              "Failed asserting that false is true.",
		"1) test joins (RoomTest)\n     test/room_test.exs:31\n     ** (KeyError) key :id not found\n1 failure":                                  "** (KeyError) key :id not found",
	} {
		if got := errorLine(in); got != want {
			t.Errorf("errorLine(%q) = %q; want %q", in, got, want)
		}
	}
}

func TestTargetKey(t *testing.T) {
	same := [][2]string{
		{"python -m pytest tests/test_parser.py -x", "python -m pytest tests/test_parser.py"},
		{"pytest tests/test_a.py::test_one -q", "pytest tests/test_a.py"},
		{"go test ./pkg/... -run TestX -count=1", "go  test -run TestX ./pkg/..."},
		{"pytest -n 4 -x", "pytest"},
		{"npx vitest run", "vitest"},
		{"cd app && CI=1 npm test", "npm test"},
		{"python /workspace/gen.py", "python3 /workspace/gen.py"},
		{"npm run build -- --watch", "npm run --silent build"},
		{"python -m pytest tests -q", "python -m pytest"},
		{"python3 manage.py test blog.tests", "python manage.py test blog.tests --keepdb"},
		{"npm run test", "npm test"},
		{"pnpm run build -- --mode dev", "pnpm build"},
		{"docker compose run --rm web pytest -x", "pytest"},
		{"docker run --rm -v /p:/app -w /app python:3.12 pytest tests/", "uv run pytest tests/"},
		{"bundle exec rspec spec/a_spec.rb", "rspec spec/a_spec.rb"},
		{"docker compose -f docker-compose.test.yml run --rm web pytest", "pytest"},
		{"docker --context ci compose --profile test -p shop exec -T api rspec", "rspec"},
		{"kubectl -n staging exec api-0 -- go test ./...", "go test ./..."},
		{"poetry --directory backend run pytest --cov app", "pytest"},
		{"dotnet test --logger trx", "dotnet test"},
		{"go test -tags integration ./...", "go test ./..."},
		{"npm ci", "npm install"},
		{"make -C backend test", "make test"},
		{"npm -s test", "npm test"},
		{"go test ./... 2>&1 | tail -5", "go test ./..."},
		{"cd api && cargo test 2>&1 | grep -E 'test result|FAILED'", "cargo test"},
		{"poetry sync", "poetry install"},
	}
	for _, p := range same {
		if targetKey(p[0]) != targetKey(p[1]) {
			t.Errorf("%q and %q should share a target: %q vs %q", p[0], p[1], targetKey(p[0]), targetKey(p[1]))
		}
	}
	// a wrapper's options are no part of what it runs: a compose file named *.test.yml makes flake8 no test run
	if isTestCmd("docker compose -f docker-compose.test.yml run web flake8") || !isTestCmd("docker compose -f ci.yml run web pytest") {
		t.Error("isTestCmd reads the wrapper's options")
	}
	if k := targetKey("docker compose up -d"); k != "docker compose\t" { // no exec verb: the program stays
		t.Errorf("docker compose up: %q", k)
	}
	differ := [][2]string{
		{"go test ./...", "go build ./..."},
		{"pytest tests/test_a.py", "pytest tests/test_b.py"},
		{"npm test", "npm run lint"},
		{"npm run build", "npm run lint"},
		{"uv run pytest tests/", "uv run ruff check tests/"},
		{"python manage.py test", "python manage.py migrate"},
		{"php artisan test --filter=Invoice", "php artisan migrate"},
		{"bin/rails test", "bin/rails db:migrate"},
		{"npm run lint", "npm test"},
		{"go test ./pkg/... -run TestX", "go test ./pkg/..."},
		{"pytest -k slug", "pytest"},
		{"cargo test parse_header", "cargo test"},
		{"npx vitest run webhook", "npx vitest run"},
		{"docker compose run web pytest", "docker compose run web flake8"},
		{"kubectl exec api-0 -- python manage.py test", "kubectl exec -n ns api-0 -- python manage.py migrate"},
		{"docker-compose exec -T db psql", "docker-compose exec -T web pytest"},
		{"docker compose -f ci.yml run web pytest", "docker compose -f ci.yml run web flake8"},
		{"npx jest -t sums", "npx jest"},
		{"dotnet test --filter Invoice", "dotnet test"},
		{"mocha --grep cart", "mocha"},
		{"go test -v -run TestX ./...", "go test ./..."},
		{"npm ci", "npm run ci"},
		{"make -C backend test", "make -C backend lint"},
		{"kubectl -n staging apply -f k8s/", "kubectl -n staging get -f k8s/"},
		{"git ci -m x", "git install"},
	}
	for _, p := range differ {
		if targetKey(p[0]) == targetKey(p[1]) {
			t.Errorf("%q and %q must not share a target (%q)", p[0], p[1], targetKey(p[0]))
		}
	}
}

func TestShellFiles(t *testing.T) {
	got := func(cmd string) string {
		var out []string
		for _, f := range shellFiles(cmd) {
			tag := "m"
			switch {
			case f.deleted:
				tag = "d"
			case f.created:
				tag = "c"
			}
			out = append(out, tag+":"+f.path)
		}
		return strings.Join(out, " ")
	}
	for cmd, want := range map[string]string{
		"cat > notes.md <<'EOF'\n# a > b\nEOF":        "c:notes.md",
		"echo hi >> log.txt 2>/dev/null":              "c:log.txt",
		"mv a.py b.py":                                "d:a.py c:b.py",
		"git mv old.go new.go && rm -rf build/x.o":    "d:old.go c:new.go d:build/x.o",
		"sed -i.bak 's/a/b/' conf.ini":                "m:conf.ini",
		"npm test > /dev/null":                        "",
		"protoc --go_out=. -o api.pb api.proto":       "c:api.pb",
		"echo $X > $OUT":                              "",
		"cp template.txt out/readme.txt | tee log.md": "c:out/readme.txt c:log.md",
	} {
		if g := got(cmd); g != want {
			t.Errorf("shellFiles(%q) = %q; want %q", cmd, g, want)
		}
	}
}

func TestReferences(t *testing.T) {
	text := "Per Dr. Chen, see https://ex.org/a. Ping @anna-k or mail bob@ex.org.\n```py\n@my_decorator\ndef f(): pass\n```\nUse `@pytest.fixture` and @pkg/name."
	got := references(text, strings.ToLower(text), false)
	want := []string{"Dr. Chen", "https://ex.org/a", "@anna-k", "bob@ex.org"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("references = %q; want %q", got, want)
	}
	dated := "Due 2026-03-01, see https://ex.org/b (Mar 3)."
	if got := references(dated, strings.ToLower(dated), true); strings.Join(got, "|") != "https://ex.org/b" {
		t.Errorf("a tool turn's references = %q; want the link only", got)
	}
}

func TestIsQuestion(t *testing.T) {
	for s, want := range map[string]bool{
		"What is left?": true, "¿Qué falta": true, "还有什么问题吗": true, "これで大丈夫ですか。": true, "残りは？": true,
		"Fix the test.": false, "Use Redis": false, "Почему тест падает?": true,
	} {
		if isQuestion(s) != want {
			t.Errorf("isQuestion(%q) = %v", s, !want)
		}
	}
}

func FuzzShellFiles(f *testing.F) {
	for _, s := range []string{"cat > a <<EOF\nx\nEOF", "mv a b", "git mv 'a b' c", "sed -i s/a/b/ f", "x >", "<<", "a && b || c ; d | e"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, sf := range shellFiles(s) {
			if sf.path == "" || len(sf.path) > len(s) {
				t.Fatalf("bad path %q from %q", sf.path, s)
			}
		}
		_ = targetKey(s)
	})
}

// FuzzUserWordsAndLastWords: the readers of hostile transcript text added
// for issue 22 never panic and never grow their input: the user's words
// out of a harness wrapper, a condensed instruction, the closing
// paragraph, a labelled next step, remaining items, a stop's kind and a
// command's fields.
func FuzzUserWordsAndLastWords(f *testing.F) {
	for _, s := range []string{
		"<task-notification>\n<status>done</status>\n</task-notification>",
		"# Files mentioned by the user:\n## a.py: /p/a.py\n## My request for Codex:\nfix it",
		"<ide_selection>x</ide_selection>Add a flag",
		"Done.\n\nNext: wire the CLI.", "Three things remain:\n1. a\n2. b", "**Nächster Schritt:**\n- x",
		"Traceback (most recent call last):\n  File \"a.py\"\nValueError: x", "The user doesn't want to proceed with this tool use.",
		"git commit -m \"a b\" && 'x", "```\nNext: no\n```", "<ide_opened_file", "",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if w, _ := userWords(s); len(w) > len(s) {
			t.Fatalf("userWords grew %q", s)
		}
		_ = condense(s)
		if p := closingParagraph(s); len(p) > len(s)+len("…") {
			t.Fatalf("closingParagraph grew %q", s)
		}
		if n := labelledNext(s); len(n) > len(s) {
			t.Fatalf("labelledNext grew %q", s)
		}
		_ = remainingItems(s)
		_ = stopKind(s)
		_ = completed(s)
		for _, a := range cmdFields(s) {
			if len(a) > len(s) {
				t.Fatalf("cmdFields grew %q", s)
			}
		}
		_ = contrastChoice(s, strings.ToLower(s))
	})
}

// FuzzFailureReaders: the readers this pass added over hostile tool output, commands and requests never panic:
// the failure line (locations, a header joined to its next line), a search's no-match, a runner's target, the
// term a correction takes back and a refused file named in a plan item.
func FuzzFailureReaders(f *testing.F) {
	for _, s := range []string{
		"thread 'x' panicked at src/a.rs:8:9:\nassertion failed", "a.ts(14,3): error", "src/a.tsx (3:7): x", ":", "(",
		"x.go:", "a.b(", "find . | xargs grep -l x", "npm run", "Halt, nicht CSV", "JSONじゃなくて", "不是", "Write /p/a.md",
	} {
		f.Add(s, "Bitte baue den CSV-Export, JSON")
	}
	f.Fuzz(func(t *testing.T, s, goal string) {
		if e := errorLine(s); len(e) > 160+len("…") {
			t.Fatalf("errorLine(%q) = %q: over the clip", s, e)
		}
		zero := 0
		_, _ = noMatch(s, "", nil), noMatch(s, s, &zero)
		_ = targetKey(s)
		st := &State{Task: goal}
		if c := st.correctedTerm(s); c != "" && !hasTerm(goal, c) {
			t.Fatalf("correctedTerm(%q) = %q: not a term of %q", s, c, goal)
		}
		if f := namedFile(s, goal); f != "" && !strings.Contains(s, f) {
			t.Fatalf("namedFile(%q) = %q", s, f)
		}
	})
}

func TestProhibits(t *testing.T) {
	for in, want := range map[string]bool{
		"don't touch the lint errors":                  true,
		"do not run the migrations":                    true,
		"skip the e2e tests for now":                   true,
		"ignore the flaky checkout spec":               true,
		"nicht die migrationen ausführen":              true,
		"не трогай линтер":                             true,
		"don't forget to run the migrations":           false,
		"do not skip the e2e run":                      false,
		"never ignore a failing migration":             false,
		"i don't understand why the lint fails":        false,
		"stop the dev server, then run the migrations": false,
	} {
		if got := prohibits(in); got != want {
			t.Errorf("prohibits(%q) = %v; want %v", in, got, want)
		}
	}
}
