package config

import "math"

// Kind is how a directive's value is parsed.
type Kind uint8

// Directive kinds.
const (
	KindString Kind = iota
	KindBool
	KindInt
	KindEnum
	// KindSpecial directives have their own parser and printer (save,
	// bind, dir, client-output-buffer-limit, ...).
	KindSpecial
)

// Number formats of KindInt directives.
const (
	// NumMemory accepts the units b, k, kb, m, mb, g, gb.
	NumMemory uint8 = 1 << iota
	// NumPercent also accepts "N%", stored as -N.
	NumPercent
	// NumOctal is read and printed in base 8.
	NumOctal
)

// Directive describes one configuration directive as redis-server 7.0
// defines it.
type Directive struct {
	Name  string
	Alias string // older name still accepted ("slave-..." and "...-ziplist-...")
	Kind  Kind
	// Default is the canonical text CONFIG GET prints for the default.
	Default string
	Enum    []string
	// Min and Max bound KindInt values. Unsigned directives compare as
	// unsigned: a negative number is out of range; UMax, when not zero,
	// replaces Max as the upper bound.
	Min, Max int64
	UMax     uint64
	Unsigned bool
	Num      uint8 // NumMemory, NumPercent, NumOctal
	// Immutable directives can only be set at start-up.
	Immutable bool
	// Protected directives can be changed by CONFIG SET only when
	// enable-protected-configs allows it.
	Protected bool
	// Hidden directives only match CONFIG GET by exact name.
	Hidden bool
	// MultiArg directives take several words (save, bind, ...).
	MultiArg bool
	// NullEmpty marks strings that redis-server keeps as NULL when empty:
	// CONFIG REWRITE then drops them from the file.
	NullEmpty bool
	// check validates a string value.
	check func(v string) error
	sp    *special
}

const (
	intMax   = math.MaxInt32
	intMin   = math.MinInt32
	uintMax  = math.MaxUint32
	longMax  = math.MaxInt64
	llongMax = math.MaxInt64
)

func b(name, def string) Directive { return Directive{Name: name, Kind: KindBool, Default: def} }

func bi(name, def string) Directive {
	d := b(name, def)
	d.Immutable = true
	return d
}

func ba(name, alias, def string) Directive {
	d := b(name, def)
	d.Alias = alias
	return d
}

func s(name, def string) Directive { return Directive{Name: name, Kind: KindString, Default: def} }

func sn(name string) Directive { return Directive{Name: name, Kind: KindString, NullEmpty: true} }

func si(name, def string) Directive {
	d := s(name, def)
	d.Immutable = true
	return d
}

func sni(name string) Directive {
	d := sn(name)
	d.Immutable = true
	return d
}

func e(name, def string, vals ...string) Directive {
	return Directive{Name: name, Kind: KindEnum, Default: def, Enum: vals}
}

func ei(name, def string, vals ...string) Directive {
	d := e(name, def, vals...)
	d.Immutable = true
	return d
}

func n(name, def string, min, max int64) Directive {
	return Directive{Name: name, Kind: KindInt, Default: def, Min: min, Max: max}
}

func na(name, alias, def string, min, max int64) Directive {
	d := n(name, def, min, max)
	d.Alias = alias
	return d
}

func ni(name, def string, min, max int64) Directive {
	d := n(name, def, min, max)
	d.Immutable = true
	return d
}

// u is an unsigned integer (size_t, unsigned long ...).
func u(name, alias, def string, min, max int64, num uint8) Directive {
	d := n(name, def, min, max)
	d.Alias, d.Unsigned, d.Num = alias, true, num
	return d
}

// m is a signed memory value.
func m(name, def string, min, max int64) Directive {
	d := n(name, def, min, max)
	d.Num = NumMemory
	return d
}

func hidden(d Directive) Directive {
	d.Hidden = true
	return d
}

var yesNoLocal = []string{"no", "yes", "local"}

