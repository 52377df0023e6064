package provider

import (
	"context"
	"fmt"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"sigs.k8s.io/yaml"
)

// serve_config_v2 is Ray Serve's config file, which KubeRay sends as it is to the RayCluster's
// dashboard (spec.serveConfigV2; ray-operator v1.5.0 controllers/ray/rayservice_controller.go,
// updateServeDeployment: YAML read into a map and PUT as JSON to /api/serve/applications/). Its
// schema is Ray's ServeDeploySchema (ray-project/ray python/ray/serve/schema.py; docs.ray.io
// "Serve Config Files"): a list of applications (ServeApplicationSchema), each with an import_path
// (required), a name (default "default", never empty: application_names_nonempty) and a
// route_prefix (default "/", null for none); names unique (application_names_unique) and the
// route prefixes that are not null too (application_routes_unique).

// serveApplication is what raytpu reads of one application of a Serve config.
type serveApplication struct {
	Name        string `json:"name"`
	ImportPath  string `json:"import_path"`
	RoutePrefix string `json:"route_prefix"`
}

const defaultServeApplication = "default"

// serveApplications reads the applications of a Serve config and checks what Ray's schema asks of
// them; the error says what is wrong, naming the application.
func serveApplications(config string) ([]serveApplication, error) {
	var doc struct {
		Applications *[]map[string]any `json:"applications"`
	}
	if err := yaml.Unmarshal([]byte(config), &doc); err != nil {
		return nil, fmt.Errorf("it is not a YAML mapping with a list of applications: %s", err)
	}
	if doc.Applications == nil || len(*doc.Applications) == 0 {
		return nil, fmt.Errorf("it has no applications: give at least one under applications, each with an import_path " +
			"(module:attribute of a Serve application, such as serve_app:app)")
	}
	var (
		out    []serveApplication
		names  = map[string]int{}
		routes = map[string]string{}
	)
	for i, raw := range *doc.Applications {
		app := serveApplication{Name: defaultServeApplication, RoutePrefix: "/"}
		data, _ := yaml.Marshal(raw)
		if err := yaml.Unmarshal(data, &app); err != nil {
			return nil, fmt.Errorf("applications[%d]: %s", i, err)
		}
		if app.Name == "" {
			return nil, fmt.Errorf("applications[%d] has an empty name: leave name out (it is then %q) or give one", i, defaultServeApplication)
		}
		if strings.TrimSpace(app.ImportPath) == "" {
			return nil, fmt.Errorf("applications[%d] (%q) has no import_path: give the module:attribute of a Serve application, "+
				"such as serve_app:app", i, app.Name)
		}
		if j, dup := names[app.Name]; dup {
			return nil, fmt.Errorf("applications[%d] and applications[%d] are both named %q: application names must be unique", j, i, app.Name)
		}
		names[app.Name] = i
		out = append(out, app)
		if prefix, set := raw["route_prefix"]; set && prefix == nil {
			continue // no HTTP route
		}
		if other, dup := routes[app.RoutePrefix]; dup {
			return nil, fmt.Errorf("applications %q and %q share route_prefix %q (\"/\" when unset): route prefixes must be unique",
				other, app.Name, app.RoutePrefix)
		}
		routes[app.RoutePrefix] = app.Name
	}
	return out, nil
}

// serveApplicationNames are the names of the applications of a valid Serve config.
func serveApplicationNames(config string) []string {
	apps, _ := serveApplications(config)
	out := make([]string, len(apps))
	for i, a := range apps {
		out[i] = a.Name
	}
	return out
}

// serveConfigValidator checks a Serve config at plan time.
type serveConfigValidator struct{}

func (serveConfigValidator) Description(context.Context) string {
	return "must be a Ray Serve config (YAML) with at least one application, each with an import_path"
}
func (v serveConfigValidator) MarkdownDescription(ctx context.Context) string {
	return v.Description(ctx)
}
func (serveConfigValidator) ValidateString(_ context.Context, req validator.StringRequest, resp *validator.StringResponse) {
	if req.ConfigValue.IsNull() || req.ConfigValue.IsUnknown() {
		return
	}
	if _, err := serveApplications(req.ConfigValue.ValueString()); err != nil {
		resp.Diagnostics.AddAttributeError(req.Path, "Invalid Serve Config", fmt.Sprintf("serve_config_v2: %s. It is Ray Serve's config "+
			"file as YAML (ServeDeploySchema), for example:\n\napplications:\n  - name: llm\n    import_path: serve_llm:app\n    route_prefix: /", err))
	}
}
