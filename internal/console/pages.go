package console

import (
	"cmp"
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"maps"
	"net/http"
	"net/url"
	"path"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/go-rocketmq/rocketmq"
	"github.com/go-rocketmq/rocketmq/admin"
	"github.com/go-rocketmq/rocketmq/remoting"
)

// callTimeout bounds the admin calls of one page.
const callTimeout = 10 * time.Second

// pageSize is the rows of the topic and group lists per page.
const pageSize = 100

// maxBodyShown bounds the bytes of a message body a page renders.
const maxBodyShown = 64 << 10

// view is what a page template renders.
type view struct {
	Title  string
	Page   string // template name, also the active nav entry
	CSRF   string
	Error  string
	Notice string
	Data   any
	Lang   string // en or zh
	User   string // the signed-in user when login is on
	status int
	path   string // the request's, for the language switch
	query  string
}

func parseTemplates() (map[string]*template.Template, error) {
	funcs := template.FuncMap{
		"ms":          fmtMillis,
		"inputTime":   inputTime,
		"pathEscape":  url.PathEscape,
		"queryEscape": url.QueryEscape,
	}
	names, err := fs.Glob(assets, "assets/*.html")
	if err != nil {
		return nil, err
	}
	out := make(map[string]*template.Template)
	for _, n := range names {
		base := path.Base(n)
		if base == "layout.html" {
			continue
		}
		t, err := template.New("layout.html").Funcs(funcs).ParseFS(assets, "assets/layout.html", n)
		if err != nil {
			return nil, err
		}
		out[strings.TrimSuffix(base, ".html")] = t
	}
	return out, nil
}

func fmtMillis(ms int64) string {
	if ms <= 0 {
		return "-"
	}
	return time.UnixMilli(ms).Format("2006-01-02 15:04:05.000")
}

// page wraps a page handler: it sets the CSRF cookie, runs fn and renders
// the template fn chose.
func (s *Server) page(fn func(ctx context.Context, r *http.Request, v *view)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		v := s.newView(w, r)
		ctx, cancel := context.WithTimeout(r.Context(), callTimeout)
		defer cancel()
		fn(ctx, r, v)
		s.render(w, v)
	}
}

// newView starts a page's view: CSRF cookie, language, user.
func (s *Server) newView(w http.ResponseWriter, r *http.Request) *view {
	q := r.URL.Query()
	q.Del("lang")
	v := &view{Title: s.cfg.Title, CSRF: s.csrfToken(w, r), Lang: chooseLang(w, r), path: r.URL.Path, query: q.Encode()}
	if r.Method != http.MethodGet {
		v.query = ""
	}
	v.User = userOf(r)
	return v
}

func (s *Server) render(w http.ResponseWriter, v *view) {
	t := s.tmpl[v.Page]
	if t == nil {
		http.Error(w, "rocketmq: no page "+v.Page, http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	if v.status != 0 {
		w.WriteHeader(v.status)
	}
	if err := t.Execute(w, v); err != nil {
		s.log.Warn("console: render", "page", v.Page, "err", err)
	}
}

// fail records err for div#error with the status it deserves.
func (s *Server) fail(v *view, err error) {
	if err == nil {
		return
	}
	s.log.Info("console: admin call failed", "page", v.Page, "err", err)
	msg := err.Error()
	if refused(err) {
		msg = "NO_PERMISSION: the console's ACL account may not do this: " + msg
	}
	if v.Error != "" {
		v.Error += "\n"
	}
	v.Error += msg
	if v.status == 0 {
		v.status = statusOf(err)
	}
}

// refused reports an ACL refusal: NO_PERMISSION, or the SYSTEM_ERROR
// carrying Java's AclException that a 4.x broker answers.
func refused(err error) bool {
	return errors.Is(err, remoting.ErrNoPermission) || errors.Is(err, remoting.ErrACL)
}

func statusOf(err error) int {
	switch {
	case refused(err):
		return http.StatusForbidden
	case errors.Is(err, rocketmq.ErrBlankName), errors.Is(err, rocketmq.ErrNameTooLong), errors.Is(err, rocketmq.ErrIllegalName), errors.Is(err, rocketmq.ErrSystemTopic), errors.Is(err, errBadInput):
		return http.StatusBadRequest
	case errors.Is(err, rocketmq.ErrNoRoute), errors.Is(err, remoting.ErrTopicNotExist), errors.Is(err, remoting.ErrSubscriptionGroupNotExist), errors.Is(err, remoting.ErrQueryNotFound):
		return http.StatusNotFound
	}
	return http.StatusBadGateway
}

var errBadInput = errors.New("rocketmq: bad input")

func badInput(format string, a ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{errBadInput}, a...)...)
}

