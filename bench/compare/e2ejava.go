package main

import (
	"fmt"
	"os/exec"
	"regexp"
	"strconv"
)

var e2eJavaLine = regexp.MustCompile(`Percentiles: 50th = (\d+), 99th = (\d+), 99.9th = (\d+)`)

// javaEndToEnd runs Kafka's EndToEndLatency tool (org.apache.kafka.tools.EndToEndLatency): one
// record at a time, each sent after the previous one was consumed (a closed loop, so not at a
// fixed rate), acks=all, an assigned consumer with fetch.max.wait.ms=0. It returns p50, p99 and
// p99.9 in whole milliseconds, as the tool prints them.
func javaEndToEnd(bootstrap, topic string, n, size int) ([3]float64, error) {
	out, err := exec.Command("scripts/kafka-ref.sh", "e2e-latency", "--bootstrap-server", bootstrap, "--topic", topic,
		"--num-records", fmt.Sprint(n), "--producer-acks", "all", "--record-size", fmt.Sprint(size)).CombinedOutput()
	if err != nil {
		return [3]float64{}, fmt.Errorf("e2e-latency: %w: %s", err, lastLine(string(out)))
	}
	return parseJavaEndToEnd(string(out))
}

func parseJavaEndToEnd(out string) ([3]float64, error) {
	m := e2eJavaLine.FindAllStringSubmatch(out, -1)
	if len(m) == 0 {
		return [3]float64{}, fmt.Errorf("e2e-latency: no percentile line in %q", lastLine(out))
	}
	var v [3]float64
	for i := range v {
		v[i], _ = strconv.ParseFloat(m[len(m)-1][i+1], 64)
	}
	return v, nil
}
