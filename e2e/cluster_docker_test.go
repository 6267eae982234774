package e2e

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestClusterDocker builds the FROM scratch image (docker/build.sh), brings
// up docker/compose.yml (six nodes and the bootstrap service), waits for
// the bootstrap to exit 0, checks cluster_state:ok on every node and
// `slotctl check` from inside the network, and tears everything down. It
// skips only when no Docker engine answers (`docker info` fails).
//
// With SLOTD_E2E_TARGET=redis the image holds redis-server as /slotd and a
// shim as /slotctl that runs redis-cli --cluster (e2e/testdata/slotctlshim),
// so the compose file itself is checked against real redis-server nodes.
//
// Traffic goes only to the project's containers and to loopback.
func TestClusterDocker(t *testing.T) {
	if out, err := exec.Command("docker", "info").CombinedOutput(); err != nil {
		t.Skipf("no Docker engine (docker info: %v): %s", err, tail(string(out), 300))
	}
	compose, err := exec.LookPath("docker-compose")
	if err != nil {
		t.Fatalf("a Docker engine is present but docker-compose is not on PATH")
	}
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	pid := os.Getpid()
	image := fmt.Sprintf("slotd-e2e:%d", pid)
	project := fmt.Sprintf("slotde2e%d", pid)
	// A /24 of 172.30.0.0/16 per run, so that runs in other trees do not
	// collide (the compose default is 172.30.77).
	subnet := fmt.Sprintf("172.30.%d", 100+pid%100)

	run := func(d time.Duration, env []string, name string, args ...string) (string, error) {
		ctx, cancel := context.WithTimeout(context.Background(), d)
		defer cancel()
		c := exec.CommandContext(ctx, name, args...)
		c.Dir = root
		c.Env = append(os.Environ(), env...)
		out, err := c.CombinedOutput()
		if ctx.Err() != nil {
			err = fmt.Errorf("timed out after %v", d)
		}
		return string(out), err
	}

	if targetIsRedis() {
		buildRedisImage(t, image, run)
	} else {
		if out, err := run(6*time.Minute, []string{"SLOTD_IMAGE=" + image}, "bash", "docker/build.sh"); err != nil {
			t.Fatalf("docker/build.sh: %v\n%s", err, out)
		}
	}
	t.Cleanup(func() { run(30*time.Second, nil, "docker", "rmi", "-f", image) })

	env := []string{"SLOTD_IMAGE=" + image, "SLOTD_NET=" + subnet}
	dc := func(d time.Duration, args ...string) (string, error) {
		return run(d, env, compose, append([]string{"-p", project, "-f", "docker/compose.yml"}, args...)...)
	}
	t.Cleanup(func() {
		if t.Failed() {
			out, _ := dc(30*time.Second, "logs", "--no-color")
			t.Logf("docker-compose logs:\n%s", tail(out, 8000))
		}
		if out, err := dc(60*time.Second, "down", "-v", "--remove-orphans", "-t", "3"); err != nil {
			t.Errorf("docker-compose down: %v\n%s", err, out)
		}
	})
	start := time.Now()
	if out, err := dc(90*time.Second, "up", "-d"); err != nil {
		t.Fatalf("docker-compose up: %v\n%s", err, out)
	}

	// The bootstrap container ends with exit code 0 once create is done.
	var cid string
	waitFor(t, 60*time.Second, "bootstrap service exited 0", func() (bool, string) {
		if cid == "" {
			out, err := dc(20*time.Second, "ps", "-q", "bootstrap")
			if err != nil || strings.TrimSpace(out) == "" {
				return false, fmt.Sprintf("no bootstrap container: %v %s", err, out)
			}
			cid = strings.TrimSpace(out)
		}
		out, err := run(20*time.Second, nil, "docker", "inspect", "-f", "{{.State.Status}} {{.State.ExitCode}} {{.RestartCount}}", cid)
		if err != nil {
			return false, out
		}
		f := strings.Fields(out)
		return len(f) == 3 && f[0] == "exited" && f[1] == "0", "bootstrap state: " + strings.TrimSpace(out)
	})
	t.Logf("compose up -> bootstrap done in %v", time.Since(start).Round(time.Millisecond))

	var addrs []string
	for i := 11; i <= 16; i++ {
		addrs = append(addrs, fmt.Sprintf("%s.%d:6379", subnet, i))
	}
	// cluster_state:ok from inside the network, through the image's own
	// binaries: slotctl check passes only when every node agrees.
	waitFor(t, 30*time.Second, "slotctl check inside the compose network", func() (bool, string) {
		out, err := dc(30*time.Second, "run", "--rm", "--no-deps", "--entrypoint", "/slotctl", "bootstrap", "check", addrs[0])
		if err != nil {
			return false, fmt.Sprintf("%v\n%s", err, out)
		}
		for _, want := range checkOK {
			if !strings.Contains(out, want) {
				return false, "output lacks " + want + ":\n" + out
			}
		}
		return true, ""
	})
	// From the host when the bridge is routable (Linux): every node reports
	// cluster_state:ok and announces its container address.
	if c, err := net.DialTimeout("tcp", addrs[0], 2*time.Second); err != nil {
		t.Logf("bridge network not reachable from the host (%v): cluster_state checked through slotctl check only", err)
	} else {
		c.Close()
		waitFor(t, 20*time.Second, "cluster_state:ok on every container", func() (bool, string) {
			for _, a := range addrs {
				info, err := cmd(a, "CLUSTER", "INFO")
				if err != nil {
					return false, a + ": " + err.Error()
				}
				if st := infoField(info, "cluster_state"); st != "ok" {
					return false, a + ": cluster_state:" + st
				}
				if n := infoField(info, "cluster_known_nodes"); n != "6" {
					return false, a + ": cluster_known_nodes:" + n
				}
			}
			return true, ""
		})
		// The unmodified redis-cli, from the host, against the containers.
		if cli, err := exec.LookPath("redis-cli"); err == nil {
			out, err := exec.Command(cli, "--cluster", "check", addrs[0]).CombinedOutput()
			for _, want := range checkOK {
				if err != nil || !strings.Contains(string(out), want) {
					t.Errorf("redis-cli --cluster check %s: %v, want %q in:\n%s", addrs[0], err, want, out)
				}
			}
		}
		out := mustCmd(t, addrs[0], "CLUSTER", "NODES")
		for _, a := range addrs {
			if !regexp.MustCompile(`(?m) ` + regexp.QuoteMeta(a) + `@16379 `).MatchString(out) {
				t.Errorf("CLUSTER NODES does not announce %s@16379:\n%s", a, out)
			}
		}
	}
}

