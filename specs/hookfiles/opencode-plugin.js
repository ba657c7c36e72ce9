// carryover's plugin for OpenCode and Kilo CLI, written by `carryover
// install`; `carryover uninstall` deletes it while it is still exactly this
// text. It relays the agent's events to `carryover snapshot` (JSON on stdin,
// as agents' command hooks do) and adds the handoff carryover prints to a
// session's first prompt. It imports nothing: a plugin
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

// partID is a new part id in OpenCode's format: "prt_", 12 hex digits of
// the time in ms × 4096, 14 random base-62 characters (the parts the plugin
// adds are saved as they are, and a part without an id is not).
function partID() {
	const chars = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
	let r = "";
	for (let i = 0; i < 14; i++) r += chars[Math.floor(Math.random() * 62)];
	return "prt_" + (BigInt(Date.now()) * 4096n).toString(16).padStart(12, "0").slice(-12) + r;
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
	const started = new Set(); // sessions whose first prompt this process saw
	const children = new Set(); // subagent sessions: no handoff, no relays
	const relay = { "session.idle": "Stop", "session.error": "StopFailure" };
	return {
		// A session's first prompt is its start: the handoff goes into that
		// message as a synthetic text part, which the model reads with the
		// prompt and OpenCode stores (carryover sees its own receipt there;
		// a system prompt addition would reach the model but leave none).
		"chat.message": async (input, output) => {
			const id = input?.sessionID;
			const msg = output?.message;
			if (!id || children.has(id) || started.has(id) || !msg?.id || !Array.isArray(output?.parts)) return;
			started.add(id);
			const text = context(snapshot("SessionStart", payload(id, "SessionStart", "chat.message")));
			if (text) output.parts.push({ id: partID(), sessionID: id, messageID: msg.id, type: "text", text, synthetic: true });
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
