package e2e

import (
	"bufio"
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// installHint is printed when a tool the tests need is missing.
const installHint = "run scripts/install-deps.sh (as root) to install redis-server 7 and redis-tools"

var (
	buildOnce sync.Once
	buildDir  string
	buildPath string
	buildErr  error
)

func TestMain(m *testing.M) {
	code := m.Run()
	if buildDir != "" {
		os.RemoveAll(buildDir)
	}
	os.Exit(code)
}

// slotdBinary builds ./cmd/slotd once per test run (with -race when the
// tests themselves run with -race) and returns its path.
func slotdBinary(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		buildDir, buildErr = os.MkdirTemp("", "slotd-e2e-")
		if buildErr != nil {
			return
		}
		buildPath = filepath.Join(buildDir, "slotd")
		args := []string{"build", "-o", buildPath}
		if raceEnabled {
			args = append(args, "-race")
		}
		args = append(args, "github.com/slotd/slotd/cmd/slotd")
		cmd := exec.Command("go", args...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build slotd: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return buildPath
}

// needTool returns the path of a program on PATH or fails the test.
func needTool(t *testing.T, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		t.Fatalf("%s not found on PATH: %s", name, installHint)
	}
	return p
}

var redisVersionRE = regexp.MustCompile(`v=(\d+)\.(\d+)\.(\d+)`)

// redisServerBinary returns redis-server's path and fails unless it is
// version 7.
func redisServerBinary(t *testing.T) string {
	t.Helper()
	p := needTool(t, "redis-server")
	out, err := exec.Command(p, "--version").Output()
	if err != nil {
		t.Fatalf("redis-server --version: %v", err)
	}
	m := redisVersionRE.FindSubmatch(out)
	if m == nil || string(m[1]) != "7" {
		t.Fatalf("redis-server 7 is needed, found %q: %s", bytes.TrimSpace(out), installHint)
	}
	return p
}

// freePort returns a loopback TCP port that was free a moment ago.
func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// server is a process under test listening on 127.0.0.1:Port.
type server struct {
	Name string
	Port int
	cmd  *exec.Cmd
	out  *lockedBuffer
	done chan struct{}
}

// Addr returns host:port.
func (s *server) Addr() string { return "127.0.0.1:" + strconv.Itoa(s.Port) }

// Output returns what the process wrote to stdout and stderr so far.
func (s *server) Output() string { return s.out.String() }

// Pid returns the process id.
func (s *server) Pid() int { return s.cmd.Process.Pid }

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// startServer runs bin with args plus "--port N", waits until it answers
// PING, and registers its termination with t.Cleanup. A slotd built with
// -race that reports a data race fails the test at cleanup.
func startServer(t *testing.T, name, bin string, args ...string) *server {
	t.Helper()
	return startServerOn(t, freePort, name, bin, args...)
}

// startServerOn is startServer with the port taken from port.
func startServerOn(t *testing.T, port func(*testing.T) int, name, bin string, args ...string) *server {
	t.Helper()
	var lastErr error
	for attempt := 0; attempt < 3; attempt++ {
		port := port(t)
		s := &server{Name: name, Port: port, out: &lockedBuffer{}, done: make(chan struct{})}
		full := append(append([]string(nil), args...), "--port", strconv.Itoa(port))
		s.cmd = exec.Command(bin, full...)
		s.cmd.Dir = t.TempDir()
		s.cmd.Stdout = s.out
		s.cmd.Stderr = s.out
		// Own process group, so nothing outlives the test run.
		s.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		if err := s.cmd.Start(); err != nil {
			t.Fatalf("start %s: %v", name, err)
		}
		go func() { s.cmd.Wait(); close(s.done) }()
		if lastErr = s.waitReady(10 * time.Second); lastErr == nil {
			t.Cleanup(func() { s.stop(t) })
			return s
		}
		s.kill()
		if !strings.Contains(s.Output(), "in use") {
			break
		}
	}
	t.Fatalf("%s did not start: %v", name, lastErr)
	return nil
}

// waitReady polls with PING until the server answers or the deadline passes.
func (s *server) waitReady(d time.Duration) error {
	deadline := time.Now().Add(d)
	for {
		select {
		case <-s.done:
			return fmt.Errorf("exited: %s", s.Output())
		default:
		}
		c, err := net.DialTimeout("tcp", s.Addr(), time.Second)
		if err == nil {
			c.SetDeadline(time.Now().Add(2 * time.Second))
			_, err = c.Write([]byte("*1\r\n$4\r\nPING\r\n"))
			var line string
			if err == nil {
				line, err = bufio.NewReader(c).ReadString('\n')
			}
			c.Close()
			if err == nil && line == "+PONG\r\n" {
				return nil
			}
			if err == nil {
				err = fmt.Errorf("PING answered %q", line)
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("not ready after %v: %v\n%s", d, err, s.Output())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (s *server) kill() {
	if s.cmd.Process != nil {
		syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
	}
	<-s.done
}

// stop asks the process to exit (SIGTERM), kills it after a grace period,
// and fails the test if its output shows a data race or a panic.
func (s *server) stop(t *testing.T) {
	select {
	case <-s.done:
	default:
		syscall.Kill(-s.cmd.Process.Pid, syscall.SIGTERM)
		select {
		case <-s.done:
		case <-time.After(5 * time.Second):
			s.kill()
		}
	}
	out := s.Output()
	if strings.Contains(out, "WARNING: DATA RACE") || strings.Contains(out, "panic:") {
		t.Errorf("%s reported a data race or a panic:\n%s", s.Name, out)
	}
}

// redisArgs are the settings both servers get; redis-server also gets
// redisOnlyArgs, directives slotd does not accept (it never persists).
var (
	commonArgs    = []string{"--bind", "127.0.0.1", "--loglevel", "warning"}
	redisOnlyArgs = []string{"--save", "", "--appendonly", "no"}
)

// startRedis starts a redis-server 7 with persistence off.
func startRedis(t *testing.T, extra ...string) *server {
	t.Helper()
	bin := redisServerBinary(t)
	args := append(append(append([]string(nil), commonArgs...), redisOnlyArgs...), extra...)
	return startServer(t, "redis-server", bin, args...)
}

// startSlotd builds and starts slotd.
func startSlotd(t *testing.T, extra ...string) *server {
	t.Helper()
	bin := slotdBinary(t)
	args := append(append([]string(nil), commonArgs...), extra...)
	return startServer(t, "slotd", bin, args...)
}

// startTarget starts the server under test: slotd, or a redis-server when
// SLOTD_E2E_TARGET=redis, to check the tests themselves against the
// reference.
func startTarget(t *testing.T) *server {
	t.Helper()
	if os.Getenv("SLOTD_E2E_TARGET") == "redis" {
		return startRedis(t)
	}
	return startSlotd(t)
}
