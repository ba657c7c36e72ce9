// carryover's plugin for OpenCode and Kilo CLI, written by `carryover
// install`; `carryover uninstall` deletes it while it is still exactly this
// text. It relays the agent's events to `carryover snapshot` (JSON on stdin,
// as agents' command hooks do) and adds the handoff carryover prints to the
// system prompt of a session's model requests. It imports nothing: a plugin
// with an import makes an offline OpenCode wait for an npm install of its
// plugin SDK (~80 s). It runs carryover with the Bun runtime the agent is
// built on (Bun.spawnSync, a global); every failure is swallowed: the agent
// never breaks because of carryover.
const CARRYOVER = {{exe_json}};
// The hook timeouts of carryover's other agents (10 s); snapshot keeps its
// own deadline well below.
const TIMEOUT_MS = 10000;

function snapshot(event, payload) {
	try {
		const r = Bun.spawnSync([CARRYOVER, "snapshot", "--tool", "{{tool}}", "--event", event], {
			stdin: new TextEncoder().encode(JSON.stringify(payload)),
			stdout: "pipe",
			stderr: "ignore",
			timeout: TIMEOUT_MS,
		});
		return r.stdout ? new TextDecoder().decode(r.stdout) : "";
	} catch {
		return "";
	}
}

// The handoff carryover prints is {"additionalContext": text}.
function context(out) {
	try {
		const v = JSON.parse(out);
		return typeof v?.additionalContext === "string" ? v.additionalContext : "";
	} catch {
		return "";
	}
}

export const CarryoverPlugin = async ({ directory, worktree }) => {
	const payload = (id, event, native) => ({
		session_id: id, cwd: directory ?? "", worktree: worktree ?? "", hook_event_name: event, opencode_event: native,
	});
	const handoff = new Map(); // session id → the text its requests carry
	const children = new Set(); // subagent sessions: no handoff, no relays
	const relay = { "session.idle": "Stop", "session.error": "StopFailure" };
	return {
		// A session's first model request is its start: the handoff goes
		// into that request's system prompt and every later one's, as a
		// SessionStart hook's context stays in a Claude Code session.
		"experimental.chat.system.transform": async (input, output) => {
			const id = input?.sessionID;
			if (!id || children.has(id) || !Array.isArray(output?.system)) return;
			if (!handoff.has(id)) {
				handoff.set(id, context(snapshot("SessionStart", payload(id, "SessionStart", "experimental.chat.system.transform"))));
			}
			const text = handoff.get(id);
			if (text) output.system.push(text);
		},
		"experimental.session.compacting": async (input) => {
			const id = input?.sessionID;
			if (id && !children.has(id)) snapshot("PreCompact", payload(id, "PreCompact", "experimental.session.compacting"));
		},
		event: async ({ event }) => {
			const p = event?.properties ?? {};
			if (event?.type === "session.created" && p.info?.parentID) children.add(p.info.id);
			const id = p.sessionID ?? p.info?.id;
			const to = relay[event?.type];
			if (to && id && !children.has(id)) snapshot(to, payload(id, to, event.type));
		},
	};
};
