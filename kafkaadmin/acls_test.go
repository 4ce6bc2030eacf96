package kafkaadmin

import (
	"encoding/binary"
	"testing"
)

// TestAuthorize: the StandardAuthorizer's rules, one ACL set at a time.
func TestAuthorize(t *testing.T) {
	const p = "User:mm2"
	allow := func(t ResourceType, name string, op Operation) ACL {
		return ACL{ResourceType: t, Name: name, Principal: p, Host: "*", Operation: op}
	}
	prefixed := func(a ACL) ACL { a.Prefixed = true; return a }
	deny := func(a ACL) ACL { a.Deny = true; return a }
	other := func(a ACL, principal string) ACL { a.Principal = principal; return a }
	host := func(a ACL) ACL { a.Host = "10.0.0.7"; return a }
	const txn = "mm2-connect-orders-0"
	for _, tc := range []struct {
		name string
		acls []ACL
		op   Operation
		want ACLVerdict
	}{
		{"none", nil, OpWrite, ACLNoMatch},
		{"literal", []ACL{allow(ResourceTransactionalID, txn, OpWrite)}, OpWrite, ACLAllowed},
		{"another id", []ACL{allow(ResourceTransactionalID, "mm2-connect-orders-1", OpWrite)}, OpWrite, ACLNoMatch},
		{"prefixed", []ACL{prefixed(allow(ResourceTransactionalID, "mm2-connect-orders-", OpWrite))}, OpWrite, ACLAllowed},
		{"prefix too long", []ACL{prefixed(allow(ResourceTransactionalID, "mm2-connect-orders-0x", OpWrite))}, OpWrite, ACLNoMatch},
		{"wildcard name", []ACL{allow(ResourceTransactionalID, "*", OpAll)}, OpWrite, ACLAllowed},
		{"wildcard principal", []ACL{other(allow(ResourceTransactionalID, txn, OpWrite), "User:*")}, OpWrite, ACLAllowed},
		{"another principal", []ACL{other(allow(ResourceTransactionalID, txn, OpWrite), "User:tool")}, OpWrite, ACLNoMatch},
		{"a topic of that name", []ACL{allow(ResourceTopic, txn, OpWrite)}, OpWrite, ACLNoMatch},
		{"write implies describe", []ACL{allow(ResourceTransactionalID, txn, OpWrite)}, OpDescribe, ACLAllowed},
		{"describe does not imply write", []ACL{allow(ResourceTransactionalID, txn, OpDescribe)}, OpWrite, ACLNoMatch},
		{"deny wins", []ACL{allow(ResourceTransactionalID, "*", OpAll), deny(prefixed(allow(ResourceTransactionalID, "mm2-", OpWrite)))}, OpWrite, ACLDenied},
		{"a deny of write does not deny describe", []ACL{allow(ResourceTransactionalID, txn, OpDescribe), deny(allow(ResourceTransactionalID, txn, OpWrite))}, OpDescribe, ACLAllowed},
		{"deny all", []ACL{allow(ResourceTransactionalID, txn, OpWrite), deny(allow(ResourceTransactionalID, txn, OpAll))}, OpDescribe, ACLDenied},
		{"from one host only", []ACL{host(allow(ResourceTransactionalID, txn, OpWrite))}, OpWrite, ACLHostOnly},
		{"alter configs implies describe configs", []ACL{allow(ResourceTopic, "offsets", OpAlterConfigs)}, OpDescribeConfigs, ACLAllowed},
	} {
		rt, name := ResourceTransactionalID, txn
		if tc.op == OpDescribeConfigs {
			rt, name = ResourceTopic, "offsets"
		}
		if got := Authorize(tc.acls, p, rt, name, tc.op); got != tc.want {
			t.Errorf("%s: Authorize = %s, want %s", tc.name, got, tc.want)
		}
	}
}

func connectMetadata(version int16, url string, rest ...byte) []byte {
	b := binary.BigEndian.AppendUint16(nil, uint16(version))
	b = binary.BigEndian.AppendUint16(b, uint16(len(url)))
	b = append(b, url...)
	b = binary.BigEndian.AppendUint64(b, 42)
	return append(b, rest...)
}

func TestConnectWorkerURL(t *testing.T) {
	for _, v := range []int16{0, 1, 2} {
		got, err := ConnectWorkerURL(connectMetadata(v, "http://10.0.3.7:8083/", 0, 0, 0, 0))
		if err != nil || got != "http://10.0.3.7:8083/" {
			t.Errorf("version %d: %q, %v", v, got, err)
		}
	}
	for name, md := range map[string][]byte{
		"empty":        nil,
		"short url":    connectMetadata(1, "http://x")[:10],
		"no offset":    connectMetadata(1, "http://x")[:4+8],
		"negative len": {0, 1, 0xff, 0xff, 0, 0, 0, 0, 0, 0, 0, 0},
		"negative ver": connectMetadata(-1, "http://x"),
		"not utf-8":    connectMetadata(1, "http://\xff"),
	} {
		if got, err := ConnectWorkerURL(md); err == nil {
			t.Errorf("%s: %q, want an error", name, got)
		}
	}
}

func FuzzConnectWorkerURL(f *testing.F) {
	f.Add(connectMetadata(1, "http://10.0.3.7:8083/"))
	f.Add([]byte{0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, md []byte) {
		url, err := ConnectWorkerURL(md)
		if err == nil && len(url)+12 > len(md) {
			t.Errorf("url %q longer than the metadata allows", url)
		}
	})
}
