// Package controller owns Gregor's cluster metadata: topics, partitions,
// leaders, ISRs, topic and broker configs, producer-ID blocks and broker
// registrations. The metadata is a log of records replicated by
// hashicorp/raft; every node applies the committed records to an immutable,
// copy-on-write Image that readers load without locks.
//
// The package validates every change on the active controller before
// proposing it; the protocol layer maps the returned sentinel errors to Kafka
// error codes with errors.Is. It must not touch partition data, open client
// listeners or import other core packages except config.
//
// # Metadata log format (version 1)
//
// Each raft log command holds one record, a JSON object
//
//	{"v":1,"type":"<type>","data":{...}}
//
// where v is the record format version (a node refuses a version it does not
// know) and data depends on type:
//
//	controller         {"node_id":1}                     a node became the active controller
//	register_broker    {"node_id":1,"host":"h","port":9092,"rack":"","fenced":true,
//	                    "controller_address":"h:9093"}
//	                                                     the broker epoch is the record's raft index
//	broker_state       {"node_id":1,"epoch":7,"fenced":false,"controlled_shutdown":false}
//	                                                     only for the registration with that epoch
//	partition_change   {"topic_id":"<uuid>","partition":0,"partition_epoch":3,"leader":2,
//	                    "isr":[2,3],"replicas":[1,2,3],"adding":[],"removing":[]}
//	                                                     the full new state; applies only at that
//	                                                     partition epoch, bumps it, and bumps the
//	                                                     leader epoch when the leader changes or
//	                                                     replicas are removed
//	create_topic       {"name":"t","id":"<uuid>","internal":false,
//	                    "partitions":[{"index":0,"leader":1,"leader_epoch":0,
//	                    "partition_epoch":0,"replicas":[1],"isr":[1]}],
//	                    "configs":{"retention.ms":"1000"}}
//	delete_topic       {"id":"<uuid>","name":"t"}
//	create_partitions  {"topic_id":"<uuid>","partitions":[...]}  appended after the existing ones
//	set_configs        {"resource":{"type":2,"name":"t"},"configs":{...}}
//	                                                     the full explicit set; empty removes it;
//	                                                     type 2 topic, 4 broker, 16 client-metrics
//	                                                     subscription
//	producer_ids       {"first":0,"count":1000}           first must equal the image's next id
//	create_acls        {"acls":[{"resource_type":2,"resource_name":"t","pattern_type":3,
//	                    "principal":"User:a","host":"*","operation":3,"permission":3}]}
//	                                                     Kafka's codes; an existing binding is kept once
//	delete_acls        {"acls":[...]}                    the exact bindings to remove
//	set_scram_credential {"user":"a","mechanism":1,"salt":"<b64>","stored_key":"<b64>",
//	                    "server_key":"<b64>","iterations":4096}  salted; never a password
//	delete_scram_credential {"user":"a","mechanism":1}
//	set_client_quota   {"entity":[{"type":"user","name":"a"},{"type":"client-id","default":true}],
//	                    "values":{"producer_byte_rate":1024}}  the full set; empty removes it
//	plan               {"records":[{"v":1,"type":"broker_state","data":{...}},
//	                    {"v":1,"type":"partition_change","data":{...}}]}
//	                                                     records planned together (a broker's loss);
//	                                                     all apply, in order, or none does
//
// A record is applied atomically: its preconditions are checked against the
// image first, and a record that fails them changes nothing (the proposer
// receives the error). Every node reaches the same verdict, so a rejected
// record never makes nodes diverge.
//
// # Multi-node clusters
//
// With Config.Voters, raft runs among the voters over the controller
// listener, which it shares with the controller RPCs (raft connections
// open with a marker byte; the rest are Kafka frames). With
// Config.PeerSecurity, every connection on that listener, in either
// direction, is secured (TLS, a SASL exchange) before its first byte is
// routed, and only Config.SuperUsers are admitted; forwarded admin records
// carry the principal of the client they serve (see peer_security.go). Every voter
// bootstraps from the same static voter list. A node that is not a voter
// registers over the RPCs and the active controller adds it as a raft
// non-voter, so every node applies the same log to its own image.
//
// Brokers register (BrokerRegistration, starting fenced), heartbeat
// (BrokerHeartbeat) and are unfenced once they have applied their own
// registration. The active controller fences a broker silent for longer
// than Config.SessionTimeout and moves its leaderships to other live ISR
// members (a partition without one becomes leaderless, or with
// unclean.leader.election.enable is led by a live replica outside the ISR);
// leaderless partitions are elected again when a replica returns. A
// controlled shutdown moves leaderships away before the broker stops.
// Partition leaders change ISRs with AlterPartition. Writes on a node that
// is not the active controller are planned locally and forwarded (see
// forward.go).
//
// The metadata quorum (Kafka's DescribeQuorum) is answered by the active
// controller from raft: leader, term as leader epoch, commit index as high
// watermark, voters and non-voters (observers). Each node's log end offset
// comes from its broker heartbeat (see quorum.go).
//
// # Snapshots
//
// The FSM snapshot is one JSON object:
//
//	{"v":1,"offset":N,"controller_id":1,"next_producer_id":0,
//	 "brokers":[...],"topics":[...],"configs":[{"type":2,"name":"t","configs":{...}}],
//	 "security":{"acls":[...],"scram":[...],"quotas":[...]}}
//
// with brokers, topics and configs sorted so equal images give equal bytes.
package controller
