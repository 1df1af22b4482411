package controller

import (
	"fmt"
	"hash/fnv"
	"slices"
)

// placeReplicas assigns count partitions, numbered from first, to brokers
// (ascending ids) with Kafka's rack-unaware scheme: partition p's first
// replica is broker (p+start) mod n, and the followers are spread by a shift
// that grows by one every n partitions, so leaders and followers are both
// balanced. start and shift come from the caller (a hash of the topic name
// for new topics, the existing layout for added partitions).
func placeReplicas(brokers []int32, first, count int32, rf int, start, shift int) [][]int32 {
	n := len(brokers)
	out := make([][]int32, 0, count)
	for p := first; p < first+count; p++ {
		if p > 0 && int(p)%n == 0 {
			shift++
		}
		lead := (int(p) + start) % n
		replicas := make([]int32, 0, rf)
		replicas = append(replicas, brokers[lead])
		for j := 0; j < rf-1; j++ {
			step := 1 + (shift+j)%(n-1)
			replicas = append(replicas, brokers[(lead+step)%n])
		}
		out = append(out, replicas)
	}
	return out
}

// placementSeed derives a stable start offset and shift for a topic from its
// name, so placement is spread across topics yet reproducible.
func placementSeed(topic string, n int) (start, shift int) {
	h := fnv.New64a()
	h.Write([]byte(topic))
	v := h.Sum64()
	return int(v % uint64(n)), int((v >> 32) % uint64(n))
}

// newPartitions builds partitions whose leader is the first replica, at
// epoch 0, with every replica in the ISR.
func newPartitions(first int32, assignment [][]int32) []Partition {
	parts := make([]Partition, len(assignment))
	for i, replicas := range assignment {
		parts[i] = Partition{
			Index:    first + int32(i),
			Leader:   replicas[0],
			Replicas: replicas,
			ISR:      slices.Clone(replicas),
		}
	}
	return parts
}

// newPartitionsFor builds partitions at epoch 0 whose ISR is their usable
// replicas and whose leader is the first of those; a partition without a
// usable replica is ErrInvalidReplicaAssignment.
func newPartitionsFor(im *Image, topic string, first int32, assignment [][]int32) ([]Partition, error) {
	parts := make([]Partition, len(assignment))
	for i, replicas := range assignment {
		isr := slices.DeleteFunc(slices.Clone(replicas), func(id int32) bool { return !im.Usable(id) })
		if len(isr) == 0 {
			return nil, fmt.Errorf("controller: topic %q partition %d: %w: every broker of %v is fenced or shutting down",
				topic, first+int32(i), ErrInvalidReplicaAssignment, replicas)
		}
		parts[i] = Partition{
			Index:    first + int32(i),
			Leader:   isr[0],
			Replicas: replicas,
			ISR:      isr,
		}
	}
	return parts, nil
}

// autoAssign places count new partitions at replication factor rf over the
// usable brokers (registered, unfenced, not shutting down); rack-aware when
// every one of them has a rack.
func autoAssign(im *Image, topic string, first, count int32, rf int16, start int) ([][]int32, error) {
	brokers := im.usableBrokerIDs()
	if rf < 1 {
		return nil, fmt.Errorf("controller: topic %q: %w: replication factor must be larger than 0, or -1 to use the default",
			topic, ErrInvalidReplicationFactor)
	}
	if int(rf) > len(brokers) {
		return nil, fmt.Errorf("controller: topic %q: %w: unable to replicate the partition %d time(s): only %d broker(s) are registered and unfenced",
			topic, ErrInvalidReplicationFactor, rf, len(brokers))
	}
	s, shift := placementSeed(topic, len(brokers))
	if start < 0 {
		start = s
	}
	if racks := brokerRacks(im, brokers); racks != nil {
		return placeReplicasRackAware(rackAlternated(brokers, racks), racks, first, count, int(rf), start%len(brokers), shift), nil
	}
	return placeReplicas(brokers, first, count, int(rf), start, shift), nil
}

// brokerRacks maps each broker to its rack, or is nil unless every broker
// has one (Kafka's rack-aware placement needs them all).
func brokerRacks(im *Image, brokers []int32) map[int32]string {
	racks := make(map[int32]string, len(brokers))
	for _, id := range brokers {
		r := im.Brokers[id].Rack
		if r == "" {
			return nil
		}
		racks[id] = r
	}
	return racks
}

// rackAlternated orders brokers so that consecutive ones sit in different
// racks: the first broker of each rack (racks in name order), then the
// second of each, and so on (Kafka's rack-alternated broker list).
func rackAlternated(brokers []int32, racks map[int32]string) []int32 {
	byRack := map[string][]int32{}
	var names []string
	for _, id := range brokers {
		r := racks[id]
		if _, ok := byRack[r]; !ok {
			names = append(names, r)
		}
		byRack[r] = append(byRack[r], id)
	}
	slices.Sort(names)
	out := make([]int32, 0, len(brokers))
	for i := 0; len(out) < len(brokers); i++ {
		for _, r := range names {
			if i < len(byRack[r]) {
				out = append(out, byRack[r][i])
			}
		}
	}
	return out
}

// placeReplicasRackAware is Kafka's rack-aware assignment over a
// rack-alternated broker list: leaders round-robin over the list, and each
// follower is the next broker (by the same shifting scheme as
// placeReplicas) whose rack holds no replica of the partition yet, until
// every rack holds one.
func placeReplicasRackAware(brokers []int32, racks map[int32]string, first, count int32, rf int, start, shift int) [][]int32 {
	n := len(brokers)
	numRacks := 0
	seen := map[string]bool{}
	for _, id := range brokers {
		if !seen[racks[id]] {
			seen[racks[id]] = true
			numRacks++
		}
	}
	out := make([][]int32, 0, count)
	for p := first; p < first+count; p++ {
		if p > 0 && int(p)%n == 0 {
			shift++
		}
		lead := (int(p) + start) % n
		replicas := []int32{brokers[lead]}
		usedRacks := map[string]bool{racks[brokers[lead]]: true}
		used := map[int32]bool{brokers[lead]: true}
		k := 0
		for len(replicas) < rf {
			id := brokers[(lead+1+(shift*numRacks+k)%(n-1))%n]
			k++
			if (!usedRacks[racks[id]] || len(usedRacks) == numRacks) && (!used[id] || len(used) == n) {
				replicas = append(replicas, id)
				usedRacks[racks[id]] = true
				used[id] = true
			}
		}
		out = append(out, replicas)
	}
	return out
}

// checkAssignment validates one manual partition assignment: non-empty,
// no broker twice, every broker registered, and (when rf > 0) rf replicas.
func checkAssignment(im *Image, topic string, partition int32, replicas []int32, rf int) error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("controller: topic %q partition %d: %w: %s", topic, partition,
			ErrInvalidReplicaAssignment, fmt.Sprintf(format, args...))
	}
	if len(replicas) == 0 {
		return bad("the manual partition assignment includes an empty replica list")
	}
	if rf > 0 && len(replicas) != rf {
		return bad("the manual partition assignment has %d replica(s), but other partitions have %d", len(replicas), rf)
	}
	seen := make(map[int32]bool, len(replicas))
	for _, id := range replicas {
		if seen[id] {
			return bad("the manual partition assignment includes broker %d more than once", id)
		}
		seen[id] = true
		if _, ok := im.Brokers[id]; !ok {
			return bad("the manual partition assignment includes broker %d, but no such broker is registered", id)
		}
	}
	return nil
}
