package acl

import (
	"fmt"
	"strings"
)

// Java's AclConstants.ACCESS_KEY_MIN_LENGTH and SECRET_KEY_MIN_LENGTH: keys
// must be longer than this.
const minKeyLength = 6

// Parse reads an accounts file in Java's plain_acl.yml format:
//
//	globalWhiteRemoteAddresses:
//	  - 10.10.103.*
//	accounts:
//	  - accessKey: RocketMQ
//	    secretKey: 12345678
//	    whiteRemoteAddress:
//	    admin: false
//	    defaultTopicPerm: DENY
//	    defaultGroupPerm: SUB
//	    topicPerms:
//	      - topicA=DENY
//	      - topicB=PUB|SUB
//	    groupPerms:
//	      - groupA=SUB
//
// Errors name the line. Other top-level keys (dataVersion) are ignored,
// unknown account keys are errors. Unlike Java, an unknown permission word
// or a repeated access key is an error rather than DENY or the last entry.
func Parse(data []byte) (*Config, error) {
	root, err := parseYAML(data)
	if err != nil {
		return nil, aclFileErr(err)
	}
	c := &Config{byKey: map[string]*Account{}}
	if root.kind == nullNode {
		return c, nil
	}
	if root.kind != mapNode {
		return nil, fmt.Errorf("rocketmq: acl file: line %d: expected a map at the top", root.line)
	}
	if g := root.get("globalWhiteRemoteAddresses"); g != nil && g.kind != nullNode {
		list, err := scalars(g, "globalWhiteRemoteAddresses")
		if err != nil {
			return nil, aclFileErr(err)
		}
		for i, s := range list {
			m, err := parseAddrMatcher(s)
			if err != nil {
				return nil, aclFileErr(fmt.Errorf("line %d: %v", g.vals[i].line, err))
			}
			c.GlobalWhiteAddresses = append(c.GlobalWhiteAddresses, s)
			c.global = append(c.global, m)
		}
	}
	accs := root.get("accounts")
	if accs == nil || accs.kind == nullNode {
		return c, nil
	}
	if accs.kind != listNode {
		return nil, fmt.Errorf("rocketmq: acl file: line %d: accounts must be a list", accs.line)
	}
	for _, n := range accs.vals {
		a, err := parseAccount(n)
		if err != nil {
			return nil, aclFileErr(err)
		}
		if c.byKey[a.AccessKey] != nil {
			return nil, fmt.Errorf("rocketmq: acl file: line %d: access key %q appears twice", n.line, a.AccessKey)
		}
		c.byKey[a.AccessKey] = a
		c.Accounts = append(c.Accounts, a)
	}
	return c, nil
}

// LoadFile reads and parses path.
func LoadFile(path string) (*Config, error) {
	data, err := readLimited(path)
	if err != nil {
		return nil, fmt.Errorf("rocketmq: acl file: %w", err)
	}
	c, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("%w (%s)", err, path)
	}
	return c, nil
}

func aclFileErr(err error) error { return fmt.Errorf("rocketmq: acl file: %v", err) }

func scalars(n *node, what string) ([]string, error) {
	if n.kind != listNode {
		return nil, fmt.Errorf("line %d: %s must be a list", n.line, what)
	}
	out := make([]string, 0, len(n.vals))
	for _, v := range n.vals {
		if v.kind != scalarNode {
			return nil, fmt.Errorf("line %d: %s items must be plain values", v.line, what)
		}
		out = append(out, v.scalar)
	}
	return out, nil
}

func scalarOf(n *node, key string) (string, error) {
	switch n.kind {
	case nullNode:
		return "", nil
	case scalarNode:
		return n.scalar, nil
	}
	return "", fmt.Errorf("line %d: %s must be a single value", n.line, key)
}

func parseAccount(n *node) (*Account, error) {
	if n.kind != mapNode {
		return nil, fmt.Errorf("line %d: an account must be a map", n.line)
	}
	a := &Account{DefaultTopicPerm: Deny, DefaultGroupPerm: Deny}
	for i, key := range n.keys {
		v := n.vals[i]
		var err error
		switch key {
		case "accessKey":
			a.AccessKey, err = scalarOf(v, key)
		case "secretKey":
			a.SecretKey, err = scalarOf(v, key)
		case "whiteRemoteAddress":
			if a.WhiteAddress, err = scalarOf(v, key); err == nil {
				a.white, err = parseAddrMatcher(a.WhiteAddress)
				if err != nil {
					err = fmt.Errorf("line %d: %v", v.line, err)
				}
			}
		case "admin":
			var s string
			if s, err = scalarOf(v, key); err == nil {
				switch strings.ToLower(s) {
				case "true", "yes", "on":
					a.Admin = true
				case "false", "no", "off", "":
				default:
					err = fmt.Errorf("line %d: admin must be true or false, not %q", v.line, s)
				}
			}
		case "defaultTopicPerm", "defaultGroupPerm":
			var s string
			if s, err = scalarOf(v, key); err == nil && s != "" {
				p, ok := parsePerm(s)
				if !ok {
					err = fmt.Errorf("line %d: %s %q is not DENY, PUB, SUB or PUB|SUB", v.line, key, s)
				} else if key == "defaultTopicPerm" {
					a.DefaultTopicPerm = p
				} else {
					a.DefaultGroupPerm = p
				}
			}
		case "topicPerms", "groupPerms":
			if v.kind == nullNode {
				continue
			}
			var list []string
			if list, err = scalars(v, key); err == nil {
				err = a.addPerms(list, v, key == "groupPerms")
			}
		default:
			err = fmt.Errorf("line %d: unknown account key %q", v.line, key)
		}
		if err != nil {
			return nil, err
		}
	}
	if len(a.AccessKey) <= minKeyLength || len(a.SecretKey) <= minKeyLength {
		return nil, fmt.Errorf("line %d: accessKey and secretKey must be longer than %d characters", n.line, minKeyLength)
	}
	return a, nil
}

// addPerms reads "name=PERM" items as Java's Permission.parseResourcePerms:
// StringUtils.split on "=" must give two non-empty parts.
func (a *Account) addPerms(list []string, n *node, group bool) error {
	for i, item := range list {
		parts := strings.FieldsFunc(item, func(r rune) bool { return r == '=' })
		line := n.vals[i].line
		if len(parts) != 2 {
			return fmt.Errorf("line %d: %q is not name=PERM", line, item)
		}
		p, ok := parsePerm(parts[1])
		if !ok {
			return fmt.Errorf("line %d: permission %q is not DENY, PUB, SUB or PUB|SUB", line, strings.TrimSpace(parts[1]))
		}
		name := strings.TrimSpace(parts[0])
		if group {
			name = RetryGroupTopicPrefix + name
		}
		if a.Perms == nil {
			a.Perms = map[string]byte{}
		}
		a.Perms[name] = p
	}
	return nil
}
