package tests

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// TestMirrorFault is make fault-mirror: a 3-node Gregor source and a 3-node
// Gregor target, an idempotent acks=all writer on the source, a "gregor
// mirror" process in copy mode between them, and a seeded schedule of
// SIGKILLs of the mirror process and of source partition leaders (each
// restarted after a pause). The checker reads both clusters at the end:
// every acknowledged source record is on the target (at least once), each
// partition's records keep their source order, and every missing record
// is reported by partition and offset.
//
// GREGOR_FAULT_MIRROR=1 enables it; FAULT_SEEDS and FAULT_DURATION as in
// make fault (default one seed from the clock, 60s).
func TestMirrorFault(t *testing.T) {
	if os.Getenv("GREGOR_FAULT_MIRROR") == "" {
		t.Skip("the mirror fault suite runs with make fault-mirror (GREGOR_FAULT_MIRROR=1)")
	}
	seeds, err := parseFaultSeeds(os.Getenv("FAULT_SEEDS"), uint64(time.Now().UnixNano()%1_000_000))
	if err != nil {
		t.Fatal(err)
	}
	dur := 60 * time.Second
	if s := os.Getenv("FAULT_DURATION"); s != "" {
		if dur, err = time.ParseDuration(s); err != nil || dur <= 0 {
			t.Fatalf("FAULT_DURATION=%q: want a positive Go duration such as 60s (%v)", s, err)
		}
	}
	var results []string
	for _, seed := range seeds {
		fmt.Printf("fault-mirror: seed %d, %v of faults\n", seed, dur)
		ok := t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) { runMirrorFault(t, seed, dur) })
		verdict := "PASS"
		if !ok {
			verdict = "FAIL"
		}
		results = append(results, fmt.Sprintf("seed %d: %s", seed, verdict))
	}
	fmt.Printf("fault-mirror: %d schedules of %v\n  %s\n", len(seeds), dur, strings.Join(results, "\n  "))
}

const faultMirrorPartitions = 6

func runMirrorFault(t *testing.T, seed uint64, dur time.Duration) {
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	src := startChildCluster(t, 3)
	dst := startChildCluster(t, 3)
	ctx, cancel := context.WithTimeout(context.Background(), dur+10*time.Minute)
	defer cancel()
	createReplicated(t, ctx, newAdminFor(src.client()), "orders", faultMirrorPartitions, map[string]*string{"min.insync.replicas": strp("2")})

	quote := func(addrs []string) string {
		q := make([]string, len(addrs))
		for i, a := range addrs {
			q[i] = fmt.Sprintf("%q", a)
		}
		return strings.Join(q, ", ")
	}
	cfgPath := filepath.Join(t.TempDir(), "mirror.toml")
	text := fmt.Sprintf(`[source]
name = "east"
bootstrap = [%s]
[target]
name = "west"
bootstrap = [%s]
[topics]
include = ["orders"]
rename = "prefix"
replication_factor = 3
[mirror]
mode = "copy"
refresh_interval_ms = 1000
checkpoint_interval_ms = 500
`, quote(src.addrs()), quote(dst.addrs()))
	if err := os.WriteFile(cfgPath, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	mirrorProc := startChildMirror(t, cfgPath)

	// The writer: idempotent, acks=all; acked holds, per partition, the
	// value acknowledged at each source offset.
	var mu sync.Mutex
	acked := map[int32]map[int64]string{}
	writer := src.client(kgo.RequiredAcks(kgo.AllISRAcks()), kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.RecordDeliveryTimeout(20*time.Second))
	wctx, stopWriting := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; wctx.Err() == nil; i++ {
			p := int32(i % faultMirrorPartitions)
			v := fmt.Sprintf("%d-%08d", p, i)
			writer.Produce(wctx, &kgo.Record{Topic: "orders", Partition: p, Key: []byte(v), Value: []byte(v)}, func(r *kgo.Record, err error) {
				if err != nil {
					return
				}
				mu.Lock()
				if acked[r.Partition] == nil {
					acked[r.Partition] = map[int64]string{}
				}
				acked[r.Partition][r.Offset] = string(r.Value)
				mu.Unlock()
			})
			if i%20 == 0 {
				time.Sleep(10 * time.Millisecond) // at most about 2,000 records/s
			}
		}
	}()

	deadline := time.Now().Add(dur)
	for time.Now().Before(deadline) {
		time.Sleep(time.Duration(2000+rng.IntN(3000)) * time.Millisecond)
		switch rng.IntN(2) {
		case 0:
			t.Logf("fault: SIGKILL the mirror")
			mirrorProc.kill()
			time.Sleep(time.Duration(200+rng.IntN(1500)) * time.Millisecond)
			mirrorProc = startChildMirror(t, cfgPath)
		case 1:
			md, err := src.metadata(ctx)
			if err != nil {
				t.Logf("fault: no source metadata: %v", err)
				continue
			}
			p := int32(rng.IntN(faultMirrorPartitions))
			leader := md.Topics["orders"].Partitions[p].Leader
			if leader < 0 {
				continue
			}
			t.Logf("fault: SIGKILL source node %d, leader of orders[%d]", leader, p)
			src.kill(leader)
			time.Sleep(time.Duration(1000+rng.IntN(3000)) * time.Millisecond)
			src.restart(leader)
		}
	}
	stopWriting()
	wg.Wait()
	fctx, fcancel := context.WithTimeout(ctx, 30*time.Second)
	_ = writer.Flush(fctx)
	fcancel()

	// Every source record must reach the target: wait until each target
	// partition holds at least as many records as its source.
	srcEnds := endOffsets(t, src.addrs()[0], "orders")
	eventually(t, 3*time.Minute, "the target catches up", func() error {
		got := tryEndOffsets(dst.addrs()[0], "east.orders")
		for p, e := range srcEnds {
			if got[p] < e {
				return fmt.Errorf("target end offsets %v, source %v", got, srcEnds)
			}
		}
		return nil
	})
	dstEnds := endOffsets(t, dst.addrs()[0], "east.orders")
	onTarget := readPartitions(t, dst.addrs()[0], "east.orders", dstEnds)
	var problems []string
	var total, dups int
	for p := int32(0); p < faultMirrorPartitions; p++ {
		pos := map[string]int{} // value -> first target index
		for i, r := range onTarget[p] {
			if _, seen := pos[r.Value]; seen {
				dups++
				continue
			}
			pos[r.Value] = i
		}
		mu.Lock()
		offs := make([]int64, 0, len(acked[p]))
		for o := range acked[p] {
			offs = append(offs, o)
		}
		sort.Slice(offs, func(i, j int) bool { return offs[i] < offs[j] })
		last := -1
		for _, o := range offs {
			v := acked[p][o]
			total++
			i, ok := pos[v]
			switch {
			case !ok:
				problems = append(problems, fmt.Sprintf("orders[%d] offset %d (%s): acknowledged on the source, missing on the target", p, o, v))
			case i < last:
				problems = append(problems, fmt.Sprintf("orders[%d] offset %d (%s): on the target before an earlier source record", p, o, v))
			default:
				last = i
			}
		}
		mu.Unlock()
	}
	fmt.Printf("fault-mirror: seed %d: %d acknowledged records checked, %d duplicates on the target, %d problems\n",
		seed, total, dups, len(problems))
	if len(problems) > 0 {
		t.Fatalf("%d problems (first 20):\n%s", len(problems), strings.Join(problems[:min(20, len(problems))], "\n"))
	}
}
