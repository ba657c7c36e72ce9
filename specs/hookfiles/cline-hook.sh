#!/bin/sh
# carryover's Cline hook, written by `carryover install`; `carryover uninstall`
# deletes it while it is still exactly this text. Cline runs it on {{event}}
# with the event as JSON on stdin; carryover records the session from it.
exec {{exe_sh}} snapshot --tool {{tool}} --event {{event}}
