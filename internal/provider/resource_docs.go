package provider

import (
	"time"

	"github.com/hashicorp/terraform-plugin-framework/path"
)

// What a resource's registry page says beyond its schema comes from the values the resource runs
// with: internal/provider/providerdoc reads them through these interfaces, with the schema's plan
// modifiers and identity, and writes them into the page's template.

// ResourceWithDefaultTimeouts is a resource whose timeouts block has these defaults.
type ResourceWithDefaultTimeouts interface {
	DefaultTimeouts() OperationTimeouts
}

// OperationTimeouts are how long create, update and delete may take when the timeouts block does
// not say.
type OperationTimeouts struct {
	Create, Update, Delete time.Duration
}

// ResourceWithPlanReplacements is a resource whose ModifyPlan replaces it for reasons that no plan
// modifier of a single attribute can see.
type ResourceWithPlanReplacements interface {
	PlanReplacements() []PlanReplacement
}

// PlanReplacement is one reason ModifyPlan replaces the resource: the attributes it marks in
// RequiresReplace, and when, in words that follow "replaces the resource": "when the shape
// changes".
type PlanReplacement struct {
	Attributes []path.Path
	When       string
}

// ResourceWithChanges is a resource whose updates more than one system carries out (raytpu,
// KubeRay): its page lists each kind of change, who applies it and what the plan says, from the
// classification its ModifyPlan uses.
type ResourceWithChanges interface {
	Changes() []ChangeRow
}

// ChangeRow is one kind of change: what changes, who applies it, and what the plan says.
type ChangeRow struct {
	Change, AppliedBy, Plan string
}
