package main

import (
	"bufio"
	"context"
	"encoding/base64"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	container "cloud.google.com/go/container/apiv1"
	"cloud.google.com/go/container/apiv1/containerpb"
	"golang.org/x/oauth2"
	"google.golang.org/api/option"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/raytpu/terraform-provider-raytpu/internal/testwait"
)

// standalone runs the command in the background and returns its exported settings and a stop
// function that waits for it to exit.
func standalone(t *testing.T, args ...string) (endpoint, token string, stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, args, pw, io.Discard)
		pw.Close()
	}()
	sc := bufio.NewScanner(pr)
	compute := ""
	for (endpoint == "" || compute == "" || token == "") && sc.Scan() {
		line := sc.Text()
		if v, ok := strings.CutPrefix(line, "export RAYTPU_CONTAINER_ENDPOINT="); ok {
			endpoint = v
		}
		if v, ok := strings.CutPrefix(line, "export RAYTPU_COMPUTE_ENDPOINT="); ok {
			compute = v
		}
		if v, ok := strings.CutPrefix(line, "export GOOGLE_OAUTH_ACCESS_TOKEN="); ok {
			token = v
		}
	}
	go func() { _, _ = io.Copy(io.Discard, pr) }()
	if endpoint == "" || compute == "" || token == "" {
		cancel()
		t.Fatalf("no export lines: %v", <-done)
	}
	if compute != endpoint+"/compute/v1/" {
		t.Errorf("RAYTPU_COMPUTE_ENDPOINT = %q, want the Compute Engine root %s/compute/v1/", compute, endpoint)
	}
	stopped := false
	stop = func() {
		if stopped {
			return
		}
		stopped = true
		cancel()
		if err := <-done; err != nil {
			t.Errorf("raytpu-emulator exited with %v", err)
		}
	}
	t.Cleanup(stop)
	return endpoint, token, stop
}

