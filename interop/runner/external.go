package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// externalCommand is how each non-Go driver is started; the scenario names follow as arguments.
// Every driver prints one JSON object per scenario on stdout:
// {"scenario": "...", "status": "pass|fail|skip", "detail": "...", "duration_ms": N}.
func externalCommand(client, dir, cache string) (*exec.Cmd, error) {
	abs := func(p string) string { a, _ := filepath.Abs(p); return a }
	dir, cache = abs(dir), abs(cache)
	need := func(p, hint string) error {
		if _, err := os.Stat(p); err != nil {
			return fmt.Errorf("interop: %s driver not installed (%s missing; run %s)", client, p, hint)
		}
		return nil
	}
	switch client {
	case "java":
		jar := filepath.Join(cache, "java", "interop-driver.jar")
		if err := need(jar, "make interop-deps"); err != nil {
			return nil, err
		}
		return exec.Command("java", "-Xmx512m", "-cp", jar+":"+filepath.Join(cache, "java", "libs", "*"),
			"-Dorg.slf4j.simpleLogger.defaultLogLevel=warn", "gregor.interop.Driver"), nil
	case "python":
		py := filepath.Join(cache, "venv", "bin", "python")
		if err := need(py, "make interop-deps"); err != nil {
			return nil, err
		}
		return exec.Command(py, filepath.Join(dir, "python", "driver.py")), nil
	case "kafkajs":
		mod := filepath.Join(cache, "node", "node_modules", "kafkajs")
		if err := need(mod, "make interop-deps"); err != nil {
			return nil, err
		}
		cmd := exec.Command("node", filepath.Join(dir, "node", "driver.js"))
		cmd.Env = append(os.Environ(), "NODE_PATH="+filepath.Join(cache, "node", "node_modules"))
		return cmd, nil
	case "kcat":
		if _, err := exec.LookPath("kcat"); err != nil {
			return nil, fmt.Errorf("interop: kcat not installed (apt-get install -y kcat)")
		}
		return exec.Command("python3", filepath.Join(dir, "kcat", "driver.py")), nil
	}
	return nil, fmt.Errorf("interop: no driver for client %q", client)
}

func runExternal(client string, env Env, caps Capabilities, scenarios []string, dir, cache string, perScen time.Duration) map[string]Cell {
	cells := map[string]Cell{}
	failAll := func(msg string) map[string]Cell {
		for _, s := range scenarios {
			if _, ok := cells[s]; !ok {
				cells[s] = Cell{Status: Fail, Detail: msg}
			}
		}
		return cells
	}
	cmd, err := externalCommand(client, dir, cache)
	if err != nil {
		return failAll(err.Error())
	}
	limit := time.Duration(len(scenarios))*perScen + time.Minute
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	cmd = exec.CommandContext(ctx, cmd.Path, append(cmd.Args[1:], scenarios...)...)
	if cmd.Env == nil {
		cmd.Env = os.Environ()
	}
	if client == "kafkajs" {
		cmd.Env = append(cmd.Env, "NODE_PATH="+filepath.Join(mustAbs(cache), "node", "node_modules"))
	}
	cmd.Env = append(cmd.Env,
		"INTEROP_BOOTSTRAP="+env.Bootstrap,
		"INTEROP_SASL_BOOTSTRAP="+env.SASLBootstrap,
		"INTEROP_SSL_BOOTSTRAP="+env.SSLBootstrap,
		"INTEROP_SASL_SSL_BOOTSTRAP="+env.SASLSSLBootstrap,
		"INTEROP_CA_FILE="+env.CAFile,
		"INTEROP_PREFIX="+env.Prefix,
		fmt.Sprintf("INTEROP_REPLICATION_FACTOR=%d", env.rf()),
		"INTEROP_SASL_USER="+env.User,
		"INTEROP_SASL_PASSWORD="+env.Pass,
		fmt.Sprintf("INTEROP_SCENARIO_TIMEOUT_MS=%d", perScen.Milliseconds()),
		"INTEROP_TARGET_APIS="+caps.keyList(),
	)
	logPath := filepath.Join(cache, "logs", client+".log")
	_ = os.MkdirAll(filepath.Dir(logPath), 0o755)
	var stderr bytes.Buffer
	if lf, err := os.Create(logPath); err == nil {
		defer lf.Close()
		cmd.Stderr = multiWriter{&stderr, lf}
	} else {
		cmd.Stderr = &stderr
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return failAll(err.Error())
	}
	if err := cmd.Start(); err != nil {
		return failAll(fmt.Sprintf("interop: start %s driver: %v", client, err))
	}
	sc := bufio.NewScanner(out)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	for sc.Scan() {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 || line[0] != '{' {
			continue
		}
		var res struct {
			Scenario   string `json:"scenario"`
			Status     string `json:"status"`
			Detail     string `json:"detail"`
			DurationMs int64  `json:"duration_ms"`
		}
		if err := json.Unmarshal(line, &res); err != nil || res.Scenario == "" {
			continue
		}
		if res.Status != Pass && res.Status != Fail && res.Status != Skip {
			res.Detail = fmt.Sprintf("driver printed status %q: %s", res.Status, res.Detail)
			res.Status = Fail
		}
		cells[res.Scenario] = Cell{Status: res.Status, Detail: res.Detail, DurationMs: res.DurationMs}
		printCell(client, res.Scenario, cells[res.Scenario])
	}
	werr := cmd.Wait()
	if len(cells) < len(scenarios) {
		tail := lastLines(stderr.String(), 8)
		why := fmt.Sprintf("driver exited (%v) before reporting; stderr: %s", werr, tail)
		if ctx.Err() != nil {
			why = fmt.Sprintf("driver timed out after %s; stderr: %s", limit, tail)
		}
		return failAll(why)
	}
	return cells
}

type multiWriter []interface{ Write([]byte) (int, error) }

func (m multiWriter) Write(p []byte) (int, error) {
	for _, w := range m {
		if _, err := w.Write(p); err != nil {
			return 0, err
		}
	}
	return len(p), nil
}

func mustAbs(p string) string { a, _ := filepath.Abs(p); return a }

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, " / ")
}
