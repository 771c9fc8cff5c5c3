package console

import (
	"cmp"
	"context"
	"encoding/base64"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/go-rocketmq/rocketmq"
	"github.com/go-rocketmq/rocketmq/remoting"
)

// dlqRow is one dead letter of a group.
type dlqRow struct {
	msgRow
	Origin    string // the topic the message was first sent to
	Reconsume int32
}

type dlqPage struct {
	Group, Topic, Begin, End string
	Rows                     []dlqRow
	Limit                    int
	Export                   string // the query of the export links
	Resent                   []resentRow
}

// resentRow is the outcome of resending one dead letter.
type resentRow struct {
	ID, NewID, Err string
}

// originTopic is the topic a dead letter came from: its RETRY_TOPIC (kept
// from its first send-back), or 5.x's DLQ_ORIGIN_TOPIC.
func originTopic(m *rocketmq.MessageExt) string {
	return cmp.Or(m.Property(rocketmq.PropertyRetryTopic), m.Property(rocketmq.PropertyDLQOriginTopic))
}

// deadLetters reads the group's %DLQ% messages stored in [begin, end]; a
// group without a dead-letter topic has none.
func (s *Server) deadLetters(ctx context.Context, g, begin, end string) ([]*rocketmq.MessageExt, error) {
	b, err := parseTime(begin, s.now())
	if err != nil {
		return nil, err
	}
	e, err := parseTime(end, s.now())
	if err != nil {
		return nil, err
	}
	msgs, err := s.cfg.Admin.MessagesByTime(ctx, rocketmq.DLQTopic(g), b, e, maxTimeQuery)
	if errors.Is(err, rocketmq.ErrNoRoute) || errors.Is(err, remoting.ErrTopicNotExist) {
		return nil, nil
	}
	slices.SortFunc(msgs, func(a, b *rocketmq.MessageExt) int { return cmp.Compare(a.StoreTimestamp, b.StoreTimestamp) })
	return msgs, err
}

// dlq is GET /groups/{group}/dlq: the group's dead letters in a time
// range (begin, end; empty: all, up to maxTimeQuery).
func (s *Server) dlq(ctx context.Context, r *http.Request, v *view) {
	v.Page = "dlq"
	g := r.PathValue("group")
	q := r.URL.Query()
	dp, _ := v.Data.(*dlqPage)
	if dp == nil {
		dp = &dlqPage{}
	}
	dp.Group, dp.Topic, dp.Limit = g, rocketmq.DLQTopic(g), maxTimeQuery
	dp.Begin, dp.End = cmp.Or(dp.Begin, q.Get("begin")), cmp.Or(dp.End, q.Get("end"))
	v.Data = dp
	if err := rocketmq.ValidateGroup(g); err != nil {
		s.fail(v, err)
		return
	}
	eq := url.Values{}
	for k, x := range map[string]string{"begin": dp.Begin, "end": dp.End} {
		if x != "" {
			eq.Set(k, x)
		}
	}
	dp.Export = eq.Encode()
	msgs, err := s.deadLetters(ctx, g, dp.Begin, dp.End)
	s.fail(v, err)
	for _, m := range msgs {
		dp.Rows = append(dp.Rows, dlqRow{rowOf(m), originTopic(m), m.ReconsumeTimes})
	}
}

// dlqExport is GET /groups/{group}/dlq/export?format=csv|json: the dead
// letters of the range as a download.
func (s *Server) dlqExport(w http.ResponseWriter, r *http.Request) {
	g := r.PathValue("group")
	q := r.URL.Query()
	format := q.Get("format")
	if format != "csv" && format != "json" {
		http.Error(w, "rocketmq: format must be csv or json", http.StatusBadRequest)
		return
	}
	if err := rocketmq.ValidateGroup(g); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), callTimeout)
	defer cancel()
	msgs, err := s.deadLetters(ctx, g, q.Get("begin"), q.Get("end"))
	if err != nil {
		http.Error(w, err.Error(), statusOf(err))
		return
	}
	type rec struct {
		MsgID          string            `json:"msgId"`
		OffsetMsgID    string            `json:"offsetMsgId"`
		Topic          string            `json:"topic"`
		OriginTopic    string            `json:"originTopic"`
		Tags           string            `json:"tags"`
		Keys           string            `json:"keys"`
		Broker         string            `json:"broker"`
		QueueID        int32             `json:"queueId"`
		QueueOffset    int64             `json:"queueOffset"`
		BornTime       int64             `json:"bornTimestamp"`
		StoreTime      int64             `json:"storeTimestamp"`
		ReconsumeTimes int32             `json:"reconsumeTimes"`
		Properties     map[string]string `json:"properties"`
		Body           string            `json:"body,omitempty"`
		BodyBase64     string            `json:"bodyBase64,omitempty"`
	}
	recs := make([]rec, 0, len(msgs))
	for _, m := range msgs {
		x := rec{m.MsgID, m.OffsetMsgID, m.Topic, originTopic(m), m.Tag(), strings.Join(m.Keys(), " "), m.BrokerName, m.QueueID, m.QueueOffset,
			m.BornTimestamp, m.StoreTimestamp, m.ReconsumeTimes, m.Properties, "", ""}
		if utf8.Valid(m.Body) {
			x.Body = string(m.Body)
		} else {
			x.BodyBase64 = base64.StdEncoding.EncodeToString(m.Body)
		}
		recs = append(recs, x)
	}
	file := strings.NewReplacer("%", "", "/", "_").Replace(rocketmq.DLQTopic(g)) + "." + format
	w.Header().Set("Content-Disposition", `attachment; filename="`+file+`"`)
	if format == "json" {
		w.Header().Set("Content-Type", "application/json")
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		enc.Encode(recs)
		return
	}
	w.Header().Set("Content-Type", "text/csv; charset=utf-8")
	cw := csv.NewWriter(w)
	cw.Write([]string{"msgId", "offsetMsgId", "originTopic", "tags", "keys", "broker", "queueId", "queueOffset",
		"bornTime", "storeTime", "reconsumeTimes", "body", "bodyBase64"})
	for _, x := range recs {
		cw.Write([]string{x.MsgID, x.OffsetMsgID, x.OriginTopic, x.Tags, x.Keys, x.Broker, strconv.Itoa(int(x.QueueID)),
			strconv.FormatInt(x.QueueOffset, 10), fmtMillis(x.BornTime), fmtMillis(x.StoreTime), strconv.Itoa(int(x.ReconsumeTimes)), x.Body, x.BodyBase64})
	}
	cw.Flush()
}

