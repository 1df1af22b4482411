package server

import (
	"context"
	"crypto/tls"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kbin"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/gregorbroker/gregor/core/config"
)

// securedControllerCluster starts 3 nodes whose controller listener runs
// proto with the ACL authorizer; the primary Kafka listener stays
// PLAINTEXT, its anonymous principal a super user, to drive the test.
func securedControllerCluster(t *testing.T, proto string) (map[int32]*Server, *testPKI, *kadm.Client) {
	pki := newTestPKI(t)
	certFile, keyFile := pki.issue("broker")
	servers := startTestCluster(t, 3, func(_ int32, cfg *config.Config) {
		cfg.Cluster.ControllerListenerProtocol = proto
		cfg.Security.Authorizer = "acl"
		cfg.Security.SuperUsers = []string{"User:ANONYMOUS", "User:CN=broker", "User:CN=admin", "User:controller"}
		cfg.Security.TLSCertFile, cfg.Security.TLSKeyFile, cfg.Security.TLSCAFile = certFile, keyFile, pki.caFile
		if config.IsSASLProtocol(proto) {
			cfg.Cluster.InterBrokerSASLMechanism = "SCRAM-SHA-512"
			cfg.Cluster.InterBrokerSASLUsername = "controller"
			cfg.Cluster.InterBrokerSASLPassword = "controller-secret"
		}
	})
	var seeds []string
	for _, s := range servers {
		seeds = append(seeds, s.KafkaAddr())
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(seeds...))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return servers, pki, kadm.NewClient(cl)
}

// waitBrokers waits until every node lists all n brokers.
func waitBrokers(t *testing.T, ctx context.Context, servers map[int32]*Server) {
	for id, srv := range servers {
		cl, err := kgo.NewClient(kgo.SeedBrokers(srv.KafkaAddr()))
		if err != nil {
			t.Fatal(err)
		}
		poll(t, ctx, fmt.Sprintf("node %d lists %d brokers", id, len(servers)), func() error {
			r, err := kmsg.NewPtrMetadataRequest().RequestWith(ctx, cl.SeedBrokers()[0])
			if err == nil && len(r.Brokers) != len(servers) {
				err = fmt.Errorf("%d brokers", len(r.Brokers))
			}
			return err
		})
		cl.Close()
	}
}

// A cluster forms over a secured controller listener (Raft and the RPCs),
// and admin writes on every node, forwarded to the active controller with
// the client's principal, are applied.
func TestSecuredControllerPlane(t *testing.T) {
	for _, proto := range []string{config.ProtocolSSL, config.ProtocolSASLPlaintext, config.ProtocolSASLSSL} {
		t.Run(proto, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			servers, _, _ := securedControllerCluster(t, proto)
			waitBrokers(t, ctx, servers)
			for id, srv := range servers {
				cl, err := kgo.NewClient(kgo.SeedBrokers(srv.KafkaAddr()))
				if err != nil {
					t.Fatal(err)
				}
				adm := kadm.NewClient(cl)
				topic := fmt.Sprintf("via-node-%d", id)
				// Every node answers for itself (kadm would send the
				// request to the controller it learns from metadata).
				req := kmsg.NewPtrCreateTopicsRequest()
				rt := kmsg.NewCreateTopicsRequestTopic()
				rt.Topic, rt.NumPartitions, rt.ReplicationFactor = topic, 1, 3
				req.Topics = append(req.Topics, rt)
				resp, err := req.RequestWith(ctx, cl.SeedBrokers()[0])
				if err != nil || resp.Topics[0].ErrorCode != 0 {
					t.Fatalf("create %s on node %d: %v %+v", topic, id, err, resp)
				}
				acls := kadm.NewACLs().Allow(fmt.Sprintf("User:u%d", id)).AllowHosts("*").Topics(topic).
					Operations(kadm.OpRead).ResourcePatternType(kadm.ACLPatternLiteral)
				created, err := adm.CreateACLs(ctx, acls)
				if err != nil || len(created) != 1 || created[0].Err != nil {
					t.Fatalf("create acl on node %d: %v %+v", id, err, created)
				}
				cl.Close()
			}
		})
	}
}

// forwardFrame is a controller-RPC frame asking the active controller to
// propose records (key 0x4752 version 1, JSON body).
func forwardFrame(t *testing.T, principal string, records ...string) []byte {
	body := map[string]any{"records": func() []json.RawMessage {
		var out []json.RawMessage
		for _, r := range records {
			out = append(out, json.RawMessage(r))
		}
		return out
	}()}
	if principal != "" {
		body["principal"] = principal
	}
	js, err := json.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	out := kbin.AppendInt32(nil, 0)
	out = kbin.AppendInt16(out, 0x4752)
	out = kbin.AppendInt16(out, 1)
	out = kbin.AppendInt32(out, 7)
	out = kbin.AppendNullableString(out, nil)
	out = append(out, js...)
	binary.BigEndian.PutUint32(out, uint32(len(out)-4))
	return out
}

