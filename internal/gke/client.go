package gke

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"strings"
	"time"

	container "cloud.google.com/go/container/apiv1"
	"cloud.google.com/go/container/apiv1/containerpb"
	"github.com/googleapis/gax-go/v2"
	"golang.org/x/oauth2"
	compute "google.golang.org/api/compute/v1"
	"google.golang.org/api/option"

	"github.com/raytpu/terraform-provider-raytpu/internal/netfail"
)

// Config configures a Client.
type Config struct {
	// Endpoint overrides container.googleapis.com, for a private endpoint or a local emulator.
	// It must be https, or http on a loopback address.
	Endpoint string
	// ComputeEndpoint overrides compute.googleapis.com/compute/v1/, where TPU slices' workload
	// policies live. The same rule as Endpoint applies.
	ComputeEndpoint string
	// TokenSource provides the Google access tokens.
	TokenSource oauth2.TokenSource
	// UserAgent identifies the provider and its version.
	UserAgent string
	// Poll is how operations are polled; the zero value is DefaultPollSchedule.
	Poll PollSchedule
	// Retry is the backoff between retries of a failed call; the zero value is DefaultBackoff.
	Retry Backoff
	// Now is the clock that ages shared reads (SharedReadTTL); nil is time.Now.
	Now func() time.Time
}

// Client calls the GKE API with raytpu's retry, locking and waiting policy.
type Client struct {
	api       *container.ClusterManagerClient
	compute   *compute.Service
	tokens    oauth2.TokenSource
	poll      PollSchedule
	retry     Backoff
	locks     clusterLocks
	durations opDurations
	shapes    machineShapes
	// now is the clock of the shared reads (a test's own).
	now func() time.Time
	// clusters are the reads of clusters, by cluster; serverConfigs those of the versions on
	// offer, by project and location; pools the node pool lists of clusters, by cluster; groups
	// the instance group lists of zones, by project and zone (see reads.go).
	clusters      *sharedLists[*containerpb.Cluster]
	serverConfigs *sharedLists[*containerpb.ServerConfig]
	pools         *sharedLists[[]*containerpb.NodePool]
	groups        *sharedLists[map[string]*compute.InstanceGroupManager]
}

// noRetry disables the client library's own retries: Client.call is the one retry policy.
var noRetry = gax.WithRetry(func() gax.Retryer { return nil })

// New builds a Client. It makes no API call.
func New(ctx context.Context, cfg Config) (*Client, error) {
	cfg.TokenSource = netfail.Tokens(cfg.TokenSource)
	opts := []option.ClientOption{option.WithTokenSource(cfg.TokenSource)}
	if cfg.Endpoint != "" {
		if err := CheckEndpoint(cfg.Endpoint); err != nil {
			return nil, err
		}
		opts = append(opts, option.WithEndpoint(cfg.Endpoint))
	}
	if cfg.UserAgent != "" {
		opts = append(opts, option.WithUserAgent(cfg.UserAgent))
	}
	api, err := container.NewClusterManagerRESTClient(ctx, opts...)
	if err != nil {
		return nil, fmt.Errorf("creating the GKE API client: %w", err)
	}
	cs, err := newComputeService(ctx, cfg)
	if err != nil {
		return nil, err
	}
	c := &Client{api: api, compute: cs, tokens: cfg.TokenSource, poll: cfg.Poll, retry: cfg.Retry}
	c.setClock(cfg.Now)
	if c.poll == (PollSchedule{}) {
		c.poll = DefaultPollSchedule
	}
	if c.retry == (Backoff{}) {
		c.retry = DefaultBackoff
	}
	return c, nil
}

// CheckEndpoint refuses endpoints that would send tokens in clear text over a network: plain
// http is only accepted on a loopback address.
func CheckEndpoint(endpoint string) error {
	u, err := url.Parse(endpoint)
	if err != nil || u.Host == "" {
		return fmt.Errorf("endpoint %q is not a URL such as https://container.example.com or http://127.0.0.1:8080", endpoint)
	}
	switch u.Scheme {
	case "https":
		return nil
	case "http":
		host := u.Hostname()
		if ip := net.ParseIP(host); (ip != nil && ip.IsLoopback()) || host == "localhost" {
			return nil
		}
		return fmt.Errorf("endpoint %q uses plain http on a non-loopback host: tokens would travel unencrypted; use https", endpoint)
	}
	return fmt.Errorf("endpoint %q must use https (or http on a loopback address)", endpoint)
}

