package tests

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/gregorbroker/gregor/core/config"
)

// TestAuthorizationPerAPI checks that every admin, offset and group API
// refuses a principal without the ACL Kafka asks for, with Kafka's error,
// and serves one that holds it. alice holds ALL on topics prefixed
// "t-alice", READ and DELETE on group g-alice and DESCRIBE on the cluster;
// bob holds nothing.
func TestAuthorizationPerAPI(t *testing.T) {
	b, secure := startSecureBroker(t, "SASL_PLAINTEXT", func(c *config.Config) {
		c.Security.Authorizer = "acl"
		c.Security.SuperUsers = []string{"User:ANONYMOUS"}
	})
	createSCRAMUsers(t, b.Addr, map[string]string{"alice": "a-pw", "bob": "b-pw"})
	for _, topic := range []string{"t-alice", "t-alice-del", "t-other"} {
		createTopic(t, b.Addr, topic, 1, nil)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	adm := newAdmin(t, b.Addr)
	acls := []*kadm.ACLBuilder{
		kadm.NewACLs().Allow("User:alice").AllowHosts("*").Topics("t-alice").
			Operations(kadm.OpAll).ResourcePatternType(kadm.ACLPatternPrefixed),
		kadm.NewACLs().Allow("User:alice").AllowHosts("*").Groups("g-alice").
			Operations(kadm.OpRead, kadm.OpDelete).ResourcePatternType(kadm.ACLPatternLiteral),
		kadm.NewACLs().Allow("User:alice").AllowHosts("*").Clusters().
			Operations(kadm.OpDescribe).ResourcePatternType(kadm.ACLPatternLiteral),
	}
	for _, a := range acls {
		res, err := adm.CreateACLs(ctx, a)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range res {
			if r.Err != nil {
				t.Fatalf("create acl: %v", r.Err)
			}
		}
	}
	// Groups with committed offsets, made by the super user.
	for _, g := range []string{"g-alice", "g-other"} {
		offs := kadm.Offsets{}
		offs.Add(kadm.Offset{Topic: "t-alice", Partition: 0, At: 0, LeaderEpoch: -1})
		offs.Add(kadm.Offset{Topic: "t-other", Partition: 0, At: 0, LeaderEpoch: -1})
		if res, err := adm.CommitOffsets(ctx, g, offs); err != nil || res.Error() != nil {
			t.Fatalf("commit to %s: %v %v", g, err, res.Error())
		}
	}
	td, err := adm.ListTopics(ctx)
	if err != nil {
		t.Fatal(err)
	}
	otherID := td["t-other"].ID

	seed := func(user, pw string) *kgo.Broker {
		cl, err := kgo.NewClient(kgo.SeedBrokers(secure), kgo.SASL(saslMechanisms(user, pw)["SCRAM-SHA-256"]),
			kgo.RequestRetries(0))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(cl.Close)
		return cl.SeedBrokers()[0]
	}
	alice, bob := seed("alice", "a-pw"), seed("bob", "b-pw")
	send := func(t *testing.T, br *kgo.Broker, req kmsg.Request) kmsg.Response {
		t.Helper()
		resp, err := br.Request(ctx, req)
		if err != nil {
			t.Fatalf("%T: %v", req, err)
		}
		return resp
	}

	type check struct {
		name string
		as   *kgo.Broker
		req  func() kmsg.Request
		code func(kmsg.Response) int16
		want *kerr.Error // nil: no error
	}
	deleteTopic := func(name string) func() kmsg.Request {
		return func() kmsg.Request {
			r := kmsg.NewPtrDeleteTopicsRequest()
			r.TopicNames = []string{name}
			rt := kmsg.NewDeleteTopicsRequestTopic()
			rt.Topic = kmsg.StringPtr(name)
			r.Topics = append(r.Topics, rt)
			r.TimeoutMillis = 10000
			return r
		}
	}
	deleteTopicCode := func(r kmsg.Response) int16 { return r.(*kmsg.DeleteTopicsResponse).Topics[0].ErrorCode }
	createParts := func(topic string) func() kmsg.Request {
		return func() kmsg.Request {
			r := kmsg.NewPtrCreatePartitionsRequest()
			rt := kmsg.NewCreatePartitionsRequestTopic()
			rt.Topic, rt.Count = topic, 2
			r.Topics, r.TimeoutMillis, r.ValidateOnly = append(r.Topics, rt), 10000, true
			return r
		}
	}
	deleteRecords := func(topic string) func() kmsg.Request {
		return func() kmsg.Request {
			r := kmsg.NewPtrDeleteRecordsRequest()
			rt := kmsg.NewDeleteRecordsRequestTopic()
			rt.Topic = topic
			rp := kmsg.NewDeleteRecordsRequestTopicPartition()
			rp.Offset = 0
			rt.Partitions = append(rt.Partitions, rp)
			r.Topics, r.TimeoutMillis = append(r.Topics, rt), 10000
			return r
		}
	}
	describeConfigs := func(typ kmsg.ConfigResourceType, name string) func() kmsg.Request {
		return func() kmsg.Request {
			r := kmsg.NewPtrDescribeConfigsRequest()
			rr := kmsg.NewDescribeConfigsRequestResource()
			rr.ResourceType, rr.ResourceName = typ, name
			r.Resources = append(r.Resources, rr)
			return r
		}
	}
	incAlter := func(topic string) func() kmsg.Request {
		return func() kmsg.Request {
			r := kmsg.NewPtrIncrementalAlterConfigsRequest()
			rr := kmsg.NewIncrementalAlterConfigsRequestResource()
			rr.ResourceType, rr.ResourceName = kmsg.ConfigResourceTypeTopic, topic
			c := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
			c.Name, c.Value = "retention.ms", kmsg.StringPtr("86400000")
			rr.Configs = append(rr.Configs, c)
			r.Resources, r.ValidateOnly = append(r.Resources, rr), true
			return r
		}
	}
	epoch := func(topic string) func() kmsg.Request {
		return func() kmsg.Request {
			r := kmsg.NewPtrOffsetForLeaderEpochRequest()
			r.ReplicaID = -1
			rt := kmsg.NewOffsetForLeaderEpochRequestTopic()
			rt.Topic = topic
			rp := kmsg.NewOffsetForLeaderEpochRequestTopicPartition()
			rp.CurrentLeaderEpoch, rp.LeaderEpoch = -1, 0
			rt.Partitions = append(rt.Partitions, rp)
			r.Topics = append(r.Topics, rt)
			return r
		}
	}
	initPID := func(txn *string) func() kmsg.Request {
		return func() kmsg.Request {
			r := kmsg.NewPtrInitProducerIDRequest()
			r.TransactionalID, r.TransactionTimeoutMillis = txn, 60000
			r.ProducerID, r.ProducerEpoch = -1, -1
			return r
		}
	}
	findCoordinator := func(g string) func() kmsg.Request {
		return func() kmsg.Request {
			r := kmsg.NewPtrFindCoordinatorRequest()
			r.CoordinatorKey, r.CoordinatorKeys = g, []string{g}
			return r
		}
	}
	findCode := func(r kmsg.Response) int16 {
		fr := r.(*kmsg.FindCoordinatorResponse)
		if len(fr.Coordinators) > 0 {
			return fr.Coordinators[0].ErrorCode
		}
		return fr.ErrorCode
	}
	commit := func(g, topic string) func() kmsg.Request {
		return func() kmsg.Request {
			r := kmsg.NewPtrOffsetCommitRequest()
			r.Group, r.Generation = g, -1
			rt := kmsg.NewOffsetCommitRequestTopic()
			rt.Topic, rt.TopicID = topic, td[topic].ID // v10 names topics by id
			rp := kmsg.NewOffsetCommitRequestTopicPartition()
			rp.Offset, rp.LeaderEpoch = 0, -1
			rt.Partitions = append(rt.Partitions, rp)
			r.Topics = append(r.Topics, rt)
			return r
		}
	}
	commitCode := func(r kmsg.Response) int16 { return r.(*kmsg.OffsetCommitResponse).Topics[0].Partitions[0].ErrorCode }
	fetchOffsets := func(g, topic string) func() kmsg.Request {
		return func() kmsg.Request {
			r := kmsg.NewPtrOffsetFetchRequest()
			rg := kmsg.NewOffsetFetchRequestGroup()
			rg.Group = g
			rt := kmsg.NewOffsetFetchRequestGroupTopic()
			rt.Topic, rt.TopicID, rt.Partitions = topic, td[topic].ID, []int32{0} // v10 names topics by id
			rg.Topics = append(rg.Topics, rt)
			r.Groups = append(r.Groups, rg)
			return r
		}
	}
	fetchCode := func(r kmsg.Response) int16 {
		g := r.(*kmsg.OffsetFetchResponse).Groups[0]
		if g.ErrorCode != 0 {
			return g.ErrorCode
		}
		return g.Topics[0].Partitions[0].ErrorCode
	}
	groupReq := func(mk func(g string) kmsg.Request) func(string) func() kmsg.Request {
		return func(g string) func() kmsg.Request { return func() kmsg.Request { return mk(g) } }
	}
	join := groupReq(func(g string) kmsg.Request {
		r := kmsg.NewPtrJoinGroupRequest()
		r.Group, r.SessionTimeoutMillis, r.RebalanceTimeoutMillis, r.ProtocolType = g, 10000, 10000, "consumer"
		p := kmsg.NewJoinGroupRequestProtocol()
		p.Name, p.Metadata = "range", []byte{0}
		r.Protocols = append(r.Protocols, p)
		return r
	})
	heartbeat := groupReq(func(g string) kmsg.Request {
		r := kmsg.NewPtrHeartbeatRequest()
		r.Group, r.MemberID, r.Generation = g, "m", 1
		return r
	})
	syncGroup := groupReq(func(g string) kmsg.Request {
		r := kmsg.NewPtrSyncGroupRequest()
		r.Group, r.MemberID, r.Generation = g, "m", 1
		return r
	})
	leave := groupReq(func(g string) kmsg.Request {
		r := kmsg.NewPtrLeaveGroupRequest()
		r.Group = g
		m := kmsg.NewLeaveGroupRequestMember()
		m.MemberID = "m"
		r.Members = append(r.Members, m)
		return r
	})
	describeGroup := groupReq(func(g string) kmsg.Request {
		r := kmsg.NewPtrDescribeGroupsRequest()
		r.Groups, r.IncludeAuthorizedOperations = []string{g}, true
		return r
	})
	deleteGroup := groupReq(func(g string) kmsg.Request {
		r := kmsg.NewPtrDeleteGroupsRequest()
		r.Groups = []string{g}
		return r
	})
	offsetDelete := func(g, topic string) func() kmsg.Request {
		return func() kmsg.Request {
			r := kmsg.NewPtrOffsetDeleteRequest()
			r.Group = g
			rt := kmsg.NewOffsetDeleteRequestTopic()
			rt.Topic = topic
			rp := kmsg.NewOffsetDeleteRequestTopicPartition()
			rt.Partitions = append(rt.Partitions, rp)
			r.Topics = append(r.Topics, rt)
			return r
		}
	}
	offsetDeleteCode := func(r kmsg.Response) int16 {
		od := r.(*kmsg.OffsetDeleteResponse)
		if od.ErrorCode != 0 {
			return od.ErrorCode
		}
		return od.Topics[0].Partitions[0].ErrorCode
	}
	headerCode := func(r kmsg.Response) int16 {
		switch r := r.(type) {
		case *kmsg.JoinGroupResponse:
			return r.ErrorCode
		case *kmsg.HeartbeatResponse:
			return r.ErrorCode
		case *kmsg.SyncGroupResponse:
			return r.ErrorCode
		case *kmsg.LeaveGroupResponse:
			return r.ErrorCode
		case *kmsg.DescribeLogDirsResponse:
			return r.ErrorCode
		case *kmsg.InitProducerIDResponse:
			return r.ErrorCode
		}
		t.Fatalf("no header code in %T", r)
		return 0
	}

	checks := []check{
		{"DeleteTopics without DELETE", alice, deleteTopic("t-other"), deleteTopicCode, kerr.TopicAuthorizationFailed},
		{"DeleteTopics of a missing topic without DELETE", bob, deleteTopic("nope"), deleteTopicCode, kerr.TopicAuthorizationFailed},
		{"DeleteTopics with DELETE", alice, deleteTopic("t-alice-del"), deleteTopicCode, nil},
		{"CreatePartitions without ALTER", alice, createParts("t-other"), func(r kmsg.Response) int16 {
			return r.(*kmsg.CreatePartitionsResponse).Topics[0].ErrorCode
		}, kerr.TopicAuthorizationFailed},
		{"CreatePartitions with ALTER", alice, createParts("t-alice"), func(r kmsg.Response) int16 {
			return r.(*kmsg.CreatePartitionsResponse).Topics[0].ErrorCode
		}, nil},
		{"DeleteRecords without DELETE", alice, deleteRecords("t-other"), func(r kmsg.Response) int16 {
			return r.(*kmsg.DeleteRecordsResponse).Topics[0].Partitions[0].ErrorCode
		}, kerr.TopicAuthorizationFailed},
		{"DeleteRecords with DELETE", alice, deleteRecords("t-alice"), func(r kmsg.Response) int16 {
			return r.(*kmsg.DeleteRecordsResponse).Topics[0].Partitions[0].ErrorCode
		}, nil},
		{"DescribeConfigs topic without DESCRIBE_CONFIGS", alice, describeConfigs(kmsg.ConfigResourceTypeTopic, "t-other"), func(r kmsg.Response) int16 {
			return r.(*kmsg.DescribeConfigsResponse).Resources[0].ErrorCode
		}, kerr.TopicAuthorizationFailed},
		{"DescribeConfigs topic with ALL", alice, describeConfigs(kmsg.ConfigResourceTypeTopic, "t-alice"), func(r kmsg.Response) int16 {
			return r.(*kmsg.DescribeConfigsResponse).Resources[0].ErrorCode
		}, nil},
		{"DescribeConfigs broker without cluster DESCRIBE_CONFIGS", alice, describeConfigs(kmsg.ConfigResourceTypeBroker, "1"), func(r kmsg.Response) int16 {
			return r.(*kmsg.DescribeConfigsResponse).Resources[0].ErrorCode
		}, kerr.ClusterAuthorizationFailed},
		{"IncrementalAlterConfigs without ALTER_CONFIGS", alice, incAlter("t-other"), func(r kmsg.Response) int16 {
			return r.(*kmsg.IncrementalAlterConfigsResponse).Resources[0].ErrorCode
		}, kerr.TopicAuthorizationFailed},
		{"IncrementalAlterConfigs with ALL", alice, incAlter("t-alice"), func(r kmsg.Response) int16 {
			return r.(*kmsg.IncrementalAlterConfigsResponse).Resources[0].ErrorCode
		}, nil},
		{"OffsetForLeaderEpoch without DESCRIBE", alice, epoch("t-other"), func(r kmsg.Response) int16 {
			return r.(*kmsg.OffsetForLeaderEpochResponse).Topics[0].Partitions[0].ErrorCode
		}, kerr.TopicAuthorizationFailed},
		{"OffsetForLeaderEpoch with DESCRIBE", alice, epoch("t-alice"), func(r kmsg.Response) int16 {
			return r.(*kmsg.OffsetForLeaderEpochResponse).Topics[0].Partitions[0].ErrorCode
		}, nil},
		{"DescribeLogDirs without cluster DESCRIBE", bob, func() kmsg.Request { return kmsg.NewPtrDescribeLogDirsRequest() }, headerCode, kerr.ClusterAuthorizationFailed},
		{"DescribeLogDirs with cluster DESCRIBE", alice, func() kmsg.Request { return kmsg.NewPtrDescribeLogDirsRequest() }, headerCode, nil},
		{"InitProducerId idempotent without any WRITE", bob, initPID(nil), headerCode, kerr.ClusterAuthorizationFailed},
		{"InitProducerId idempotent with WRITE on some topic", alice, initPID(nil), headerCode, nil},
		{"InitProducerId transactional without WRITE", alice, initPID(kmsg.StringPtr("tx")), headerCode, kerr.TransactionalIDAuthorizationFailed},
		{"FindCoordinator without group DESCRIBE", alice, findCoordinator("g-other"), findCode, kerr.GroupAuthorizationFailed},
		{"FindCoordinator with group READ", alice, findCoordinator("g-alice"), findCode, nil},
		{"FindCoordinator share key without cluster CLUSTER_ACTION", alice, func() kmsg.Request {
			r := kmsg.NewPtrFindCoordinatorRequest()
			r.CoordinatorType, r.CoordinatorKeys = 2, []string{"g-alice:AAECAwQFBgcICQoLDA0ODw:0"}
			return r
		}, findCode, kerr.ClusterAuthorizationFailed},
		{"JoinGroup without group READ", alice, join("g-other"), headerCode, kerr.GroupAuthorizationFailed},
		{"Heartbeat without group READ", alice, heartbeat("g-other"), headerCode, kerr.GroupAuthorizationFailed},
		{"SyncGroup without group READ", alice, syncGroup("g-other"), headerCode, kerr.GroupAuthorizationFailed},
		{"LeaveGroup without group READ", bob, leave("g-alice"), headerCode, kerr.GroupAuthorizationFailed},
		{"OffsetCommit without group READ", alice, commit("g-other", "t-alice"), commitCode, kerr.GroupAuthorizationFailed},
		{"OffsetCommit without topic READ", alice, commit("g-alice", "t-other"), commitCode, kerr.TopicAuthorizationFailed},
		{"OffsetCommit with both", alice, commit("g-alice", "t-alice"), commitCode, nil},
		{"OffsetFetch without group DESCRIBE", alice, fetchOffsets("g-other", "t-alice"), fetchCode, kerr.GroupAuthorizationFailed},
		{"OffsetFetch without topic READ", alice, fetchOffsets("g-alice", "t-other"), fetchCode, kerr.TopicAuthorizationFailed},
		{"OffsetFetch with both", alice, fetchOffsets("g-alice", "t-alice"), fetchCode, nil},
		{"DescribeGroups without group DESCRIBE", alice, describeGroup("g-other"), func(r kmsg.Response) int16 {
			return r.(*kmsg.DescribeGroupsResponse).Groups[0].ErrorCode
		}, kerr.GroupAuthorizationFailed},
		{"DeleteGroups without group DELETE", bob, deleteGroup("g-alice"), func(r kmsg.Response) int16 {
			return r.(*kmsg.DeleteGroupsResponse).Groups[0].ErrorCode
		}, kerr.GroupAuthorizationFailed},
		{"OffsetDelete without group DELETE", alice, offsetDelete("g-other", "t-alice"), offsetDeleteCode, kerr.GroupAuthorizationFailed},
		{"OffsetDelete without topic READ", alice, offsetDelete("g-alice", "t-other"), offsetDeleteCode, kerr.TopicAuthorizationFailed},
		{"OffsetDelete with both", alice, offsetDelete("g-alice", "t-alice"), offsetDeleteCode, nil},
	}
	for _, c := range checks {
		t.Run(c.name, func(t *testing.T) {
			got := c.code(send(t, c.as, c.req()))
			want := int16(0)
			if c.want != nil {
				want = c.want.Code
			}
			if got != want {
				t.Fatalf("error code %v, want %v", kerr.ErrorForCode(got), c.want)
			}
		})
	}

	t.Run("DeleteTopics by id without DESCRIBE hides the name", func(t *testing.T) {
		r := kmsg.NewPtrDeleteTopicsRequest()
		rt := kmsg.NewDeleteTopicsRequestTopic()
		rt.TopicID = otherID
		r.Topics, r.TimeoutMillis = append(r.Topics, rt), 10000
		got := send(t, alice, r).(*kmsg.DeleteTopicsResponse).Topics[0]
		if got.ErrorCode != kerr.TopicAuthorizationFailed.Code || got.Topic != nil {
			t.Fatalf("answer %v name %v, want TOPIC_AUTHORIZATION_FAILED without a name", kerr.ErrorForCode(got.ErrorCode), got.Topic)
		}
	})
	t.Run("DescribeCluster reports the authorized operations", func(t *testing.T) {
		for _, tc := range []struct {
			as   *kgo.Broker
			want int32
		}{{alice, 1 << 8}, {bob, 0}} {
			r := kmsg.NewPtrDescribeClusterRequest()
			r.IncludeClusterAuthorizedOperations = true
			if got := send(t, tc.as, r).(*kmsg.DescribeClusterResponse).ClusterAuthorizedOperations; got != tc.want {
				t.Fatalf("operations %b, want %b", got, tc.want)
			}
		}
	})
	t.Run("DescribeGroups reports the authorized operations", func(t *testing.T) {
		g := send(t, alice, describeGroup("g-alice")()).(*kmsg.DescribeGroupsResponse).Groups[0]
		if want := int32(1<<3 | 1<<6 | 1<<8); g.ErrorCode != 0 || g.AuthorizedOperations != want {
			t.Fatalf("code %d operations %b, want %b", g.ErrorCode, g.AuthorizedOperations, want)
		}
	})
	t.Run("DescribeTopicPartitions hides and refuses", func(t *testing.T) {
		all := send(t, alice, kmsg.NewPtrDescribeTopicPartitionsRequest()).(*kmsg.DescribeTopicPartitionsResponse)
		for _, tp := range all.Topics {
			if *tp.Topic == "t-other" {
				t.Fatal("t-other listed to alice")
			}
		}
		r := kmsg.NewPtrDescribeTopicPartitionsRequest()
		rt := kmsg.NewDescribeTopicPartitionsRequestTopic()
		rt.Topic = "t-other"
		r.Topics = append(r.Topics, rt)
		named := send(t, alice, r).(*kmsg.DescribeTopicPartitionsResponse)
		if len(named.Topics) != 1 || named.Topics[0].ErrorCode != kerr.TopicAuthorizationFailed.Code {
			t.Fatalf("named answer %+v", named.Topics)
		}
	})
	t.Run("ListGroups lists only describable groups", func(t *testing.T) {
		got := send(t, bob, kmsg.NewPtrListGroupsRequest()).(*kmsg.ListGroupsResponse)
		if len(got.Groups) != 0 {
			t.Fatalf("bob sees %+v", got.Groups)
		}
		got = send(t, alice, kmsg.NewPtrListGroupsRequest()).(*kmsg.ListGroupsResponse)
		if len(got.Groups) != 2 {
			t.Fatalf("alice (cluster DESCRIBE) sees %+v, want both groups", got.Groups)
		}
	})
}
