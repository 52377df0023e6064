// Package rulestest builds the maintenance policies and autoscaling settings the tests of package
// rules and of the emulator send. It is for tests only.
package rulestest

import (
	"time"

	"cloud.google.com/go/container/apiv1/containerpb"
	"google.golang.org/protobuf/types/known/timestamppb"
)

// RecurringPolicy is a policy with a recurring window from start to end (RFC 3339) and rule.
func RecurringPolicy(start, end, rule string) *containerpb.MaintenancePolicy {
	s, _ := time.Parse(time.RFC3339, start)
	e, _ := time.Parse(time.RFC3339, end)
	return &containerpb.MaintenancePolicy{Window: &containerpb.MaintenanceWindow{Policy: &containerpb.MaintenanceWindow_RecurringWindow{
		RecurringWindow: &containerpb.RecurringTimeWindow{Window: &containerpb.TimeWindow{StartTime: timestamppb.New(s), EndTime: timestamppb.New(e)}, Recurrence: rule},
	}}}
}

// DailyPolicy is a policy with a daily window starting at start (HH:MM).
func DailyPolicy(start string) *containerpb.MaintenancePolicy {
	return &containerpb.MaintenancePolicy{Window: &containerpb.MaintenanceWindow{Policy: &containerpb.MaintenanceWindow_DailyMaintenanceWindow{
		DailyMaintenanceWindow: &containerpb.DailyMaintenanceWindow{StartTime: start},
	}}}
}

// Exclusion is a maintenance exclusion of scope from start to end.
func Exclusion(scope containerpb.MaintenanceExclusionOptions_Scope, start, end *timestamppb.Timestamp) *containerpb.TimeWindow {
	return &containerpb.TimeWindow{StartTime: start, EndTime: end,
		Options: &containerpb.TimeWindow_MaintenanceExclusionOptions{MaintenanceExclusionOptions: &containerpb.MaintenanceExclusionOptions{Scope: scope}}}
}

// WithExclusions gives policy p the exclusions ex.
func WithExclusions(p *containerpb.MaintenancePolicy, ex map[string]*containerpb.TimeWindow) *containerpb.MaintenancePolicy {
	p.Window.MaintenanceExclusions = ex
	return p
}