// ---- cluster ----

type brokerRow struct {
	Cluster, Name, Addr, Version string
	ID                           int64
	PutTPS, GetTPS               float64
	DiskRatio                    string
	PutToday, GetToday           string
	Err                          string
	// MaxOffset is the commit-log max offset; Lag, on a slave's row, how
	// many bytes it is behind its master ("" unknown).
	MaxOffset int64
	Lag       string
}

func (s *Server) cluster(ctx context.Context, r *http.Request, v *view) {
	v.Page = "cluster"
	rows, err := s.brokerRows(ctx)
	s.fail(v, err)
	var put, get float64
	for _, b := range rows {
		if b.ID == remoting.MasterID {
			put += b.PutTPS
			get += b.GetTPS
		}
	}
	v.Data = struct {
		Brokers        []brokerRow
		PutTPS, GetTPS float64
		Chart          template.HTML
	}{rows, put, get, tpsChart(s.hist.get("tps"))}
}

// brokerRows reads the cluster and every broker's runtime info at once.
func (s *Server) brokerRows(ctx context.Context) ([]brokerRow, error) {
	ci, err := s.cfg.Admin.ClusterInfo(ctx)
	if err != nil {
		return nil, err
	}
	var rows []brokerRow
	for c, names := range ci.ClusterAddrTable {
		for _, n := range names {
			bd := ci.BrokerAddrTable[n]
			for id, addr := range bd.BrokerAddrs {
				rows = append(rows, brokerRow{Cluster: c, Name: n, ID: id, Addr: addr})
			}
		}
	}
	slices.SortFunc(rows, func(a, b brokerRow) int {
		return cmp.Or(cmp.Compare(a.Cluster, b.Cluster), cmp.Compare(a.Name, b.Name), cmp.Compare(a.ID, b.ID))
	})
	var wg sync.WaitGroup
	for i := range rows {
		wg.Add(1)
		go func() {
			defer wg.Done()
			b := &rows[i]
			kv, err := s.cfg.Admin.BrokerRuntimeInfo(ctx, b.Addr)
			if err != nil {
				b.Err = err.Error()
				return
			}
			b.Version = kv["brokerVersionDesc"]
			if b.Version == "" {
				b.Version = kv["brokerVersion"]
			}
			b.PutTPS = firstFloat(kv["putTps"])
			b.GetTPS = firstFloat(kv["getTransferedTps"])
			if r, err := strconv.ParseFloat(kv["commitLogDiskRatio"], 64); err == nil {
				b.DiskRatio = strconv.FormatFloat(r*100, 'f', 1, 64) + "%"
			}
			b.PutToday = kv["msgPutTotalTodayNow"]
			b.GetToday = kv["msgGetTotalTodayNow"]
			if n, err := strconv.ParseInt(kv["commitLogMaxOffset"], 10, 64); err == nil {
				b.MaxOffset = n
			}
		}()
	}
	wg.Wait()
	replicationLag(rows)
	return rows, nil
}

// replicationLag fills each slave row's Lag: its master's commit-log max
// offset minus its own, both read in the same round.
func replicationLag(rows []brokerRow) {
	masters := map[[2]string]int64{}
	for i := range rows {
		if rows[i].ID == remoting.MasterID && rows[i].Err == "" {
			masters[[2]string{rows[i].Cluster, rows[i].Name}] = rows[i].MaxOffset
		}
	}
	for i := range rows {
		b := &rows[i]
		m, ok := masters[[2]string{b.Cluster, b.Name}]
		if b.ID != remoting.MasterID && ok && b.Err == "" {
			b.Lag = strconv.FormatInt(max(m-b.MaxOffset, 0), 10) + " B"
		}
	}
}

// firstFloat reads the first of Java's "10s 1min 10min" TPS figures
// (BrokerController getTransferedTps/putTps: three space-separated
// numbers).
func firstFloat(s string) float64 {
	f, _, _ := strings.Cut(strings.TrimSpace(s), " ")
	x, _ := strconv.ParseFloat(f, 64)
	return x
}

// ---- topics ----

type listPage struct {
	Filter             string
	Kind               string // the chosen kind tab
	Kinds              []kindTab
	Sort, Dir          string
	Page, Pages, Total int
	Prev, Next         string
	Names              []string
	Rows               []listRow
	Clusters           []string
	From, To           int
	StatsNote          string
}

// kindTab is one filter of a list: the topics or groups of one kind.
type kindTab struct {
	Kind, Label, URL string
	Count            int
}

