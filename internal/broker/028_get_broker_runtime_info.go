package broker

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/go-rocketmq/rocketmq/internal/server"
	"github.com/go-rocketmq/rocketmq/remoting"
	"github.com/go-rocketmq/rocketmq/remoting/message"
)

// handleGetBrokerRuntimeInfo serves GET_BROKER_RUNTIME_INFO (28): a KVTable
// with the keys 4.9.8's BrokerController and DefaultMessageStore report, so
// that the Java admin tool (clusterList, brokerStatus) can parse every value
// it reads. Thread-pool figures are constants: this broker has no pools.
func (b *Broker) handleGetBrokerRuntimeInfo(context.Context, *server.Conn, *remoting.Command) *remoting.Command {
	return jsonResponse(&remoting.KVTable{Table: b.runtimeInfo(time.Now())})
}

func (b *Broker) runtimeInfo(now time.Time) map[string]string {
	s := b.stats
	put, get := s.put.Load(), s.get.Load()
	putY, putT, getY, getT := s.dayTotals()
	i64 := func(v int64) string { return strconv.FormatInt(v, 10) }
	ratio := b.store.DiskRatio()
	ws := b.store.WriteStatus()
	total, free := diskSpace(b.cfg.StoreDir)
	putTimes := put
	avg := 0.0
	if putTimes > 0 {
		avg = float64(s.putSize.Load()) / float64(putTimes)
	}
	m := map[string]string{
		"brokerVersionDesc": "V5_0_0",
		"brokerVersion":     strconv.Itoa(brokerVersion),

		"msgPutTotalYesterdayMorning": i64(putY),
		"msgPutTotalTodayMorning":     i64(putT),
		"msgPutTotalTodayNow":         i64(put),
		"msgGetTotalYesterdayMorning": i64(getY),
		"msgGetTotalTodayMorning":     i64(getT),
		"msgGetTotalTodayNow":         i64(get),

		"putTps":           s.tps(now, put, func(x statsSample) int64 { return x.put }),
		"getTransferedTps": s.tps(now, get, func(x statsSample) int64 { return x.get }),
		"getFoundTps":      s.tps(now, get, func(x statsSample) int64 { return x.get }),
		"getMissTps":       "0.00 0.00 0.00",
		"getTotalTps":      s.tps(now, get, func(x statsSample) int64 { return x.get }),

		"putMessageTimesTotal":     i64(putTimes),
		"putMessageSizeTotal":      i64(s.putSize.Load()),
		"putMessageAverageSize":    strconv.FormatFloat(avg, 'f', -1, 64),
		"putMessageEntireTimeMax":  "0",
		"getMessageEntireTimeMax":  "0",
		"putMessageDistributeTime": "[<=0ms]:0 [0~10ms]:0 [10~50ms]:0 [50~100ms]:0 [100~200ms]:0 [200~500ms]:0 [500ms~1s]:0 [1~2s]:0 [2~3s]:0 [3~4s]:0 [4~5s]:0 [5~10s]:0 [10s~]:0 ",
		"dispatchMaxBuffer":        "0",

		"bootTimestamp": i64(s.boot.UnixMilli()),
		"runtime":       javaRuntimeString(now.Sub(s.boot)),

		"commitLogMinOffset":       i64(b.store.CommitLogMinOffset()),
		"commitLogMaxOffset":       i64(b.store.CommitLogMaxOffset()),
		"commitLogDiskRatio":       strconv.FormatFloat(ratio, 'f', -1, 64),
		"consumeQueueDiskRatio":    strconv.FormatFloat(ratio, 'f', -1, 64),
		"earliestMessageTimeStamp": i64(b.earliestMessageTime()),
		"commitLogDirCapacity":     fmt.Sprintf("Total : %s, Free : %s.", javaByteCount(total), javaByteCount(free)),
		"remainHowManyDataToFlush": javaByteCount(0),

		"sendThreadPoolQueueSize":               "0",
		"sendThreadPoolQueueCapacity":           "10000",
		"pullThreadPoolQueueSize":               "0",
		"pullThreadPoolQueueCapacity":           "100000",
		"queryThreadPoolQueueSize":              "0",
		"queryThreadPoolQueueCapacity":          "20000",
		"sendThreadPoolQueueHeadWaitTimeMills":  "0",
		"pullThreadPoolQueueHeadWaitTimeMills":  "0",
		"queryThreadPoolQueueHeadWaitTimeMills": "0",
		"dispatchBehindBytes":                   "0",
		"pageCacheLockTimeMills":                "0",
		"startAcceptSendRequestTimeStamp":       "0",
		"remainTransientStoreBufferNumbs":       strconv.Itoa(math.MaxInt32),

		// Not Java's: whether the store accepts sends (RunningFlags).
		"storeWritable": strconv.FormatBool(ws.Writable),
	}
	switch {
	case ws.DiskFull:
		m["storeNotWritableReason"] = fmt.Sprintf("disk full: %.2f%% used, above diskSpaceWarningLevelRatio %d%%",
			ws.DiskRatio*100, b.store.DiskSpaceWarningLevelRatio())
	case ws.NoSpace:
		m["storeNotWritableReason"] = "disk full: no space left on the file system, retrying: " + ws.WriteError
	case ws.WriteError != "":
		m["storeNotWritableReason"] = "write failed, retrying: " + ws.WriteError
	case ws.SyncError != "":
		m["storeNotWritableReason"] = "commit-log sync failed, retrying: " + ws.SyncError
	}
	return m
}

// earliestMessageTime is the store time of the oldest record in the commit
// log, -1 without one (Java getEarliestMessageTime).
func (b *Broker) earliestMessageTime() int64 {
	rec, err := b.store.MessageAt(b.store.CommitLogMinOffset())
	if err != nil {
		return -1
	}
	if len(rec) < message.RecordPosSysFlag+4 {
		return -1
	}
	sys := int32(binary.BigEndian.Uint32(rec[message.RecordPosSysFlag:]))
	p := message.StoreTimestampPos(sys)
	if len(rec) < p+8 {
		return -1
	}
	return int64(binary.BigEndian.Uint64(rec[p:]))
}

// javaRuntimeString is StoreStatsService's runtime text.
func javaRuntimeString(d time.Duration) string {
	secs := int64(d / time.Second)
	return fmt.Sprintf("[ %d days, %d hours, %d minutes, %d seconds ]",
		secs/86400, secs%86400/3600, secs%3600/60, secs%60)
}

// javaByteCount is MixAll.humanReadableByteCount(bytes, false).
func javaByteCount(n int64) string {
	const unit = 1024
	if n < unit {
		return strconv.FormatInt(n, 10) + " B"
	}
	exp := int(math.Log(float64(n)) / math.Log(unit))
	return fmt.Sprintf("%.1f %ciB", float64(n)/math.Pow(unit, float64(exp)), "KMGTPE"[exp-1])
}

// diskUtil is the disk figure in 4.9.8's SERVICE_NOT_AVAILABLE remark.
func (b *Broker) diskUtil() string {
	r := b.store.DiskRatio() * 100
	return fmt.Sprintf("CL: %5.2f CQ: %5.2f INDEX: %5.2f", r, r, r)
}
