package cmd

// `carryover run -- <agent> [args…]`: the agent as a child on this terminal, restarted fresh when its hooks signal the
// session's context reached CRITICAL (publish/limits/signal.go). A foreground process the user starts; no daemon.

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/carryover/carryover/adapters"
	"github.com/carryover/carryover/publish"
	"github.com/carryover/carryover/publish/limits"
	"github.com/carryover/carryover/publish/service"
)

func runCommand(e *Env) *cli.Command {
	return &cli.Command{
		Name:      "run",
		Usage:     "run an agent and restart it fresh from the handoff when its context window is nearly full",
		ArgsUsage: "-- <agent> [args…]",
		Description: "Runs the agent on this terminal. When carryover's hooks report that the session's context\n" +
			"reached CRITICAL ([context] critical in config.toml, 85 % by default), the agent is ended\n" +
			"(SIGTERM) and started again with the same arguments; its SessionStart hook hands the new\n" +
			"session the handoff. At most [limits] max_restarts restarts (10); Ctrl-C never restarts.\n" +
			runNoHooksNote(),
		SkipFlagParsing: true, // the agent's own flags pass through after --; -h/--help before it is carryover's
		Action: func(c *cli.Context) error {
			args := c.Args().Slice()
			if len(args) > 0 && (args[0] == "-h" || args[0] == "--help") {
				return cli.ShowSubcommandHelp(c)
			}
			if len(args) > 0 && args[0] == "--" {
				args = args[1:]
			}
			if len(args) == 0 {
				return usageErrorf("carryover run --help", "run needs the agent to start: carryover run -- <agent> [args…] (e.g. carryover run -- claude)")
			}
			project, err := currentProject(e, "")
			if err != nil {
				return err
			}
			cfg, cerrs := LoadConfig(e, project)
			printLines(e.Stderr, "carryover: config: ", cerrs...)
			return runAgent(e, runOptions{argv: args, project: project, maxRestarts: cfg.Walls().MaxRestarts(), poll: 500 * time.Millisecond, grace: 10 * time.Second})
		},
	}
}

// runOptions: interrupted is set when the wrapper itself got SIGINT (tests set it too).
type runOptions struct {
	argv        []string
	project     string
	maxRestarts int
	poll, grace time.Duration
	interrupted *atomic.Bool
}

// forwardSignals notes the wrapper's signals in interrupted and passes a TERM or HUP on to the child: the terminal's
// Ctrl-C reaches the agent itself (same process group), so the wrapper only notes it, and that exit never restarts.
func forwardSignals(interrupted *atomic.Bool, child *atomic.Pointer[os.Process]) (stop func()) {
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	go func() {
		for s := range sigs {
			interrupted.Store(true)
			if p := child.Load(); p != nil && s != os.Interrupt {
				_ = p.Signal(s)
			}
		}
	}()
	return func() { signal.Stop(sigs) }
}

// agentBinary: a bare name is looked up in PATH's absolute entries only: ./node_modules/.bin/claude never stands in.
func agentBinary(e *Env, name string) (string, error) {
	if strings.ContainsRune(name, filepath.Separator) || strings.ContainsRune(name, '/') {
		return name, nil
	}
	if bin := lookPath(e, name); bin != "" {
		return bin, nil
	}
	return "", exitf(ExitError, "cannot start %s: not found in PATH's absolute directories (relative entries such as ./node_modules/.bin are not searched)", name)
}

// exitCodeOf is the agent's exit status, 128+signal if a signal ended it (not the wrapper's own CRITICAL stop).
func exitCodeOf(ps *os.ProcessState, critical bool) int {
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() && !critical {
		return 128 + int(ws.Signal())
	}
	return ps.ExitCode()
}

// runAgent runs the agent, restarted after a verified CRITICAL signal at most maxRestarts times; returns its status.
func runAgent(e *Env, o runOptions) error {
	log := newLogger(e)
	log.Prefix = "run "
	ag, _ := adapters.ByName(filepath.Base(o.argv[0]))
	tool := ""
	if ag != nil {
		tool = ag.Name
	}
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	id := hex.EncodeToString(b) // limits.splitRun takes hex only
	if o.interrupted == nil {
		o.interrupted = new(atomic.Bool)
	}
	var child atomic.Pointer[os.Process]
	defer forwardSignals(o.interrupted, &child)()
	bin, err := agentBinary(e, o.argv[0])
	if err != nil {
		return err
	}
	for gen, restarts := 0, 0; ; gen++ {
		argv := readArgs(ag, o.argv, o.project)
		c := exec.Command(bin, argv[1:]...)
		c.Dir = o.project
		c.Stdin, c.Stdout, c.Stderr = e.Stdin, e.Stdout, e.Stderr
		c.Env = append(slices.Clone(e.Environ), limits.RunEnv+"="+id+"."+strconv.Itoa(gen), limits.RunPIDEnv+"="+strconv.Itoa(os.Getpid()))
		started := e.Now()
		if err := c.Start(); err != nil {
			return exitf(ExitError, "cannot start %s: %v", argv[0], err)
		}
		child.Store(c.Process)
		log.Printf("started %s (run %s.%d, pid %d)", argv[0], id, gen, c.Process.Pid)
		sig, critical := watch(e, c, id, gen, tool, o, log)
		code := exitCodeOf(c.ProcessState, critical)
		child.Store(nil)
		snapshotAfterRun(e, ag, o.project, started)
		switch {
		case o.interrupted.Load() || code == 130:
			log.Printf("%s exited %d after Ctrl-C; not restarted", argv[0], code)
			return exitCode(130)
		case !critical:
			return exitCode(code)
		case restarts >= o.maxRestarts:
			msg := fmt.Sprintf("carryover run: context CRITICAL again, but the restart limit (%d) is reached; not restarting. Continue with: carryover handoff", o.maxRestarts)
			fmt.Fprintln(e.Stderr, msg)
			log.Printf("%s", msg)
			return exitCode(code)
		}
		restarts++
		msg := fmt.Sprintf("carryover run: %s session %s reached %d %% of its context (CRITICAL); restarting it fresh from the handoff (restart %d of at most %d)",
			argv[0], publish.ShortID(sig.Session), sig.Percent, restarts, o.maxRestarts)
		fmt.Fprintln(e.Stderr, msg)
		log.Printf("%s", msg)
	}
}

