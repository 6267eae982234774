package node

import (
	"strconv"
	"strings"
	"testing"
)

// helpReply is the expected raw <CMD> HELP reply: one status line per
// given line. (The lines hold '|', so the harness's CRLF shorthand cannot
// be used.)
func helpReply(lines ...string) string {
	return "*" + strconv.Itoa(len(lines)) + "\r\n+" + strings.Join(lines, "\r\n+") + "\r\n"
}

func TestHelpReplies(t *testing.T) {
	tc := newTestServer(t, "enable-debug-command", "yes")
	tc.expectRaw(helpReply(
		"CLIENT <subcommand> [<arg> ...] -- subcommands:",
		"CACHING (YES|NO)",
		"    Whether the next command's keys are tracked, in OPTIN or OPTOUT mode.",
		"GETREDIR",
		"    The ID of the client that gets this connection's invalidations, or -1 or 0.",
		"GETNAME",
		"    This connection's name.",
		"ID",
		"    This connection's ID.",
		"INFO",
		"    This connection described in one CLIENT LIST line.",
		"KILL <ip:port>",
		"    Closes the connection coming from <ip:port>.",
		"KILL <option> <value> [<option> <value> [...]]",
		"    Closes the connections that match every filter given:",
		"    * ADDR (<ip:port>|<unixsocket>:0)",
		"      the peer is at this address",
		"    * LADDR (<ip:port>|<unixsocket>:0)",
		"      the connection came in on this local address",
		"    * TYPE (NORMAL|MASTER|REPLICA|PUBSUB)",
		"      the connection is of this kind",
		"    * USER <username>",
		"      the connection is logged in as <username>",
		"    * SKIPME (YES|NO)",
		"      YES (the default) spares the connection that asks.",
		"LIST [options ...]",
		"    One line per connection, optionally only:",
		"    * TYPE (NORMAL|MASTER|REPLICA|PUBSUB)",
		"      the connections of this kind",
		"UNPAUSE",
		"    Ends a pause early; held clients go on.",
		"PAUSE <timeout> [WRITE|ALL]",
		"    Holds clients' commands (every one, or only writes) for <timeout> ms.",
		"REPLY (ON|OFF|SKIP)",
		"    Turns this connection's replies on, off, or off for the next command only.",
		"SETNAME <name>",
		"    Names this connection <name>.",
		"UNBLOCK <clientid> [TIMEOUT|ERROR]",
		"    Wakes a client blocked in a command, as by timeout or with an error.",
		"TRACKING (ON|OFF) [REDIRECT <id>] [BCAST] [PREFIX <prefix> [...]]",
		"         [OPTIN] [OPTOUT] [NOLOOP]",
		"    Turns on or off invalidation messages for client-side caching.",
		"TRACKINGINFO",
		"    This connection's tracking mode and options.",
		"NO-EVICT (ON|OFF)",
		"    Whether this connection is exempt from client eviction.",
		"HELP",
		"    Lists these subcommands.",
	), "CLIENT", "HELP")
	tc.expectRaw(helpReply(
		"COMMAND <subcommand> [<arg> ...] -- subcommands:",
		"(no subcommand)",
		"    Every command's details (name, arity, flags, key positions, ...).",
		"COUNT",
		"    How many commands this node knows.",
		"LIST",
		"    The names of all the commands this node knows.",
		"INFO [<command-name> ...]",
		"    The details of the named commands; of every command when none is named.",
		"DOCS [<command-name> ...]",
		"    The documentation entries (summary, since, group, arguments, ...) of the",
		"    named commands; of every command when none is named.",
		"GETKEYS <full-command>",
		"    The keys that <full-command> would touch.",
		"GETKEYSANDFLAGS <full-command>",
		"    The keys that <full-command> would touch, each with its access flags.",
		"HELP",
		"    Lists these subcommands.",
	), "COMMAND", "HELP")
	tc.expectRaw(helpReply(
		"SLOWLOG <subcommand> [<arg> ...] -- subcommands:",
		"GET [<count>]",
		"    The <count> newest slow calls (10 when omitted, every one for -1), each as",
		"    id, unix time, duration in microseconds, arguments, client address, name.",
		"LEN",
		"    How many slow calls are kept.",
		"RESET",
		"    Forgets every kept slow call.",
		"HELP",
		"    Lists these subcommands.",
	), "SLOWLOG", "HELP")
	tc.expectRaw(helpReply(
		"LATENCY <subcommand> [<arg> ...] -- subcommands:",
		"DOCTOR",
		"    A plain-text summary of the latency spikes recorded so far.",
		"GRAPH <event>",
		"    An ASCII chart of the recorded spikes of <event>.",
		"HISTORY <event>",
		"    The recorded spikes of <event> as (unix time, milliseconds) pairs.",
		"LATEST",
		"    For each event: time and size of its last spike, and its worst ever.",
		"RESET [<event> ...]",
		"    Drops what is recorded for the named events, or for all of them.",
		"HISTOGRAM [COMMAND ...]",
		"    Per-command latency distributions, cumulative, for the named commands",
		"    or for every command that has run.",
		"HELP",
		"    Lists these subcommands.",
	), "LATENCY", "HELP")
	tc.expectRaw(helpReply(
		"DEBUG <subcommand> [<arg> ...] -- subcommands:",
		"CHANGE-REPL-ID",
		"    Gives the node fresh replication IDs; meant only for replication tests.",
		"DIGEST",
		"    A hex checksum of the whole dataset (forty zeros when it is empty).",
		"DIGEST-VALUE <key> [<key> ...]",
		"    A hex checksum of each named key's value.",
		"ERROR <string>",
		"    Answers with <string> as an error reply, for testing client error paths.",
		"LOG <message>",
		"    Puts <message> in the node's log.",
		"OBJECT <key>",
		"    Internal details of the value at <key>.",
		"POPULATE <count> [<prefix>] [<size>]",
		"    Fills the dataset with <count> string keys <prefix>:<n> (prefix \"key\" when",
		"    omitted), values <size> bytes long. Nothing is replicated and the keys",
		"    may land in slots this node does not serve.",
		"SET-ACTIVE-EXPIRE <0|1>",
		"    0 stops the background sweep of expired keys, leaving expiry to reads;",
		"    1 turns it back on.",
		"SLEEP <seconds>",
		"    Blocks the node for <seconds>, fractions allowed.",
		"HELP",
		"    Lists these subcommands.",
	), "DEBUG", "HELP")
}
