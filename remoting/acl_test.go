package remoting

import (
	"bytes"
	"encoding/hex"
	"errors"
	"reflect"
	"slices"
	"strconv"
	"testing"
)

type vecACL struct {
	Cases []struct {
		Name                string            `json:"name"`
		AccessKey           string            `json:"accessKey"`
		SecretKey           string            `json:"secretKey"`
		SecurityToken       *string           `json:"securityToken"`
		Code                int32             `json:"code"`
		ExtFieldsBeforeHook map[string]string `json:"extFieldsBeforeHook"`
		BodyHex             *string           `json:"bodyHex"`
		SortedFieldsSigned  [][2]string       `json:"sortedFieldsSigned"`
		SignedBytesHex      string            `json:"signedBytesHex"`
		Signature           string            `json:"signature"`
		ExtFieldsAfterHook  map[string]string `json:"extFieldsAfterHook"`
		Serializations      map[string]struct {
			Wire       vecFile `json:"wire"`
			WireLayout struct {
				ExtKeyOrder   []string `json:"extKeyOrder"`
				DuplicateKeys []string `json:"duplicateKeys"`
			} `json:"wireLayout"`
			BrokerParse struct {
				ContentHex           string `json:"contentHex"`
				SignatureOverContent string `json:"signatureOverContent"`
				SignatureMatches     bool   `json:"signatureMatches"`
			} `json:"brokerParse"`
		} `json:"serializations"`
	} `json:"cases"`
}

func TestJavaACLVectors(t *testing.T) {
	var g vecACL
	loadVectors(t, "acl", &g)
	if len(g.Cases) < 4 {
		t.Fatalf("%d acl cases", len(g.Cases))
	}
	for _, tc := range g.Cases {
		t.Run(tc.Name, func(t *testing.T) {
			cred := ACLCredentials{AccessKey: tc.AccessKey, SecretKey: tc.SecretKey}
			if tc.SecurityToken != nil {
				cred.SecurityToken = *tc.SecurityToken
			}
			var body []byte
			if tc.BodyHex != nil {
				body = mustHex(t, *tc.BodyHex)
			}
			// The request before the hook: the typed header's fields (all
			// signed fields the hook did not add) plus any extra extFields.
			var ext ExtFields
			for _, kv := range tc.SortedFieldsSigned {
				switch kv[0] {
				case ACLAccessKey, ACLSecurityToken:
				default:
					if _, extra := tc.ExtFieldsBeforeHook[kv[0]]; !extra {
						ext.Add(kv[0], kv[1])
					}
				}
			}
			// Reverse so sorting is really exercised.
			slices.Reverse(ext)
			for k, v := range tc.ExtFieldsBeforeHook {
				ext.Add(k, v)
			}

			// What the Java client signs: everything, _UNIQUE_KEY_QUERY too.
			javaExt := ext.Clone()
			javaExt.Set(ACLAccessKey, cred.AccessKey)
			if cred.SecurityToken != "" {
				javaExt.Set(ACLSecurityToken, cred.SecurityToken)
			}
			content := aclContent(javaExt, body, false)
			if hex.EncodeToString(content) != tc.SignedBytesHex {
				t.Fatalf("signed bytes:\n%s\nwant %s", hex.Dump(content), tc.SignedBytesHex)
			}
			if sig := aclSign(content, cred.SecretKey); sig != tc.Signature {
				t.Fatalf("signature %s, want %s", sig, tc.Signature)
			}
			sorted := slices.Clone(javaExt)
			slices.SortFunc(sorted, func(a, b Field) int { return compareUTF16(a.Key, b.Key) })
			for i, kv := range tc.SortedFieldsSigned {
				if sorted[i].Key != kv[0] || sorted[i].Value != kv[1] {
					t.Fatalf("sorted field %d = %v, want %v", i, sorted[i], kv)
				}
			}

			// SignACL: same as Java except for _UNIQUE_KEY_QUERY.
			cmd := &Command{Code: tc.Code, Ext: ext.Clone(), Body: body}
			SignACL(cmd, cred)
			sig, _ := cmd.Ext.Get(ACLSignature)
			_, unique := tc.ExtFieldsBeforeHook[UniqueKeyQuery]
			if !unique && sig != tc.Signature {
				t.Errorf("SignACL signature %s, want Java's %s", sig, tc.Signature)
			}
			if unique && sig == tc.Signature {
				t.Errorf("SignACL signed %s like the 4.9.8 client", UniqueKeyQuery)
			}
			if got := cmd.Ext.Map(); !unique && !reflect.DeepEqual(got, tc.ExtFieldsAfterHook) {
				t.Errorf("ext after SignACL %q, want %q", got, tc.ExtFieldsAfterHook)
			}
			// SignACLAllFields is the Java client exactly.
			all := &Command{Code: tc.Code, Ext: ext.Clone(), Body: body}
			SignACLAllFields(all, cred)
			if got := all.Ext.Map(); !reflect.DeepEqual(got, tc.ExtFieldsAfterHook) {
				t.Errorf("ext after SignACLAllFields %q, want %q", got, tc.ExtFieldsAfterHook)
			}
			lookup := func(ak string) (string, bool) { return cred.SecretKey, ak == cred.AccessKey }
			if err := VerifyACL(cmd, lookup); err != nil {
				t.Errorf("VerifyACL of our signed command: %v", err)
			}

			for stName, s := range tc.Serializations {
				t.Run(stName, func(t *testing.T) {
					wire := s.Wire.bytes(t)
					c, _, err := DecodeFrame(wire, 0)
					if err != nil {
						t.Fatal(err)
					}
					var keys []string
					for _, f := range c.Ext {
						keys = append(keys, f.Key)
					}
					if !reflect.DeepEqual(keys, s.WireLayout.ExtKeyOrder) {
						t.Errorf("keys %q, want %q (duplicates kept)", keys, s.WireLayout.ExtKeyOrder)
					}
					if got := c.Ext.Map(); !reflect.DeepEqual(got, tc.ExtFieldsAfterHook) {
						t.Errorf("map %q, want %q", got, tc.ExtFieldsAfterHook)
					}
					if len(s.WireLayout.DuplicateKeys) > 0 && len(c.Ext.Dedup()) != len(tc.ExtFieldsAfterHook) {
						t.Errorf("Dedup left %d keys, want %d", len(c.Ext.Dedup()), len(tc.ExtFieldsAfterHook))
					}
					// The frame re-encodes byte for byte, duplicates included.
					out, err := c.AppendFrame(nil)
					if err != nil {
						t.Fatal(err)
					}
					if !bytes.Equal(out, wire) {
						t.Errorf("re-encode: %s", hexDiff(out, wire))
					}
					bc := aclContent(c.Ext, c.Body, true)
					if hex.EncodeToString(bc) != s.BrokerParse.ContentHex {
						t.Errorf("broker content:\n%s\nwant %s", hex.Dump(bc), s.BrokerParse.ContentHex)
					}
					if got := ACLSignatureOf(c.Ext, c.Body, cred.SecretKey); got != s.BrokerParse.SignatureOverContent {
						t.Errorf("broker signature %s, want %s", got, s.BrokerParse.SignatureOverContent)
					}
					err = VerifyACL(c, lookup)
					if s.BrokerParse.SignatureMatches != (err == nil) {
						t.Errorf("VerifyACL = %v, Java broker matches = %v", err, s.BrokerParse.SignatureMatches)
					}
					if err != nil && !errors.Is(err, ErrACL) {
						t.Errorf("error %v does not wrap ErrACL", err)
					}
				})
			}
		})
	}
}

