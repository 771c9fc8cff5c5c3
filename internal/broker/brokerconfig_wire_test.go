package broker

import (
	"encoding/binary"
	"io"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-rocketmq/rocketmq/remoting"
)

// javaRequest is a request frame as 4.9.8's RemotingCommand.encode writes
// RemotingCommand.createRequestCommand(code, null) from MQClientAPIImpl:
// JSON header without extFields (fastjson drops the null), then the body.
func javaRequest(code int32, opaque int, body string) []byte {
	hdr := `{"code":` + strconv.Itoa(int(code)) + `,"flag":0,"language":"JAVA","opaque":` + strconv.Itoa(opaque) +
		`,"serializeTypeCurrentRPC":"JSON","version":409}`
	return badFrame(-1, 0, []byte(hdr), []byte(body))
}

// readResponse reads one frame from c and returns it decoded with its raw
// JSON header.
func readResponse(t *testing.T, c net.Conn) (*remoting.Command, string) {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	var lenBuf [4]byte
	if _, err := io.ReadFull(c, lenBuf[:]); err != nil {
		t.Fatal(err)
	}
	rest := make([]byte, binary.BigEndian.Uint32(lenBuf[:]))
	if _, err := io.ReadFull(c, rest); err != nil {
		t.Fatal(err)
	}
	cmd, _, err := remoting.DecodeFrame(append(lenBuf[:], rest...), remoting.DefaultMaxFrameSize)
	if err != nil {
		t.Fatal(err)
	}
	hl := binary.BigEndian.Uint32(rest[:4]) & 0xFFFFFF
	return cmd, string(rest[4 : 4+hl])
}

// The Java admin tool's GET_BROKER_CONFIG and UPDATE_BROKER_CONFIG
// requests, built as its MQClientAPIImpl does, and the answers a 4.9.8
// broker gives: SUCCESS, no remark, extFields {"version": ...} for GET and
// none for UPDATE.
func TestBrokerConfigJavaFrames(t *testing.T) {
	e := sendTestBroker(t, nil)
	c, err := net.Dial("tcp", e.b.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()

	// MixAll.properties2String of mqadmin updateBrokerConfig -k -v.
	if _, err := c.Write(javaRequest(remoting.UpdateBrokerConfig, 7, "autoCreateTopicEnable=false\n")); err != nil {
		t.Fatal(err)
	}
	resp, hdr := readResponse(t, c)
	if resp.Code != remoting.Success || resp.Opaque != 7 || !resp.IsResponse() || resp.Remark != "" ||
		strings.Contains(hdr, `"extFields"`) || strings.Contains(hdr, `"remark"`) {
		t.Fatalf("UPDATE answer: code %d opaque %d header %s", resp.Code, resp.Opaque, hdr)
	}

	if _, err := c.Write(javaRequest(remoting.GetBrokerConfig, 8, "")); err != nil {
		t.Fatal(err)
	}
	resp, hdr = readResponse(t, c)
	if resp.Code != remoting.Success || resp.Opaque != 8 || strings.Contains(hdr, `"remark"`) ||
		!strings.Contains(hdr, `"extFields":{"version":"{\"counter\":1,\"timestamp\":`) {
		t.Fatalf("GET answer: code %d opaque %d header %s", resp.Code, resp.Opaque, hdr)
	}
	// MixAll.string2Properties reads the body back.
	if !strings.Contains(string(resp.Body), "\nautoCreateTopicEnable=false\n") {
		t.Errorf("GET body lacks the update:\n%s", resp.Body)
	}
}
