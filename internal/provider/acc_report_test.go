package provider

import (
	"regexp"
	"sync"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"

	"github.com/raytpu/terraform-provider-raytpu/internal/testwait"
)

// accTest runs tc as resource.UnitTest does. When a step fails, the test's log gets the
// emulator's view of the clusters its configurations name (their pools, nodes, Pods and latest
// events) before the test case destroys them, so that a machine too slow for a wait can be told
// from a bug by the log alone.
func accTest(t *testing.T, tc resource.TestCase) {
	t.Helper()
	resource.UnitTest(&reportingT{T: t, clusters: clustersNamedIn(tc)}, tc)
}

// reportingT is a test that logs the emulator's report once, at its first error.
type reportingT struct {
	*testing.T
	clusters []string
	once     sync.Once
}

func (r *reportingT) report() {
	r.once.Do(func() {
		r.Logf("the emulator's view at the failure:\n%s", testEmulator.Report(testwait.Context(r.T), r.clusters...))
	})
}

func (r *reportingT) Error(args ...any) {
	r.Helper()
	r.report()
	r.T.Error(args...)
}

func (r *reportingT) Errorf(format string, args ...any) {
	r.Helper()
	r.report()
	r.T.Errorf(format, args...)
}

func (r *reportingT) Fatal(args ...any) {
	r.Helper()
	r.report()
	r.T.Fatal(args...)
}

func (r *reportingT) Fatalf(format string, args ...any) {
	r.Helper()
	r.report()
	r.T.Fatalf(format, args...)
}

// quotedName is a string literal of a configuration that could be a GKE cluster's name.
var quotedName = regexp.MustCompile(`"([a-z](?:[-a-z0-9]{0,38}[a-z0-9])?)"`)

// clustersNamedIn are the strings of tc's configurations that could name a cluster: the report
// shows those the emulator has, and every cluster when none.
func clustersNamedIn(tc resource.TestCase) []string {
	seen := map[string]bool{}
	var names []string
	for _, step := range tc.Steps {
		for _, m := range quotedName.FindAllStringSubmatch(step.Config, -1) {
			if !seen[m[1]] {
				seen[m[1]] = true
				names = append(names, m[1])
			}
		}
	}
	return names
}
