//go:build unix

// Command roundtripfloor measures the cheapest possible sync send from Go:
// one SEND_MESSAGE_V2 frame encoded once and written again and again, each
// time waiting for and reading the response frame, with no producer,
// routing, ids or pending-call table at all. Its client CPU per round trip
// is a floor for any Go client of the same broker on the same machine
// (docs/perf-producer.md compares both producers with it).
//
//	go run ./cmd/roundtripfloor -broker 127.0.0.1:10911 -duration 10s
//
// The topic is created on the broker by the first send (auto-creation).
package main

import (
	"encoding/binary"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"syscall"
	"time"

	"github.com/go-rocketmq/rocketmq"
	"github.com/go-rocketmq/rocketmq/remoting"
	"github.com/go-rocketmq/rocketmq/remoting/message"
)

func main() {
	broker := flag.String("broker", "127.0.0.1:10911", "broker address")
	topic := flag.String("topic", "rmqbench", "topic")
	size := flag.Int("size", 1024, "body bytes")
	dur := flag.Duration("duration", 10*time.Second, "measured time")
	flag.Parse()
	if err := run(*broker, *topic, *size, *dur); err != nil {
		fmt.Fprintln(os.Stderr, "roundtripfloor:", err)
		os.Exit(1)
	}
}

func run(broker, topic string, size int, dur time.Duration) error {
	props := rocketmq.PropertyWaitStoreMsgOK + string(message.NameValueSeparator) + "true"
	h := &remoting.SendMessageRequestHeader{
		ProducerGroup: "roundtripfloor", Topic: topic, DefaultTopic: rocketmq.TopicAutoCreate,
		DefaultTopicQueueNums: 4, BornTimestamp: time.Now().UnixMilli(), Properties: &props,
	}
	frame, err := remoting.NewRequest(remoting.SendMessageV2, h.V2().AppendExt(nil), make([]byte, size)).AppendFrame(nil)
	if err != nil {
		return err
	}
	c, err := net.Dial("tcp", broker)
	if err != nil {
		return err
	}
	defer c.Close()
	buf := make([]byte, 64<<10)
	roundTrip := func() error {
		if _, err := c.Write(frame); err != nil {
			return err
		}
		if _, err := io.ReadFull(c, buf[:4]); err != nil {
			return err
		}
		n := int(binary.BigEndian.Uint32(buf))
		if n > len(buf) {
			return fmt.Errorf("response of %d bytes", n)
		}
		if _, err := io.ReadFull(c, buf[:n]); err != nil {
			return err
		}
		resp, err := remoting.DecodeCommand(buf[:n])
		if err == nil && resp.Code != remoting.Success {
			err = fmt.Errorf("response code %d: %s", resp.Code, resp.Remark)
		}
		return err
	}
	if err := roundTrip(); err != nil { // creates the topic
		return err
	}
	n := 0
	cpu0, start := cpuTime(), time.Now()
	for time.Since(start) < dur {
		if err := roundTrip(); err != nil {
			return err
		}
		n++
	}
	secs, cpu := time.Since(start).Seconds(), cpuTime()-cpu0
	return json.NewEncoder(os.Stdout).Encode(map[string]any{
		"client": "floor", "msgs": n, "seconds": secs,
		"msgs_per_s":            float64(n) / secs,
		"client_cpu_us_per_msg": float64(cpu.Microseconds()) / float64(n),
	})
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
