package kafkaadmin

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/IBM/sarama"
)

// Operation is a Kafka ACL operation (AclOperation): something a principal
// may be allowed to do to a topic, a consumer group or the cluster.
type Operation string

// The ACL operations brokers report, named as Kafka names them.
const (
	OpRead            Operation = "READ"
	OpWrite           Operation = "WRITE"
	OpCreate          Operation = "CREATE"
	OpDelete          Operation = "DELETE"
	OpAlter           Operation = "ALTER"
	OpDescribe        Operation = "DESCRIBE"
	OpClusterAction   Operation = "CLUSTER_ACTION"
	OpDescribeConfigs Operation = "DESCRIBE_CONFIGS"
	OpAlterConfigs    Operation = "ALTER_CONFIGS"
	OpIdempotentWrite Operation = "IDEMPOTENT_WRITE"
	OpCreateTokens    Operation = "CREATE_TOKENS"
	OpDescribeTokens  Operation = "DESCRIBE_TOKENS"
	OpTwoPhaseCommit  Operation = "TWO_PHASE_COMMIT"
)

// operationCodes holds each operation at its AclOperation code, the bit it
// has in an authorized-operations field.
var operationCodes = [...]Operation{
	3: OpRead, 4: OpWrite, 5: OpCreate, 6: OpDelete, 7: OpAlter, 8: OpDescribe,
	9: OpClusterAction, 10: OpDescribeConfigs, 11: OpAlterConfigs, 12: OpIdempotentWrite,
	13: OpCreateTokens, 14: OpDescribeTokens, 15: OpTwoPhaseCommit,
}

// notProvided is Kafka's value of an authorized-operations field that was
// not asked for or not filled in (INT32_MIN).
const notProvided = math.MinInt32

// ResourceAccess is what the connecting principal may do to one resource
// (a topic, a group or the cluster), as the brokers report it.
type ResourceAccess struct {
	// Known is true when the broker reported the allowed operations.
	// Without an authorizer it reports every operation the resource type
	// supports: see Access.Authorizer.
	Known bool `json:"known"`
	// Allowed lists the operations allowed, in Kafka's code order.
	Allowed []Operation `json:"allowed,omitempty"`
	// DescribeDenied is true when the broker refused to describe the
	// resource to the principal (TOPIC_AUTHORIZATION_FAILED,
	// GROUP_AUTHORIZATION_FAILED, or no cluster operations without
	// DESCRIBE on the cluster): DESCRIBE is denied, and the other
	// operations are not known.
	DescribeDenied bool `json:"describe_denied,omitempty"`
	// Exists, for a topic, is false when the cluster does not have it
	// (its operations are still reported: ACLs are matched by name).
	Exists bool `json:"exists,omitempty"`
}

// Allows reports whether the operation is known to be allowed.
func (a ResourceAccess) Allows(op Operation) bool {
	return a.Known && slices.Contains(a.Allowed, op)
}

func accessOf(bits int32) ResourceAccess {
	if bits == notProvided {
		return ResourceAccess{}
	}
	a := ResourceAccess{Known: true}
	for code, op := range operationCodes {
		if op != "" && bits&(1<<code) != 0 {
			a.Allowed = append(a.Allowed, op)
		}
	}
	return a
}

// AuthorizerState says whether a cluster's brokers run an authorizer
// (authorizer.class.name).
type AuthorizerState string

// The authorizer states Access reports.
const (
	// AuthorizerPresent: DescribeAcls was answered, or refused for lack of
	// DESCRIBE on the cluster, which only an authorizer does.
	AuthorizerPresent AuthorizerState = "present"
	// AuthorizerAbsent: DescribeAcls answered SECURITY_DISABLED ("No
	// Authorizer is configured on the broker"). Every principal may do
	// everything, and brokers report every operation as allowed.
	AuthorizerAbsent AuthorizerState = "absent"
	// AuthorizerUnknown: DescribeAcls gave another answer.
	AuthorizerUnknown AuthorizerState = "unknown"
)

