package console

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/go-rocketmq/rocketmq"
	"github.com/go-rocketmq/rocketmq/admin"
	"github.com/go-rocketmq/rocketmq/producer"
	"github.com/go-rocketmq/rocketmq/remoting"
)

// maxForm bounds the body of a POST.
const maxForm = 64 << 10

// action wraps a mutating handler: POST only (the mux sees to that), a
// valid CSRF token, a bounded form. fn returns where to redirect, or
// fills v to render a page.
func (s *Server) action(fn func(ctx context.Context, r *http.Request, v *view) string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
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
		ctx, cancel := context.WithTimeout(r.Context(), callTimeout)
		defer cancel()
		if to := fn(ctx, r, v); to != "" && v.Error == "" {
			http.Redirect(w, r, to, http.StatusSeeOther)
			return
		}
		s.render(w, v)
	}
}

func (s *Server) clusterOf(ctx context.Context, r *http.Request) (string, error) {
	if c := strings.TrimSpace(r.PostFormValue("cluster")); c != "" {
		return c, nil
	}
	cs, err := s.cache.clusters(ctx, s.cfg.Admin)
	if err != nil {
		return "", err
	}
	if len(cs) != 1 {
		return "", badInput("choose a cluster")
	}
	return cs[0], nil
}

func formInt(r *http.Request, name string, def int) (int, error) {
	v := strings.TrimSpace(r.PostFormValue(name))
	if v == "" {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		return 0, badInput("%s %q is not a number", name, v)
	}
	return n, nil
}

func formBool(r *http.Request, name string) bool {
	switch strings.ToLower(r.PostFormValue(name)) {
	case "on", "true", "1", "yes":
		return true
	}
	return false
}

// createTopic is POST /topics: create or update a topic on every master
// of a cluster.
func (s *Server) createTopic(ctx context.Context, r *http.Request, v *view) string {
	t := strings.TrimSpace(r.PostFormValue("topic"))
	err := func() error {
		if err := rocketmq.ValidateTopic(t); err != nil {
			return err
		}
		queues, err := formInt(r, "queues", 8)
		if err != nil {
			return err
		}
		if queues < 1 || queues > 1024 {
			return badInput("queues %d out of range 1..1024", queues)
		}
		perm, err := formInt(r, "perm", int(rocketmq.PermRead|rocketmq.PermWrite))
		if err != nil {
			return err
		}
		if perm&^int(rocketmq.PermRead|rocketmq.PermWrite|rocketmq.PermInherit) != 0 || perm&int(rocketmq.PermRead|rocketmq.PermWrite) == 0 {
			return badInput("perm %d is not a combination of 2 (write), 4 (read) and 1 (inherit)", perm)
		}
		c, err := s.clusterOf(ctx, r)
		if err != nil {
			return err
		}
		tc := admin.TopicConfig{Name: t, ReadQueues: int32(queues), WriteQueues: int32(queues), Perm: int32(perm), Order: formBool(r, "order")}
		if err := s.cfg.Admin.CreateTopicInCluster(ctx, c, tc); err != nil {
			return err
		}
		s.awaitRoute(ctx, t)
		return nil
	}()
	s.cache.invalidate()
	if err != nil {
		s.topics(ctx, &http.Request{URL: &url.URL{}}, v)
		v.Error, v.status = "", 0
		s.fail(v, err)
		return ""
	}
	return "/topics/" + url.PathEscape(t)
}

