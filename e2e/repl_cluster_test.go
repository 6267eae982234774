package e2e

import (
	"bufio"
	"net"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestReplClusterReplicas builds 3 masters + 3 replicas with
// `redis-cli --cluster create --cluster-replicas 1` and with `slotctl create
// --replicas 1`; replicas sync, show under their masters in CLUSTER SLOTS,
// serve reads after READONLY and redirect writes to their master.
func TestReplClusterReplicas(t *testing.T) {
	for _, tool := range []string{"redis-cli", "slotctl"} {
		t.Run(tool, func(t *testing.T) {
			c := newCluster(t, 6)
			var out []byte
			var err error
			if tool == "redis-cli" {
				args := append([]string{"--cluster", "create"}, c.Addrs()...)
				args = append(args, "--cluster-replicas", "1", "--cluster-yes")
				var s string
				s, err = redisCLIRun(60*time.Second, args...)
				out = []byte(s)
			} else {
				args := append([]string{"run", "./cmd/slotctl", "create", "--yes", "--replicas", "1"}, c.Addrs()...)
				cmd := exec.Command("go", args...)
				cmd.Dir = ".."
				out, err = cmd.CombinedOutput()
			}
			if err != nil {
				t.Fatalf("%s create: %v\n%s", tool, err, out)
			}
			c.WaitOK(30 * time.Second)
			// Three slave lines, each naming a master that has slots.
			var masters, replicas []*clusterNode
			var lines []nodeLine
			waitFor(t, 30*time.Second, "3 masters and 3 replicas", func() (bool, string) {
				masters, replicas = nil, nil
				ls, err := c.Nodes[0].Nodes()
				if err != nil {
					return false, err.Error()
				}
				lines = ls
				for _, nd := range c.Nodes {
					me := nd.Myself(t)
					if me.has("slave") {
						replicas = append(replicas, nd)
					} else {
						masters = append(masters, nd)
					}
				}
				return len(masters) == 3 && len(replicas) == 3, strings.Join(fmtLines(lines), "\n")
			})
			// Write through the masters: a key per slot range.
			keys := map[string]*clusterNode{}
			for i := 0; i < 300; i++ {
				k := "key:" + strconv.Itoa(i)
				for _, m := range masters {
					if _, err := cmd(m.Addr(), "SET", k, "v"+strconv.Itoa(i)); err == nil {
						keys[k] = m
						break
					}
				}
			}
			if len(keys) != 300 {
				t.Fatalf("wrote %d of 300 keys", len(keys))
			}
			for _, r := range replicas {
				me := r.Myself(t)
				var master *clusterNode
				for _, m := range masters {
					if m.ID(t) == me.Master {
						master = m
					}
				}
				if master == nil {
					t.Fatalf("replica %s: master %s not found", r.Addr(), me.Master)
				}
				waitFor(t, 30*time.Second, "replica synced", func() (bool, string) {
					info := mustCmd(t, r.Addr(), "INFO", "replication")
					mi := mustCmd(t, master.Addr(), "INFO", "replication")
					return infoField(info, "master_link_status") == "up" &&
						infoField(info, "master_repl_offset") == infoField(mi, "master_repl_offset"), info
				})
				// Reads: MOVED without READONLY, served with it; writes: MOVED.
				for k, m := range keys {
					if m != master {
						continue
					}
					if _, err := cmd(r.Addr(), "GET", k); err == nil || !strings.HasPrefix(err.Error(), "MOVED ") {
						t.Fatalf("GET %s on a replica without READONLY: %v", k, err)
					}
					got, err := cmdPipeline(r.Addr(), [][]string{{"READONLY"}, {"GET", k}, {"SET", k, "x"}})
					if err != nil {
						t.Fatal(err)
					}
					if got[1] != "v"+strings.TrimPrefix(k, "key:") {
						t.Fatalf("GET %s after READONLY = %q", k, got[1])
					}
					if !strings.HasPrefix(got[2], "-MOVED ") {
						t.Fatalf("SET on a replica after READONLY = %q", got[2])
					}
					break
				}
			}
			// CLUSTER SLOTS lists each range with its master and replica.
			waitFor(t, 20*time.Second, "replicas in CLUSTER SLOTS", func() (bool, string) {
				out, err := redisCLIRun(5*time.Second, "-p", strconv.Itoa(c.Nodes[0].Port), "CLUSTER", "SLOTS")
				if err != nil {
					return false, err.Error()
				}
				// Each of the 3 ranges: start, end, master (3 lines), replica (3 lines).
				n := 0
				for _, r := range replicas {
					n += strings.Count(out, r.ID(t))
				}
				return n == 3, out
			})
		})
	}
}

func fmtLines(ls []nodeLine) []string {
	var out []string
	for _, l := range ls {
		out = append(out, l.ID[:8]+" "+l.Addr+" "+strings.Join(l.Flags, ",")+" "+l.Master)
	}
	return out
}

// cmdPipeline sends commands on one connection and returns each reply's
// payload (bulk text) or its raw first line for other types ("-MOVED ...").
func cmdPipeline(addr string, cmds [][]string) ([]string, error) {
	conn, err := net.DialTimeout("tcp", addr, 2*time.Second)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(5 * time.Second))
	var b []byte
	for _, c := range cmds {
		b = encodeCommand(b, c)
	}
	if _, err := conn.Write(b); err != nil {
		return nil, err
	}
	br := bufio.NewReader(conn)
	var out []string
	for range cmds {
		rp, err := readReply(br)
		if err != nil {
			return nil, err
		}
		switch rp.Type {
		case '$':
			out = append(out, string(rp.Bulk))
		default:
			out = append(out, string(rp.Type)+string(rp.Line))
		}
	}
	return out, nil
}
