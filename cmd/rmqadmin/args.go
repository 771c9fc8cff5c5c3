package main

import (
	"flag"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// boolArg is a boolean flag that takes its value as the next argument, as
// mqadmin's do (-o true, -f false).
type boolArg struct {
	v   bool
	set bool
}

func (b *boolArg) String() string {
	if b == nil {
		return "false"
	}
	return strconv.FormatBool(b.v)
}

func (b *boolArg) Set(s string) error {
	v, err := strconv.ParseBool(s)
	if err != nil {
		return usagef("want true or false")
	}
	b.v, b.set = v, true
	return nil
}

func boolFlag(fs *flag.FlagSet, name string, def bool, usage string) *boolArg {
	b := &boolArg{v: def}
	fs.Var(b, name, usage)
	return b
}

// required returns a usage error naming the first empty value.
func required(pairs ...string) error {
	for i := 0; i+1 < len(pairs); i += 2 {
		if strings.TrimSpace(pairs[i+1]) == "" {
			return usagef("-%s is required", pairs[i])
		}
	}
	return nil
}

// brokerOrCluster checks that exactly one of -b and -c is given.
func brokerOrCluster(broker, cluster string) error {
	switch {
	case broker == "" && cluster == "":
		return usagef("give -b brokerAddr or -c cluster")
	case broker != "" && cluster != "":
		return usagef("give -b brokerAddr or -c cluster, not both")
	}
	return nil
}

// javaTimeLayout is Java's UtilAll.YYYY_MM_DD_HH_MM_SS_SSS without the
// milliseconds, which Go layouts cannot put after a colon.
const javaTimeLayout = "2006-01-02#15:04:05"

// parseTimestamp reads a time as mqadmin does: "now", milliseconds since
// the epoch, or yyyy-MM-dd#HH:mm:ss:SSS in local time.
func parseTimestamp(s string, now time.Time) (time.Time, error) {
	s = strings.TrimSpace(s)
	if s == "now" {
		return now, nil
	}
	if ms, err := strconv.ParseInt(s, 10, 64); err == nil {
		if ms < 0 {
			return time.Time{}, usagef("timestamp %q: negative", s)
		}
		return time.UnixMilli(ms), nil
	}
	i := strings.LastIndexByte(s, ':')
	if i > 0 && len(s)-i-1 == 3 {
		t, err := time.ParseInLocation(javaTimeLayout, s[:i], time.Local)
		ms, merr := strconv.Atoi(s[i+1:])
		if err == nil && merr == nil && ms >= 0 {
			return t.Add(time.Duration(ms) * time.Millisecond), nil
		}
	}
	return time.Time{}, usagef("timestamp %q: want now, milliseconds since the epoch or yyyy-MM-dd#HH:mm:ss:SSS", s)
}

// errorf returns a command failure (exit status 1).
func errorf(format string, a ...any) error { return fmt.Errorf(format, a...) }
