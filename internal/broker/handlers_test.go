package broker

import (
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/go-rocketmq/rocketmq/remoting"
)

// The directory listing is the protocol index: every row of the request
// table has its NNN_name.go file named after the Java code, and every such
// file has its row.
func TestRequestTableMatchesFiles(t *testing.T) {
	b := &Broker{}
	rows := make(map[int32]bool)
	for _, r := range b.routes() {
		if rows[r.code] {
			t.Errorf("code %d has two rows", r.code)
		}
		rows[r.code] = true
		if r.serve == nil {
			t.Errorf("code %d has no handler", r.code)
		}
		name := fmt.Sprintf("%03d_%s.go", r.code, strings.ToLower(remoting.RequestCodeName(r.code)))
		if _, err := os.Stat(name); err != nil {
			t.Errorf("code %d: %v", r.code, err)
		}
	}
	entries, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	codeFile := regexp.MustCompile(`^(\d{3})_[a-z0-9_]+\.go$`)
	for _, e := range entries {
		m := codeFile.FindStringSubmatch(e.Name())
		if m == nil || strings.HasSuffix(e.Name(), "_test.go") {
			continue
		}
		code, _ := strconv.Atoi(m[1])
		if !rows[int32(code)] {
			t.Errorf("%s has no row in the request table", e.Name())
		}
	}
}
