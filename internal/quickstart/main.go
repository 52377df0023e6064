// Command quickstart proves that the quickstart's outputs are true: it reads `terraform output
// -json` of examples/quickstart, lists every slice's hosts and every Ray Pod of the RayCluster
// from the cluster's own API server, checks that each worker replica runs on distinct hosts of
// one node pool, as the outputs say, and prints which Ray worker runs on which host. A replica on
// a node pool that is none of the outputs' slices must have been given it by node
// auto-provisioning, as the cluster autoscaler's event on its Pod says. The access token comes
// from GOOGLE_OAUTH_ACCESS_TOKEN.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"time"

	"golang.org/x/oauth2"

	"github.com/raytpu/terraform-provider-raytpu/internal/kube"
)

// outputs is the part of `terraform output -json` this command reads.
type outputs struct {
	Cluster struct {
		Value struct {
			ID            string `json:"id"`
			Endpoint      string `json:"endpoint"`
			CACertificate string `json:"ca_certificate"`
			KubeRayReady  bool   `json:"kuberay_ready"`
		} `json:"value"`
	} `json:"cluster"`
	Slices struct {
		Value map[string]struct {
			AcceleratorType string `json:"accelerator_type"`
			MachineType     string `json:"machine_type"`
			NumHosts        int    `json:"num_hosts"`
		} `json:"value"`
	} `json:"slices"`
	RayCluster struct {
		Value struct {
			Name      string `json:"name"`
			Namespace string `json:"namespace"`
			Status    string `json:"status"`
			Healthy   bool   `json:"healthy"`
			Dashboard string `json:"dashboard"`
			// Placement: worker group → replicas (one slice each) → hosts.
			Placement map[string][][]placedHost `json:"placement"`
		} `json:"value"`
	} `json:"ray_cluster"`
}

type placedHost struct {
	Pod      string `json:"pod"`
	Node     string `json:"node"`
	NodePool string `json:"node_pool"`
}

func main() {
	if err := run(os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "quickstart check failed:", err)
		os.Exit(1)
	}
}

func run(in io.Reader, out io.Writer) error {
	var o outputs
	if err := json.NewDecoder(in).Decode(&o); err != nil {
		return fmt.Errorf("reading terraform output -json: %w", err)
	}
	token := os.Getenv("GOOGLE_OAUTH_ACCESS_TOKEN")
	if token == "" {
		return fmt.Errorf("GOOGLE_OAUTH_ACCESS_TOKEN is not set")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	k, err := kube.NewClient(kube.Cluster{
		Endpoint:            o.Cluster.Value.Endpoint,
		CACertificateBase64: o.Cluster.Value.CACertificate,
		TokenSource:         oauth2.StaticTokenSource(&oauth2.Token{AccessToken: token}),
	})
	if err != nil {
		return err
	}
	defer k.Close()

	fmt.Fprintf(out, "cluster  %s\n         API server https://%s, KubeRay ready: %v\n\n", o.Cluster.Value.ID, o.Cluster.Value.Endpoint, o.Cluster.Value.KubeRayReady)
	if err := printSlices(ctx, out, k, o); err != nil {
		return err
	}
	return checkRayCluster(ctx, out, k, o)
}

// printSlices checks that every slice has all its hosts as Ready nodes.
func printSlices(ctx context.Context, out io.Writer, k *kube.Client, o outputs) error {
	names := make([]string, 0, len(o.Slices.Value))
	for name := range o.Slices.Value {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		s := o.Slices.Value[name]
		hosts, err := k.SliceHosts(ctx, name)
		if err != nil {
			return fmt.Errorf("listing the hosts of %s: %w", name, err)
		}
		ready := 0
		for _, h := range hosts {
			if h.Ready {
				ready++
			}
		}
		if ready != s.NumHosts {
			return fmt.Errorf("slice %s: %d of %d hosts are Ready nodes", name, ready, s.NumHosts)
		}
		fmt.Fprintf(out, "slice    %-16s %-10s %-17s %d/%d hosts Ready\n", name, s.AcceleratorType, s.MachineType, ready, s.NumHosts)
	}
	return nil
}

// checkRayCluster compares the placement output with the Pods the cluster runs: every worker
// Running on the node the output names, each replica on distinct nodes of one node pool.
func checkRayCluster(ctx context.Context, out io.Writer, k *kube.Client, o outputs) error {
	rc := o.RayCluster.Value
	pods, err := k.RayClusterPods(ctx, rc.Namespace, rc.Name)
	if err != nil {
		return err
	}
	live := map[string]kube.RayPod{}
	for _, p := range pods {
		live[p.Name] = p
	}
	fmt.Fprintf(out, "\nRayCluster %s/%s: %s, healthy %v, dashboard %s\n", rc.Namespace, rc.Name, rc.Status, rc.Healthy, rc.Dashboard)
	if !rc.Healthy {
		return fmt.Errorf("RayCluster %s is not healthy", rc.Name)
	}
	scaleUps := k.AutoscalerEvents(ctx, rc.Namespace)
	groups := make([]string, 0, len(rc.Placement))
	for g := range rc.Placement {
		groups = append(groups, g)
	}
	sort.Strings(groups)
	for _, g := range groups {
		for r, replica := range rc.Placement[g] {
			pool := ""
			nodes := map[string]bool{}
			for host, h := range replica {
				p, ok := live[h.Pod]
				switch {
				case !ok || !p.Running:
					return fmt.Errorf("group %s replica %d: Pod %s is not running", g, r, h.Pod)
				case p.Node != h.Node || p.NodePool != h.NodePool:
					return fmt.Errorf("the Pod %s runs on %s (%s), the output says %s (%s)", h.Pod, p.Node, p.NodePool, h.Node, h.NodePool)
				case pool != "" && p.NodePool != pool:
					return fmt.Errorf("group %s replica %d spans node pools %s and %s", g, r, pool, p.NodePool)
				case nodes[p.Node]:
					return fmt.Errorf("group %s replica %d has two Pods on %s", g, r, p.Node)
				}
				pool = p.NodePool
				nodes[p.Node] = true
				fmt.Fprintf(out, "  %-12s replica %d  host %d  %-44s on %s (slice %s)\n", g, r, host, h.Pod, h.Node, h.NodePool)
			}
			if _, declared := o.Slices.Value[pool]; !declared && len(replica) > 0 {
				// No raytpu_slice: GKE's node auto-provisioning must have made this slice for the
				// replica, and said so on its Pods.
				said := scaleUps[replica[0].Pod]
				if !strings.HasPrefix(said, "pod triggered scale-up") || !strings.Contains(said, pool) {
					return fmt.Errorf("group %s replica %d runs on node pool %s, which is no slice of the outputs, and the cluster autoscaler "+
						"did not say it created it for the replica (its last word on %s: %q)", g, r, pool, replica[0].Pod, said)
				}
				fmt.Fprintf(out, "  %-12s replica %d  on slice %s, auto-provisioned: %s\n", g, r, pool, said)
			}
		}
	}
	return nil
}
