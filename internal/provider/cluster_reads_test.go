package provider

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"cloud.google.com/go/container/apiv1/containerpb"
	"golang.org/x/oauth2"

	"github.com/raytpu/terraform-provider-raytpu/internal/gke"
)

// clusterReadsOf counts the emulator's GetCluster requests for cluster id.
func clusterReadsOf(t *testing.T, id gke.ClusterID) int {
	t.Helper()
	reqs, err := testEmulator.Requests(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, r := range reqs {
		if r.RPC == "GetCluster" && strings.HasSuffix(r.Path, "/"+id.String()) {
			n++
		}
	}
	return n
}

func TestClusterReadsAreSharedAndFailuresRetried(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	client, err := gke.New(ctx, gke.Config{
		Endpoint:    testEmulator.Endpoint(),
		TokenSource: oauth2.StaticTokenSource(&oauth2.Token{AccessToken: testEmulator.Token()}),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { client.Close() })
	id := gke.ClusterID{Project: testProject, Location: testLocation, Name: "shared-reads"}
	var reads clusterReads

	// Not there yet: a failed read is not kept, each caller asks again.
	for range 2 {
		if _, err := reads.get(ctx, client, id); !gke.IsNotFound(err) {
			t.Fatalf("reading a cluster that does not exist: %v, want NotFound", err)
		}
	}
	if n := clusterReadsOf(t, id); n != 2 {
		t.Fatalf("%d GetCluster for two reads of a missing cluster, want 2", n)
	}

	op, err := client.CreateCluster(ctx, id, &containerpb.Cluster{Name: id.Name, InitialNodeCount: 1})
	if err == nil {
		err = client.WaitForOperation(ctx, id, op)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if op, err := client.DeleteCluster(context.Background(), id); err == nil {
			_ = client.WaitForOperation(context.Background(), id, op)
		}
	})
	before := clusterReadsOf(t, id)

	// Eight slices planned together: one read.
	var wg sync.WaitGroup
	got := make([]*containerpb.Cluster, 8)
	for i := range got {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := reads.get(ctx, client, id)
			if err != nil {
				t.Error(err)
			}
			got[i] = c
		}()
	}
	wg.Wait()
	if n := clusterReadsOf(t, id) - before; n != 1 {
		t.Errorf("%d GetCluster for eight concurrent reads, want 1", n)
	}
	// Each caller has its own copy.
	got[0].Endpoint = "changed"
	if got[1].GetEndpoint() == "changed" || got[1].GetEndpoint() == "" {
		t.Errorf("a caller's copy changed with another's: endpoint %q", got[1].GetEndpoint())
	}
	// Later, within the TTL: no read; past it: a fresh one.
	if _, err := reads.get(ctx, client, id); err != nil {
		t.Fatal(err)
	}
	reads.mu.Lock()
	reads.reads[id.String()].at = time.Now().Add(-clusterReadTTL)
	reads.mu.Unlock()
	if _, err := reads.get(ctx, client, id); err != nil {
		t.Fatal(err)
	}
	if n := clusterReadsOf(t, id) - before; n != 2 {
		t.Errorf("%d GetCluster after a read within the TTL and one past it, want 2", n)
	}
}