// table lists every directive of redis-server 7.0.15, in redis-server's
// order.
var table = []Directive{
	// yes/no
	bi("rdbchecksum", "yes"),
	bi("daemonize", "no"),
	bi("io-threads-do-reads", "no"),
	bi("always-show-logo", "no"),
	b("protected-mode", "yes"),
	b("rdbcompression", "yes"),
	b("rdb-del-sync-files", "no"),
	b("activerehashing", "yes"),
	b("stop-writes-on-bgsave-error", "yes"),
	bi("set-proc-title", "yes"),
	b("dynamic-hz", "yes"),
	b("lazyfree-lazy-eviction", "no"),
	b("lazyfree-lazy-expire", "no"),
	b("lazyfree-lazy-server-del", "no"),
	b("lazyfree-lazy-user-del", "no"),
	b("lazyfree-lazy-user-flush", "no"),
	b("repl-disable-tcp-nodelay", "no"),
	b("repl-diskless-sync", "yes"),
	b("aof-rewrite-incremental-fsync", "yes"),
	b("no-appendfsync-on-rewrite", "no"),
	b("cluster-require-full-coverage", "yes"),
	b("rdb-save-incremental-fsync", "yes"),
	b("aof-load-truncated", "yes"),
	b("aof-use-rdb-preamble", "yes"),
	b("aof-timestamp-enabled", "no"),
	ba("cluster-replica-no-failover", "cluster-slave-no-failover", "no"),
	ba("replica-lazy-flush", "slave-lazy-flush", "no"),
	ba("replica-serve-stale-data", "slave-serve-stale-data", "yes"),
	ba("replica-read-only", "slave-read-only", "yes"),
	ba("replica-ignore-maxmemory", "slave-ignore-maxmemory", "yes"),
	b("jemalloc-bg-thread", "yes"),
	b("activedefrag", "no"),
	bi("syslog-enabled", "no"),
	bi("cluster-enabled", "no"),
	b("appendonly", "no"),
	b("cluster-allow-reads-when-down", "no"),
	b("cluster-allow-pubsubshard-when-down", "yes"),
	b("crash-log-enabled", "yes"),
	b("crash-memcheck-enabled", "yes"),
	hidden(b("use-exit-on-panic", "no")),
	bi("disable-thp", "yes"),
	b("cluster-allow-replica-migration", "yes"),
	b("replica-announced", "yes"),
	b("latency-tracking", "yes"),
	b("aof-disable-auto-gc", "no"),

	// strings
	si("aclfile", ""),
	sni("unixsocket"),
	sni("pidfile"),
	{Name: "replica-announce-ip", Alias: "slave-announce-ip", Kind: KindString, NullEmpty: true},
	sn("masteruser"),
	sn("cluster-announce-ip"),
	si("cluster-config-file", "nodes.conf"),
	// slotd's own: the key that encrypts the cluster bus (memberlist's
	// AES-GCM). Hidden, so that CONFIG GET * does not print it.
	{Name: "cluster-bus-secret", Kind: KindString, NullEmpty: true, Immutable: true, Hidden: true},
	{Name: "cluster-announce-hostname", Kind: KindString, NullEmpty: true, check: checkHostname},
	si("syslog-ident", "redis"),
	{Name: "dbfilename", Kind: KindString, Default: "dump.rdb", Protected: true, check: checkBaseName("dbfilename can't be a path, just a filename", "")},
	{Name: "appendfilename", Kind: KindString, Default: "appendonly.aof", Immutable: true, check: checkBaseName("appendfilename can't be a path, just a filename", "appendfilename can't be empty")},
	{Name: "appenddirname", Kind: KindString, Default: "appendonlydir", Immutable: true, check: checkBaseName("appenddirname can't be a path, just a dirname", "appenddirname can't be empty")},
	sni("server_cpulist"),
	sni("bio_cpulist"),
	sni("aof_rewrite_cpulist"),
	sni("bgsave_cpulist"),
	s("ignore-warnings", ""),
	{Name: "proc-title-template", Kind: KindString, Default: "{title} {listen-addr} {server-mode}", check: checkProcTitle},
	sn("bind-source-addr"),
	si("logfile", ""),
	sn("masterauth"),
	sn("requirepass"),

	// enums
	ei("supervised", "no", "upstart", "systemd", "auto", "no"),
	ei("syslog-facility", "local0", "user", "local0", "local1", "local2", "local3", "local4", "local5", "local6", "local7"),
	e("repl-diskless-load", "disabled", "disabled", "on-empty-db", "swapdb"),
	e("loglevel", "notice", "debug", "verbose", "notice", "warning"),
	e("maxmemory-policy", "noeviction", "volatile-lru", "volatile-lfu", "volatile-random", "volatile-ttl", "allkeys-lru", "allkeys-lfu", "allkeys-random", "noeviction"),
	e("appendfsync", "everysec", "everysec", "always", "no"),
	e("oom-score-adj", "no", "no", "yes", "relative", "absolute"),
	e("acl-pubsub-default", "resetchannels", "allchannels", "resetchannels"),
	e("sanitize-dump-payload", "no", "no", "yes", "clients"),
	ei("enable-protected-configs", "no", yesNoLocal...),
	ei("enable-debug-command", "no", yesNoLocal...),
	ei("enable-module-command", "no", yesNoLocal...),
	e("cluster-preferred-endpoint-type", "ip", "ip", "hostname", "unknown-endpoint"),

	// int
	ni("databases", "16", 1, intMax),
	n("port", "6379", 0, 65535),
	ni("io-threads", "1", 1, 128),
	n("auto-aof-rewrite-percentage", "100", 0, intMax),
	na("cluster-replica-validity-factor", "cluster-slave-validity-factor", "10", 0, intMax),
	na("list-max-listpack-size", "list-max-ziplist-size", "-2", intMin, intMax),
	n("tcp-keepalive", "300", 0, intMax),
	n("cluster-migration-barrier", "1", 0, intMax),
	n("active-defrag-cycle-min", "1", 1, 99),
	n("active-defrag-cycle-max", "25", 1, 99),
	n("active-defrag-threshold-lower", "10", 0, 1000),
	n("active-defrag-threshold-upper", "100", 0, 1000),
	n("lfu-log-factor", "10", 0, intMax),
	n("lfu-decay-time", "1", 0, intMax),
	na("replica-priority", "slave-priority", "100", 0, intMax),
	n("repl-diskless-sync-delay", "5", 0, intMax),
	n("maxmemory-samples", "5", 1, intMax),
	n("maxmemory-eviction-tenacity", "10", 0, 100),
	n("timeout", "0", 0, intMax),
	na("replica-announce-port", "slave-announce-port", "0", 0, 65535),
	ni("tcp-backlog", "511", 0, intMax),
	ni("cluster-port", "0", 0, 65535),
	n("cluster-announce-bus-port", "0", 0, 65535),
	n("cluster-announce-port", "0", 0, 65535),
	n("cluster-announce-tls-port", "0", 0, 65535),
	n("repl-timeout", "60", 1, intMax),
	na("repl-ping-replica-period", "repl-ping-slave-period", "10", 1, intMax),
	n("list-compress-depth", "0", 0, intMax),
	hidden(n("rdb-key-save-delay", "0", intMin, intMax)),
	hidden(n("key-load-delay", "0", intMin, intMax)),
	n("active-expire-effort", "1", 1, 10),
	n("hz", "10", 0, intMax),
	na("min-replicas-to-write", "min-slaves-to-write", "0", 0, intMax),
	na("min-replicas-max-lag", "min-slaves-max-lag", "10", 0, intMax),
	hidden(n("watchdog-period", "0", 0, intMax)),
	n("shutdown-timeout", "10", 0, intMax),
	n("repl-diskless-sync-max-replicas", "0", 0, intMax),

	// unsigned int
	u("maxclients", "", "10000", 1, uintMax, 0),
	{Name: "unixsocketperm", Kind: KindInt, Default: "0", Min: 0, Max: 0777, Unsigned: true, Num: NumOctal, Immutable: true},

	// unsigned long
	u("active-defrag-max-scan-fields", "", "1000", 1, longMax, 0),
	u("slowlog-max-len", "", "128", 0, longMax, 0),
	u("acllog-max-len", "", "128", 0, longMax, 0),

	// long long
	{Name: "busy-reply-threshold", Alias: "lua-time-limit", Kind: KindInt, Default: "5000", Min: 0, Max: longMax},
	n("cluster-node-timeout", "15000", 0, llongMax),
	n("slowlog-log-slower-than", "10000", -1, llongMax),
	n("latency-monitor-threshold", "0", 0, llongMax),
	m("proto-max-bulk-len", "536870912", 1024*1024, longMax),
	n("stream-node-max-entries", "100", 0, llongMax),
	m("repl-backlog-size", "1048576", 1, llongMax),

	// unsigned long long
	{Name: "maxmemory", Kind: KindInt, Default: "0", Min: 0, UMax: math.MaxUint64, Unsigned: true, Num: NumMemory},
	{Name: "cluster-link-sendbuf-limit", Kind: KindInt, Default: "0", Min: 0, UMax: math.MaxUint64, Unsigned: true, Num: NumMemory},

	// size_t
	u("hash-max-listpack-entries", "hash-max-ziplist-entries", "512", 0, longMax, 0),
	u("set-max-intset-entries", "", "512", 0, longMax, 0),
	u("zset-max-listpack-entries", "zset-max-ziplist-entries", "128", 0, longMax, 0),
	u("active-defrag-ignore-bytes", "", "104857600", 1, llongMax, NumMemory),
	u("hash-max-listpack-value", "hash-max-ziplist-value", "64", 0, longMax, NumMemory),
	u("stream-node-max-bytes", "", "4096", 0, longMax, NumMemory),
	u("zset-max-listpack-value", "zset-max-ziplist-value", "64", 0, longMax, NumMemory),
	u("hll-sparse-max-bytes", "", "3000", 0, longMax, NumMemory),
	u("tracking-table-max-keys", "", "1000000", 0, longMax, 0),
	u("client-query-buffer-limit", "", "1073741824", 1024*1024, longMax, NumMemory),
	{Name: "maxmemory-clients", Kind: KindInt, Default: "0", Min: -100, Max: longMax, Num: NumMemory | NumPercent},

	// time_t, off_t
	n("repl-backlog-ttl", "3600", 0, longMax),
	m("auto-aof-rewrite-min-size", "67108864", 0, llongMax),
	hidden(n("loading-process-events-interval-bytes", "2097152", 1024, intMax)),

	// added in 7.0 patch releases
	e("propagation-error-behavior", "ignore", "ignore", "panic", "panic-on-replicas"),
	b("replica-ignore-disk-write-errors", "no"),
	{Name: "socket-mark-id", Kind: KindInt, Default: "0", Min: 0, Max: uintMax, Unsigned: true, Immutable: true},
	{Name: "shutdown-on-sigint", Kind: KindSpecial, Default: "default", MultiArg: true, sp: spShutdownFlags},
	{Name: "shutdown-on-sigterm", Kind: KindSpecial, Default: "default", MultiArg: true, sp: spShutdownFlags},

	// TLS (the reference server is built with it; slotd accepts and
	// reports the values but does not serve TLS)
	n("tls-port", "0", 0, 65535),
	n("tls-session-cache-size", "20480", 0, intMax),
	n("tls-session-cache-timeout", "300", 0, intMax),
	b("tls-cluster", "no"),
	b("tls-replication", "no"),
	e("tls-auth-clients", "yes", "no", "yes", "optional"),
	b("tls-prefer-server-ciphers", "no"),
	b("tls-session-caching", "yes"),
	sn("tls-cert-file"),
	sn("tls-key-file"),
	sn("tls-key-file-pass"),
	sn("tls-client-cert-file"),
	sn("tls-client-key-file"),
	sn("tls-client-key-file-pass"),
	sn("tls-dh-params-file"),
	sn("tls-ca-cert-file"),
	sn("tls-ca-cert-dir"),
	sn("tls-protocols"),
	sn("tls-ciphers"),
	sn("tls-ciphersuites"),

	// special
	{Name: "dir", Kind: KindSpecial, Protected: true, sp: spDir},
	{Name: "save", Kind: KindSpecial, Default: "3600 1 300 100 60 10000", MultiArg: true, sp: spSave},
	{Name: "client-output-buffer-limit", Kind: KindSpecial, Default: "normal 0 0 0 slave 268435456 67108864 60 pubsub 33554432 8388608 60", MultiArg: true, sp: spObuf},
	{Name: "oom-score-adj-values", Kind: KindSpecial, Default: "0 200 800", MultiArg: true, sp: spOOM},
	{Name: "notify-keyspace-events", Kind: KindSpecial, Default: "", sp: spNotify},
	{Name: "bind", Kind: KindSpecial, Default: "* -::*", MultiArg: true, sp: spBind},
	{Name: "replicaof", Alias: "slaveof", Kind: KindSpecial, Default: "", Immutable: true, MultiArg: true, sp: spReplicaOf},
	{Name: "latency-tracking-info-percentiles", Kind: KindSpecial, Default: "50 99 99.9", MultiArg: true, sp: spPercentiles},
}