// dropOnResend are the properties of a dead letter a resend does not
// carry over: those the broker or the consumer set on the way.
var dropOnResend = []string{
	rocketmq.PropertyReconsumeTime, rocketmq.PropertyMaxReconsumeTimes, rocketmq.PropertyDelayLevel,
	rocketmq.PropertyRealTopic, rocketmq.PropertyRealQueueID, rocketmq.PropertyMinOffset, rocketmq.PropertyMaxOffset,
	rocketmq.PropertyConsumeStartTimestamp, rocketmq.PropertyDLQOriginTopic, rocketmq.PropertyDLQOriginMessageID,
	rocketmq.PropertyTransactionPrepared, rocketmq.PropertyProducerGroup,
}

// resendDeadLetter sends a copy of m to the group's retry topic with the
// topic it came from in RETRY_TOPIC, as Java's consumer sends a message
// back through its producer when CONSUMER_SEND_MSG_BACK fails: every
// member of the group receives it as a fresh retry (reconsume count 0).
func (s *Server) resendDeadLetter(ctx context.Context, g string, m *rocketmq.MessageExt) (string, error) {
	if s.cfg.Producer == nil {
		return "", badInput("this console has no producer to resend with")
	}
	origin := originTopic(m)
	if origin == "" {
		return "", badInput("message %s has no RETRY_TOPIC property naming its topic", m.MsgID)
	}
	nm := &rocketmq.Message{Topic: rocketmq.RetryTopic(g), Body: m.Body, Flag: m.Flag, Properties: make(map[string]string, len(m.Properties)+1)}
	for k, x := range m.Properties {
		nm.Properties[k] = x
	}
	for _, k := range dropOnResend {
		delete(nm.Properties, k)
	}
	nm.SetProperty(rocketmq.PropertyRetryTopic, origin)
	res, err := s.cfg.Producer.Send(ctx, nm)
	if err != nil {
		return "", err
	}
	return res.MsgID, nil
}

// maxResend bounds the dead letters one resend sends.
const maxResend = maxTimeQuery

// dlqResend is POST /groups/{group}/dlq/resend: the messages of the id
// fields, or with all every dead letter of the begin/end range, are sent
// again to the group; the page lists each outcome.
func (s *Server) dlqResend(ctx context.Context, r *http.Request, v *view) string {
	g := r.PathValue("group")
	dp := &dlqPage{Begin: r.PostFormValue("begin"), End: r.PostFormValue("end")}
	v.Data = dp
	err := rocketmq.ValidateGroup(g)
	var msgs []*rocketmq.MessageExt
	if err == nil {
		if formBool(r, "all") {
			msgs, err = s.deadLetters(ctx, g, dp.Begin, dp.End)
		} else {
			ids := r.PostForm["id"]
			if len(ids) == 0 {
				err = badInput("choose the messages to resend")
			}
			if len(ids) > maxResend {
				err = badInput("more than %d messages chosen", maxResend)
			}
			for _, id := range ids {
				if err != nil {
					break
				}
				var m *rocketmq.MessageExt
				if m, err = s.cfg.Admin.ViewMessage(ctx, rocketmq.DLQTopic(g), strings.TrimSpace(id)); err == nil {
					msgs = append(msgs, m)
				}
			}
		}
	}
	if err == nil && len(msgs) == 0 {
		err = badInput("group %s has no dead letters in that range", g)
	}
	if err == nil {
		failed := 0
		for _, m := range msgs {
			id, err := s.resendDeadLetter(ctx, g, m)
			row := resentRow{ID: m.MsgID, NewID: id}
			if err != nil {
				row.Err = err.Error()
				failed++
			}
			dp.Resent = append(dp.Resent, row)
		}
		v.Notice = fmt.Sprintf(v.T("%d of %d dead letters sent again to %s"), len(msgs)-failed, len(msgs), rocketmq.RetryTopic(g))
	}
	s.dlq(ctx, withPath(r, "group", g), v)
	s.fail(v, err)
	return ""
}
