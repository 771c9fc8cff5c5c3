package remoting

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
)

// TestACLCredentialsHideSecrets: printing or logging credentials, alone or
// inside a struct, never shows the secret key or the security token.
func TestACLCredentialsHideSecrets(t *testing.T) {
	cred := ACLCredentials{AccessKey: "ak-visible", SecretKey: "sk-HIDDEN-1", SecurityToken: "tok-HIDDEN-2"}
	type holder struct {
		Cred  ACLCredentials
		CredP *ACLCredentials
	}
	h := holder{cred, &cred}
	var logs bytes.Buffer
	for _, handler := range []slog.Handler{slog.NewTextHandler(&logs, nil), slog.NewJSONHandler(&logs, nil)} {
		slog.New(handler).Info("x", "cred", cred, "ptr", &cred)
	}
	outs := []string{
		fmt.Sprint(cred), fmt.Sprintf("%v %+v %#v %s", cred, cred, cred, cred),
		fmt.Sprintf("%v %+v %#v", h, h, h), fmt.Sprintf("%v", &cred), logs.String(),
	}
	for _, out := range outs {
		if strings.Contains(out, "HIDDEN") {
			t.Errorf("secret shown: %s", out)
		}
	}
	if !strings.Contains(outs[0], "ak-visible") {
		t.Errorf("access key not shown: %s", outs[0])
	}
}

// TestACLRefusalMatchesErrACL: a broker's ACL refusal is SYSTEM_ERROR
// with Java's AclException as remark; it matches ErrACL and
// ErrSystemError, other SYSTEM_ERRORs match only the latter.
func TestACLRefusalMatchesErrACL(t *testing.T) {
	refusal := &Error{Code: SystemError, Remark: "org.apache.rocketmq.acl.common.AclException: No default permission for topic=T, org.apache.rocketmq.acl.plain.PlainPermissionManager.checkPerm(PlainPermissionManager.java:611)"}
	wrapped := fmt.Errorf("rocketmq: send failed: %w", refusal)
	if !errors.Is(wrapped, ErrACL) || !errors.Is(wrapped, ErrSystemError) {
		t.Errorf("%v does not match ErrACL and ErrSystemError", wrapped)
	}
	for _, other := range []*Error{
		{Code: SystemError, Remark: "disk full"},
		{Code: NoPermission, Remark: "org.apache.rocketmq.acl.common.AclException: x"},
	} {
		if errors.Is(other, ErrACL) {
			t.Errorf("%v matches ErrACL", other)
		}
	}
}