// listRow is one topic or group of a list.
type listRow struct {
	Name, Kind string
	Lag        int64
	TPS        float64
	Stats      bool // Lag and TPS were read
	Err        string
}

// paginate returns page of the names of all containing filter (case
// folded); extra is kept in the page links.
func paginate(all []string, filter string, page int, base string, extra ...string) listPage {
	var names []string
	if filter == "" {
		names = all
	} else {
		f := strings.ToLower(filter)
		for _, n := range all {
			if strings.Contains(strings.ToLower(n), f) {
				names = append(names, n)
			}
		}
	}
	lp := listPage{Filter: filter, Total: len(names), Pages: max(1, (len(names)+pageSize-1)/pageSize)}
	lp.Page = min(max(page, 1), lp.Pages)
	from := (lp.Page - 1) * pageSize
	to := min(from+pageSize, len(names))
	lp.Names = names[from:to]
	lp.From, lp.To = from+1, to
	q := url.Values{}
	if filter != "" {
		q.Set("q", filter)
	}
	for i := 0; i+1 < len(extra); i += 2 {
		if extra[i+1] != "" {
			q.Set(extra[i], extra[i+1])
		}
	}
	if lp.Page > 1 {
		q.Set("page", strconv.Itoa(lp.Page-1))
		lp.Prev = base + "?" + q.Encode()
	}
	if lp.Page < lp.Pages {
		q.Set("page", strconv.Itoa(lp.Page+1))
		lp.Next = base + "?" + q.Encode()
	}
	return lp
}

// byKind splits names by kind and returns those of want ("" for all) and
// the tabs with their counts, linking to base with the filter q; the tab
// of kind deflt links without a kind.
func byKind(all []string, kindOf func(string) string, want, base, q, deflt string, tabs [][2]string) ([]string, []kindTab) {
	counts := map[string]int{}
	var out []string
	for _, n := range all {
		k := kindOf(n)
		counts[k]++
		counts[""]++
		if want == "" || k == want {
			out = append(out, n)
		}
	}
	var kt []kindTab
	for _, t := range tabs {
		u := url.Values{}
		if t[0] != deflt {
			u.Set("kind", t[0])
		}
		if q != "" {
			u.Set("q", q)
		}
		link := base
		if len(u) > 0 {
			link += "?" + u.Encode()
		}
		kt = append(kt, kindTab{Kind: t[0], Label: t[1], URL: link, Count: counts[t[0]]})
	}
	return out, kt
}

// topicKind is "retry", "dlq", "system" or "normal".
func topicKind(t string, clusters []string) string {
	switch {
	case rocketmq.IsRetryTopic(t):
		return "retry"
	case rocketmq.IsDLQTopic(t):
		return "dlq"
	case rocketmq.IsSystemTopic(t) || slices.Contains(clusters, t):
		return "system"
	}
	return "normal"
}

// systemGroups are the groups Java's brokers and tools use (MixAll).
var systemGroups = map[string]bool{
	"TOOLS_CONSUMER": true, "SCHEDULE_CONSUMER": true, "FILTERSRV_CONSUMER": true, "__MONITOR_CONSUMER": true,
	"SELF_TEST_C_GROUP": true, "SELF_TEST_P_GROUP": true, "CID_ONS-HTTP-PROXY": true,
	"CID_ONSAPI_PERMISSION": true, "CID_ONSAPI_OWNER": true, "CID_ONSAPI_PULL": true,
	"DEFAULT_CONSUMER": true, "CLIENT_INNER_PRODUCER": true,
}

// groupKind is "system" or "user".
func groupKind(g string) string {
	if systemGroups[g] || rocketmq.IsSysConsumerGroup(g) {
		return "system"
	}
	return "user"
}

func pageNum(r *http.Request) int {
	n, _ := strconv.Atoi(r.URL.Query().Get("page"))
	return n
}

func (s *Server) topics(ctx context.Context, r *http.Request, v *view) {
	v.Page = "topics"
	q := r.URL.Query()
	all, err := s.cache.topics(ctx, s.cfg.Admin)
	s.fail(v, err)
	clusters, _ := s.cache.clusters(ctx, s.cfg.Admin)
	kind := q.Get("kind")
	kindOf := func(t string) string { return topicKind(t, clusters) }
	names, tabs := byKind(all, kindOf, kind, "/topics", q.Get("q"), "",
		[][2]string{{"", "All"}, {"normal", "Normal"}, {"retry", "Retry"}, {"dlq", "Dead letter"}, {"system", "System"}})
	lp := paginate(names, q.Get("q"), pageNum(r), "/topics", "kind", kind)
	lp.Kind, lp.Kinds, lp.Clusters = kind, tabs, clusters
	for _, n := range lp.Names {
		lp.Rows = append(lp.Rows, listRow{Name: n, Kind: kindOf(n)})
	}
	v.Data = lp
}

