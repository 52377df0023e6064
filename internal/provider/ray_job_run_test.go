package provider

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

func TestLastLinesKeepsTheTailOfLogs(t *testing.T) {
	var logs []string
	for i := 1; i <= 30; i++ {
		logs = append(logs, fmt.Sprintf("  line %d", i))
	}
	logs = append(logs, strings.Repeat("é", 400))
	tail := lastLines(strings.Join(logs, "\n")+"\n\n", 20)
	lines := strings.Split(tail, "\n")
	if len(lines) != 20 || lines[0] != "  line 12" || lines[18] != "  line 30" {
		t.Errorf("lastLines = %q, want lines 12 to 30 and the long one, indentation kept", lines)
	}
	if long := lines[19]; !strings.HasSuffix(long, "…") || len(long) > 500+len("…") || !strings.HasPrefix(long, "éé") || strings.ContainsRune(long, '\uFFFD') {
		t.Errorf("a long line is %d bytes, %q…; want it cut to 500 bytes of whole characters", len(long), long[:10])
	}
	if got := lastLines("", 20); got != "" {
		t.Errorf("lastLines of no logs = %q, want nothing", got)
	}
}

func TestFirstLineLeavesTheLogsOfAFailedJobsMessage(t *testing.T) {
	msg := "Job entrypoint command failed with exit code 1, last available logs (truncated to 20,000 chars):\nTraceback\nValueError"
	if got := firstLine(msg); got != "Job entrypoint command failed with exit code 1, last available logs (truncated to 20,000 chars):" {
		t.Errorf("firstLine = %q", got)
	}
}

// Each invocation without a submission_id submits under an id of its own, one the Jobs API's
// paths and the attribute's validator take.
func TestRayJobRequestIDs(t *testing.T) {
	ctx := context.Background()
	m := rayJobActionModel{Entrypoint: types.StringValue("python train.py"), SubmissionID: types.StringNull(),
		RuntimeEnv: types.StringValue(`{"pip":["jax"]}`), Metadata: types.MapNull(types.StringType),
		EntrypointResources: types.MapValueMust(types.Float64Type, map[string]attr.Value{"TPU": types.Float64Value(4)})}
	a, diags := m.request(ctx)
	b, _ := m.request(ctx)
	if diags.HasError() || a.SubmissionID == b.SubmissionID || !submissionIDPattern.MatchString(a.SubmissionID) {
		t.Errorf("generated ids %q and %q (%v); want two different valid ids", a.SubmissionID, b.SubmissionID, diags)
	}
	if string(a.RuntimeEnv) != `{"pip":["jax"]}` || a.EntrypointResources["TPU"] != 4 || a.Metadata != nil {
		t.Errorf("request = %+v, not what the configuration says", a)
	}
	m.SubmissionID = types.StringValue("train-1")
	if r, _ := m.request(ctx); r.SubmissionID != "train-1" {
		t.Errorf("submission id %q, want the configured train-1", r.SubmissionID)
	}
}

func TestParseRayClusterID(t *testing.T) {
	c, ns, name, err := parseRayClusterID("projects/p/locations/us-east5-b/clusters/c/rayClusters/default/tpu")
	if err != nil || c.Name != "c" || ns != "default" || name != "tpu" {
		t.Errorf("parseRayClusterID = %v %s %s %v", c, ns, name, err)
	}
	for _, id := range []string{"p/us-east5-b/c/default/tpu", "projects/p/locations/us-east5-b/clusters/c/default/tpu",
		"projects/p/locations/us-east5-b/clusters/c/rayClusters/Default/tpu"} {
		if _, _, _, err := parseRayClusterID(id); err == nil {
			t.Errorf("parseRayClusterID(%q) accepted an id that is not a raytpu_ray_cluster's", id)
		}
	}
}
