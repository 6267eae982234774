package node

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/slotd/slotd/node/keyspace"
)

// serverExt is the state of the server commands (stats, slow log, latency
// monitor, cached directives), kept apart from Server's core fields.
type serverExt struct {
	slowlog slowLog
	latency latencyMonitor

	slowerThan       atomic.Int64
	slowMax          atomic.Int64
	latencyThreshold atomic.Int64
	debugMode        atomic.Int32 // 0 no, 1 yes, 2 local

	errMu       sync.Mutex
	errStats    map[string]int64
	totalErrors atomic.Int64

	lastSave   atomic.Int64
	peakMemory atomic.Int64

	// Shutdown, when set, runs before SHUTDOWN closes the server; save
	// tells whether a final save was asked for (or implied by save
	// points). Persistence plugs in here; an error aborts the shutdown.
	Shutdown func(save bool) error
}

func (s *Server) initServerCmds() {
	e := &s.ext
	e.lastSave.Store(time.Now().Unix())
	s.applyServerConfig("")
	s.Cfg.OnChange(s.applyServerConfig)
}

func randomHex40() string {
	var b [20]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// applyServerConfig caches the directives read on the command path and
// pushes the encoding limits to the keyspace.
func (s *Server) applyServerConfig(name string) {
	e := &s.ext
	cfg := s.Cfg
	e.slowerThan.Store(cfg.Int("slowlog-log-slower-than"))
	e.slowMax.Store(cfg.Int("slowlog-max-len"))
	e.latencyThreshold.Store(cfg.Int("latency-monitor-threshold"))
	switch cfg.Str("enable-debug-command") {
	case "yes":
		e.debugMode.Store(1)
	case "local":
		e.debugMode.Store(2)
	default:
		e.debugMode.Store(0)
	}
	if name == "slowlog-max-len" {
		e.slowlog.trim(e.slowMax.Load())
	}
	switch name {
	case "", "hash-max-listpack-entries", "hash-max-listpack-value", "set-max-intset-entries",
		"zset-max-listpack-entries", "zset-max-listpack-value", "list-max-listpack-size", "list-compress-depth":
		keyspace.SetLimits(keyspace.Limits{
			HashMaxListpackEntries: clampInt(cfg.Int("hash-max-listpack-entries")),
			HashMaxListpackValue:   clampInt(cfg.Int("hash-max-listpack-value")),
			SetMaxIntsetEntries:    clampInt(cfg.Int("set-max-intset-entries")),
			ZSetMaxListpackEntries: clampInt(cfg.Int("zset-max-listpack-entries")),
			ZSetMaxListpackValue:   clampInt(cfg.Int("zset-max-listpack-value")),
			ListMaxListpackSize:    clampInt(cfg.Int("list-max-listpack-size")),
			ListCompressDepth:      clampInt(cfg.Int("list-compress-depth")),
		})
	}
}

func clampInt(v int64) int {
	if v > int64(^uint(0)>>1) {
		return int(^uint(0) >> 1)
	}
	return int(v)
}

// noteError counts an error reply for INFO errorstats; msg is the reply
// after its '-'.
func (s *Server) noteError(msg []byte) {
	e := &s.ext
	e.totalErrors.Add(1)
	end := len(msg)
	for i, c := range msg {
		if c == ' ' || c == '\r' {
			end = i
			break
		}
	}
	if end > 128 {
		end = 128
	}
	prefix := string(msg[:end])
	e.errMu.Lock()
	if e.errStats == nil {
		e.errStats = map[string]int64{}
	}
	// redis-server stops tracking new error kinds past 128 of them.
	if _, ok := e.errStats[prefix]; ok || len(e.errStats) < 128 {
		e.errStats[prefix]++
	}
	e.errMu.Unlock()
}

// resetStats is CONFIG RESETSTAT.
func (s *Server) resetStats() {
	s.ks.ExpiredKeys.Store(0)
	s.ks.EvictedKeys.Store(0)
	s.ks.KeyspaceHits.Store(0)
	s.ks.KeyspaceMiss.Store(0)
	s.cmdsProcessed.Store(0)
	s.connsReceived.Store(0)
	s.connsRejected.Store(0)
	s.netInput.Store(0)
	s.netOutput.Store(0)
	for _, c := range s.cmds {
		resetCmdStats(c)
	}
	e := &s.ext
	e.totalErrors.Store(0)
	e.errMu.Lock()
	e.errStats = nil
	e.errMu.Unlock()
	e.peakMemory.Store(0)
}

func resetCmdStats(c *Command) {
	c.Stats.Calls.Store(0)
	c.Stats.Usec.Store(0)
	c.Stats.RejectedCalls.Store(0)
	c.Stats.FailedCalls.Store(0)
	for _, sc := range c.Subs {
		resetCmdStats(sc)
	}
}

// INFO sections in output order; the default set omits commandstats and
// latencystats.
var infoSections = []string{"server", "clients", "memory", "persistence", "stats", "replication",
	"cpu", "modules", "commandstats", "errorstats", "latencystats", "cluster", "keyspace"}

func infoDefault(sec string) bool { return sec != "commandstats" && sec != "latencystats" }

func registerInfo(t Table) {
	t.Add(&Command{Name: "info", Arity: -1, Flags: FlagLoading | FlagStale, ACL: []string{"slow", "dangerous"},
		Tips: []string{"nondeterministic_output", "request_policy:all_shards", "response_policy:special"}, Handler: cmdInfo})
}

func cmdInfo(x *Ctx) {
	want := map[string]bool{}
	if len(x.Args) == 1 {
		want["default"] = true
	}
	for _, a := range x.Args[1:] {
		want[strings.ToLower(string(a))] = true
	}
	x.W.Verbatim(x.S.Info(want))
}

// Info renders the INFO text for the requested section names (lower
// case; "default", "all" and "everything" select groups).
func (s *Server) Info(want map[string]bool) string {
	all := want["all"] || want["everything"]
	def := want["default"]
	var sb strings.Builder
	for _, sec := range infoSections {
		if !(want[sec] || all || def && infoDefault(sec)) {
			continue
		}
		if sb.Len() > 0 {
			sb.WriteString("\r\n")
		}
		s.infoSection(&sb, sec)
	}
	return sb.String()
}

type infoWriter struct{ sb *strings.Builder }

func (w infoWriter) kv(k string, v any) {
	w.sb.WriteString(k)
	w.sb.WriteByte(':')
	switch t := v.(type) {
	case string:
		w.sb.WriteString(t)
	case int:
		w.sb.WriteString(strconv.Itoa(t))
	case int64:
		w.sb.WriteString(strconv.FormatInt(t, 10))
	default:
		fmt.Fprint(w.sb, t)
	}
	w.sb.WriteString("\r\n")
}

func (s *Server) infoSection(sb *strings.Builder, sec string) {
	w := infoWriter{sb}
	title := strings.ToUpper(sec[:1]) + sec[1:]
	if sec == "cpu" {
		title = "CPU"
	}
	sb.WriteString("# " + title + "\r\n")
	now := time.Now()
	switch sec {
	case "server":
		mode := "standalone"
		if s.Cfg.Bool("cluster-enabled") {
			mode = "cluster"
		}
		exe, _ := os.Executable()
		uptime := int64(now.Sub(s.started) / time.Second)
		w.kv("redis_version", Version)
		w.kv("redis_git_sha1", "00000000")
		w.kv("redis_git_dirty", 0)
		w.kv("redis_build_id", "0")
		w.kv("redis_mode", mode)
		w.kv("os", osName())
		w.kv("arch_bits", 64)
		w.kv("monotonic_clock", "POSIX clock_gettime")
		w.kv("multiplexing_api", "epoll")
		w.kv("atomicvar_api", "c11-builtin")
		w.kv("gcc_version", "0.0.0")
		w.kv("process_id", os.Getpid())
		w.kv("process_supervised", "no")
		w.kv("run_id", s.RunID)
		w.kv("tcp_port", s.Cfg.Int("port"))
		w.kv("server_time_usec", now.UnixMicro())
		w.kv("uptime_in_seconds", uptime)
		w.kv("uptime_in_days", uptime/86400)
		w.kv("hz", s.Cfg.Int("hz"))
		w.kv("configured_hz", s.Cfg.Int("hz"))
		w.kv("lru_clock", int64(s.lruClock()))
		w.kv("executable", exe)
		w.kv("config_file", s.Cfg.File())
		w.kv("io_threads_active", 0)
	case "clients":
		s.mu.Lock()
		n := len(s.clients)
		s.mu.Unlock()
		w.kv("connected_clients", n)
		w.kv("cluster_connections", 0)
		w.kv("maxclients", s.Cfg.Int("maxclients"))
		w.kv("client_recent_max_input_buffer", 0)
		w.kv("client_recent_max_output_buffer", 0)
		w.kv("blocked_clients", 0)
		w.kv("tracking_clients", 0)
		w.kv("clients_in_timeout_table", 0)
	case "memory":
		ms := readMemStats()
		used, rss := ms.used, ms.resident
		if used > s.ext.peakMemory.Load() {
			s.ext.peakMemory.Store(used)
		}
		peak := s.ext.peakMemory.Load()
		maxmem := s.Cfg.Int("maxmemory")
		total := totalSystemMemory()
		w.kv("used_memory", used)
		w.kv("used_memory_human", bytesHuman(used))
		w.kv("used_memory_rss", rss)
		w.kv("used_memory_rss_human", bytesHuman(rss))
		w.kv("used_memory_peak", peak)
		w.kv("used_memory_peak_human", bytesHuman(peak))
		w.kv("used_memory_peak_perc", fmt.Sprintf("%.2f%%", 100*float64(used)/float64(max(peak, 1))))
		w.kv("used_memory_overhead", 0)
		w.kv("used_memory_startup", 0)
		w.kv("used_memory_dataset", used)
		w.kv("used_memory_dataset_perc", "100.00%")
		w.kv("allocator_allocated", used)
		w.kv("allocator_active", used)
		w.kv("allocator_resident", rss)
		w.kv("total_system_memory", total)
		w.kv("total_system_memory_human", bytesHuman(total))
		for _, k := range []string{"used_memory_lua", "used_memory_vm_eval"} {
			w.kv(k, 0)
		}
		w.kv("used_memory_lua_human", "0B")
		for _, k := range []string{"used_memory_scripts_eval", "number_of_cached_scripts", "number_of_functions", "number_of_libraries", "used_memory_vm_functions", "used_memory_vm_total"} {
			w.kv(k, 0)
		}
		w.kv("used_memory_vm_total_human", "0B")
		w.kv("used_memory_functions", 0)
		w.kv("used_memory_scripts", 0)
		w.kv("used_memory_scripts_human", "0B")
		w.kv("maxmemory", maxmem)
		w.kv("maxmemory_human", bytesHuman(maxmem))
		w.kv("maxmemory_policy", s.Cfg.Str("maxmemory-policy"))
		ratio := float64(rss) / float64(max(used, 1))
		w.kv("allocator_frag_ratio", "1.00")
		w.kv("allocator_frag_bytes", 0)
		w.kv("allocator_rss_ratio", fmt.Sprintf("%.2f", ratio))
		w.kv("allocator_rss_bytes", rss-used)
		w.kv("rss_overhead_ratio", "1.00")
		w.kv("rss_overhead_bytes", 0)
		w.kv("mem_fragmentation_ratio", fmt.Sprintf("%.2f", ratio))
		w.kv("mem_fragmentation_bytes", rss-used)
		for _, k := range []string{"mem_not_counted_for_evict", "mem_replication_backlog", "mem_total_replication_buffers", "mem_clients_slaves", "mem_clients_normal", "mem_cluster_links", "mem_aof_buffer"} {
			w.kv(k, 0)
		}
		w.kv("mem_allocator", "go")
		w.kv("active_defrag_running", 0)
		w.kv("lazyfree_pending_objects", 0)
		w.kv("lazyfreed_objects", 0)
	case "persistence":
		s.infoRDB(w)
		s.infoAOF(w)
	case "stats":
		w.kv("total_connections_received", s.connsReceived.Load())
		w.kv("total_commands_processed", s.cmdsProcessed.Load())
		w.kv("instantaneous_ops_per_sec", 0)
		w.kv("total_net_input_bytes", s.netInput.Load())
		w.kv("total_net_output_bytes", s.netOutput.Load())
		w.kv("total_net_repl_input_bytes", 0)
		w.kv("total_net_repl_output_bytes", 0)
		for _, k := range []string{"instantaneous_input_kbps", "instantaneous_output_kbps", "instantaneous_input_repl_kbps", "instantaneous_output_repl_kbps"} {
			w.kv(k, "0.00")
		}
		w.kv("rejected_connections", s.connsRejected.Load())
		w.kv("sync_full", s.repl.syncFull.Load())
		w.kv("sync_partial_ok", s.repl.syncPartialOK.Load())
		w.kv("sync_partial_err", s.repl.syncPartialErr.Load())
		w.kv("expired_keys", s.ks.ExpiredKeys.Load())
		w.kv("expired_stale_perc", "0.00")
		w.kv("expired_time_cap_reached_count", 0)
		w.kv("expire_cycle_cpu_milliseconds", 0)
		w.kv("evicted_keys", s.ks.EvictedKeys.Load())
		for _, k := range []string{"evicted_clients", "total_eviction_exceeded_time", "current_eviction_exceeded_time"} {
			w.kv(k, 0)
		}
		w.kv("keyspace_hits", s.ks.KeyspaceHits.Load())
		w.kv("keyspace_misses", s.ks.KeyspaceMiss.Load())
		for _, k := range []string{"pubsub_channels", "pubsub_patterns", "pubsubshard_channels", "latest_fork_usec", "total_forks",
			"migrate_cached_sockets", "slave_expires_tracked_keys", "active_defrag_hits", "active_defrag_misses",
			"active_defrag_key_hits", "active_defrag_key_misses", "total_active_defrag_time", "current_active_defrag_time",
			"tracking_total_keys", "tracking_total_items", "tracking_total_prefixes", "unexpected_error_replies"} {
			w.kv(k, 0)
		}
		w.kv("total_error_replies", s.ext.totalErrors.Load())
		w.kv("dump_payload_sanitizations", 0)
		w.kv("total_reads_processed", s.cmdsProcessed.Load())
		w.kv("total_writes_processed", s.cmdsProcessed.Load())
		for _, k := range []string{"io_threaded_reads_processed", "io_threaded_writes_processed", "reply_buffer_shrinks", "reply_buffer_expands"} {
			w.kv(k, 0)
		}
	case "replication":
		s.infoReplication(w)
	case "cpu":
		var self, children syscall.Rusage
		syscall.Getrusage(syscall.RUSAGE_SELF, &self)
		syscall.Getrusage(syscall.RUSAGE_CHILDREN, &children)
		w.kv("used_cpu_sys", tv(self.Stime))
		w.kv("used_cpu_user", tv(self.Utime))
		w.kv("used_cpu_sys_children", tv(children.Stime))
		w.kv("used_cpu_user_children", tv(children.Utime))
		w.kv("used_cpu_sys_main_thread", tv(self.Stime))
		w.kv("used_cpu_user_main_thread", tv(self.Utime))
	case "modules":
	case "commandstats":
		for _, c := range sortedCommands(s.cmds) {
			st := &c.Stats
			calls, usec := st.Calls.Load(), st.Usec.Load()
			rej, failed := st.RejectedCalls.Load(), st.FailedCalls.Load()
			if calls == 0 && rej == 0 && failed == 0 {
				continue
			}
			per := 0.0
			if calls > 0 {
				per = float64(usec) / float64(calls)
			}
			fmt.Fprintf(sb, "cmdstat_%s:calls=%d,usec=%d,usec_per_call=%.2f,rejected_calls=%d,failed_calls=%d\r\n",
				c.Name, calls, usec, per, rej, failed)
		}
	case "errorstats":
		s.ext.errMu.Lock()
		keys := make([]string, 0, len(s.ext.errStats))
		for k := range s.ext.errStats {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			fmt.Fprintf(sb, "errorstat_%s:count=%d\r\n", k, s.ext.errStats[k])
		}
		s.ext.errMu.Unlock()
	case "latencystats":
	case "cluster":
		w.kv("cluster_enabled", boolInt(s.Cfg.Bool("cluster-enabled")))
	case "keyspace":
		for i := 0; i < s.ks.NumDBs(); i++ {
			db := s.ks.DB(i)
			if n := db.Len(); n > 0 {
				fmt.Fprintf(sb, "db%d:keys=%d,expires=%d,avg_ttl=0\r\n", i, n, db.Volatile())
			}
		}
	}
}

// sortedCommands lists commands and subcommands by name.
func sortedCommands(t Table) []*Command {
	var out []*Command
	for _, c := range t {
		out = append(out, c)
		for _, sc := range c.Subs {
			out = append(out, sc)
		}
	}
	slices.SortFunc(out, func(a, b *Command) int { return strings.Compare(a.Name, b.Name) })
	return out
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

func tv(t syscall.Timeval) string {
	return fmt.Sprintf("%d.%06d", t.Sec, t.Usec)
}

// bytesHuman formats n as redis-server's bytesToHuman does.
func bytesHuman(n int64) string {
	d := float64(n)
	switch {
	case n < 1024:
		return strconv.FormatInt(n, 10) + "B"
	case n < 1<<20:
		return fmt.Sprintf("%.2fK", d/(1<<10))
	case n < 1<<30:
		return fmt.Sprintf("%.2fM", d/(1<<20))
	case n < 1<<40:
		return fmt.Sprintf("%.2fG", d/(1<<30))
	case n < 1<<50:
		return fmt.Sprintf("%.2fT", d/(1<<40))
	case n < 1<<60:
		return fmt.Sprintf("%.2fP", d/(1<<50))
	}
	return fmt.Sprintf("%.2fB", d)
}