type queueRow struct {
	Key         string
	Broker      string
	QueueID     int
	Min, Max    int64
	LastUpdated string
}

type topicPage struct {
	Topic     string
	CanSend   bool
	Send      sendForm
	Sent      *rocketmq.SendResult
	Queues    []queueRow
	Total     int64
	Brokers   []remoting.QueueData
	Order     bool
	Consumers []string
	Clusters  []string
}

func (s *Server) topic(ctx context.Context, r *http.Request, v *view) {
	v.Page = "topic"
	t := r.PathValue("topic")
	tp := topicPage{Topic: t, CanSend: s.cfg.Producer != nil}
	if old, ok := v.Data.(*topicPage); ok {
		tp.Send, tp.Sent = old.Send, old.Sent // a send's form and result
	}
	v.Data = &tp
	if err := rocketmq.ValidateTopic(t); err != nil {
		s.fail(v, err)
		return
	}
	var wg sync.WaitGroup
	var stats map[rocketmq.MessageQueue]remoting.TopicOffset
	var route *remoting.TopicRouteData
	var errStats, errRoute, errCons error
	wg.Add(3)
	go func() { defer wg.Done(); stats, errStats = s.cfg.Admin.TopicStats(ctx, t) }()
	go func() { defer wg.Done(); route, errRoute = s.cfg.Admin.TopicRoute(ctx, t) }()
	go func() { defer wg.Done(); tp.Consumers, errCons = s.cfg.Admin.TopicConsumers(ctx, t) }()
	wg.Wait()
	s.fail(v, errStats)
	if errStats == nil {
		s.fail(v, errRoute)
		s.fail(v, errCons)
	}
	for _, mq := range admin.SortedQueues(stats) {
		o := stats[mq]
		tp.Queues = append(tp.Queues, queueRow{
			Key: mq.BrokerName + "/" + strconv.Itoa(mq.QueueID), Broker: mq.BrokerName, QueueID: mq.QueueID,
			Min: o.MinOffset, Max: o.MaxOffset, LastUpdated: fmtMillis(o.LastUpdateTimestamp),
		})
		tp.Total += o.MaxOffset - o.MinOffset
	}
	if route != nil {
		tp.Brokers = route.QueueDatas
		tp.Order = route.OrderTopicConf != ""
	}
	tp.Clusters, _ = s.cache.clusters(ctx, s.cfg.Admin)
}

// ---- groups ----

// maxSortedGroups bounds the groups whose lag and TPS are read to sort a
// list by them; a longer list sorts each page.
const maxSortedGroups = 500

func (s *Server) groups(ctx context.Context, r *http.Request, v *view) {
	v.Page = "groups"
	q := r.URL.Query()
	all, err := s.cache.groups(ctx, s.cfg.Admin)
	s.fail(v, err)
	kind := q.Get("kind")
	if kind == "" {
		kind = "user"
	}
	if kind == "all" {
		kind = ""
	}
	names, tabs := byKind(all, groupKind, kind, "/groups", q.Get("q"), "user",
		[][2]string{{"user", "Consumer groups"}, {"system", "System groups"}})
	sortBy, dir := q.Get("sort"), q.Get("dir")
	if sortBy != "lag" && sortBy != "tps" {
		sortBy = "name"
	}
	if dir != "asc" && dir != "desc" {
		dir = "asc"
		if sortBy != "name" {
			dir = "desc"
		}
	}
	kindParam := q.Get("kind")
	cmpRows := func(a, b listRow) int {
		c := 0
		switch sortBy {
		case "lag":
			c = cmp.Compare(a.Lag, b.Lag)
		case "tps":
			c = cmp.Compare(a.TPS, b.TPS)
		}
		if dir == "desc" {
			c = -c
		}
		return cmp.Or(c, cmp.Compare(a.Name, b.Name))
	}
	var lp listPage
	if sortBy != "name" && len(names) <= maxSortedGroups {
		// Read every group's stats, sort, then page.
		filtered := paginateAll(names, q.Get("q"))
		rows := s.groupStats(ctx, filtered)
		slices.SortFunc(rows, cmpRows)
		sorted := make([]string, len(rows))
		for i, x := range rows {
			sorted[i] = x.Name
		}
		lp = paginate(sorted, "", pageNum(r), "/groups", "q", q.Get("q"), "kind", kindParam, "sort", sortBy, "dir", dir)
		lp.Filter = q.Get("q")
		lp.Rows = rows[lp.From-1 : lp.To]
	} else {
		lp = paginate(names, q.Get("q"), pageNum(r), "/groups", "kind", kindParam, "sort", sortBy, "dir", dir)
		lp.Rows = s.groupStats(ctx, lp.Names)
		slices.SortFunc(lp.Rows, cmpRows)
		if sortBy != "name" {
			lp.StatsNote = fmt.Sprintf("more than %d groups: each page is sorted on its own", maxSortedGroups)
		}
	}
	lp.Kind, lp.Kinds, lp.Sort, lp.Dir = kind, tabs, sortBy, dir
	lp.Clusters, _ = s.cache.clusters(ctx, s.cfg.Admin)
	v.Data = lp
}

