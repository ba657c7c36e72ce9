package service

import (
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/carryover/carryover/adapters"
)

// MaxPayload is the most hook stdin carryover reads; the rest is drained.
const MaxPayload = 8 << 20

func readPayload(r io.Reader) ([]byte, error) {
	if r == nil {
		return nil, errors.New("no stdin")
	}
	b, err := io.ReadAll(io.LimitReader(r, MaxPayload+1))
	if err != nil {
		return nil, fmt.Errorf("read hook stdin: %w", err)
	}
	if len(b) > MaxPayload {
		_, _ = io.Copy(io.Discard, r) // let the agent finish writing
		return nil, fmt.Errorf("hook stdin is larger than %d bytes; ignored", MaxPayload)
	}
	return b, nil
}

// readPayloadBy is readPayload bounded by deadline: an agent that never
// closes the hook's stdin cannot hold the hook past its budget.
func readPayloadBy(r io.Reader, deadline time.Time) ([]byte, error) {
	ch := goValue(func() ([]byte, error) { return readPayload(r) })
	t := time.NewTimer(time.Until(deadline))
	defer t.Stop()
	select {
	case res := <-ch:
		return res.v, res.err
	case <-t.C:
		return nil, errors.New("hook stdin was not closed before the deadline; nothing recorded for this event")
	}
}

// readHook reads the hook's stdin (by deadline) and parses it.
func readHook(env Env, agent *adapters.Agent, name string, deadline time.Time) (adapters.Hook, error) {
	raw, err := readPayloadBy(env.Stdin, deadline)
	if err != nil {
		return adapters.Hook{}, err
	}
	h, err := agent.Adapter.ParseHook(name, raw, env.Agent)
	if err != nil {
		return h, fmt.Errorf("%v (%d bytes); nothing recorded for this event", err, len(raw))
	} else if h.SessionID == "" {
		return h, errors.New("hook payload has no session id; nothing recorded for this event")
	}
	return h, nil
}