func TestVerifyACLFailures(t *testing.T) {
	cred := ACLCredentials{AccessKey: "ak", SecretKey: "sk"}
	lookup := func(ak string) (string, bool) { return "sk", ak == "ak" }
	signed := func() *Command {
		c := NewRequest(SendMessageV2, ExtFields{{"a", "g"}, {"b", "t"}}, []byte("body"))
		SignACL(c, cred)
		return c
	}
	tests := []struct {
		name   string
		mutate func(c *Command)
		ok     bool
	}{
		{"signed", func(c *Command) {}, true},
		{"resigned", func(c *Command) { SignACL(c, cred) }, true},
		{"unique key added after signing", func(c *Command) { c.Ext.Add(UniqueKeyQuery, "true") }, true},
		{"body changed", func(c *Command) { c.Body = []byte("bodz") }, false},
		{"field changed", func(c *Command) { c.Ext.Set("a", "h") }, false},
		{"field added", func(c *Command) { c.Ext.Add("z", "1") }, false},
		{"unknown access key", func(c *Command) { c.Ext.Set(ACLAccessKey, "other") }, false},
		{"no access key", func(c *Command) { c.Ext.Del(ACLAccessKey) }, false},
		{"no signature", func(c *Command) { c.Ext.Del(ACLSignature) }, false},
		{"wrong secret", func(c *Command) { SignACL(c, ACLCredentials{AccessKey: "ak", SecretKey: "x"}) }, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := signed()
			tt.mutate(c)
			err := VerifyACL(c, lookup)
			if (err == nil) != tt.ok {
				t.Fatalf("VerifyACL = %v, want ok=%v", err, tt.ok)
			}
			if err != nil && !errors.Is(err, ErrACL) {
				t.Fatalf("%v does not wrap ErrACL", err)
			}
		})
	}
}

func TestSignACLToken(t *testing.T) {
	c := NewRequest(GetRouteInfoByTopic, nil, nil)
	SignACL(c, ACLCredentials{AccessKey: "ak", SecretKey: "sk", SecurityToken: "tok"})
	if v, _ := c.Ext.Get(ACLSecurityToken); v != "tok" {
		t.Fatalf("SecurityToken = %q", v)
	}
	// Content is "ak" + "tok" (AccessKey < SecurityToken).
	if want := aclSign([]byte("aktok"), "sk"); c.Ext[len(c.Ext)-1].Value != want {
		t.Fatalf("signature %q, want %q", c.Ext[len(c.Ext)-1].Value, want)
	}
}

func TestCompareUTF16(t *testing.T) {
	tests := []struct {
		a, b string
		want int // sign
	}{
		{"AccessKey", "SecurityToken", -1},
		{"SecurityToken", "_UNIQUE_KEY_QUERY", -1},
		{"_UNIQUE_KEY_QUERY", "a", -1},
		{"a", "a", 0},
		{"a", "ab", -1},
		{"é", "z", 1},
		// U+FF61 is above the surrogates, so Java sorts the emoji first;
		// byte order would put it last.
		{"\U0001F600", "\uFF61", -1},
		{"\uFF61", "\U0001F600", 1},
		{"\U0001F600", "\U0001F601", -1},
		{"\uD7FF", "\U00010000", -1},
	}
	for _, tt := range tests {
		t.Run(strconv.Quote(tt.a+"|"+tt.b), func(t *testing.T) {
			got := compareUTF16(tt.a, tt.b)
			if (got < 0) != (tt.want < 0) || (got == 0) != (tt.want == 0) {
				t.Fatalf("compareUTF16 = %d, want sign %d", got, tt.want)
			}
		})
	}
}