// paginateAll returns the names containing filter.
func paginateAll(all []string, filter string) []string {
	f := strings.ToLower(filter)
	var out []string
	for _, n := range all {
		if strings.Contains(strings.ToLower(n), f) {
			out = append(out, n)
		}
	}
	return out
}

// groupStatsParallel bounds the ConsumeStats calls of a group list.
const groupStatsParallel = 8

// groupStats reads each group's lag and consume TPS, in parallel.
func (s *Server) groupStats(ctx context.Context, names []string) []listRow {
	rows := make([]listRow, len(names))
	sem := make(chan struct{}, groupStatsParallel)
	var wg sync.WaitGroup
	for i, n := range names {
		rows[i] = listRow{Name: n, Kind: groupKind(n)}
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			cs, err := s.cfg.Admin.ConsumeStats(ctx, n, "")
			if err != nil {
				rows[i].Err = err.Error()
				return
			}
			rows[i].Lag, rows[i].TPS, rows[i].Stats = cs.Lag(), cs.ConsumeTPS, true
		}()
	}
	wg.Wait()
	return rows
}

// SortURL links the group list sorted by col, flipping the direction
// when it is the current sort.
func (lp listPage) SortURL(col string) string {
	u := url.Values{}
	if lp.Filter != "" {
		u.Set("q", lp.Filter)
	}
	if lp.Kind != "user" {
		k := lp.Kind
		if k == "" {
			k = "all"
		}
		u.Set("kind", k)
	}
	u.Set("sort", col)
	dir := "asc"
	if col != "name" {
		dir = "desc"
	}
	if lp.Sort == col {
		dir = map[string]string{"asc": "desc", "desc": "asc"}[lp.Dir]
	}
	u.Set("dir", dir)
	return "/groups?" + u.Encode()
}

// SortMark is the arrow of the column the list is sorted by.
func (lp listPage) SortMark(col string) string {
	if lp.Sort != col {
		return ""
	}
	if lp.Dir == "asc" {
		return " ▲"
	}
	return " ▼"
}

type lagRow struct {
	Key            string `json:"key"` // topic@broker/queue, the row's data-queue
	Topic          string `json:"topic"`
	Broker         string `json:"broker"`
	QueueID        int    `json:"queueId"`
	BrokerOffset   int64  `json:"brokerOffset"`
	ConsumerOffset int64  `json:"consumerOffset"`
	Lag            int64  `json:"lag"`
	LastTimestamp  int64  `json:"lastTimestamp"`
}

type lagJSON struct {
	Group      string        `json:"group"`
	Total      int64         `json:"total"`
	ConsumeTPS float64       `json:"consumeTps"`
	Queues     []lagRow      `json:"queues"`
	History    [][2]int64    `json:"history"`
	Chart      template.HTML `json:"chart"`
}

func (s *Server) lag(ctx context.Context, group string) (*lagJSON, error) {
	cs, err := s.cfg.Admin.ConsumeStats(ctx, group, "")
	if err != nil {
		return nil, err
	}
	out := &lagJSON{Group: group, ConsumeTPS: cs.ConsumeTPS, Queues: []lagRow{}}
	for _, mq := range admin.SortedQueues(cs.Queues) {
		w := cs.Queues[mq]
		lag := max(w.BrokerOffset-w.ConsumerOffset, 0)
		out.Queues = append(out.Queues, lagRow{
			Key: mq.Topic + "@" + mq.BrokerName + "/" + strconv.Itoa(mq.QueueID), Topic: mq.Topic, Broker: mq.BrokerName, QueueID: mq.QueueID,
			BrokerOffset: w.BrokerOffset, ConsumerOffset: w.ConsumerOffset,
			Lag: lag, LastTimestamp: w.LastTimestamp,
		})
		out.Total += lag
	}
	out.History = s.hist.add("lag:"+group, s.now(), out.Total)
	out.Chart = lagChart(out.History)
	return out, nil
}

