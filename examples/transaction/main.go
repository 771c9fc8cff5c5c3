// Command transaction sends messages in transactions: one committed, one
// rolled back, and one whose local outcome is not known when it ends, which
// the broker later asks about (a check-back, 6 s to about a minute after the
// half message on a broker with default settings).
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"sync"
	"time"

	"github.com/go-rocketmq/rocketmq"
	"github.com/go-rocketmq/rocketmq/producer"
)

// orders stands for the application's database: the outcome of each local
// transaction, by transaction id, which is what a check-back asks about.
type orders struct {
	mu      sync.Mutex
	state   map[string]producer.LocalState
	checked chan string
}

// ExecuteLocal runs the local transaction; arg is what SendInTransaction got.
func (o *orders) ExecuteLocal(_ context.Context, msg *rocketmq.Message, arg any) producer.LocalState {
	outcome := arg.(producer.LocalState)
	o.mu.Lock()
	defer o.mu.Unlock()
	// Committed later, after this call has returned "unknown".
	if outcome == producer.LocalUnknown {
		o.state[msg.UniqKey()] = producer.LocalCommit
	} else {
		o.state[msg.UniqKey()] = outcome
	}
	return outcome
}

// CheckLocal answers the broker for a transaction it has no decision for.
func (o *orders) CheckLocal(_ context.Context, msg *rocketmq.MessageExt) producer.LocalState {
	o.mu.Lock()
	s, ok := o.state[msg.TransactionID()]
	o.mu.Unlock()
	if !ok {
		return producer.LocalUnknown // not ours to decide yet: the broker asks again
	}
	fmt.Printf("check-back for %s: %s\n", msg.TransactionID(), s)
	select {
	case o.checked <- msg.TransactionID():
	default:
	}
	return s
}

func main() {
	namesrv := flag.String("namesrv", "127.0.0.1:9876", "NameServer address(es), ';' separated")
	wait := flag.Duration("wait", 90*time.Second, "how long to wait for the broker's check-back")
	flag.Parse()

	ctx := context.Background()
	l := &orders{state: map[string]producer.LocalState{}, checked: make(chan string, 1)}
	p, err := producer.NewTransactional(l, producer.WithGroup("example_transaction"), producer.WithNameServers(*namesrv))
	check(err)
	check(p.Start(ctx))
	defer p.Shutdown(ctx)

	for _, outcome := range []producer.LocalState{producer.LocalCommit, producer.LocalRollback, producer.LocalUnknown} {
		msg, err := producer.NewMessage("TopicTest", []byte("order "+outcome.String()), producer.Tag("TagTx"))
		check(err)
		res, err := p.SendInTransaction(ctx, msg, outcome)
		check(err) // the half message was not stored; nothing ran
		fmt.Printf("transaction %s: half stored at %s/%d offset %d, local state %s\n",
			res.TransactionID, res.Queue.BrokerName, res.Queue.QueueID, res.QueueOffset, res.State)
	}

	select {
	case id := <-l.checked:
		fmt.Printf("%s committed after the check-back\n", id)
	case <-time.After(*wait):
		fmt.Println("no check-back yet; the broker keeps asking the group's producers")
	}
}

func check(err error) {
	if err != nil {
		log.Fatal(err)
	}
}
