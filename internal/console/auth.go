package console

import (
	"bufio"
	"context"
	"crypto/pbkdf2"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Passwords are stored as PBKDF2-HMAC-SHA256 (crypto/pbkdf2 of the
// standard library, so the module needs no new dependency), in a users
// file of lines "name:pbkdf2-sha256$ITERATIONS$SALT$HASH" with the salt and
// hash in unpadded base64. HashPassword writes such a line's hash.
const (
	hashScheme     = "pbkdf2-sha256"
	hashIterations = 600_000 // OWASP's 2023 figure for PBKDF2-HMAC-SHA256
	hashSaltLen    = 16
	hashKeyLen     = 32
	minIterations  = 1_000 // a file with fewer is refused
)

// Login bounds.
const (
	sessionCookie  = "rmq_session"
	maxSessions    = 1024             // the oldest is dropped beyond
	loginFailures  = 5                // wrong passwords in a row before a pause
	loginPause     = 30 * time.Second // the pause
	defaultSession = 12 * time.Hour
	maxUsersFile   = 1 << 20
)

var b64 = base64.RawStdEncoding

// ErrUsersFile is returned by LoadUsers for a file it cannot use.
var ErrUsersFile = errors.New("rocketmq: console users file")

// Users is the console's accounts, loaded by LoadUsers.
type Users struct {
	hashes map[string]string
}

// HashPassword returns the stored form of a password for a users file.
func HashPassword(password string) (string, error) {
	return hashPassword(password, hashIterations)
}

func hashPassword(password string, iter int) (string, error) {
	salt := make([]byte, hashSaltLen)
	rand.Read(salt)
	key, err := pbkdf2.Key(sha256.New, password, salt, iter, hashKeyLen)
	if err != nil {
		return "", err
	}
	return hashScheme + "$" + strconv.Itoa(iter) + "$" + b64.EncodeToString(salt) + "$" + b64.EncodeToString(key), nil
}

// checkHash reports whether password matches a stored hash.
func checkHash(stored, password string) bool {
	iter, salt, want, err := parseHash(stored)
	if err != nil {
		return false
	}
	got, err := pbkdf2.Key(sha256.New, password, salt, iter, len(want))
	return err == nil && subtle.ConstantTimeCompare(got, want) == 1
}

func parseHash(stored string) (iter int, salt, key []byte, err error) {
	parts := strings.Split(stored, "$")
	if len(parts) != 4 || parts[0] != hashScheme {
		return 0, nil, nil, errors.New("not " + hashScheme + "$ITERATIONS$SALT$HASH")
	}
	if iter, err = strconv.Atoi(parts[1]); err != nil || iter < minIterations || iter > 100_000_000 {
		return 0, nil, nil, fmt.Errorf("iterations %q out of range %d..100000000", parts[1], minIterations)
	}
	if salt, err = b64.DecodeString(parts[2]); err != nil || len(salt) < 8 {
		return 0, nil, nil, errors.New("bad salt")
	}
	if key, err = b64.DecodeString(parts[3]); err != nil || len(key) < 16 {
		return 0, nil, nil, errors.New("bad hash")
	}
	return iter, salt, key, nil
}

// LoadUsers reads a users file: one "name:hash" a line, hash as
// HashPassword writes it; blank lines and lines starting with # are
// skipped.
func LoadUsers(path string) (*Users, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrUsersFile, err)
	}
	defer f.Close()
	return parseUsers(io.LimitReader(f, maxUsersFile), path)
}

func parseUsers(r io.Reader, name string) (*Users, error) {
	u := &Users{hashes: map[string]string{}}
	sc := bufio.NewScanner(r)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		user, hash, ok := strings.Cut(line, ":")
		user = strings.TrimSpace(user)
		if !ok || user == "" {
			return nil, fmt.Errorf("%w %s line %d: want name:hash", ErrUsersFile, name, n)
		}
		if _, _, _, err := parseHash(strings.TrimSpace(hash)); err != nil {
			return nil, fmt.Errorf("%w %s line %d: %v", ErrUsersFile, name, n, err)
		}
		if _, dup := u.hashes[user]; dup {
			return nil, fmt.Errorf("%w %s line %d: user %s again", ErrUsersFile, name, n, user)
		}
		u.hashes[user] = strings.TrimSpace(hash)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%w %s: %w", ErrUsersFile, name, err)
	}
	if len(u.hashes) == 0 {
		return nil, fmt.Errorf("%w %s: no user", ErrUsersFile, name)
	}
	return u, nil
}

// sessions are the signed-in browsers, by cookie token.
type sessions struct {
	mu       sync.Mutex
	byToken  map[string]session
	failures map[string]failure // by user name of Users only
}

type session struct {
	user    string
	expires time.Time
}

type failure struct {
	n     int
	until time.Time
}

func newSessions() *sessions {
	return &sessions{byToken: map[string]session{}, failures: map[string]failure{}}
}

func (ss *sessions) add(user string, now time.Time, ttl time.Duration) string {
	var b [32]byte
	rand.Read(b[:])
	tok := hex.EncodeToString(b[:])
	ss.mu.Lock()
	defer ss.mu.Unlock()
	for k, s := range ss.byToken {
		if now.After(s.expires) {
			delete(ss.byToken, k)
		}
	}
	if len(ss.byToken) >= maxSessions {
		var oldest string
		for k, s := range ss.byToken {
			if oldest == "" || s.expires.Before(ss.byToken[oldest].expires) {
				oldest = k
			}
		}
		delete(ss.byToken, oldest)
	}
	ss.byToken[tok] = session{user, now.Add(ttl)}
	return tok
}