// buildRedisImage builds a FROM scratch image in which /slotd is the
// host's redis-server and /slotctl the shim over redis-cli, with the
// shared libraries both need.
func buildRedisImage(t *testing.T, image string, run func(time.Duration, []string, string, ...string) (string, error)) {
	t.Helper()
	ctxDir := t.TempDir()
	server, cli := redisServerBinary(t), needTool(t, "redis-cli")
	shim := filepath.Join(ctxDir, "slotctl")
	if out, err := run(60*time.Second, []string{"CGO_ENABLED=0"}, "go", "build", "-o", shim, "./e2e/testdata/slotctlshim"); err != nil {
		t.Fatalf("build slotctlshim: %v\n%s", err, out)
	}
	copyFile := func(src, dst string) {
		b, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(dst, b, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	copyFile(server, filepath.Join(ctxDir, "slotd"))
	copyFile(cli, filepath.Join(ctxDir, "redis-cli"))
	libs := map[string]bool{}
	for _, bin := range []string{server, cli} {
		out, err := exec.Command("ldd", bin).Output()
		if err != nil {
			t.Fatalf("ldd %s: %v", bin, err)
		}
		for _, m := range regexp.MustCompile(`(/\S+\.so[.\d]*)`).FindAllString(string(out), -1) {
			libs[m] = true
		}
	}
	for lib := range libs {
		real, err := filepath.EvalSymlinks(lib)
		if err != nil {
			t.Fatal(err)
		}
		copyFile(real, filepath.Join(ctxDir, "root", lib))
	}
	dockerfile := "FROM scratch\nCOPY root/ /\nCOPY slotd slotctl redis-cli /\nWORKDIR /data\nENTRYPOINT [\"/slotd\"]\n"
	if err := os.WriteFile(filepath.Join(ctxDir, "Dockerfile"), []byte(dockerfile), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := run(120*time.Second, nil, "docker", "build", "-q", "-t", image, ctxDir); err != nil {
		t.Fatalf("docker build (redis-server variant): %v\n%s", err, out)
	}
}
