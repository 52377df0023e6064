// Command quickstart proves that the quickstart's outputs work: it reads `terraform output -json`
// of examples/quickstart, submits the rendered RayCluster to the cluster's own API server as a
// server-side dry run (so the real KubeRay CRD validates it), lists every slice's hosts from
// Kubernetes, and prints a summary. The access token comes from GOOGLE_OAUTH_ACCESS_TOKEN.
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
			AcceleratorType string   `json:"accelerator_type"`
			MachineType     string   `json:"machine_type"`
			NumHosts        int      `json:"num_hosts"`
			Healthy         bool     `json:"healthy"`
			Hosts           []string `json:"hosts"`
		} `json:"value"`
	} `json:"slices"`
	Manifest struct {
		Value string `json:"value"`
	} `json:"ray_cluster_manifest"`
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
		for _, h := range hosts {
			fmt.Fprintf(out, "           worker %d  %s\n", h.WorkerID, h.Name)
		}
	}
	if err := k.DryRunRayCluster(ctx, "default", []byte(o.Manifest.Value)); err != nil {
		return fmt.Errorf("the RayCluster manifest was refused: %w", err)
	}
	fmt.Fprintf(out, "\nRayCluster tpu-quickstart (%d TPU worker groups) accepted by the cluster's KubeRay CRD (server-side dry run)\n",
		strings.Count(o.Manifest.Value, `"numOfHosts"`))
	return nil
}