// awaitRoute waits up to routeWait for the NameServer to serve a route of
// topic: a broker registers a new topic after answering the create, and
// the topic page the create leads to reads the route.
func (s *Server) awaitRoute(ctx context.Context, topic string) {
	ctx, cancel := context.WithTimeout(ctx, routeWait)
	defer cancel()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		if r, err := s.cfg.Admin.TopicRoute(ctx, topic); err == nil && len(r.QueueDatas) > 0 {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// routeWait bounds awaitRoute.
const routeWait = 5 * time.Second

func (s *Server) deleteTopic(ctx context.Context, r *http.Request, v *view) string {
	t := r.PathValue("topic")
	err := rocketmq.ValidateTopic(t)
	if err == nil {
		var c string
		if c, err = s.clusterOf(ctx, r); err == nil {
			err = s.cfg.Admin.DeleteTopic(ctx, c, t)
		}
	}
	s.cache.invalidate()
	if err != nil {
		s.topic(ctx, withPath(r, "topic", t), v)
		v.Error, v.status = "", 0
		s.fail(v, err)
		return ""
	}
	return "/topics?deleted=" + url.QueryEscape(t)
}

func (s *Server) createGroup(ctx context.Context, r *http.Request, v *view) string {
	g := strings.TrimSpace(r.PostFormValue("group"))
	err := rocketmq.ValidateGroup(g)
	if err == nil {
		var c string
		if c, err = s.clusterOf(ctx, r); err == nil {
			err = s.cfg.Admin.CreateGroupInCluster(ctx, c, admin.NewGroupConfig(g))
		}
	}
	s.cache.invalidate()
	if err != nil {
		s.groups(ctx, &http.Request{URL: &url.URL{}}, v)
		v.Error, v.status = "", 0
		s.fail(v, err)
		return ""
	}
	return "/groups/" + url.PathEscape(g)
}

func (s *Server) deleteGroup(ctx context.Context, r *http.Request, v *view) string {
	g := r.PathValue("group")
	err := rocketmq.ValidateGroup(g)
	if err == nil {
		var c string
		if c, err = s.clusterOf(ctx, r); err == nil {
			err = s.cfg.Admin.DeleteGroupInCluster(ctx, c, g, true)
		}
	}
	s.cache.invalidate()
	if err != nil {
		s.group(ctx, withPath(r, "group", g), v)
		v.Error, v.status = "", 0
		s.fail(v, err)
		return ""
	}
	return "/groups?deleted=" + url.QueryEscape(g)
}

// resetOffset is POST /groups/{group}/reset: topic, time (local
// "2006-01-02T15:04:05" or unix ms; empty: the end of each queue), force.
func (s *Server) resetOffset(ctx context.Context, r *http.Request, v *view) string {
	g := r.PathValue("group")
	t := strings.TrimSpace(r.PostFormValue("topic"))
	err := rocketmq.ValidateGroup(g)
	if err == nil {
		err = rocketmq.ValidateTopic(t)
	}
	var at time.Time
	if err == nil {
		at, err = parseTime(r.PostFormValue("time"), s.now())
	}
	if err == nil {
		_, err = s.cfg.Admin.ResetOffsetByTime(ctx, g, t, at, formBool(r, "force"))
	}
	if err != nil {
		s.group(ctx, withPath(r, "group", g), v)
		v.Error, v.status = "", 0
		s.fail(v, err)
		return ""
	}
	return "/groups/" + url.PathEscape(g)
}

// skipAccumulated is POST /groups/{group}/skip: the committed offsets of
// every topic the group has offsets on, its retry topic included, move to
// the end of each queue (rocketmq-dashboard's "skip accumulate").
func (s *Server) skipAccumulated(ctx context.Context, r *http.Request, v *view) string {
	g := r.PathValue("group")
	err := rocketmq.ValidateGroup(g)
	var cs *admin.ConsumeStats
	if err == nil {
		cs, err = s.cfg.Admin.ConsumeStats(ctx, g, "")
	}
	if err == nil {
		topics := map[string]bool{}
		for mq := range cs.Queues {
			topics[mq.Topic] = true
		}
		if len(topics) == 0 {
			err = badInput("group %s has no committed offsets to skip from", g)
		}
		for t := range topics {
			if _, err = s.cfg.Admin.ResetOffsetByTime(ctx, g, t, time.Time{}, true); err != nil {
				break
			}
		}
	}
	if err != nil {
		s.group(ctx, withPath(r, "group", g), v)
		v.Error, v.status = "", 0
		s.fail(v, err)
		return ""
	}
	return "/groups/" + url.PathEscape(g) + "?skipped=1"
}

// updateGroupConfig is POST /groups/{group}/config: the subscription group
// settings updateSubGroup sets (consume enable, from min, broadcast, retry
// queues, retry max times, broker id, which broker when slow, notify on
// changes), written to every master of a cluster. Settings the form does
// not show keep the values the first broker has.
func (s *Server) updateGroupConfig(ctx context.Context, r *http.Request, v *view) string {
	g := r.PathValue("group")
	err := func() error {
		if err := rocketmq.ValidateGroup(g); err != nil {
			return err
		}
		gc := admin.NewGroupConfig(g)
		for _, c := range s.groupConfigs(ctx, g) {
			if c.Has {
				gc = c.Config
				break
			}
		}
		gc.GroupName = g
		gc.ConsumeEnable = formBool(r, "consumeEnable")
		gc.ConsumeFromMinEnable = formBool(r, "consumeFromMinEnable")
		gc.ConsumeBroadcastEnable = formBool(r, "consumeBroadcastEnable")
		gc.NotifyConsumerIdsChangedEnable = formBool(r, "notifyConsumerIdsChangedEnable")
		for _, f := range []struct {
			name     string
			dst      *int32
			min, max int
		}{
			{"retryQueueNums", &gc.RetryQueueNums, 0, 64},
			{"retryMaxTimes", &gc.RetryMaxTimes, -1, 1000},
		} {
			n, err := formInt(r, f.name, int(*f.dst))
			if err != nil {
				return err
			}
			if n < f.min || n > f.max {
				return badInput("%s %d out of range %d..%d", f.name, n, f.min, f.max)
			}
			*f.dst = int32(n)
		}
		for _, f := range []struct {
			name string
			dst  *int64
		}{{"brokerId", &gc.BrokerID}, {"whichBrokerWhenConsumeSlowly", &gc.WhichBrokerWhenConsumeSlowly}} {
			n, err := formInt(r, f.name, int(*f.dst))
			if err != nil {
				return err
			}
			if n < 0 || n > 1024 {
				return badInput("%s %d out of range 0..1024", f.name, n)
			}
			*f.dst = int64(n)
		}
		c, err := s.clusterOf(ctx, r)
		if err != nil {
			return err
		}
		return s.cfg.Admin.CreateGroupInCluster(ctx, c, gc)
	}()
	s.cache.invalidate()
	if err != nil {
		s.group(ctx, withPath(r, "group", g), v)
		v.Error, v.status = "", 0
		s.fail(v, err)
		return ""
	}
	return "/groups/" + url.PathEscape(g) + "?saved=1"
}

type resendPage struct {
	Topic, ID, Group, Client string
	Result                   *remoting.ConsumeMessageDirectlyResult
}

// resend is POST /messages/resend: have one member of a group consume a
// message again (CONSUME_MESSAGE_DIRECTLY through the broker).
func (s *Server) resend(ctx context.Context, r *http.Request, v *view) string {
	v.Page = "resend"
	rp := &resendPage{Topic: strings.TrimSpace(r.PostFormValue("topic")), ID: strings.TrimSpace(r.PostFormValue("id")),
		Group: strings.TrimSpace(r.PostFormValue("group")), Client: strings.TrimSpace(r.PostFormValue("client"))}
	v.Data = rp
	err := rocketmq.ValidateTopic(rp.Topic)
	if err == nil {
		err = rocketmq.ValidateGroup(rp.Group)
	}
	if err == nil && rp.Client == "" {
		err = badInput("choose a client of group %s", rp.Group)
	}
	if err == nil {
		rp.Result, err = s.cfg.Admin.ConsumeMessageDirectly(ctx, rp.Group, rp.Client, rp.Topic, rp.ID)
	}
	s.fail(v, err)
	return ""
}

func withPath(r *http.Request, name, value string) *http.Request {
	r2 := r.Clone(r.Context())
	r2.URL = &url.URL{Path: r.URL.Path}
	r2.SetPathValue(name, value)
	return r2
}

// sendForm is what the topic page's send form held.
type sendForm struct {
	Tag, Keys, Props, Body string
}

// maxProps bounds the user properties of a sent message.
const maxProps = 64

// sendMessage is POST /topics/{topic}/send: tag, keys (space-separated),
// properties (one name=value a line) and body, sent through
// Config.Producer; the topic page shows the result.
func (s *Server) sendMessage(ctx context.Context, r *http.Request, v *view) string {
	t := r.PathValue("topic")
	f := sendForm{Tag: strings.TrimSpace(r.PostFormValue("tag")), Keys: r.PostFormValue("keys"),
		Props: r.PostFormValue("props"), Body: r.PostFormValue("body")}
	var res *rocketmq.SendResult
	err := func() error {
		if err := rocketmq.ValidateTopic(t); err != nil {
			return err
		}
		if s.cfg.Producer == nil {
			return badInput("this console has no producer to send with")
		}
		opts := []producer.MessageOption{}
		if f.Tag != "" {
			opts = append(opts, producer.Tag(f.Tag))
		}
		if k := strings.Fields(f.Keys); len(k) > 0 {
			opts = append(opts, producer.Keys(k...))
		}
		n := 0
		for line := range strings.Lines(f.Props) {
			line = strings.TrimSpace(line)
			if line == "" {
				continue
			}
			k, val, ok := strings.Cut(line, "=")
			if !ok || strings.TrimSpace(k) == "" {
				return badInput("property %q is not name=value", line)
			}
			if n++; n > maxProps {
				return badInput("more than %d properties", maxProps)
			}
			opts = append(opts, producer.Property(strings.TrimSpace(k), strings.TrimSpace(val)))
		}
		m, err := producer.NewMessage(t, []byte(f.Body), opts...)
		if err != nil {
			return fmt.Errorf("%w: %w", errBadInput, err)
		}
		res, err = s.cfg.Producer.Send(ctx, m)
		return err
	}()
	v.Data = &topicPage{Send: f, Sent: res}
	s.topic(ctx, withPath(r, "topic", t), v)
	if err != nil {
		v.Error, v.status = "", 0
		s.fail(v, err)
	} else {
		v.Notice = fmt.Sprintf(v.T("sent %s"), res.MsgID)
	}
	return ""
}
