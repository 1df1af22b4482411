// Package tests holds Gregor's end-to-end tests: a real broker (in-process
// through core/server, or the built gregor binary as a child process) on
// loopback listeners, driven by real Kafka clients (franz-go, kafka-go,
// sarama), by the gregor CLI, and by hand-made bytes on a raw TCP connection.
// It owns no production code and nothing imports it.
package tests