const mallorysACL = `{"v":1,"type":"create_acls","data":{"acls":[{"resource_type":4,"resource_name":"kafka-cluster","pattern_type":3,"principal":"User:mallory","host":"*","operation":2,"permission":3}]}}`

// exchangeForward writes frame on conn and returns the response body, or
// an error when the peer closes or stays silent.
func exchangeForward(conn net.Conn, frame []byte) (string, error) {
	conn.SetDeadline(time.Now().Add(3 * time.Second))
	if _, err := conn.Write(frame); err != nil {
		return "", err
	}
	var size [4]byte
	if _, err := io.ReadFull(conn, size[:]); err != nil {
		return "", err
	}
	buf := make([]byte, binary.BigEndian.Uint32(size[:]))
	if _, err := io.ReadFull(conn, buf); err != nil {
		return "", err
	}
	return string(buf[4:]), nil
}

func mallorysACLs(t *testing.T, ctx context.Context, adm *kadm.Client) int {
	t.Helper()
	res, err := adm.DescribeACLs(ctx, kadm.NewACLs().Allow("User:mallory").AllowHosts().Clusters().
		Operations(kadm.OpAny).ResourcePatternType(kadm.ACLPatternAny))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, r := range res {
		if r.Err != nil {
			t.Fatal(r.Err)
		}
		n += len(r.Described)
	}
	return n
}

// An unauthenticated client on the SSL controller port is refused before
// anything it sends is decoded: plain TCP garbage, a well-formed forward
// frame, TLS without a certificate, a certificate whose principal is not a
// super user. A super-user peer that forwards an admin record without a
// client principal is refused with CLUSTER_AUTHORIZATION_FAILED. No ACL
// appears.
func TestControllerPlaneRefusesStrangers(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	servers, pki, adm := securedControllerCluster(t, config.ProtocolSSL)
	waitBrokers(t, ctx, servers)
	frame := forwardFrame(t, "User:mallory", mallorysACL)

	for id, srv := range servers {
		addr := srv.ControllerAddr()
		probes := map[string]func() (net.Conn, error){
			"plain TCP": func() (net.Conn, error) { return net.Dial("tcp", addr) },
			"TLS without a certificate": func() (net.Conn, error) {
				return tls.Dial("tcp", addr, &tls.Config{RootCAs: pki.pool, MinVersion: tls.VersionTLS12})
			},
			"certificate of a non-super user": func() (net.Conn, error) {
				return tls.Dial("tcp", addr, pki.clientTLS("mallory"))
			},
		}
		for name, dial := range probes {
			for _, payload := range [][]byte{[]byte("GET / HTTP/1.1\r\n\r\n\x00\x00\x00\x00garbage"), frame} {
				conn, err := dial()
				if err != nil {
					continue // refused during the handshake
				}
				if resp, err := exchangeForward(conn, payload); err == nil {
					t.Errorf("node %d, %s: the controller answered %q", id, name, resp)
				}
				conn.Close()
			}
		}
	}
	// A super user's certificate: the connection is admitted, but a
	// create_acls record without a client principal is refused.
	refused := 0
	for _, srv := range servers {
		conn, err := tls.Dial("tcp", srv.ControllerAddr(), pki.clientTLS("admin"))
		if err != nil {
			t.Fatal(err)
		}
		resp, err := exchangeForward(conn, forwardFrame(t, "", mallorysACL))
		conn.Close()
		if err != nil {
			t.Fatalf("super-user peer: %v", err)
		}
		if strings.Contains(resp, `"code":31`) {
			refused++
		} else if !strings.Contains(resp, `"code":41`) { // NOT_CONTROLLER
			t.Errorf("forward without a principal: %s", resp)
		}
	}
	if refused != 1 {
		t.Errorf("%d active controllers refused the record, want 1", refused)
	}
	if n := mallorysACLs(t, ctx, adm); n != 0 {
		t.Fatalf("%d ACLs for User:mallory were created", n)
	}
}

// The controller listener serves a rotated certificate without a restart,
// as the Kafka listeners do: new connections get the new certificate.
func TestControllerPlaneCertificateRotation(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	servers, pki, _ := securedControllerCluster(t, config.ProtocolSSL)
	waitBrokers(t, ctx, servers)
	addr := servers[1].ControllerAddr()
	admin := pki.clientTLS("admin") // a super user; issued once, unlike the nodes' certificate
	serial := func() (string, error) {
		c, err := tls.Dial("tcp", addr, admin)
		if err != nil {
			return "", err
		}
		defer c.Close()
		return c.ConnectionState().PeerCertificates[0].SerialNumber.String(), nil
	}
	before, err := serial()
	if err != nil {
		t.Fatal(err)
	}
	pki.issue("broker") // the nodes' certificate and key files, rewritten with a new serial
	poll(t, ctx, "the controller listener serves the rotated certificate", func() error {
		now, err := serial()
		if err == nil && now == before {
			err = fmt.Errorf("still serial %s", now)
		}
		return err
	})
	// The cluster still works over the new certificate.
	waitBrokers(t, ctx, servers)
}