// TokenSource is the source of the Google access tokens, which also open each cluster's
// Kubernetes API.
func (c *Client) TokenSource() oauth2.TokenSource { return c.tokens }

// Close releases the client's connections.
func (c *Client) Close() error { return c.api.Close() }

// LockCluster waits until no other mutation of this provider runs on the cluster: GKE runs a
// cluster-level operation alone. Hold it from the mutating call until its operation is done.
func (c *Client) LockCluster(ctx context.Context, id ClusterID) (unlock func(), err error) {
	unlock, err = c.locks.lockCluster(ctx, id.String())
	if err != nil {
		return nil, fmt.Errorf("waiting for other operations of this apply on %s: %w", id, err)
	}
	return unlock, nil
}

// LockNodePool waits until the pool has no other mutation of this provider, no cluster mutation
// runs, and fewer than MaxNodePoolOperations pool mutations run on its cluster: GKE runs node
// pool operations of one cluster concurrently, one per pool. Hold it from the mutating call
// until its operation is done.
func (c *Client) LockNodePool(ctx context.Context, id NodePoolID) (unlock func(), err error) {
	unlock, err = c.locks.lockNodePool(ctx, id.Cluster.String(), id.Name)
	if err != nil {
		return nil, fmt.Errorf("waiting for other operations of this apply on %s: %w", id, err)
	}
	return unlock, nil
}

// CreateCluster starts creating a cluster.
func (c *Client) CreateCluster(ctx context.Context, id ClusterID, cluster *containerpb.Cluster) (*containerpb.Operation, error) {
	defer c.wroteCluster(id)()
	return call(ctx, c, "CreateCluster", func(ctx context.Context) (*containerpb.Operation, error) {
		return c.api.CreateCluster(ctx, &containerpb.CreateClusterRequest{Parent: id.Parent(), Cluster: cluster}, noRetry)
	})
}

// UpdateCluster starts one update of a cluster.
func (c *Client) UpdateCluster(ctx context.Context, id ClusterID, update *containerpb.ClusterUpdate) (*containerpb.Operation, error) {
	defer c.wroteCluster(id)()
	return call(ctx, c, "UpdateCluster", func(ctx context.Context) (*containerpb.Operation, error) {
		return c.api.UpdateCluster(ctx, &containerpb.UpdateClusterRequest{Name: id.String(), Update: update}, noRetry)
	})
}

// SetAddons starts replacing a cluster's add-ons configuration.
func (c *Client) SetAddons(ctx context.Context, id ClusterID, addons *containerpb.AddonsConfig) (*containerpb.Operation, error) {
	defer c.wroteCluster(id)()
	return call(ctx, c, "SetAddonsConfig", func(ctx context.Context) (*containerpb.Operation, error) {
		return c.api.SetAddonsConfig(ctx, &containerpb.SetAddonsConfigRequest{Name: id.String(), AddonsConfig: addons}, noRetry)
	})
}

// SetResourceLabels starts replacing a cluster's resource labels; fingerprint is the one read
// with the cluster.
func (c *Client) SetResourceLabels(ctx context.Context, id ClusterID, labels map[string]string, fingerprint string) (*containerpb.Operation, error) {
	defer c.wroteCluster(id)()
	return call(ctx, c, "SetLabels", func(ctx context.Context) (*containerpb.Operation, error) {
		return c.api.SetLabels(ctx, &containerpb.SetLabelsRequest{Name: id.String(), ResourceLabels: labels, LabelFingerprint: fingerprint}, noRetry)
	})
}

// DeleteCluster starts deleting a cluster.
func (c *Client) DeleteCluster(ctx context.Context, id ClusterID) (*containerpb.Operation, error) {
	defer c.wroteCluster(id)()
	return call(ctx, c, "DeleteCluster", func(ctx context.Context) (*containerpb.Operation, error) {
		return c.api.DeleteCluster(ctx, &containerpb.DeleteClusterRequest{Name: id.String()}, noRetry)
	})
}

