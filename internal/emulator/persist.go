package emulator

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"cloud.google.com/go/container/apiv1/containerpb"
	compute "google.golang.org/api/compute/v1"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/raytpu/terraform-provider-raytpu/internal/emulator/kubeproc"
	"github.com/raytpu/terraform-provider-raytpu/internal/emulator/rules"
)

// stateFile is the emulator's saved state inside Options.StateDir. Next to it: etcd/ (the
// shared etcd's data, so objects in the clusters survive) and clusters/<id>/ (each cluster's key
// material, token file and kube-apiserver log).
const stateFile = "state.json"

// Also in the state folder: the generated token (when Options.Token is empty) and the last listen
// address (reused when Options.Addr asks for any port), so a restart keeps both.
const (
	tokenFile   = "token"
	addressFile = "address"
)

type savedState struct {
	Clusters   []savedCluster   `json:"clusters"`
	Operations []savedOperation `json:"operations"`
	// Compute Engine: resource policies and operations.
	ResourcePolicies  []savedPolicy           `json:"resourcePolicies,omitempty"`
	ComputeOperations []savedComputeOperation `json:"computeOperations,omitempty"`
}

type savedPolicy struct {
	Key      string          `json:"key"`
	Project  string          `json:"project"`
	Region   string          `json:"region"`
	Ready    bool            `json:"ready"`
	Deleting bool            `json:"deleting,omitempty"`
	Policy   json.RawMessage `json:"policy"`
}

type savedComputeOperation struct {
	Key       string          `json:"key"`
	Operation json.RawMessage `json:"operation"`
}

type savedCluster struct {
	Key      string          `json:"key"`
	Project  string          `json:"project"`
	Location string          `json:"location"`
	UID      string          `json:"uid"`
	APIPort  int             `json:"apiPort"`
	RayCRDs  bool            `json:"rayCrds"`
	Cluster  json.RawMessage `json:"cluster"`
	Pools    []savedPool     `json:"pools"`
}

type savedPool struct {
	UID          string          `json:"uid"`
	Zones        []string        `json:"zones"`
	NodeCount    int             `json:"nodeCount"`
	Generation   string          `json:"generation,omitempty"`
	Accelerator  string          `json:"accelerator,omitempty"`
	Topology     string          `json:"topology,omitempty"`
	ChipsPerNode int             `json:"chipsPerNode,omitempty"`
	MultiHost    bool            `json:"multiHost,omitempty"`
	Reserved     bool            `json:"reserved,omitempty"`
	Source       string          `json:"source,omitempty"`
	FailedHosts  []int           `json:"failedHosts,omitempty"`
	NodePool     json.RawMessage `json:"nodePool"`
}

type savedOperation struct {
	Key        string          `json:"key"`
	Project    string          `json:"project"`
	Location   string          `json:"location"`
	ClusterKey string          `json:"clusterKey"`
	Operation  json.RawMessage `json:"operation"`
}

func marshalPB(m proto.Message) json.RawMessage {
	b, err := protojson.Marshal(m)
	if err != nil {
		panic(err) // containerpb messages always marshal
	}
	return b
}

// persistLocked saves the state when the emulator has a state folder; failures are logged, since
// the API call that changed the state has already succeeded.
func (e *Emulator) persistLocked() {
	if e.opts.StateDir == "" {
		return
	}
	if err := e.saveLocked(); err != nil {
		e.logf("saving state: %v", err)
	}
}

func (e *Emulator) saveLocked() error {
	var s savedState
	for _, c := range e.st.allClusters() {
		sc := savedCluster{Key: c.Key, Project: c.Project, Location: c.Location, UID: c.UID, APIPort: c.APIPort,
			RayCRDs: c.RayCRDs, Cluster: marshalPB(c.PB)}
		for _, p := range c.Pools {
			sc.Pools = append(sc.Pools, savedPool{
				UID: p.UID, Zones: p.Zones, NodeCount: p.NodeCount, Generation: p.Generation, Accelerator: p.Accelerator,
				Topology: p.Topology, ChipsPerNode: p.ChipsPerNode, MultiHost: p.MultiHost, Reserved: p.Reserved, Source: p.Source,
				FailedHosts: p.FailedHosts, NodePool: marshalPB(p.PB),
			})
		}
		s.Clusters = append(s.Clusters, sc)
	}
	for _, k := range e.st.opOrder {
		op := e.st.ops[k]
		s.Operations = append(s.Operations, savedOperation{Key: op.Key, Project: op.Project, Location: op.Location,
			ClusterKey: op.ClusterKey, Operation: marshalPB(op.PB)})
	}
	for _, k := range policyKeys(e.st.policies) {
		p := e.st.policies[k]
		b, err := json.Marshal(p.PB)
		if err != nil {
			return err
		}
		s.ResourcePolicies = append(s.ResourcePolicies, savedPolicy{Key: p.Key, Project: p.Project, Region: p.Region,
			Ready: p.Ready, Deleting: p.Deleting, Policy: b})
	}
	for _, k := range e.st.computeOrder {
		b, err := json.Marshal(e.st.computeOps[k].PB)
		if err != nil {
			return err
		}
		s.ComputeOperations = append(s.ComputeOperations, savedComputeOperation{Key: k, Operation: b})
	}
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	tmp := filepath.Join(e.workDir, stateFile+".tmp")
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, filepath.Join(e.workDir, stateFile))
}

