package kafkaadmin

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/IBM/sarama"

	"github.com/mm2cutover/mm2cutover/errkind"
)

// ResourceType is the type of resource an ACL is about, named as Kafka
// names it (ResourceType).
type ResourceType string

// The resource types of the ACLs the cutover reads.
const (
	ResourceTopic           ResourceType = "TOPIC"
	ResourceGroup           ResourceType = "GROUP"
	ResourceCluster         ResourceType = "CLUSTER"
	ResourceTransactionalID ResourceType = "TRANSACTIONAL_ID"
)

func (t ResourceType) sarama() (sarama.AclResourceType, bool) {
	switch t {
	case ResourceTopic:
		return sarama.AclResourceTopic, true
	case ResourceGroup:
		return sarama.AclResourceGroup, true
	case ResourceCluster:
		return sarama.AclResourceCluster, true
	case ResourceTransactionalID:
		return sarama.AclResourceTransactionalID, true
	}
	return 0, false
}

// ACL is one ACL binding of a cluster: a principal allowed or denied an
// operation on the resources a pattern names, from a host.
type ACL struct {
	ResourceType ResourceType `json:"resource_type"`
	// Name is the resource name, or "*" for every resource of the type
	// (LITERAL only); with Prefixed it is a prefix of the names it covers.
	Name     string `json:"name"`
	Prefixed bool   `json:"prefixed,omitempty"`
	// Principal is "User:<name>", or "User:*" for every principal.
	Principal string `json:"principal"`
	// Host is "*" or the one client address the ACL applies to.
	Host      string    `json:"host"`
	Operation Operation `json:"operation"` // "ALL" covers every operation
	Deny      bool      `json:"deny,omitempty"`
}

// OpAll is the ACL operation that stands for every operation.
const OpAll Operation = "ALL"

// covers reports whether the ACL's pattern names resource name.
func (a ACL) covers(t ResourceType, name string) bool {
	if a.ResourceType != t {
		return false
	}
	if a.Prefixed {
		return strings.HasPrefix(name, a.Name)
	}
	return a.Name == name || a.Name == "*"
}

// impliesDescribe are the operations an ALLOW ACL of which also allows
// DESCRIBE (StandardAuthorizerData.IMPLIES_DESCRIBE); DESCRIBE_CONFIGS
// comes with ALTER_CONFIGS.
var impliesDescribe = []Operation{OpDescribe, OpRead, OpWrite, OpDelete, OpAlter}

// ACLVerdict is what the ACLs of a cluster say of one operation of one
// principal on one resource ([Authorize]).
type ACLVerdict string

// The verdicts of Authorize.
const (
	// ACLAllowed: an ALLOW ACL matches and no DENY does.
	ACLAllowed ACLVerdict = "allowed"
	// ACLDenied: a DENY ACL matches (it wins over any ALLOW).
	ACLDenied ACLVerdict = "denied"
	// ACLNoMatch: no ACL matches: the brokers deny it, unless the
	// principal is a super user, or no ACL at all names the resource and
	// the brokers run with allow.everyone.if.no.acl.found=true.
	ACLNoMatch ACLVerdict = "no ACL allows it"
	// ACLHostOnly: only ACLs for particular client hosts match: allowed
	// or denied depending on where the client connects from.
	ACLHostOnly ACLVerdict = "allowed only from some hosts"
)

// Authorize evaluates acls as Kafka's StandardAuthorizer does for
// principal ("User:<name>") doing op on resource name of type t, from a
// host not known (an ACL for one host decides nothing here). A DENY that
// matches wins; an ALLOW matches its own operation, ALL, and, for
// DESCRIBE, READ, WRITE, DELETE and ALTER (for DESCRIBE_CONFIGS,
// ALTER_CONFIGS); "User:*" matches every principal. Super users and
// allow.everyone.if.no.acl.found are not seen in ACLs: see ACLNoMatch.
// It is pure.
func Authorize(acls []ACL, principal string, t ResourceType, name string, op Operation) ACLVerdict {
	allowed, hostOnly := false, false
	for _, a := range acls {
		if !a.covers(t, name) || (a.Principal != principal && a.Principal != "User:*") {
			continue
		}
		if !a.matches(op) {
			continue
		}
		if a.Host != "*" {
			hostOnly = true
			continue
		}
		if a.Deny {
			return ACLDenied
		}
		allowed = true
	}
	switch {
	case allowed:
		return ACLAllowed
	case hostOnly:
		return ACLHostOnly
	}
	return ACLNoMatch
}