type groupPage struct {
	Group    string
	Configs  []brokerGroupConfig // per master broker
	Config   admin.GroupConfig   // what the settings form starts from
	Clusters []string
	Missing  bool // no broker knows the group: the page shows only the error
	Lag      *lagJSON
	Members  []remoting.Connection
	Mode     string
	Model    string
	Subs     []remoting.SubscriptionData
	Topics   []string
	Offline  string
}

func (s *Server) group(ctx context.Context, r *http.Request, v *view) {
	v.Page = "group"
	g := r.PathValue("group")
	gp := &groupPage{Group: g, Lag: &lagJSON{Chart: lagChart(nil)}}
	v.Data = gp
	if err := rocketmq.ValidateGroup(g); err != nil {
		s.fail(v, err)
		return
	}
	var wg sync.WaitGroup
	var lag *lagJSON
	var cc *remoting.ConsumerConnection
	var errLag, errCC, errKnown error
	var known bool
	wg.Add(4)
	go func() {
		defer wg.Done()
		gp.Configs = s.groupConfigs(ctx, g)
		gp.Clusters, _ = s.cache.clusters(ctx, s.cfg.Admin)
	}()
	go func() { defer wg.Done(); lag, errLag = s.lag(ctx, g) }()
	go func() { defer wg.Done(); cc, errCC = s.cfg.Admin.ConsumerConnection(ctx, g) }()
	go func() { defer wg.Done(); known, errKnown = s.groupKnown(ctx, g) }()
	wg.Wait()
	if errKnown == nil && !known && errCC != nil && (lag == nil || len(lag.Queues) == 0) {
		gp.Missing = true
		s.fail(v, errNoGroup(g))
		return
	}
	gp.Config = admin.NewGroupConfig(g)
	for _, c := range gp.Configs {
		if c.Has {
			gp.Config = c.Config
			break
		}
	}
	if r.URL.Query().Get("saved") != "" {
		v.Notice = v.T("saved the group's settings")
	}
	if r.URL.Query().Get("skipped") != "" {
		v.Notice = v.T("skipped the accumulated messages: the offsets are at the end of each queue")
	}
	s.fail(v, errLag)
	if lag != nil {
		gp.Lag = lag
		seen := map[string]bool{}
		for _, q := range lag.Queues {
			if !seen[q.Topic] {
				seen[q.Topic] = true
				gp.Topics = append(gp.Topics, q.Topic)
			}
		}
	}
	switch {
	case errors.Is(errCC, remoting.ErrConsumerNotOnline):
		gp.Offline = v.T("no live member")
	case errCC != nil:
		s.fail(v, errCC)
	default:
		gp.Members = slices.SortedFunc(slices.Values(cc.ConnectionSet), func(a, b remoting.Connection) int { return cmp.Compare(a.ClientID, b.ClientID) })
		gp.Mode, gp.Model = cc.ConsumeType, cc.MessageModel
		for _, t := range slices.Sorted(maps.Keys(cc.SubscriptionTable)) {
			gp.Subs = append(gp.Subs, cc.SubscriptionTable[t])
			if !slices.Contains(gp.Topics, t) {
				gp.Topics = append(gp.Topics, t)
			}
		}
	}
	// The reset form offers the first topic: a group's own topics before
	// its retry topic, which a user rarely means to reset.
	slices.SortStableFunc(gp.Topics, func(a, b string) int {
		return cmp.Compare(retryRank(a), retryRank(b))
	})
}

// groupKnown reports whether a master broker has g's subscription group
// config; a name missing from the cached list is looked up again, since
// another client may have just created it.
func (s *Server) groupKnown(ctx context.Context, g string) (bool, error) {
	all, err := s.cache.groups(ctx, s.cfg.Admin)
	if err == nil && slices.Contains(all, g) {
		return true, nil
	}
	s.cache.drop("groups")
	all, err = s.cache.groups(ctx, s.cfg.Admin)
	return slices.Contains(all, g), err
}

// brokerGroupConfig is a group's config on one master broker.
type brokerGroupConfig struct {
	Broker, Addr string
	Has          bool
	Config       admin.GroupConfig
	Err          string
}