// watch waits for the agent to exit, ending it gracefully (SIGTERM, then SIGKILL after grace) when a verified CRITICAL
// signal arrives; critical says whether one did (also when it arrived as the agent exited).
func watch(e *Env, c *exec.Cmd, id string, gen int, tool string, o runOptions, log *service.Log) (limits.Signal, bool) {
	done := make(chan struct{})
	go func() { _ = c.Wait(); close(done) }()
	t := time.NewTicker(o.poll)
	defer t.Stop()
	check := func() (limits.Signal, bool) {
		sig, ok, why := limits.ReadSignal(e.Home(), id, gen, os.Getpid(), tool)
		if !ok && why != "" {
			log.Printf("ignored a restart signal: %s", why)
			limits.ClearSignal(e.Home(), id, gen)
		}
		return sig, ok
	}
	for {
		select {
		case <-done:
			return check()
		case <-t.C:
			sig, ok := check()
			if !ok || o.interrupted.Load() {
				continue
			}
			log.Printf("CRITICAL signal for session %s; ending pid %d", publish.ShortID(sig.Session), c.Process.Pid)
			_ = c.Process.Signal(syscall.SIGTERM)
			select {
			case <-done:
			case <-time.After(o.grace):
				_ = c.Process.Kill()
				<-done
			}
			return sig, true
		}
	}
}

// exitCode is the agent's status as carryover's.
func exitCode(code int) error {
	if code == 0 {
		return nil
	}
	return &exitError{code: max(code, 1)}
}

// runNoHooksNote says what run does for agents without hooks (descriptors: Aider's --read, its history read at exit).
func runNoHooksNote() string {
	var parts []string
	for _, a := range adapters.All {
		if a.SnapshotAfterRun && a.ReadFlag != "" {
			parts = append(parts, "for "+a.Name+", "+a.ReadFlag+" .carryover/handoff.md is passed and its session is read when it exits")
		} else if a.SnapshotAfterRun {
			parts = append(parts, "for "+a.Name+" and its session is read when it exits")
		}
	}
	if len(parts) == 0 {
		return ""
	}
	s := strings.Join(parts, "; ") + "."
	return strings.ToUpper(s[:1]) + s[1:]
}

// readArgs adds the agent's read flag (Aider: --read) with .carryover/handoff.md if there is one and it is not passed.
func readArgs(ag *adapters.Agent, argv []string, project string) []string {
	rel := filepath.Join(".carryover", "handoff.md")
	if ag == nil || ag.ReadFlag == "" || !publish.Exists(publish.HandoffPath(project)) {
		return argv
	}
	for i, a := range argv {
		if (a == ag.ReadFlag && i+1 < len(argv) && argv[i+1] == rel) || a == ag.ReadFlag+"="+rel {
			return argv
		}
	}
	return append([]string{argv[0], ag.ReadFlag, rel}, argv[1:]...)
}

// snapshotAfterRun reads the session of an agent without hooks (Aider's chat history) into the ledger and publishes the
// handoff, as a hook would have. A session begun since started is the one carryover ran: the user's even in a history
// file the repository tracks.
func snapshotAfterRun(e *Env, ag *adapters.Agent, project string, started time.Time) {
	if ag == nil || !ag.SnapshotAfterRun {
		return
	}
	p, err := pick(e, selection{source: ag.Name, project: project, since: started})
	if err != nil {
		fmt.Fprintf(e.Stderr, "carryover run: the %s session was not read: %v\n", ag.Name, errors.Unwrap(err))
		return
	}
	proj := openManual(e, p)
	if err := proj.Ingest(p.Pick); err != nil {
		fmt.Fprintf(e.Stderr, "carryover run: the %s session was not read: %v\n", ag.Name, err)
		return
	}
	if err := proj.Refresh(); err != nil {
		fmt.Fprintf(e.Stderr, "carryover run: handoff not written: %v\n", err)
		return
	}
	fmt.Fprintf(e.Stderr, "carryover run: the %s session is in %s\n", ag.Name, strings.TrimPrefix(publish.HandoffPath(p.project), p.project+string(filepath.Separator)))
}
