// Package console serves a web console for a RocketMQ cluster: cluster,
// topics, consumer groups, messages and producers, read and changed only
// through the public admin client, so it works the same against
// rocketmq-local and a real 4.x/5.x cluster.
package console

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"embed"
	"encoding/hex"
	"errors"
	"html/template"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"time"

	"github.com/go-rocketmq/rocketmq/admin"
	"github.com/go-rocketmq/rocketmq/producer"
)

//go:embed assets
var assets embed.FS

// ErrRemote is returned by Listen for an address that is not loopback
// when remote access is not allowed.
var ErrRemote = errors.New("rocketmq: console address is not loopback; set Config.AllowRemote to serve it")

// Config configures a console.
type Config struct {
	// Admin is the started admin client every page reads through. The
	// console never closes it.
	Admin *admin.Admin
	// Logger receives failed admin calls; nil logs nothing.
	Logger *slog.Logger
	// Title is shown in every page's header ("RocketMQ" when empty).
	Title string
	// Producer, when set, sends the messages of the topic pages' send form;
	// without it the form says the console cannot send. The console never
	// shuts it down.
	Producer *producer.Producer
	// TraceTopic is the topic the trace page reads message traces from
	// (RMQ_SYS_TRACE_TOPIC when empty), as the producers' and consumers'
	// WithTrace option names it; the page can ask another.
	TraceTopic string
	// DashboardSample is how often the dashboard counts each topic's
	// messages while it is open (one TopicStats call per topic); 1 minute
	// when zero.
	DashboardSample time.Duration
	// Users, when set, turns login on: every page but the login form
	// needs a session, got with a user and password of Users. Off, the
	// console relies on being reachable from loopback only.
	Users *Users
	// SessionTTL is how long a login lasts; 12 hours when zero.
	SessionTTL time.Duration
	// AllowRemote serves requests from, and listening on, addresses other
	// than loopback. Off, a request whose peer or Host is not loopback is
	// refused with 403.
	AllowRemote bool
}

// csrfCookie is the double-submit token's cookie; forms carry the same
// value in a field named csrf.
const csrfCookie = "rmq_csrf"

// Server is the console's http.Handler.
type Server struct {
	cfg   Config
	log   *slog.Logger
	mux   *http.ServeMux
	tmpl  map[string]*template.Template
	cache *cache
	hist  *history
	dash  *dashboard
	now   func() time.Time

	sampleEvery time.Duration
	sessions    *sessions
	sessionTTL  time.Duration
	dummyHash   string // checked for an unknown user
}

// New returns a console serving cfg.Admin.
func New(cfg Config) (*Server, error) {
	if cfg.Admin == nil {
		return nil, errors.New("rocketmq: console needs an admin client")
	}
	if cfg.Title == "" {
		cfg.Title = "RocketMQ"
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	tmpl, err := parseTemplates()
	if err != nil {
		return nil, err
	}
	s := &Server{cfg: cfg, log: log, tmpl: tmpl, cache: newCache(), hist: newHistory(), dash: &dashboard{}, now: time.Now,
		sampleEvery: cfg.DashboardSample}
	if s.sampleEvery <= 0 {
		s.sampleEvery = time.Minute
	}
	s.sessions, s.sessionTTL = newSessions(), cfg.SessionTTL
	if s.sessionTTL <= 0 {
		s.sessionTTL = defaultSession
	}
	if cfg.Users != nil {
		if s.dummyHash, err = hashPassword("", cfg.Users.firstIterations()); err != nil {
			return nil, err
		}
	}
	s.routes()
	return s, nil
}

func (s *Server) routes() {
	m := http.NewServeMux()
	m.HandleFunc("GET /{$}", s.page(s.cluster))
	m.HandleFunc("GET /topics", s.page(s.topics))
	m.HandleFunc("GET /topics/{topic}", s.page(s.topic))
	m.HandleFunc("GET /groups", s.page(s.groups))
	m.HandleFunc("GET /groups/{group}", s.page(s.group))
	m.HandleFunc("GET /messages", s.page(s.messages))
	m.HandleFunc("GET /messages/view", s.page(s.messageView))
	m.HandleFunc("GET /producers", s.page(s.producers))
	m.HandleFunc("GET /trace", s.page(s.traceView))
	m.HandleFunc("GET /dashboard", s.page(s.dashboardPage))
	m.HandleFunc("GET /api/dashboard", s.apiDashboard)
	m.HandleFunc("GET /api/stats", s.apiStats)
	m.HandleFunc("GET /api/groups/{group}/lag", s.apiLag)
	m.HandleFunc("POST /topics", s.action(s.createTopic))
	m.HandleFunc("POST /topics/{topic}/delete", s.action(s.deleteTopic))
	m.HandleFunc("POST /topics/{topic}/send", s.action(s.sendMessage))
	m.HandleFunc("POST /groups", s.action(s.createGroup))
	m.HandleFunc("POST /groups/{group}/delete", s.action(s.deleteGroup))
	m.HandleFunc("POST /groups/{group}/reset", s.action(s.resetOffset))
	m.HandleFunc("POST /groups/{group}/skip", s.action(s.skipAccumulated))
	m.HandleFunc("POST /groups/{group}/config", s.action(s.updateGroupConfig))
	m.HandleFunc("GET /groups/{group}/dlq", s.page(s.dlq))
	m.HandleFunc("GET /groups/{group}/dlq/export", s.dlqExport)
	m.HandleFunc("POST /groups/{group}/dlq/resend", s.action(s.dlqResend))
	m.HandleFunc("POST /messages/resend", s.action(s.resend))
	m.HandleFunc("GET /login", s.page(s.loginForm))
	m.HandleFunc("POST /login", s.login)
	m.HandleFunc("POST /logout", s.action(s.logout))
	m.HandleFunc("GET /static/console.js", s.static("assets/console.js", "text/javascript; charset=utf-8"))
	m.HandleFunc("GET /static/console.css", s.static("assets/console.css", "text/css; charset=utf-8"))
	s.mux = m
}

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !s.cfg.AllowRemote && (!loopbackPeer(r.RemoteAddr) || !loopbackHost(r.Host)) {
		http.Error(w, "rocketmq: the console serves loopback only", http.StatusForbidden)
		return
	}
	h := w.Header()
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; frame-ancestors 'none'; form-action 'self'")
	h.Set("Cache-Control", "no-store")
	r, ok := s.authenticate(w, r)
	if !ok {
		return
	}
	s.mux.ServeHTTP(w, r)
}