// restore loads a saved state: operations that were running end DONE, objects that were changing
// settle (PROVISIONING and RECONCILING become RUNNING, STOPPING ones are gone), and every cluster's
// kube-apiserver is started again with its CA, with its nodes and KubeRay CRDs re-registered.
func (e *Emulator) restore(ctx context.Context) error {
	b, err := os.ReadFile(filepath.Join(e.workDir, stateFile))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	var s savedState
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("emulator: reading %s: %w", stateFile, err)
	}
	e.mu.Lock()
	for _, so := range s.Operations {
		op := &operation{Key: so.Key, Project: so.Project, Location: so.Location, ClusterKey: so.ClusterKey, PB: &containerpb.Operation{}}
		if err := protojson.Unmarshal(so.Operation, op.PB); err != nil {
			e.mu.Unlock()
			return fmt.Errorf("emulator: reading operation %s: %w", so.Key, err)
		}
		if !op.done() {
			op.PB.Status = containerpb.Operation_DONE
			op.PB.EndTime = nowRFC3339()
		}
		e.st.ops[op.Key] = op
		e.st.opOrder = append(e.st.opOrder, op.Key)
	}
	// Compute Engine operations that were running end DONE, and their policies settle as GKE's
	// objects do: created ones are ready, deleted ones gone.
	for _, sp := range s.ResourcePolicies {
		if sp.Deleting {
			continue
		}
		p := &resourcePolicy{Key: sp.Key, Project: sp.Project, Region: sp.Region, Ready: true, PB: &compute.ResourcePolicy{}}
		if err := json.Unmarshal(sp.Policy, p.PB); err != nil {
			e.mu.Unlock()
			return fmt.Errorf("emulator: reading resource policy %s: %w", sp.Key, err)
		}
		e.st.policies[p.Key] = p
	}
	for _, so := range s.ComputeOperations {
		op := &computeOperation{Key: so.Key, PB: &compute.Operation{}, done: make(chan struct{})}
		if err := json.Unmarshal(so.Operation, op.PB); err != nil {
			e.mu.Unlock()
			return fmt.Errorf("emulator: reading operation %s: %w", so.Key, err)
		}
		e.finishComputeOperationLocked(op, nil)
		e.st.computeOps[op.Key] = op
		e.st.computeOrder = append(e.st.computeOrder, op.Key)
	}
	var start []*cluster
	for _, sc := range s.Clusters {
		c := &cluster{Key: sc.Key, Project: sc.Project, Location: sc.Location, UID: sc.UID, APIPort: sc.APIPort,
			PB: &containerpb.Cluster{}, dir: filepath.Join(e.workDir, "clusters", sc.UID)}
		if err := protojson.Unmarshal(sc.Cluster, c.PB); err != nil {
			e.mu.Unlock()
			return fmt.Errorf("emulator: reading cluster %s: %w", sc.Key, err)
		}
		if c.PB.Status == containerpb.Cluster_STOPPING {
			e.removeClusterDir(c)
			continue
		}
		if c.PB.Status == containerpb.Cluster_PROVISIONING || c.PB.Status == containerpb.Cluster_RECONCILING {
			c.PB.Status = containerpb.Cluster_RUNNING
		}
		for _, sp := range sc.Pools {
			p := &rules.NodePool{UID: sp.UID, Zones: sp.Zones, NodeCount: sp.NodeCount, Generation: sp.Generation,
				Accelerator: sp.Accelerator, Topology: sp.Topology, ChipsPerNode: sp.ChipsPerNode, MultiHost: sp.MultiHost,
				Reserved: sp.Reserved, Source: sp.Source, FailedHosts: sp.FailedHosts, PB: &containerpb.NodePool{}}
			if err := protojson.Unmarshal(sp.NodePool, p.PB); err != nil {
				e.mu.Unlock()
				return fmt.Errorf("emulator: reading node pool of %s: %w", sc.Key, err)
			}
			switch p.PB.Status {
			case containerpb.NodePool_STOPPING:
				continue
			case containerpb.NodePool_PROVISIONING, containerpb.NodePool_RECONCILING:
				p.PB.Status = restoredStatus(containerpb.NodePool_RUNNING, p)
				p.Reserved = p.Generation != ""
			}
			c.Pools = append(c.Pools, p)
		}
		e.st.clusters[c.Key] = c
		if _, err := os.Stat(filepath.Join(c.dir, "pki", kubeproc.CAFile)); err == nil {
			start = append(start, c)
		}
	}
	e.mu.Unlock()

	for _, c := range start {
		if err := e.startClusterAPI(ctx, c); err != nil {
			return fmt.Errorf("emulator: restarting the kube-apiserver of %s: %w", c.Key, err)
		}
		e.mu.Lock()
		var specs []poolNodesSpec
		for _, p := range c.Pools {
			if p.PB.Status != containerpb.NodePool_ERROR {
				specs = append(specs, nodesSpecLocked(c, p))
			}
		}
		c.RayCRDs, c.rayTarget = false, false // re-created (idempotently) below when the add-on is on
		e.scheduleRayLocked(c)
		e.mu.Unlock()
		for _, s := range specs {
			if err := e.syncPoolNodes(ctx, c, s); err != nil {
				return fmt.Errorf("emulator: re-registering the nodes of %s/nodePools/%s: %w", c.Key, s.pool, err)
			}
		}
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.saveLocked()
}

func policyKeys(m map[string]*resourcePolicy) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