// groupConfigs reads g's subscription group config from every master.
func (s *Server) groupConfigs(ctx context.Context, g string) []brokerGroupConfig {
	ci, err := s.cfg.Admin.ClusterInfo(ctx)
	if err != nil {
		return nil
	}
	var out []brokerGroupConfig
	for name, bd := range ci.BrokerAddrTable {
		if a := bd.MasterAddr(); a != "" {
			out = append(out, brokerGroupConfig{Broker: name, Addr: a})
		}
	}
	slices.SortFunc(out, func(a, b brokerGroupConfig) int { return cmp.Compare(a.Broker, b.Broker) })
	var wg sync.WaitGroup
	for i := range out {
		wg.Add(1)
		go func() {
			defer wg.Done()
			gs, err := s.cfg.Admin.Groups(ctx, out[i].Addr)
			if err != nil {
				out[i].Err = err.Error()
				return
			}
			out[i].Config, out[i].Has = gs[g]
		}()
	}
	wg.Wait()
	return out
}

func errNoGroup(g string) error {
	return &remoting.Error{Code: remoting.SubscriptionGroupNotExist, Remark: "consumer group " + g + " does not exist"}
}

func retryRank(topic string) int {
	if strings.HasPrefix(topic, "%RETRY%") || strings.HasPrefix(topic, "%DLQ%") {
		return 1
	}
	return 0
}

// ---- messages ----

type msgRow struct {
	ID, OffsetID, Topic, Tags, Keys, Broker string
	QueueID                                 int32
	QueueOffset                             int64
	Stored                                  string
	Size                                    int
}

type messagesPage struct {
	Kind, Topic, Key, ID, Begin, End string
	Rows                             []msgRow
	Searched                         bool
	Limit                            int
}

// maxTimeQuery bounds the messages a time-range query returns.
const maxTimeQuery = 200

func rowOf(m *rocketmq.MessageExt) msgRow {
	return msgRow{ID: m.MsgID, OffsetID: m.OffsetMsgID, Topic: m.Topic, Tags: m.Tag(), Keys: strings.Join(m.Keys(), " "),
		Broker: m.BrokerName, QueueID: m.QueueID, QueueOffset: m.QueueOffset, Stored: fmtMillis(m.StoreTimestamp), Size: len(m.Body)}
}

func (s *Server) messages(ctx context.Context, r *http.Request, v *view) {
	v.Page = "messages"
	q := r.URL.Query()
	mp := &messagesPage{Kind: q.Get("by"), Topic: strings.TrimSpace(q.Get("topic")), Key: q.Get("key"), ID: strings.TrimSpace(q.Get("id")),
		Begin: q.Get("begin"), End: q.Get("end"), Limit: maxTimeQuery}
	v.Data = mp
	if mp.Kind == "" {
		return
	}
	mp.Searched = true
	if err := rocketmq.ValidateTopic(mp.Topic); err != nil {
		s.fail(v, err)
		return
	}
	var msgs []*rocketmq.MessageExt
	var err error
	switch mp.Kind {
	case "key":
		msgs, err = s.cfg.Admin.QueryMessage(ctx, mp.Topic, mp.Key, admin.DefaultQueryMaxNum, time.Time{}, time.Time{})
	case "id":
		var m *rocketmq.MessageExt
		m, err = s.cfg.Admin.ViewMessage(ctx, mp.Topic, mp.ID)
		if m != nil {
			msgs = append(msgs, m)
		}
	case "time":
		var b, e time.Time
		if b, err = parseTime(mp.Begin, s.now()); err == nil {
			if e, err = parseTime(mp.End, s.now()); err == nil {
				if e.IsZero() {
					e = s.now()
				}
				msgs, err = s.cfg.Admin.MessagesByTime(ctx, mp.Topic, b, e, maxTimeQuery)
			}
		}
	default:
		err = badInput("unknown query %q", mp.Kind)
	}
	if errors.Is(err, remoting.ErrQueryNotFound) {
		err = nil
	}
	s.fail(v, err)
	slices.SortFunc(msgs, func(a, b *rocketmq.MessageExt) int { return cmp.Compare(a.StoreTimestamp, b.StoreTimestamp) })
	for _, m := range msgs {
		mp.Rows = append(mp.Rows, rowOf(m))
	}
}

// timeLayouts are the local times parseTime reads: a datetime-local
// input's value (seconds optional) and the same written with a space.
var timeLayouts = []string{"2006-01-02T15:04:05", "2006-01-02T15:04", "2006-01-02 15:04:05", "2006-01-02 15:04"}

