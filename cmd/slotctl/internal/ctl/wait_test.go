package ctl

import (
	"context"
	"strings"
	"testing"
	"time"
)

func TestWaitForTimesOutNamingNodes(t *testing.T) {
	o, out := testOptions(t)
	o.Wait, o.Poll = 50*time.Millisecond, 10*time.Millisecond
	r := NewReporter(o)
	calls := 0
	err := waitFor(context.Background(), o, r, "the cluster to join", func() (bool, string) {
		calls++
		return false, "2 of 3 nodes ready" + waitingOn([]string{"127.0.0.1:7002"})
	})
	if err == nil || !strings.Contains(err.Error(), "timed out after 50ms waiting for the cluster to join: 2 of 3 nodes ready, waiting on 127.0.0.1:7002") {
		t.Fatalf("err = %v", err)
	}
	// Not a terminal: the unchanged progress line is printed once.
	if n := strings.Count(out.String(), "Waiting for the cluster to join"); n != 1 || calls < 3 {
		t.Errorf("%d progress lines over %d polls:\n%s", n, calls, out)
	}
	if got := waitingOn([]string{"a", "b", "c", "d", "e", "f"}); got != ", waiting on a, b, c, d and 2 more" {
		t.Errorf("waitingOn = %q", got)
	}

	calls = 0
	err = waitFor(context.Background(), o, r, "x", func() (bool, string) { calls++; return calls == 2, "" })
	if err != nil || calls != 2 {
		t.Errorf("done on the second poll: err %v calls %d", err, calls)
	}
}
