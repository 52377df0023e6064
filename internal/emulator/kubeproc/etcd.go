package kubeproc

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strconv"
	"time"
)

// Etcd is the one etcd shared by every cluster of an emulator (each cluster has its own
// --etcd-prefix).
type Etcd struct {
	proc      *Process
	clientURL string
}

// StartEtcd starts etcd on free ports of 127.0.0.1, its data in dataDir and its log in logDir,
// and waits until it is healthy.
func StartEtcd(ctx context.Context, procs *Group, bin, dataDir, logDir string) (*Etcd, error) {
	var lastErr error
	for attempt := 0; attempt < 3; attempt++ {
		clientPort, err := freePort()
		if err != nil {
			return nil, err
		}
		peerPort, err := freePort()
		if err != nil {
			return nil, err
		}
		if peerPort == clientPort {
			continue
		}
		client := "http://127.0.0.1:" + strconv.Itoa(clientPort)
		peer := "http://127.0.0.1:" + strconv.Itoa(peerPort)
		args := []string{
			"--name=raytpu", "--data-dir=" + dataDir,
			"--listen-client-urls=" + client, "--advertise-client-urls=" + client,
			"--listen-peer-urls=" + peer, "--initial-advertise-peer-urls=" + peer,
			"--initial-cluster=raytpu=" + peer,
			"--unsafe-no-fsync", "--log-level=warn",
			"--quota-backend-bytes=4294967296",
		}
		p, err := procs.Start("etcd", bin, args, nil, filepath.Join(logDir, "etcd.log"))
		if err != nil {
			return nil, err
		}
		if err := waitHTTP(ctx, p, 30*time.Second, func() error { return etcdHealthy(client) }); err != nil {
			p.Stop(5 * time.Second)
			lastErr = err
			continue
		}
		return &Etcd{proc: p, clientURL: client}, nil
	}
	return nil, fmt.Errorf("emulator: etcd did not start: %w", lastErr)
}

// URL is etcd's client URL, http://127.0.0.1:PORT.
func (s *Etcd) URL() string { return s.clientURL }

func etcdHealthy(url string) error {
	c := http.Client{Timeout: time.Second}
	resp, err := c.Get(url + "/health")
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	var h struct {
		Health string `json:"health"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&h); err != nil {
		return err
	}
	if h.Health != "true" {
		return errNotReady
	}
	return nil
}

// Get reads one key through etcd's JSON gateway (/v3/kv/range).
func (s *Etcd) Get(ctx context.Context, key string) ([]byte, bool, error) {
	var out struct {
		Kvs []struct {
			Value string `json:"value"`
		} `json:"kvs"`
	}
	if err := s.call(ctx, "/v3/kv/range", map[string]any{"key": b64(key)}, &out); err != nil {
		return nil, false, err
	}
	if len(out.Kvs) == 0 {
		return nil, false, nil
	}
	v, err := base64.StdEncoding.DecodeString(out.Kvs[0].Value)
	return v, true, err
}

// Create writes key unless it exists, in one transaction (/v3/kv/txn), and reports whether it did.
func (s *Etcd) Create(ctx context.Context, key string, value []byte) (bool, error) {
	var out struct {
		Succeeded bool `json:"succeeded"`
	}
	txn := map[string]any{
		"compare": []any{map[string]any{"key": b64(key), "target": "CREATE", "result": "EQUAL", "create_revision": "0"}},
		"success": []any{map[string]any{"request_put": map[string]any{"key": b64(key), "value": base64.StdEncoding.EncodeToString(value)}}},
	}
	if err := s.call(ctx, "/v3/kv/txn", txn, &out); err != nil {
		return false, err
	}
	return out.Succeeded, nil
}

func (s *Etcd) call(ctx context.Context, path string, body, out any) error {
	b, err := json.Marshal(body)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.clientURL+path, bytes.NewReader(b))
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("etcd %s: %d %s", path, resp.StatusCode, data)
	}
	return json.Unmarshal(data, out)
}

func b64(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