// getNodePool reads a node pool itself.
func (c *Client) getNodePool(ctx context.Context, id NodePoolID) (*containerpb.NodePool, error) {
	return call(ctx, c, "GetNodePool", func(ctx context.Context) (*containerpb.NodePool, error) {
		return c.api.GetNodePool(ctx, &containerpb.GetNodePoolRequest{Name: id.String()}, noRetry)
	})
}

// CreateNodePool starts creating a node pool.
func (c *Client) CreateNodePool(ctx context.Context, id NodePoolID, pool *containerpb.NodePool) (*containerpb.Operation, error) {
	defer c.wrotePools(id.Cluster)()
	return call(ctx, c, "CreateNodePool", func(ctx context.Context) (*containerpb.Operation, error) {
		return c.api.CreateNodePool(ctx, &containerpb.CreateNodePoolRequest{Parent: id.Cluster.String(), NodePool: pool}, noRetry)
	})
}

// UpdateNodePool starts one update of a node pool.
func (c *Client) UpdateNodePool(ctx context.Context, req *containerpb.UpdateNodePoolRequest) (*containerpb.Operation, error) {
	if id, err := ParseNodePoolID(req.GetName()); err == nil {
		defer c.wrotePools(id.Cluster)()
	}
	return call(ctx, c, "UpdateNodePool", func(ctx context.Context) (*containerpb.Operation, error) {
		return c.api.UpdateNodePool(ctx, req, noRetry)
	})
}

// SetNodePoolAutoscaling starts replacing a node pool's autoscaling settings.
func (c *Client) SetNodePoolAutoscaling(ctx context.Context, id NodePoolID, autoscaling *containerpb.NodePoolAutoscaling) (*containerpb.Operation, error) {
	defer c.wrotePools(id.Cluster)()
	return call(ctx, c, "SetNodePoolAutoscaling", func(ctx context.Context) (*containerpb.Operation, error) {
		return c.api.SetNodePoolAutoscaling(ctx, &containerpb.SetNodePoolAutoscalingRequest{Name: id.String(), Autoscaling: autoscaling}, noRetry)
	})
}

// SetNodePoolManagement starts replacing a node pool's auto-upgrade and auto-repair settings.
func (c *Client) SetNodePoolManagement(ctx context.Context, id NodePoolID, management *containerpb.NodeManagement) (*containerpb.Operation, error) {
	defer c.wrotePools(id.Cluster)()
	return call(ctx, c, "SetNodePoolManagement", func(ctx context.Context) (*containerpb.Operation, error) {
		return c.api.SetNodePoolManagement(ctx, &containerpb.SetNodePoolManagementRequest{Name: id.String(), Management: management}, noRetry)
	})
}

// DeleteNodePool starts deleting a node pool.
func (c *Client) DeleteNodePool(ctx context.Context, id NodePoolID) (*containerpb.Operation, error) {
	defer c.wrotePools(id.Cluster)()
	return call(ctx, c, "DeleteNodePool", func(ctx context.Context) (*containerpb.Operation, error) {
		return c.api.DeleteNodePool(ctx, &containerpb.DeleteNodePoolRequest{Name: id.String()}, noRetry)
	})
}

// RunningOperation finds the operation of type typ still running on target (a cluster or a node
// pool): the one a create started when its response was lost. It returns nil when none runs.
func (c *Client) RunningOperation(ctx context.Context, cluster ClusterID, target string, typ containerpb.Operation_Type) (*containerpb.Operation, error) {
	resp, err := call(ctx, c, "ListOperations", func(ctx context.Context) (*containerpb.ListOperationsResponse, error) {
		return c.api.ListOperations(ctx, &containerpb.ListOperationsRequest{Parent: cluster.Parent()}, noRetry)
	})
	if err != nil {
		return nil, err
	}
	// targetLink is a URL whose path ends in the target's name; its project may be a number and
	// its location form zones/ rather than locations/, so the name is matched from the cluster on.
	suffix := target[strings.Index(target, "/clusters/"):]
	for _, op := range resp.GetOperations() {
		if op.GetOperationType() == typ && op.GetStatus() != containerpb.Operation_DONE && strings.HasSuffix(op.GetTargetLink(), suffix) {
			return op, nil
		}
	}
	return nil, nil
}
