package emulator

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/raytpu/terraform-provider-raytpu/internal/emulator/apierr"
)

// Client drives the control API of an emulator running elsewhere (e.g. the standalone
// raytpu-emulator). It implements Controller like *Emulator does.
type Client struct {
	endpoint string
	token    string
	http     *http.Client
}

var _ Controller = (*Client)(nil)

// NewClient returns a control client for the emulator at endpoint (http://127.0.0.1:PORT),
// authenticating with token.
func NewClient(endpoint, token string) *Client {
	return &Client{endpoint: strings.TrimSuffix(endpoint, "/"), token: token, http: &http.Client{Timeout: 5 * time.Minute}}
}

func (c *Client) call(ctx context.Context, method, path string, in, out any) error {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return err
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.endpoint+controlPrefix+path, body)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.http.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		var eb apierr.Body
		if json.Unmarshal(data, &eb) == nil && eb.Error.Message != "" {
			return fmt.Errorf("emulator control %s %s: %s", method, path, eb.Error.Message)
		}
		return fmt.Errorf("emulator control %s %s: HTTP %d: %s", method, path, resp.StatusCode, data)
	}
	if out != nil {
		return json.Unmarshal(data, out)
	}
	return nil
}

// Reset implements Controller.
func (c *Client) Reset(ctx context.Context) error { return c.call(ctx, "POST", "reset", nil, nil) }

// SetLatencies implements Controller.
func (c *Client) SetLatencies(ctx context.Context, latencies map[string]time.Duration) error {
	in := map[string]string{}
	for k, d := range latencies {
		in[k] = d.String()
	}
	return c.call(ctx, "PUT", "latencies", in, nil)
}

// SetClusterLatencies implements Controller.
func (c *Client) SetClusterLatencies(ctx context.Context, cluster string, latencies map[string]time.Duration) error {
	in := clusterLatenciesBody{Cluster: cluster, Latencies: map[string]string{}}
	for k, d := range latencies {
		in.Latencies[k] = d.String()
	}
	return c.call(ctx, "PUT", "clusterLatencies", in, nil)
}

// SetCapacity implements Controller.
func (c *Client) SetCapacity(ctx context.Context, cp Capacity) error {
	return c.call(ctx, "POST", "capacity", cp, nil)
}

// SetQuota implements Controller.
func (c *Client) SetQuota(ctx context.Context, q Quota) error {
	return c.call(ctx, "POST", "quota", q, nil)
}

// InjectFault implements Controller.
func (c *Client) InjectFault(ctx context.Context, f Fault) (string, error) {
	var out struct {
		ID string `json:"id"`
	}
	err := c.call(ctx, "POST", "faults", f, &out)
	return out.ID, err
}

// ClearFaults implements Controller.
func (c *Client) ClearFaults(ctx context.Context) error {
	return c.call(ctx, "DELETE", "faults", nil, nil)
}

// FailNextOperation implements Controller.
func (c *Client) FailNextOperation(ctx context.Context, f OperationFault) error {
	return c.call(ctx, "POST", "operationFaults", f, nil)
}

// FailHost implements Controller.
func (c *Client) FailHost(ctx context.Context, h HostFailure) error {
	return c.call(ctx, "POST", "hostFailures", h, nil)
}

// SetRayJobOutcome implements Controller.
func (c *Client) SetRayJobOutcome(ctx context.Context, o RayJobOutcome) error {
	return c.call(ctx, "POST", "rayJobOutcomes", o, nil)
}

// Requests implements Controller.
func (c *Client) Requests(ctx context.Context) ([]RequestRecord, error) {
	var out struct {
		Requests []RequestRecord `json:"requests"`
	}
	err := c.call(ctx, "GET", "requests", nil, &out)
	return out.Requests, err
}

// Counters implements Controller.
func (c *Client) Counters(ctx context.Context) (map[string]int, error) {
	var out struct {
		Counters map[string]int `json:"counters"`
	}
	err := c.call(ctx, "GET", "counters", nil, &out)
	return out.Counters, err
}

// RayCRDInstalls implements Controller.
func (c *Client) RayCRDInstalls(ctx context.Context) ([]RayCRDInstall, error) {
	var out struct {
		Installs []RayCRDInstall `json:"installs"`
	}
	err := c.call(ctx, "GET", "rayCRDInstalls", nil, &out)
	return out.Installs, err
}

// CreateResourcePolicy implements Controller.
func (c *Client) CreateResourcePolicy(ctx context.Context, p ResourcePolicy) error {
	return c.call(ctx, "POST", "resourcePolicies", p, nil)
}

// DNSEndpointCA implements Controller.
func (c *Client) DNSEndpointCA(ctx context.Context) ([]byte, error) {
	var out struct {
		PEM string `json:"pem"`
	}
	err := c.call(ctx, "GET", "dnsEndpointCA", nil, &out)
	return []byte(out.PEM), err
}

// CreateReservation implements Controller.
func (c *Client) CreateReservation(ctx context.Context, r Reservation) error {
	return c.call(ctx, "POST", "reservations", r, nil)
}

// ScalePool implements Controller.
func (c *Client) ScalePool(ctx context.Context, s PoolScale) error {
	return c.call(ctx, "POST", "poolScales", s, nil)
}
