// Package java runs Java Apache RocketMQ 4.9.8 clients of our own (the
// .java files in this folder) against the in-process cluster (rmqtest):
// the DefaultMQProducer send kinds, push consumers (concurrent, orderly,
// broadcasting, retry), the lite pull consumer and DefaultMQAdminExt. The
// test compiles them with javac against the jars in $RMQ_LIB and skips when
// RMQ_LIB is not set.
package java

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// envLib names the folder of every jar of a Java RocketMQ 4.9.8 build
// (client, tools, remoting, common and their dependencies).
const envLib = "RMQ_LIB"

// jdkFlags let the 4.9.8 client run on JDK 17.
var jdkFlags = []string{
	"--add-opens", "java.base/java.nio=ALL-UNNAMED",
	"--add-opens", "java.base/sun.nio.ch=ALL-UNNAMED",
	"--add-opens", "java.base/jdk.internal.ref=ALL-UNNAMED",
	"--add-opens", "java.base/java.lang=ALL-UNNAMED",
}

var compiled struct {
	once sync.Once
	dir  string
	err  error
}

func TestMain(m *testing.M) {
	code := m.Run()
	if compiled.dir != "" {
		_ = os.RemoveAll(compiled.dir)
	}
	os.Exit(code)
}

type javaRunner struct {
	lib, classes string
}

// javaClients compiles the programs once per test binary, or skips t.
func javaClients(t *testing.T) *javaRunner {
	t.Helper()
	lib := os.Getenv(envLib)
	if lib == "" {
		t.Skipf("set %s to the folder of a Java RocketMQ 4.9.8 build's jars to run the Java clients", envLib)
	}
	for _, tool := range []string{"java", "javac"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is set but %s is not on PATH", envLib, tool)
		}
	}
	compiled.once.Do(func() {
		dir, err := os.MkdirTemp("", "rmq-java-classes")
		if err != nil {
			compiled.err = err
			return
		}
		compiled.dir = dir
		srcs, _ := filepath.Glob("*.java")
		args := append([]string{"-nowarn", "-encoding", "UTF-8", "-d", dir, "-cp", filepath.Join(lib, "*")}, srcs...)
		if out, err := exec.Command("javac", args...).CombinedOutput(); err != nil {
			compiled.err = fmt.Errorf("javac: %v\n%s", err, out)
		}
	})
	if compiled.err != nil {
		t.Fatal(compiled.err)
	}
	return &javaRunner{lib: lib, classes: compiled.dir}
}

// run runs a Java program to its end and returns its JSON lines; a failed
// run fails t with the program's stderr.
func (j *javaRunner) run(t *testing.T, timeout time.Duration, class string, args ...string) []map[string]any {
	t.Helper()
	lines, err := j.exec(t, timeout, class, args...)
	if err != nil {
		t.Fatal(err)
	}
	return lines
}

// exec is run returning the error, for use from goroutines.
func (j *javaRunner) exec(t *testing.T, timeout time.Duration, class string, args ...string) ([]map[string]any, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	wd, _ := os.Getwd()
	jargs := append([]string{}, jdkFlags...)
	jargs = append(jargs,
		"-Xmx256m",
		"-Duser.home="+t.TempDir(), // the client's own files
		"-Dlogback.configurationFile="+filepath.Join(wd, "logback.xml"),
		"-Dcom.rocketmq.sendMessageWithVIPChannel=false",
		"-cp", j.classes+string(os.PathListSeparator)+filepath.Join(j.lib, "*"),
		class)
	jargs = append(jargs, args...)
	cmd := exec.CommandContext(ctx, "java", jargs...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var lines []map[string]any
	sc := bufio.NewScanner(&stdout)
	sc.Buffer(make([]byte, 0, 64<<10), 4<<20)
	for sc.Scan() {
		if !bytes.HasPrefix(sc.Bytes(), []byte("{")) {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			return nil, fmt.Errorf("%s: bad output line %q: %v", class, sc.Text(), err)
		}
		lines = append(lines, m)
	}
	if err != nil {
		return lines, fmt.Errorf("%s %s: %v\nstderr:\n%s", class, strings.Join(args, " "), err, tail(stderr.String(), 4000))
	}
	return lines, nil
}

func tail(s string, n int) string {
	if len(s) > n {
		return "..." + s[len(s)-n:]
	}
	return s
}

// str and num read a field of a JSON line.
func str(m map[string]any, k string) string {
	s, _ := m[k].(string)
	return s
}

func num(m map[string]any, k string) int64 {
	f, _ := m[k].(float64)
	return int64(f)
}