// loopbackPeer reports whether a request's peer address is loopback.
func loopbackPeer(remote string) bool {
	ap, err := netip.ParseAddrPort(remote)
	if err != nil {
		// httptest and some listeners give a bare host.
		a, err := netip.ParseAddr(remote)
		return err == nil && a.Unmap().IsLoopback()
	}
	return ap.Addr().Unmap().IsLoopback()
}

// loopbackHost reports whether a Host header names a loopback host, so a
// page of another site cannot reach the console through DNS rebinding.
func loopbackHost(host string) bool {
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	if strings.EqualFold(host, "localhost") {
		return true
	}
	a, err := netip.ParseAddr(host)
	return err == nil && a.Unmap().IsLoopback()
}

// Listen listens on addr, refusing an address that is not loopback unless
// allowRemote. A host name other than localhost counts as not loopback.
func Listen(addr string, allowRemote bool) (net.Listener, error) {
	if !allowRemote {
		host, _, err := net.SplitHostPort(addr)
		if err != nil {
			return nil, errors.New("rocketmq: console address " + addr + ": " + err.Error())
		}
		if !loopbackHost(host) {
			return nil, ErrRemote
		}
	}
	return net.Listen("tcp", addr)
}

// ListenAndServe serves h on addr until ctx is done, then shuts the server
// down within 5 seconds. An address that is not loopback is refused unless
// h is a *Server whose Config.AllowRemote is set.
func ListenAndServe(ctx context.Context, addr string, h http.Handler) error {
	s, _ := h.(*Server)
	ln, err := Listen(addr, s != nil && s.cfg.AllowRemote)
	if err != nil {
		return err
	}
	return Serve(ctx, ln, h)
}

// Serve serves h on ln until ctx is done; it closes ln.
func Serve(ctx context.Context, ln net.Listener, h http.Handler) error {
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: time.Minute, MaxHeaderBytes: 64 << 10}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		srv.Close()
	}
	<-done
	return nil
}

// csrfToken returns the request's token, minting one when it has none,
// and sets the cookie.
func (s *Server) csrfToken(w http.ResponseWriter, r *http.Request) string {
	tok := ""
	if c, err := r.Cookie(csrfCookie); err == nil && validToken(c.Value) {
		tok = c.Value
	} else {
		var b [16]byte
		rand.Read(b[:])
		tok = hex.EncodeToString(b[:])
	}
	http.SetCookie(w, &http.Cookie{Name: csrfCookie, Value: tok, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode})
	return tok
}

func validToken(v string) bool {
	if len(v) != 32 {
		return false
	}
	_, err := hex.DecodeString(v)
	return err == nil
}

// checkCSRF reports whether a POST carries the cookie's token in its csrf
// field.
func checkCSRF(r *http.Request) bool {
	c, err := r.Cookie(csrfCookie)
	if err != nil || !validToken(c.Value) {
		return false
	}
	f := r.PostFormValue("csrf")
	return subtle.ConstantTimeCompare([]byte(f), []byte(c.Value)) == 1
}

func (s *Server) static(name, ctype string) http.HandlerFunc {
	b, err := assets.ReadFile(name)
	if err != nil {
		panic(err) // embedded at build time
	}
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", ctype)
		w.Write(b)
	}
}
