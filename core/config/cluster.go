package config

import (
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
)

// Cluster is the [cluster] section: the controller quorum's voters and the
// broker liveness settings the active controller enforces.
type Cluster struct {
	// Voters are the controller quorum as "id@host:port" entries, each
	// port being that node's listeners.controller (Kafka's
	// controller.quorum.voters). Empty means the single-node default.
	Voters []string `toml:"voters"`
	// BrokerSessionTimeoutMs is how long a broker may go without a
	// heartbeat before the controller fences it and moves its leaderships
	// (broker.session.timeout.ms).
	BrokerSessionTimeoutMs int64 `toml:"broker_session_timeout_ms"`
	// BrokerHeartbeatIntervalMs is how often a broker heartbeats to the
	// active controller (broker.heartbeat.interval.ms).
	BrokerHeartbeatIntervalMs int64 `toml:"broker_heartbeat_interval_ms"`
	// ControlledShutdownTimeoutMs bounds how long a stopping broker waits
	// for the controller to move its leaderships away.
	ControlledShutdownTimeoutMs int64 `toml:"controlled_shutdown_timeout_ms"`
	// QuorumElectionTimeoutMs is how long a voter hears nothing from the
	// Raft leader before it stands for election, and how often the leader
	// must reach a quorum to stay leader (Kafka's
	// controller.quorum.election.timeout.ms). Multi-node only; a single
	// node elects itself at once.
	QuorumElectionTimeoutMs int64 `toml:"quorum_election_timeout_ms"`
	// InterBrokerListener names the listener followers fetch from (Kafka's
	// inter.broker.listener.name): empty or the primary listener's name
	// (its protocol) means the primary listener, otherwise the name of a
	// [[listeners.extra]] entry. Every broker of a cluster must have it.
	InterBrokerListener string `toml:"inter_broker_listener"`
	// InterBrokerSASLMechanism, InterBrokerSASLUsername and
	// InterBrokerSASLPassword are this broker's credentials on a SASL
	// inter-broker listener (Kafka's listener.name.X.sasl.jaas.config):
	// PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512. On a TLS inter-broker
	// listener the peers' certificates are verified with
	// security.tls_ca_file and this broker presents security.tls_cert_file.
	InterBrokerSASLMechanism string `toml:"inter_broker_sasl_mechanism"`
	InterBrokerSASLUsername  string `toml:"inter_broker_sasl_username"`
	InterBrokerSASLPassword  string `toml:"inter_broker_sasl_password"`
	// ControllerListenerProtocol secures listeners.controller, which
	// carries Raft and the controller RPCs: PLAINTEXT, SSL (security.tls_*
	// with client certificates required), SASL_PLAINTEXT or SASL_SSL (with
	// the inter_broker_sasl_* credentials). Only a peer whose principal is
	// in security.super_users is accepted. Empty means PLAINTEXT.
	ControllerListenerProtocol string `toml:"controller_listener_protocol"`
	// AllowInsecureController lets a multi-node cluster with an authorizer
	// run a PLAINTEXT controller listener that is reachable off the host.
	AllowInsecureController bool `toml:"allow_insecure_controller"`
}

func defaultCluster() Cluster {
	return Cluster{
		BrokerSessionTimeoutMs:      9000,
		BrokerHeartbeatIntervalMs:   2000,
		ControlledShutdownTimeoutMs: 30000,
		QuorumElectionTimeoutMs:     1000,
		ControllerListenerProtocol:  ProtocolPlaintext,
	}
}

// Voter is one member of the controller quorum.
type Voter struct {
	ID int32
	// Address is the voter's listeners.controller as host:port.
	Address string
}