func client(t *testing.T, endpoint, token string) *container.ClusterManagerClient {
	t.Helper()
	c, err := container.NewClusterManagerRESTClient(context.Background(), option.WithEndpoint(endpoint),
		option.WithTokenSource(oauth2.StaticTokenSource(&oauth2.Token{AccessToken: token})))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func kubeClient(t *testing.T, cl *containerpb.Cluster, token string) kubernetes.Interface {
	t.Helper()
	ca, err := base64.StdEncoding.DecodeString(cl.MasterAuth.ClusterCaCertificate)
	if err != nil {
		t.Fatal(err)
	}
	k, err := kubernetes.NewForConfig(&rest.Config{Host: "https://" + cl.Endpoint, BearerToken: token, TLSClientConfig: rest.TLSClientConfig{CAData: ca}})
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// processesMentioning lists the processes whose command line contains s.
func processesMentioning(s string) []string {
	var out []string
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range procs {
		b, err := os.ReadFile(p)
		if err == nil && strings.Contains(string(b), s) {
			out = append(out, strings.ReplaceAll(string(b), "\x00", " "))
		}
	}
	return out
}

// TestStandaloneKeepsStateAcrossRestarts creates a cluster, stops the command (which must leave
// no process behind), starts it again on the same state folder and finds the cluster running
// with the same CA, its nodes and the objects created in it.
func TestStandaloneKeepsStateAcrossRestarts(t *testing.T) {
	state := t.TempDir()
	ctx := testwait.Context(t)
	args := []string{"-state-dir", state, "-latency", "100ms", "-token", "standalone-token"}
	endpoint, token, stop := standalone(t, args...)
	if token != "standalone-token" || !strings.HasPrefix(endpoint, "http://127.0.0.1:") {
		t.Fatalf("exports: %s %s", endpoint, token)
	}
	c := client(t, endpoint, token)
	parent := "projects/p/locations/us-east5-a"
	op, err := c.CreateCluster(ctx, &containerpb.CreateClusterRequest{Parent: parent, Cluster: &containerpb.Cluster{
		Name: "keep", InitialNodeCount: 2, NodeConfig: &containerpb.NodeConfig{MachineType: "e2-standard-4"}, //nolint:staticcheck // deprecated in the API, still reported by GKE and read by clients
	}})
	if err != nil {
		t.Fatal(err)
	}
	for op.Status != containerpb.Operation_DONE {
		time.Sleep(100 * time.Millisecond)
		if op, err = c.GetOperation(ctx, &containerpb.GetOperationRequest{Name: parent + "/operations/" + op.Name}); err != nil {
			t.Fatal(err)
		}
	}
	if op.Error != nil {
		t.Fatal(op.Error)
	}
	before, err := c.GetCluster(ctx, &containerpb.GetClusterRequest{Name: parent + "/clusters/keep"})
	if err != nil {
		t.Fatal(err)
	}
	kube := kubeClient(t, before, token)
	if _, err := kube.CoreV1().ConfigMaps("default").Create(ctx, &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "survivor"}, Data: map[string]string{"k": "v"},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	stop()
	if left := processesMentioning(state); len(left) > 0 {
		t.Fatalf("processes left after SIGTERM-equivalent stop: %v", left)
	}
	// The dial is expected to fail: its second running out on a busy machine cannot fail the test.
	if conn, err := net.DialTimeout("tcp", before.Endpoint, time.Second); err == nil {
		conn.Close()
		t.Fatalf("kube-apiserver still listening on %s", before.Endpoint)
	}

	// Without -token and -listen the second run keeps the generated token and the endpoint; the
	// first run here gave a token, so check the generated one on a third run.
	endpoint2, token2, stop2 := standalone(t, "-state-dir", state, "-latency", "100ms")
	if token2 == "standalone-token" || endpoint2 != endpoint {
		t.Fatalf("restart: endpoint %s (was %s), token %s", endpoint2, endpoint, token2)
	}
	stop2()
	endpoint3, token3, _ := standalone(t, "-state-dir", state, "-latency", "100ms")
	if token3 != token2 || endpoint3 != endpoint {
		t.Fatalf("second restart: endpoint %s, token %s (was %s)", endpoint3, token3, token2)
	}
	endpoint, token = endpoint3, token3
	c = client(t, endpoint, token)
	after, err := c.GetCluster(ctx, &containerpb.GetClusterRequest{Name: parent + "/clusters/keep"})
	if err != nil {
		t.Fatal(err)
	}
	if after.Status != containerpb.Cluster_RUNNING || after.MasterAuth.ClusterCaCertificate != before.MasterAuth.ClusterCaCertificate {
		t.Fatalf("after restart: status %s, same CA %v", after.Status, after.MasterAuth.ClusterCaCertificate == before.MasterAuth.ClusterCaCertificate)
	}
	kube = kubeClient(t, after, token)
	cm, err := kube.CoreV1().ConfigMaps("default").Get(ctx, "survivor", metav1.GetOptions{})
	if err != nil || cm.Data["k"] != "v" {
		t.Fatalf("object created before the restart: %v %v", cm, err)
	}
	nodes, err := kube.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil || len(nodes.Items) != 2 {
		t.Fatalf("nodes after restart: %v %v", nodes, err)
	}
	ops, err := c.ListOperations(ctx, &containerpb.ListOperationsRequest{Parent: parent})
	if err != nil || len(ops.Operations) != 1 || ops.Operations[0].Status != containerpb.Operation_DONE {
		t.Fatalf("operations after restart: %v %v", ops, err)
	}
}

func TestFlags(t *testing.T) {
	if err := run(context.Background(), []string{"-listen", "0.0.0.0:0"}, io.Discard, io.Discard); err == nil ||
		!strings.Contains(err.Error(), "loopback") {
		t.Fatalf("a non-loopback listen address: %v", err)
	}
	if err := run(context.Background(), []string{"-latencies", "CREATE_CLUSTER"}, io.Discard, io.Discard); err == nil {
		t.Fatal("a malformed -latencies accepted")
	}
	if err := run(context.Background(), []string{"-latencies", "NOPE=1s"}, io.Discard, io.Discard); err == nil {
		t.Fatal("an unknown operation type accepted")
	}
	if err := run(context.Background(), []string{"-kube-bin-dir", t.TempDir()}, io.Discard, io.Discard); err == nil ||
		!strings.Contains(err.Error(), "make tools") {
		t.Fatalf("missing binaries: %v", err)
	}
}
