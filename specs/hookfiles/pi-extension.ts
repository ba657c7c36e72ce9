// carryover's Pi extension, written by `carryover install`; `carryover
// uninstall` deletes it while it is still exactly this text. It relays Pi's
// events to `carryover snapshot` (JSON on stdin, as agents' command hooks
// do) and gives the model the handoff carryover prints at a session's first
// prompt. It imports only Node's built-ins, so Pi installs nothing for it;
// every failure is swallowed: the agent never breaks because of carryover.
import { execFile } from "node:child_process";

const CARRYOVER = {{exe_json}};
// The hook timeouts of carryover's other agents (10 s); snapshot keeps its
// own deadline well below.
const TIMEOUT_MS = 10_000;

function snapshot(event: string, payload: Record<string, unknown>): Promise<string> {
	return new Promise((resolve) => {
		try {
			const child = execFile(
				CARRYOVER,
				["snapshot", "--tool", "{{tool}}", "--event", event],
				{ timeout: TIMEOUT_MS, maxBuffer: 8 << 20, windowsHide: true },
				(_err: unknown, stdout: unknown) => resolve(typeof stdout === "string" ? stdout : ""),
			);
			child.stdin?.on("error", () => {});
			child.stdin?.end(JSON.stringify(payload));
		} catch {
			resolve("");
		}
	});
}

function payload(piEvent: string, ctx: any, extra: Record<string, unknown> = {}): Record<string, unknown> {
	const p: Record<string, unknown> = { pi_event: piEvent, cwd: ctx?.cwd ?? process.cwd(), ...extra };
	try {
		p.session_id = ctx.sessionManager.getSessionId() ?? "";
		p.session_file = ctx.sessionManager.getSessionFile() ?? "";
	} catch {}
	return p;
}

// The handoff carryover prints is {"additionalContext": text}.
function context(out: string): string {
	try {
		const v = JSON.parse(out);
		return typeof v?.additionalContext === "string" ? v.additionalContext : "";
	} catch {
		return "";
	}
}

export default function (pi: any) {
	let reason = "startup";
	let injected = false; // once per session, at its first prompt
	pi.on("session_start", async (event: any) => {
		reason = typeof event?.reason === "string" ? event.reason : "startup";
		injected = false;
	});
	pi.on("before_agent_start", async (event: any, ctx: any) => {
		if (injected) return;
		injected = true;
		const text = context(await snapshot("SessionStart", payload("before_agent_start", ctx, { reason, prompt: event?.prompt ?? "" })));
		if (!text) return;
		return { message: { customType: "carryover", content: text, display: false } };
	});
	pi.on("agent_end", async (_event: any, ctx: any) => {
		await snapshot("Stop", payload("agent_end", ctx));
	});
	pi.on("session_before_compact", async (_event: any, ctx: any) => {
		await snapshot("PreCompact", payload("session_before_compact", ctx));
	});
	pi.on("session_shutdown", async (event: any, ctx: any) => {
		await snapshot("SessionEnd", payload("session_shutdown", ctx, { reason: event?.reason ?? "" }));
	});
}
