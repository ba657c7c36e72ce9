# carryover — developer tasks. `just` installs from npm: npm i -g rust-just

set shell := ["bash", "-euo", "pipefail", "-c"]

# list recipes
default:
    @just --list

# build ./carryover
build:
    go build -tags urfave_cli_no_docs,sqlite_dbstat -o carryover .

# the whole test suite, end-to-end tests against the real agent CLIs included (as CI runs it)
test:
    go test -count=1 -timeout 80m ./...

# unit tests only (no agent CLIs)
unit:
    go test -count=1 $(go list ./... | grep -v /cmd/e2e)

# end-to-end tests against the real Claude Code, Codex, Gemini CLI and Copilot CLI (pinned, installed from npm on first use)
e2e:
    go test -count=1 -timeout 60m -v ./cmd/e2e/... 2>&1 | grep -E '^(=== RUN|--- |PASS|FAIL|ok )'

# benchmarks: hook-path latency (100 MB transcript, 10,000-file repo), cold ingest of 1 GB, parsers, redaction
bench:
    go test -run XXX -bench SnapshotIncremental -benchtime 40x ./cmd/e2e/
    go test -run XXX -bench ColdIngest -benchtime 1x ./cmd/e2e/
    go test -run XXX -bench DetectRealAgents -benchtime 20x ./cmd/e2e/
    go test -run XXX -bench . ./adapters/ ./publish/redact/

# growth benchmarks (issue 17): cold-ingest curve (100/300/1024 MB of a realistic transcript, into an empty and a
# 1 GB ledger, hook and manual path), hook p50/p99 at 0 and 5 GB of history, `list` cold and warm with 200 sessions.
# History ledgers are built once into ~/.cache/carryover-bench (5 GB takes minutes); HOOK_HISTORY_MB=0,1024 is quicker.
bench-growth SIZES="100,300,1024" HISTORY_MB="1024" HOOK_HISTORY_MB="0,5120":
    go test -run XXX -bench 'BenchmarkList$' -benchtime 10x ./cmd/e2e/
    CARRYOVER_BENCH_SIZES={{SIZES}} CARRYOVER_BENCH_HISTORY_MB={{HISTORY_MB}} go test -run XXX -bench IngestCurve -benchtime 1x -timeout 60m ./cmd/e2e/
    CARRYOVER_BENCH_HOOK_HISTORY_MB={{HOOK_HISTORY_MB}} go test -run XXX -bench HookHistory -benchtime 200x -timeout 60m ./cmd/e2e/

# the source files one incremental Stop runs code in (issue 23's footprint), from a coverage build's counters
footprint:
    bash .ci/footprint

# fuzz every parser for a while (FUZZTIME=60s by default) and keep up to 10 interesting inputs per
# target in <package>/testdata/fuzz/<Target>, where plain `go test` replays them as seeds
fuzz FUZZTIME="60s":
    #!/usr/bin/env bash
    set -euo pipefail
    cache=$(go env GOCACHE)/fuzz
    for pkg in $(go list ./...); do
      dir=$(go list -f '{{"{{"}}.Dir{{"}}"}}' "$pkg")
      for target in $(grep -ho '^func Fuzz[A-Za-z0-9_]*' "$dir"/*_test.go 2>/dev/null | sed 's/func //' | sort -u); do
        echo "== $pkg $target"
        go test "$pkg" -run XXX -fuzz "^${target}\$" -fuzztime "{{FUZZTIME}}"
        if [ -d "$cache/$pkg/$target" ]; then
          mkdir -p "$dir/testdata/fuzz/$target"
          { ls -Sr "$cache/$pkg/$target" || true; } | head -10 | while read -r f; do cp "$cache/$pkg/$target/$f" "$dir/testdata/fuzz/$target/"; done
        fi
      done
    done

# the reliability figures in the README (faults survived, rows lost, duplicates, secret kinds, leaks, false positives)
reliability:
    go test -count=1 -run 'TestReliabilityReport|TestSecretEgress' -v ./cmd/e2e/ | grep -E '^\s*\|| leaks|--- '

# gofmt + go vet
fmt:
    gofmt -w $(git ls-files '*.go')
    go vet ./...

# check formatting and vet without changing files
vet:
    test -z "$(gofmt -l $(git ls-files '*.go'))"
    go vet ./...

# run carryover over the public session files in ../shared/realworld (never copied into the repo) and
# print the per-file table: exit code, task, files, errors, next action, time, handoff.md lines; then the
# aider histories committed in a repository, as their projects had them (never taken for your session)
realworld:
    CARRYOVER_REALWORLD="${CARRYOVER_REALWORLD:-$(pwd)/../shared/realworld}" go test -count=1 -run 'TestRealworldCorpus|TestRealworldCommittedAider' -v ./cmd/ | grep -E '^\s*(\||files |--- |ok|FAIL)|committed aider'
