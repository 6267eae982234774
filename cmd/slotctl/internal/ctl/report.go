package ctl

import (
	"fmt"
	"io"
	"os"
	"strings"
	"time"
)

// Options are the settings every operation shares.
type Options struct {
	// Password is sent with AUTH on every connection ("" for none).
	Password string
	// Timeout bounds one command (connect, send, reply). Zero means 10 s.
	Timeout time.Duration
	// Wait bounds how long an operation waits for the cluster to converge
	// (create, add-node). Zero means 60 s.
	Wait time.Duration
	// Poll is the interval between convergence checks. Zero means 100 ms.
	Poll time.Duration
	// Yes skips the confirmation of a plan.
	Yes bool
	// Confirm asks the user to accept a plan; nil (with Yes false) refuses,
	// so a caller that forgets to set it never acts unasked.
	Confirm func(prompt string) bool
	// Out receives the report; nil means os.Stdout.
	Out io.Writer
	// Color turns on redis-cli's ANSI colours for section, OK, warning
	// and error lines.
	Color bool
	// Live rewrites the progress line in place (for a terminal); otherwise
	// a progress line is printed only when its text changes.
	Live bool
}

func (o *Options) timeout() time.Duration {
	if o.Timeout > 0 {
		return o.Timeout
	}
	return 10 * time.Second
}

func (o *Options) wait() time.Duration {
	if o.Wait > 0 {
		return o.Wait
	}
	return 60 * time.Second
}

func (o *Options) poll() time.Duration {
	if o.Poll > 0 {
		return o.Poll
	}
	return 100 * time.Millisecond
}

func (o *Options) confirm(prompt string) bool {
	if o.Yes {
		return true
	}
	return o.Confirm != nil && o.Confirm(prompt)
}

// Reporter writes an operation's progress and findings. It is the only
// writer of output in the package.
type Reporter struct {
	w        io.Writer
	color    bool
	live     bool
	lastProg string
	inProg   bool
}

// NewReporter returns the reporter for o.
func NewReporter(o *Options) *Reporter {
	w := o.Out
	if w == nil {
		w = os.Stdout
	}
	return &Reporter{w: w, color: o.Color, live: o.Live}
}

const (
	colorSection = "\033[29;1m"
	colorOK      = "\033[32;1m"
	colorBad     = "\033[31;1m"
	colorWarn    = "\033[33;1m"
	colorReset   = "\033[0m"
)

func (r *Reporter) emit(color, prefix, format string, args ...any) {
	r.endProgress()
	msg := prefix + fmt.Sprintf(format, args...)
	if r.color && color != "" {
		msg = color + msg + colorReset
	}
	fmt.Fprintln(r.w, msg)
}

// Section starts a step: ">>> text".
func (r *Reporter) Section(format string, args ...any) { r.emit(colorSection, ">>> ", format, args...) }

// OK reports a passed check: "[OK] text".
func (r *Reporter) OK(format string, args ...any) { r.emit(colorOK, "[OK] ", format, args...) }

// Warn reports something odd that does not fail the operation.
func (r *Reporter) Warn(format string, args ...any) { r.emit(colorWarn, "[WARNING] ", format, args...) }

// Err reports a failed check: "[ERR] text".
func (r *Reporter) Err(format string, args ...any) { r.emit(colorBad, "[ERR] ", format, args...) }

// Line prints plain text.
func (r *Reporter) Line(format string, args ...any) { r.emit("", "", format, args...) }

// Progress shows the state of a wait. On a terminal the line is rewritten
// in place; elsewhere it is printed only when its text changes, so logs
// stay short.
func (r *Reporter) Progress(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	if r.live {
		fmt.Fprintf(r.w, "\r%s\033[K", msg)
		r.inProg = true
		return
	}
	if msg != r.lastProg {
		fmt.Fprintln(r.w, msg)
		r.lastProg = msg
	}
}

func (r *Reporter) endProgress() {
	if r.inProg {
		fmt.Fprintln(r.w)
		r.inProg = false
	}
	r.lastProg = ""
}

// shortID is the 8-character id prefix redis-cli prints in summaries.
func shortID(id string) string {
	if len(id) > 8 {
		return id[:8] + "..."
	}
	return id
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// joinInts formats slot numbers for a warning: "1,2,3".
func joinInts(xs []int) string {
	var b strings.Builder
	for i, x := range xs {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprint(&b, x)
	}
	return b.String()
}