// matches reports whether the ACL's operation decides op
// (StandardAuthorizerData.findResult).
func (a ACL) matches(op Operation) bool {
	if a.Operation == OpAll || a.Operation == op {
		return true
	}
	if a.Deny {
		return false
	}
	switch op {
	case OpDescribe:
		return slices.Contains(impliesDescribe, a.Operation)
	case OpDescribeConfigs:
		return a.Operation == OpAlterConfigs
	}
	return false
}

// ErrACLsUnreadable matches the error of [Client.ACLs] when the brokers
// refuse to list ACLs to the principal the Client connects as
// (CLUSTER_AUTHORIZATION_FAILED: DescribeAcls needs DESCRIBE on the
// cluster).
var ErrACLsUnreadable = errkind.New(errkind.Rejected, "kafkaadmin: the brokers do not list their acls")

// ErrNoAuthorizer matches the error of [Client.ACLs] when the brokers run
// no authorizer (SECURITY_DISABLED): there are no ACLs, and every
// principal may do everything.
var ErrNoAuthorizer = errkind.New(errkind.CheckFailed, "kafkaadmin: the brokers run no authorizer")

// ACLs lists every ACL binding of the cluster for the resource types
// given (DescribeAcls with an ANY filter, one request per type), in the
// order the brokers return them. It reads only.
//
// Errors: an [*ArgumentError] for a resource type it does not know, an
// error matching [ErrACLsUnreadable] (wrapping sarama's
// ErrClusterAuthorizationFailed), the context's
// error, an error matching [ErrNoAuthorizer] (wrapping
// ErrSecurityDisabled), or a Kafka or connection error after retries.
func (r *Client) ACLs(ctx context.Context, types ...ResourceType) ([]ACL, error) {
	var out []ACL
	for _, t := range types {
		if _, ok := t.sarama(); !ok {
			return nil, &ArgumentError{Op: "ACLs", Reason: fmt.Sprintf("resource type %q", t)}
		}
	}
	err := r.do(ctx, "describe acls", func(s *session) error {
		for _, t := range types {
			st, _ := t.sarama()
			var got []ACL
			if err := r.retry(ctx, "describe acls", func(int) error {
				var err error
				got, err = s.describeACLs(st)
				return err
			}); err != nil {
				return err
			}
			out = append(out, got...)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

func (s *session) describeACLs(t sarama.AclResourceType) ([]ACL, error) {
	b, err := s.any()
	if err != nil {
		return nil, err
	}
	resp, err := b.DescribeAcls(&sarama.DescribeAclsRequest{Version: 1, AclFilter: sarama.AclFilter{
		Version:                   1,
		ResourceType:              t,
		ResourcePatternTypeFilter: sarama.AclPatternAny,
		Operation:                 sarama.AclOperationAny,
		PermissionType:            sarama.AclPermissionAny,
	}})
	if err != nil {
		if !errors.Is(err, sarama.ErrUnsupportedVersion) {
			s.transportFailed(b)
		}
		return nil, err
	}
	switch err := kerr(resp.Err); {
	case err == nil:
	case errors.Is(err, sarama.ErrClusterAuthorizationFailed):
		return nil, fmt.Errorf("%w: %w", ErrACLsUnreadable, err)
	case errors.Is(err, sarama.ErrSecurityDisabled):
		return nil, fmt.Errorf("%w: %w", ErrNoAuthorizer, err)
	default:
		return nil, err
	}
	var out []ACL
	for _, ra := range resp.ResourceAcls {
		rt := resourceTypeOf(ra.ResourceType)
		for _, a := range ra.Acls {
			out = append(out, ACL{
				ResourceType: rt, Name: ra.ResourceName, Prefixed: ra.ResourcePatternType == sarama.AclPatternPrefixed,
				Principal: a.Principal, Host: a.Host, Operation: operationOf(a.Operation), Deny: a.PermissionType == sarama.AclPermissionDeny,
			})
		}
	}
	return out, nil
}

func resourceTypeOf(t sarama.AclResourceType) ResourceType {
	for _, rt := range []ResourceType{ResourceTopic, ResourceGroup, ResourceCluster, ResourceTransactionalID} {
		if st, _ := rt.sarama(); st == t {
			return rt
		}
	}
	return ResourceType(t.String())
}

func operationOf(op sarama.AclOperation) Operation {
	if op == sarama.AclOperationAll {
		return OpAll
	}
	if int(op) < len(operationCodes) && operationCodes[op] != "" {
		return operationCodes[op]
	}
	return Operation(op.String())
}
