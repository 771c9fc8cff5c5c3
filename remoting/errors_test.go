package remoting

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"syscall"
	"testing"
)

type retriableErr bool

func (r retriableErr) Error() string   { return "transport" }
func (r retriableErr) Retriable() bool { return bool(r) }

type timeoutErr struct{}

func (timeoutErr) Error() string { return "i/o timeout" }
func (timeoutErr) Timeout() bool { return true }

func TestErrorIs(t *testing.T) {
	resp := NewResponse(SystemBusy, "[REJECTREQUEST]system busy")
	err := ResponseError(resp)
	if !errors.Is(err, ErrSystemBusy) || errors.Is(err, ErrSystemError) {
		t.Fatalf("errors.Is by code failed: %v", err)
	}
	wrapped := fmt.Errorf("send to broker-a: %w", err)
	if !errors.Is(wrapped, ErrSystemBusy) {
		t.Fatal("wrapped error does not match")
	}
	var re *Error
	if !errors.As(wrapped, &re) || re.Remark != "[REJECTREQUEST]system busy" || re.Code != SystemBusy {
		t.Fatalf("As: %+v", re)
	}
	if got := err.Error(); got != "rocketmq: SYSTEM_BUSY: [REJECTREQUEST]system busy" {
		t.Fatalf("Error() = %q", got)
	}
	if got := (&Error{Code: 9999}).Error(); got != "rocketmq: 9999" {
		t.Fatalf("Error() = %q", got)
	}
	if ResponseError(NewResponse(Success, "")) != nil {
		t.Fatal("Success is an error")
	}
	if err := ResponseError(&Command{Code: TopicNotExist}); !errors.Is(err, ErrTopicNotExist) {
		t.Fatal(err)
	}
}

func TestIsRetriable(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want bool
	}{
		{"nil", nil, false},
		{"topic not exist", &Error{Code: TopicNotExist}, true},
		{"service not available", &Error{Code: ServiceNotAvailable}, true},
		{"system error", &Error{Code: SystemError}, true},
		{"system busy wrapped", fmt.Errorf("x: %w", &Error{Code: SystemBusy}), true},
		{"no permission", &Error{Code: NoPermission}, true},
		{"no buyer id", &Error{Code: NoBuyerID}, true},
		{"not in current unit", &Error{Code: NotInCurrentUnit}, true},
		{"go away", &Error{Code: GoAway}, true},
		{"message illegal", &Error{Code: MessageIllegal}, false},
		{"flush disk timeout", &Error{Code: FlushDiskTimeout}, false},
		{"request code not supported", &Error{Code: RequestCodeNotSupported}, false},
		{"transport says yes", fmt.Errorf("w: %w", retriableErr(true)), true},
		{"transport says no", retriableErr(false), false},
		{"timeout", timeoutErr{}, true},
		{"os deadline", os.ErrDeadlineExceeded, true},
		{"eof", io.EOF, true},
		{"unexpected eof", fmt.Errorf("read: %w", io.ErrUnexpectedEOF), true},
		{"reset", &os.SyscallError{Syscall: "read", Err: syscall.ECONNRESET}, true},
		{"refused", fmt.Errorf("dial: %w", syscall.ECONNREFUSED), true},
		{"broken pipe", syscall.EPIPE, true},
		{"canceled", context.Canceled, false},
		{"deadline", fmt.Errorf("w: %w", context.DeadlineExceeded), false},
		{"plain", errors.New("other"), false},
		{"frame error", &FrameError{Kind: ErrMalformedFrame}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := IsRetriable(tt.err); got != tt.want {
				t.Fatalf("IsRetriable(%v) = %v, want %v", tt.err, got, tt.want)
			}
		})
	}
}
