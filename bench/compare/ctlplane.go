package main

import "strings"

// plainControllerSuffix marks the 3-node rows measured again on a Gregor cluster whose controller
// plane (Raft and controller RPCs) runs PLAINTEXT instead of SSL; beside the SSL rows they state
// what TLS on the controller plane costs. Kafka's reference cluster runs a PLAINTEXT controller
// listener in both, so its figure is copied from the SSL row.
const plainControllerSuffix = " [Gregor PLAINTEXT controller plane]"

// plainControllerTarget is Gregor's 3-node cluster started with --controller-protocol PLAINTEXT;
// its rows are recorded under plainControllerMetric names.
func plainControllerTarget(o options) target {
	t := clusterTargets(o)[0]
	args := []string{"scripts/interop-gregor.sh", "start", "--nodes", "3", "--durability", o.durability, "--controller-protocol", "PLAINTEXT"}
	t.start = func() error { return sh(args...) }
	t.plainController = true
	return t
}

func plainControllerMetric(m string) string { return m + plainControllerSuffix }

// fillPlainControllerKafka gives each PLAINTEXT-controller row the Kafka figure of its SSL row.
func fillPlainControllerKafka(measured map[string]map[string]float64) {
	for m, v := range measured {
		if base, ok := strings.CutSuffix(m, plainControllerSuffix); ok && measured[base] != nil {
			v["kafka"] = measured[base]["kafka"]
		}
	}
}