// parseTime reads a local time of timeLayouts, or unix milliseconds; ""
// is the zero time.
func parseTime(s string, _ time.Time) (time.Time, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return time.Time{}, nil
	}
	if ms, err := strconv.ParseInt(s, 10, 64); err == nil {
		return time.UnixMilli(ms), nil
	}
	for _, layout := range timeLayouts {
		if t, err := time.ParseInLocation(layout, s, time.Local); err == nil {
			return t, nil
		}
	}
	return time.Time{}, badInput("time %q is neither a local time like 2026-12-07 14:30:00 nor unix milliseconds", s)
}

// inputTime is s as a datetime-local input's value, so that a time typed
// as unix milliseconds is shown again rather than dropped by the browser.
func inputTime(s string) string {
	t, err := parseTime(s, time.Time{})
	if err != nil || t.IsZero() {
		return s
	}
	return t.Format("2006-01-02T15:04:05")
}

type kv struct{ K, V string }

type viewPage struct {
	Topic, ID string
	Msg       msgRow
	Born      string
	BornHost  string
	StoreHost string
	Reconsume int32
	Props     []kv
	Text      string
	JSON      string
	Hex       string
	Format    string
	Truncated bool
	Tracks    []admin.MessageTrack
	TrackErr  string
	Groups    []string
}

func (s *Server) messageView(ctx context.Context, r *http.Request, v *view) {
	v.Page = "message"
	q := r.URL.Query()
	vp := &viewPage{Topic: q.Get("topic"), ID: q.Get("id"), Format: q.Get("format")}
	v.Data = vp
	if vp.Format != "json" && vp.Format != "hex" {
		vp.Format = "text"
	}
	if err := rocketmq.ValidateTopic(vp.Topic); err != nil {
		s.fail(v, err)
		return
	}
	m, err := s.cfg.Admin.ViewMessage(ctx, vp.Topic, vp.ID)
	if err != nil {
		s.fail(v, err)
		return
	}
	vp.Msg = rowOf(m)
	vp.Born = fmtMillis(m.BornTimestamp)
	vp.BornHost, vp.StoreHost = m.BornHost.String(), m.StoreHost.String()
	vp.Reconsume = m.ReconsumeTimes
	for _, k := range slices.Sorted(maps.Keys(m.Properties)) {
		vp.Props = append(vp.Props, kv{k, m.Properties[k]})
	}
	body := m.Body
	if len(body) > maxBodyShown {
		body, vp.Truncated = body[:maxBodyShown], true
	}
	vp.Text = strings.ToValidUTF8(string(body), "\uFFFD")
	vp.Hex = hex.Dump(body)
	if utf8.Valid(body) && json.Valid(body) {
		var b strings.Builder
		var x any
		if json.Unmarshal(body, &x) == nil {
			if out, err := json.MarshalIndent(x, "", "  "); err == nil {
				b.Write(out)
			}
		}
		vp.JSON = b.String()
	} else {
		vp.JSON = "(not JSON)"
	}
	tracks, err := s.cfg.Admin.MessageTrack(ctx, m)
	if err != nil {
		vp.TrackErr = err.Error()
	}
	vp.Tracks = tracks
	for _, t := range tracks {
		vp.Groups = append(vp.Groups, t.Group)
	}
}

// Body returns the body in the chosen format.
func (vp *viewPage) Body() string {
	switch vp.Format {
	case "json":
		return vp.JSON
	case "hex":
		return vp.Hex
	}
	return vp.Text
}

// ---- producers ----

type producersPage struct {
	Group, Topic string
	Conns        []remoting.Connection
	Searched     bool
}

func (s *Server) producers(ctx context.Context, r *http.Request, v *view) {
	v.Page = "producers"
	q := r.URL.Query()
	pp := &producersPage{Group: strings.TrimSpace(q.Get("group")), Topic: strings.TrimSpace(q.Get("topic"))}
	v.Data = pp
	if pp.Group == "" && pp.Topic == "" {
		return
	}
	pp.Searched = true
	if err := rocketmq.ValidateGroup(pp.Group); err != nil {
		s.fail(v, err)
		return
	}
	if err := rocketmq.ValidateTopic(pp.Topic); err != nil {
		s.fail(v, err)
		return
	}
	conns, err := s.cfg.Admin.ProducerConnection(ctx, pp.Group, pp.Topic)
	if errors.Is(err, remoting.ErrSystemError) {
		// The broker answers SYSTEM_ERROR for a group without producers.
		v.Notice = fmt.Sprintf(v.T("no live producer in group %s"), pp.Group)
		err = nil
	}
	s.fail(v, err)
	pp.Conns = slices.SortedFunc(slices.Values(conns), func(a, b remoting.Connection) int { return cmp.Compare(a.ClientID, b.ClientID) })
}