// Access is what the brokers of one cluster let the principal this Client
// connects as do. It describes that principal only: another client with
// other credentials — MirrorMaker 2's connector, configured with its own
// source.cluster.* and target.cluster.* settings — may be allowed more or
// less.
type Access struct {
	// Principal is the SASL user the Client authenticates as; "" when it
	// does not use SASL with a user name (the broker then sees ANONYMOUS,
	// or the TLS client certificate's name).
	Principal string `json:"principal"`
	// KerberosPrincipal is, with GSSAPI, the Client's Kerberos principal,
	// name[/instance]@REALM; Principal is then its first component, the
	// name Kafka's DEFAULT sasl.kerberos.principal.to.local.rules give it
	// (brokers with other rules name it as those say).
	KerberosPrincipal string `json:"kerberos_principal,omitempty"`
	// Authorizer says whether the brokers enforce ACLs at all.
	Authorizer AuthorizerState `json:"authorizer"`
	// AuthorizerError is DescribeAcls' answer when Authorizer is unknown.
	AuthorizerError string `json:"authorizer_error,omitempty"`
	// Cluster is what the principal may do to the cluster (CREATE there
	// allows creating any topic). Brokers report it only to a principal
	// allowed to DESCRIBE the cluster.
	Cluster ResourceAccess `json:"cluster"`
	// Topics and Groups hold the resources asked for, by name.
	Topics map[string]ResourceAccess `json:"topics"`
	Groups map[string]ResourceAccess `json:"groups"`
}

// Access asks the brokers what the principal this Client connects as may
// do: to the cluster (DescribeCluster with the cluster's authorized
// operations), to each named topic (Metadata with each topic's authorized
// operations; also for topics that do not exist), to each named consumer
// group (DescribeGroups with its authorized operations, from its
// coordinator), and whether an authorizer runs at all (DescribeAcls for
// an ACL that matches nothing). It reads only. Kafka 2.8 or later.
//
// Errors: an [*ArgumentError] for an empty topic or group name, the
// context's error, or a Kafka or connection error after retries.
func (r *Client) Access(ctx context.Context, topics, groups []string) (Access, error) {
	for _, n := range topics {
		if n == "" {
			return Access{}, &ArgumentError{Op: "Access", Reason: "empty topic name"}
		}
	}
	for _, g := range groups {
		if g == "" {
			return Access{}, &ArgumentError{Op: "Access", Reason: "empty group"}
		}
	}
	out := Access{Principal: r.cfg.Username, Topics: map[string]ResourceAccess{}, Groups: map[string]ResourceAccess{}}
	if r.krb != nil {
		out.KerberosPrincipal = r.krb.name + "@" + r.krb.realm
		out.Principal, _, _ = strings.Cut(r.krb.name, "/")
	}
	err := r.do(ctx, "access", func(s *session) error {
		if err := r.retry(ctx, "describe cluster", func(int) error {
			resp, err := s.describeCluster(true)
			if err != nil {
				return err
			}
			out.Cluster = accessOf(resp.ClusterAuthorizedOperations)
			if out.Cluster.Known && len(out.Cluster.Allowed) == 0 {
				out.Cluster = ResourceAccess{DescribeDenied: true}
			}
			return nil
		}); err != nil {
			return err
		}
		if len(topics) > 0 {
			if err := r.retry(ctx, "metadata", func(int) error { return s.topicAccess(dedupe(topics), out.Topics) }); err != nil {
				return err
			}
		}
		for _, g := range dedupe(groups) {
			if err := r.retry(ctx, "describe group", func(int) error { return s.groupAccess(g, out.Groups) }); err != nil {
				return fmt.Errorf("group %s: %w", g, err)
			}
		}
		return r.retry(ctx, "describe acls", func(int) error { return s.authorizer(&out) })
	})
	if err != nil {
		return Access{}, err
	}
	return out, nil
}

