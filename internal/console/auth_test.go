package console

import (
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func usersFile(t *testing.T, lines ...string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "users")
	if err := os.WriteFile(p, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestLogin: with users, pages need a session from the login form (CSRF
// protected, wrong passwords refused and paused after five); a session
// ends at logout and at its expiry.
func TestLogin(t *testing.T) {
	e := start(t)
	h, err := hashPassword("s3cret", minIterations)
	if err != nil {
		t.Fatal(err)
	}
	users, err := LoadUsers(usersFile(t, "# operators", "", "alice:"+h))
	if err != nil {
		t.Fatal(err)
	}
	e.serve(t, Config{Admin: e.adm, Users: users, SessionTTL: time.Hour})
	var now atomic.Int64
	now.Store(time.Now().UnixNano())
	e.srv.now = func() time.Time { return time.Unix(0, now.Load()) }

	p := e.get(t, "/topics")
	if p.status != http.StatusOK || p.url != "/login" || !strings.Contains(p.body, `id="login"`) {
		t.Fatalf("a page without a session: %d at %s", p.status, p.url)
	}
	if p := e.get(t, "/api/stats"); p.status != http.StatusUnauthorized {
		t.Errorf("API without a session: %d", p.status)
	}
	if p := e.post(t, "/topics", url.Values{"topic": {"LoginTopic"}}); p.status == http.StatusOK && p.url == "/topics/LoginTopic" {
		t.Fatal("created a topic without a session")
	}
	resp, err := e.cli.PostForm(e.http.URL+"/login", url.Values{"user": {"alice"}, "password": {"s3cret"}})
	if err != nil {
		t.Fatal(err)
	}
	if p := readPage(t, resp); p.status != http.StatusForbidden {
		t.Errorf("login without the CSRF field: %d", p.status)
	}
	login := func(user, pw, next string) page {
		t.Helper()
		return e.post(t, "/login", url.Values{"user": {user}, "password": {pw}, "next": {next}})
	}
	if p := login("alice", "wrong", "/topics"); p.status != http.StatusUnauthorized || !strings.Contains(errorText(p.body), "wrong user or password") {
		t.Errorf("wrong password: %d %q", p.status, errorText(p.body))
	}
	if p := login("bob", "s3cret", "/topics"); p.status != http.StatusUnauthorized {
		t.Errorf("unknown user: %d", p.status)
	}
	p = login("alice", "s3cret", "/topics?q=x")
	if p.status != http.StatusOK || p.url != "/topics" || !strings.Contains(p.body, `<span id="user">alice</span>`) {
		t.Fatalf("login: %d at %s: %q", p.status, p.url, errorText(p.body))
	}
	if p := e.get(t, "/api/stats"); p.status != http.StatusOK {
		t.Errorf("API with a session: %d", p.status)
	}
	if p := login("alice", "s3cret", "//evil.example/"); p.url != "/" {
		t.Errorf("login sent to %s", p.url)
	}

	// The session expires.
	now.Add(int64(2 * time.Hour))
	if p := e.get(t, "/groups"); p.url != "/login" {
		t.Errorf("after the expiry: at %s", p.url)
	}
	login("alice", "s3cret", "/")
	if p := e.post(t, "/logout", url.Values{}); p.url != "/login" {
		t.Errorf("logout led to %s", p.url)
	}
	if p := e.get(t, "/groups"); p.url != "/login" {
		t.Errorf("after logout: at %s", p.url)
	}

	// Five wrong passwords pause the user, even with the right one next.
	for range loginFailures {
		login("alice", "nope", "/")
	}
	if p := login("alice", "s3cret", "/"); p.status != http.StatusTooManyRequests {
		t.Errorf("right password during the pause: %d", p.status)
	}
	now.Add(int64(loginPause + time.Second))
	if p := login("alice", "s3cret", "/"); p.status != http.StatusOK || p.url != "/" {
		t.Errorf("after the pause: %d at %s", p.status, p.url)
	}
}

func TestLoadUsers(t *testing.T) {
	good, _ := hashPassword("pw", minIterations)
	weak, _ := hashPassword("pw", 10)
	cases := []struct {
		lines []string
		want  string
	}{
		{[]string{"alice:" + good, "bob:" + good}, ""},
		{[]string{"# none"}, "no user"},
		{[]string{"alice"}, "name:hash"},
		{[]string{"alice:plain"}, "pbkdf2-sha256$"},
		{[]string{"alice:" + weak}, "iterations"},
		{[]string{"alice:" + good, "alice:" + good}, "again"},
	}
	for _, c := range cases {
		_, err := LoadUsers(usersFile(t, c.lines...))
		if (c.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), c.want)) {
			t.Errorf("%v: %v, want %q", c.lines, err, c.want)
		}
	}
	if _, err := LoadUsers(filepath.Join(t.TempDir(), "none")); err == nil {
		t.Error("a missing file loads")
	}
	if !checkHash(good, "pw") || checkHash(good, "pW") || checkHash("junk", "pw") {
		t.Error("checkHash")
	}
}

func TestSafeNext(t *testing.T) {
	for in, want := range map[string]string{"/topics?q=a": "/topics?q=a", "": "/", "//evil": "/", "https://evil": "/", "/\\evil": "/"} {
		if got := safeNext(in); got != want {
			t.Errorf("safeNext(%q) = %q", in, got)
		}
	}
}