// ParseVoter reads one "id@host:port" entry of cluster.voters.
func ParseVoter(s string) (Voter, error) {
	idStr, addr, ok := strings.Cut(strings.TrimSpace(s), "@")
	if !ok {
		return Voter{}, fmt.Errorf("%q is not id@host:port", s)
	}
	id, err := strconv.ParseInt(idStr, 10, 32)
	if err != nil || id < 0 {
		return Voter{}, fmt.Errorf("%q: the node id %q is not a non-negative 32-bit integer", s, idStr)
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return Voter{}, fmt.Errorf("%q: %v", s, err)
	}
	if host == "" {
		return Voter{}, fmt.Errorf("%q: the host is empty", s)
	}
	if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
		return Voter{}, fmt.Errorf("%q: port %q is not in [1, 65535]", s, port)
	}
	return Voter{ID: int32(id), Address: addr}, nil
}

// Voters parses cluster.voters; Validate has checked it.
func (c *Config) Voters() []Voter {
	out := make([]Voter, 0, len(c.Cluster.Voters))
	for _, s := range c.Cluster.Voters {
		if v, err := ParseVoter(s); err == nil {
			out = append(out, v)
		}
	}
	return out
}

// MultiNode reports whether [cluster] voters makes this node part of a
// multi-node cluster.
func (c *Config) MultiNode() bool { return len(c.Cluster.Voters) > 0 }

// IsVoter reports whether this node is a member of the controller quorum.
func (c *Config) IsVoter() bool {
	for _, v := range c.Voters() {
		if v.ID == c.NodeID {
			return true
		}
	}
	return false
}

// InterBrokerListener is the listener followers fetch from: the one
// cluster.inter_broker_listener names, or the primary listener. ok is
// false when no listener has that name (Validate refuses such a config).
func (c *Config) InterBrokerListener() (spec ListenerSpec, ok bool) {
	ls := c.KafkaListeners()
	name := c.Cluster.InterBrokerListener
	if name == "" {
		return ls[0], true
	}
	for _, l := range ls {
		if l.Name == name {
			return l, true
		}
	}
	return ListenerSpec{}, false
}

// IsTLSProtocol reports whether a listener protocol runs over TLS.
func IsTLSProtocol(p string) bool { return p == ProtocolSSL || p == ProtocolSASLSSL }

// IsSASLProtocol reports whether a listener protocol authenticates with SASL.
func IsSASLProtocol(p string) bool { return p == ProtocolSASLPlaintext || p == ProtocolSASLSSL }

