package main

import (
	"context"
	"errors"
	"fmt"

	rmq "github.com/apache/rocketmq-client-go/v2"
	"github.com/apache/rocketmq-client-go/v2/primitive"
	"github.com/apache/rocketmq-client-go/v2/producer"
	"github.com/apache/rocketmq-client-go/v2/rlog"

	"github.com/go-rocketmq/rocketmq"
	ourproducer "github.com/go-rocketmq/rocketmq/producer"
)

// Transaction mode (-mode tx): each operation is one transaction with a
// local transaction that does nothing and commits: the half message sent
// synchronously, the listener called, END_TRANSACTION sent (oneway in
// both clients, as in Java). Its driver is the client's transactional
// producer; SendSync(ctx, 1) runs one transaction, which also serves the
// warm-up.

// txGroup is the producer group of the transactional producers.
const txGroup = "rmqbench_tx_producer"

var txDrivers = map[string]func(context.Context, driverConfig) (driver, error){
	clientOfficial: newOfficialTxDriver,
	clientOurs:     newOursTxDriver,
}

var errTxOnly = errors.New("transaction mode sends transactions only")

// txOnly provides the driver methods transaction mode does not use.
type txOnly struct{}

func (txOnly) SendAsync(context.Context, func(error)) error { return errTxOnly }
func (txOnly) SendOneway(context.Context) error             { return errTxOnly }
func (txOnly) Consume(context.Context, string, consumeSink) (func() error, error) {
	return nil, errTxOnly
}

// officialCommit is the official client's listener: commit at once. The
// broker never checks a committed transaction, so CheckLocalTransaction
// only answers a lost END_TRANSACTION.
type officialCommit struct{}

func (officialCommit) ExecuteLocalTransaction(*primitive.Message) primitive.LocalTransactionState {
	return primitive.CommitMessageState
}

func (officialCommit) CheckLocalTransaction(*primitive.MessageExt) primitive.LocalTransactionState {
	return primitive.CommitMessageState
}

type officialTxDriver struct {
	txOnly
	msgs *officialDriver // builds the messages
	p    rmq.TransactionProducer
}

func newOfficialTxDriver(ctx context.Context, cfg driverConfig) (driver, error) {
	if !cfg.verbose {
		rlog.SetLogLevel("error")
	}
	p, err := rmq.NewTransactionProducer(officialCommit{},
		producer.WithNsResolver(primitive.NewPassthroughResolver(cfg.namesrv)),
		producer.WithGroupName(txGroup),
		producer.WithInstanceName("rmqbench_tx_"+cfg.runID),
		producer.WithRetry(2),
	)
	if err != nil {
		return nil, fmt.Errorf("official transaction producer: %w", err)
	}
	if err := p.Start(); err != nil {
		return nil, fmt.Errorf("official transaction producer start: %w", err)
	}
	return &officialTxDriver{msgs: &officialDriver{cfg: cfg, body: makeBody(cfg.size)}, p: p}, nil
}

func (d *officialTxDriver) SendSync(ctx context.Context, n int) error {
	if n != 1 {
		return errTxOnly
	}
	res, err := d.p.SendMessageInTransaction(ctx, d.msgs.message())
	if err != nil {
		return err
	}
	if res.Status != primitive.SendOK || res.State != primitive.CommitMessageState {
		return fmt.Errorf("transaction: send status %d, local state %d", res.Status, res.State)
	}
	return nil
}

func (d *officialTxDriver) Close() error { return d.p.Shutdown() }

// oursCommit is our listener: commit at once.
type oursCommit struct{}

func (oursCommit) ExecuteLocal(context.Context, *rocketmq.Message, any) ourproducer.LocalState {
	return ourproducer.LocalCommit
}

func (oursCommit) CheckLocal(context.Context, *rocketmq.MessageExt) ourproducer.LocalState {
	return ourproducer.LocalCommit
}

type oursTxDriver struct {
	txOnly
	msgs *oursDriver // builds the messages
	p    *ourproducer.TransactionProducer
}

func newOursTxDriver(ctx context.Context, cfg driverConfig) (driver, error) {
	p, err := ourproducer.NewTransactional(oursCommit{},
		ourproducer.WithGroup(txGroup),
		ourproducer.WithNameServers(cfg.namesrv...),
		ourproducer.WithInstanceName("rmqbench_tx_"+cfg.runID),
	)
	if err != nil {
		return nil, fmt.Errorf("our transactional producer: %w", err)
	}
	if err := p.Start(ctx); err != nil {
		return nil, fmt.Errorf("our transactional producer start: %w", err)
	}
	return &oursTxDriver{msgs: &oursDriver{cfg: cfg, body: makeBody(cfg.size)}, p: p}, nil
}

func (d *oursTxDriver) SendSync(ctx context.Context, n int) error {
	if n != 1 {
		return errTxOnly
	}
	m, err := d.msgs.message()
	if err != nil {
		return err
	}
	res, err := d.p.SendInTransaction(ctx, m, nil)
	if err != nil {
		return err
	}
	if res.Status != rocketmq.SendOK || res.State != ourproducer.LocalCommit {
		return fmt.Errorf("transaction: send status %d, local state %v", res.Status, res.State)
	}
	return nil
}

func (d *oursTxDriver) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), closeTimeout)
	defer cancel()
	return d.p.Shutdown(ctx)
}