// topicAccess sends Metadata for the topics with their authorized
// operations.
// A step client's metadata carries them: its snapshot serves.
func (s *session) topicAccess(topics []string, out map[string]ResourceAccess) error {
	var resp *sarama.MetadataResponse
	if s.pool != nil {
		var err error
		if resp, err = s.metadata(topics); err != nil {
			return err
		}
	} else {
		b, err := s.any()
		if err != nil {
			return err
		}
		req := sarama.NewMetadataRequest(s.conf.Version, topics)
		req.AllowAutoTopicCreation = false
		req.IncludeTopicAuthorizedOperations = true
		if resp, err = b.GetMetadata(req); err != nil {
			s.transportFailed(b)
			return err
		}
	}
	if resp.Version < 8 {
		return fmt.Errorf("metadata version %d has no authorized operations: %w", resp.Version, sarama.ErrUnsupportedVersion)
	}
	for _, t := range resp.Topics {
		switch err := kerr(t.Err); {
		case err == nil:
			a := accessOf(t.TopicAuthorizedOperations)
			a.Exists = true
			out[t.Name] = a
		case errors.Is(err, sarama.ErrUnknownTopicOrPartition):
			out[t.Name] = accessOf(t.TopicAuthorizedOperations)
		case errors.Is(err, sarama.ErrTopicAuthorizationFailed):
			out[t.Name] = ResourceAccess{DescribeDenied: true}
		default:
			return fmt.Errorf("topic %s: %w", t.Name, err)
		}
	}
	for _, n := range topics {
		if _, ok := out[n]; !ok {
			return fmt.Errorf("topic %s: %w", n, sarama.ErrIncompleteResponse)
		}
	}
	return nil
}

// groupAccess describes the group with its authorized operations. A
// principal without DESCRIBE on the group is refused already when it looks
// for the group's coordinator.
func (s *session) groupAccess(group string, out map[string]ResourceAccess) error {
	c, err := s.coordinator(group)
	if errors.Is(err, sarama.ErrGroupAuthorizationFailed) {
		out[group] = ResourceAccess{DescribeDenied: true}
		return nil
	}
	if err != nil {
		return err
	}
	resp, err := c.DescribeGroups(&sarama.DescribeGroupsRequest{Version: 5, Groups: []string{group}, IncludeAuthorizedOperations: true})
	if err == nil && len(resp.Groups) != 1 {
		err = sarama.ErrIncompleteResponse
	}
	if err != nil {
		s.coordinatorFailed(group, c, err)
		return err
	}
	d := resp.Groups[0]
	switch err := kerr(d.Err); {
	case err == nil, errors.Is(err, sarama.ErrGroupIDNotFound):
		out[group] = accessOf(d.AuthorizedOperations)
	case errors.Is(err, sarama.ErrGroupAuthorizationFailed):
		out[group] = ResourceAccess{DescribeDenied: true}
	default:
		s.coordinatorFailed(group, c, err)
		return err
	}
	return nil
}

// probeACL names a topic no ACL is expected to match: DescribeAcls for it
// lists nothing, and tells whether an authorizer runs.
const probeACL = "__mm2cutover-authorizer-probe"

// authorizer sends DescribeAcls for an ACL that matches nothing: brokers
// without an authorizer answer SECURITY_DISABLED; with one, they answer
// (to a principal allowed to DESCRIBE the cluster) or refuse with
// CLUSTER_AUTHORIZATION_FAILED.
func (s *session) authorizer(out *Access) error {
	b, err := s.any()
	if err != nil {
		return err
	}
	name := probeACL
	resp, err := b.DescribeAcls(&sarama.DescribeAclsRequest{Version: 1, AclFilter: sarama.AclFilter{
		ResourceType:              sarama.AclResourceTopic,
		ResourceName:              &name,
		ResourcePatternTypeFilter: sarama.AclPatternLiteral,
		Operation:                 sarama.AclOperationAny,
		PermissionType:            sarama.AclPermissionAny,
	}})
	if err != nil {
		if !errors.Is(err, sarama.ErrUnsupportedVersion) {
			s.transportFailed(b)
		}
		return err
	}
	switch err := kerr(resp.Err); {
	case err == nil, errors.Is(err, sarama.ErrClusterAuthorizationFailed):
		out.Authorizer = AuthorizerPresent
	case errors.Is(err, sarama.ErrSecurityDisabled):
		out.Authorizer = AuthorizerAbsent
	case retriable(err):
		return err
	default:
		out.Authorizer = AuthorizerUnknown
		msg := err.Error()
		if resp.ErrMsg != nil && *resp.ErrMsg != "" {
			msg += ": " + strings.TrimSpace(*resp.ErrMsg)
		}
		out.AuthorizerError = msg
	}
	return nil
}

// BootstrapServers returns the addresses the Client was configured with.
func (r *Client) BootstrapServers() []string {
	return append([]string(nil), r.cfg.BootstrapServers...)
}