// validateInterBroker checks the inter-broker listener and this broker's
// credentials for it; it runs after the listeners are validated. A
// single node never dials a peer, so only a multi-node config must carry
// what a secured listener needs.
func (c *Config) validateInterBroker(bad func(key, format string, args ...any) error) error {
	cl := c.Cluster
	l, ok := c.InterBrokerListener()
	if !ok {
		names := make([]string, 0, 1+len(c.Listeners.Extra))
		for _, l := range c.KafkaListeners() {
			names = append(names, l.Name)
		}
		return bad("cluster.inter_broker_listener", "no listener is named %q (listeners: %s)",
			cl.InterBrokerListener, strings.Join(names, ", "))
	}
	switch cl.InterBrokerSASLMechanism {
	case "", "PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512":
	default:
		return bad("cluster.inter_broker_sasl_mechanism", "%q is not PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512",
			cl.InterBrokerSASLMechanism)
	}
	hasCreds := cl.InterBrokerSASLMechanism != "" || cl.InterBrokerSASLUsername != "" || cl.InterBrokerSASLPassword != ""
	if hasCreds {
		switch {
		case !IsSASLProtocol(l.Protocol) && !IsSASLProtocol(c.ControllerProtocol()):
			return bad("cluster.inter_broker_sasl_mechanism", "the inter-broker listener %s is %s, not SASL, nor is the controller listener: its SASL credentials would never be used",
				l.Name, l.Protocol)
		case cl.InterBrokerSASLMechanism == "":
			return bad("cluster.inter_broker_sasl_mechanism", "must be set with inter_broker_sasl_username and inter_broker_sasl_password")
		case cl.InterBrokerSASLUsername == "":
			return bad("cluster.inter_broker_sasl_username", "must be set with inter_broker_sasl_mechanism")
		case cl.InterBrokerSASLPassword == "":
			return bad("cluster.inter_broker_sasl_password", "must be set with inter_broker_sasl_mechanism")
		}
		offered := false
		for _, m := range c.Security.SASLMechanisms {
			offered = offered || m == cl.InterBrokerSASLMechanism
		}
		if !offered {
			return bad("cluster.inter_broker_sasl_mechanism", "%s is not offered by security.sasl_mechanisms %v",
				cl.InterBrokerSASLMechanism, c.Security.SASLMechanisms)
		}
	}
	if !c.MultiNode() {
		return nil
	}
	if IsSASLProtocol(l.Protocol) && !hasCreds {
		return bad("cluster.inter_broker_sasl_mechanism", "the inter-broker listener %s is %s: followers need inter_broker_sasl_mechanism, inter_broker_sasl_username and inter_broker_sasl_password to fetch from it",
			l.Name, l.Protocol)
	}
	if IsTLSProtocol(l.Protocol) && c.Security.TLSCAFile == "" {
		return bad("security.tls_ca_file", "the inter-broker listener %s is %s: followers need a CA to verify the leaders' certificates",
			l.Name, l.Protocol)
	}
	// Without an authorizer a leader answers follower fetches on a SASL
	// inter-broker listener from super users only, when any are listed.
	noAuthorizer := c.Security.Authorizer == "" || c.Security.Authorizer == "none"
	if su := c.Security.SuperUsers; IsSASLProtocol(l.Protocol) && noAuthorizer && len(su) > 0 && !slices.Contains(su, "User:"+cl.InterBrokerSASLUsername) {
		return bad("security.super_users", "the inter-broker listener %s is %s: followers fetch as User:%s, and follower fetches there are accepted from super users only: add it",
			l.Name, l.Protocol, cl.InterBrokerSASLUsername)
	}
	return nil
}

func (c *Config) validateCluster(bad func(key, format string, args ...any) error) error {
	cl := c.Cluster
	switch {
	case cl.BrokerSessionTimeoutMs < 1:
		return bad("cluster.broker_session_timeout_ms", "%d is below 1", cl.BrokerSessionTimeoutMs)
	case cl.BrokerHeartbeatIntervalMs < 1 || cl.BrokerHeartbeatIntervalMs >= cl.BrokerSessionTimeoutMs:
		return bad("cluster.broker_heartbeat_interval_ms", "%d must be positive and below broker_session_timeout_ms %d",
			cl.BrokerHeartbeatIntervalMs, cl.BrokerSessionTimeoutMs)
	case cl.ControlledShutdownTimeoutMs < 0:
		return bad("cluster.controlled_shutdown_timeout_ms", "%d is negative", cl.ControlledShutdownTimeoutMs)
	case cl.QuorumElectionTimeoutMs < 10 || cl.QuorumElectionTimeoutMs > 600000:
		return bad("cluster.quorum_election_timeout_ms", "%d is not in [10, 600000]", cl.QuorumElectionTimeoutMs)
	case len(c.Rack) > 255:
		return bad("rack", "%d bytes is longer than 255", len(c.Rack))
	}
	if c.Listeners.Controller != "" {
		if _, _, err := net.SplitHostPort(c.Listeners.Controller); err != nil {
			return bad("listeners.controller", "%q: %v", c.Listeners.Controller, err)
		}
	}
	if len(cl.Voters) == 0 {
		return nil
	}
	if c.Listeners.Controller == "" {
		return bad("listeners.controller", "must be set when cluster.voters is")
	}
	seen := map[int32]bool{}
	for _, s := range cl.Voters {
		v, err := ParseVoter(s)
		if err != nil {
			return bad("cluster.voters", "%v", err)
		}
		if seen[v.ID] {
			return bad("cluster.voters", "node id %d is listed twice", v.ID)
		}
		seen[v.ID] = true
	}
	return nil
}