func (ss *sessions) user(tok string, now time.Time) string {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	s, ok := ss.byToken[tok]
	if !ok {
		return ""
	}
	if now.After(s.expires) {
		delete(ss.byToken, tok)
		return ""
	}
	return s.user
}

func (ss *sessions) remove(tok string) {
	ss.mu.Lock()
	delete(ss.byToken, tok)
	ss.mu.Unlock()
}

// paused reports whether user has failed too often to try now.
func (ss *sessions) paused(user string, now time.Time) bool {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	return now.Before(ss.failures[user].until)
}

func (ss *sessions) failed(user string, now time.Time) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	f := ss.failures[user]
	f.n++
	if f.n >= loginFailures {
		f = failure{until: now.Add(loginPause)}
	}
	ss.failures[user] = f
}

func (ss *sessions) succeeded(user string) {
	ss.mu.Lock()
	delete(ss.failures, user)
	ss.mu.Unlock()
}

type userKey struct{}

// userOf returns the signed-in user of a request, "" without login.
func userOf(r *http.Request) string {
	u, _ := r.Context().Value(userKey{}).(string)
	return u
}

// noLogin reports whether a path is served without a session.
func noLogin(r *http.Request) bool {
	return r.URL.Path == "/login" || strings.HasPrefix(r.URL.Path, "/static/")
}

// authenticate returns r with its user, or answers it: a page goes to
// the login form, anything else gets 401.
func (s *Server) authenticate(w http.ResponseWriter, r *http.Request) (*http.Request, bool) {
	if s.cfg.Users == nil || noLogin(r) {
		return r, true
	}
	if c, err := r.Cookie(sessionCookie); err == nil {
		if u := s.sessions.user(c.Value, s.now()); u != "" {
			return r.WithContext(context.WithValue(r.Context(), userKey{}, u)), true
		}
	}
	if r.Method == http.MethodGet && !strings.HasPrefix(r.URL.Path, "/api/") {
		http.Redirect(w, r, "/login?next="+url.QueryEscape(r.URL.RequestURI()), http.StatusSeeOther)
		return nil, false
	}
	http.Error(w, "rocketmq: sign in to the console first", http.StatusUnauthorized)
	return nil, false
}

type loginPage struct {
	Next, User string
}

// safeNext keeps a redirect after login on this console.
func safeNext(next string) string {
	if !strings.HasPrefix(next, "/") || strings.HasPrefix(next, "//") || strings.Contains(next, "\\") {
		return "/"
	}
	return next
}

// loginForm is GET /login.
func (s *Server) loginForm(ctx context.Context, r *http.Request, v *view) {
	v.Page = "login"
	v.Data = &loginPage{Next: safeNext(r.URL.Query().Get("next"))}
	if s.cfg.Users == nil {
		v.Notice = v.T("this console has no login")
	}
}

// login is POST /login: user, password, next.
func (s *Server) login(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, maxForm)
	if err := r.ParseForm(); err != nil {
		http.Error(w, "rocketmq: bad form: "+err.Error(), http.StatusBadRequest)
		return
	}
	if !checkCSRF(r) {
		http.Error(w, "rocketmq: missing or wrong CSRF token; reload the page and try again", http.StatusForbidden)
		return
	}
	v := s.newView(w, r)
	v.Page = "login"
	user, next := strings.TrimSpace(r.PostFormValue("user")), safeNext(r.PostFormValue("next"))
	v.Data = &loginPage{Next: next, User: user}
	if s.cfg.Users == nil {
		http.Redirect(w, r, next, http.StatusSeeOther)
		return
	}
	now := s.now()
	hash, known := s.cfg.Users.hashes[user]
	switch {
	case known && s.sessions.paused(user, now):
		v.Error, v.status = v.T("too many wrong passwords: wait 30 seconds"), http.StatusTooManyRequests
	case known && checkHash(hash, r.PostFormValue("password")):
		s.sessions.succeeded(user)
		tok := s.sessions.add(user, now, s.sessionTTL)
		http.SetCookie(w, &http.Cookie{Name: sessionCookie, Value: tok, Path: "/", HttpOnly: true, Secure: r.TLS != nil,
			SameSite: http.SameSiteStrictMode, Expires: now.Add(s.sessionTTL)})
		http.Redirect(w, r, next, http.StatusSeeOther)
		return
	default:
		if known {
			s.sessions.failed(user, now)
		} else {
			// As long as a known user's check, so timing tells nothing.
			checkHash(s.dummyHash, r.PostFormValue("password"))
		}
		v.Error, v.status = v.T("wrong user or password"), http.StatusUnauthorized
	}
	s.render(w, v)
}

// logout is POST /logout.
func (s *Server) logout(ctx context.Context, r *http.Request, v *view) string {
	if c, err := r.Cookie(sessionCookie); err == nil {
		s.sessions.remove(c.Value)
	}
	return "/login"
}

// firstIterations is the iteration count of some user's hash, for the
// check of an unknown user.
func (u *Users) firstIterations() int {
	for _, h := range u.hashes {
		if iter, _, _, err := parseHash(h); err == nil {
			return iter
		}
	}
	return hashIterations
}
