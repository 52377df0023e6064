package raydashboard

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"time"
)

// Serve application and deployment statuses, Ray's (ray.serve.schema).
const (
	AppDeploying = "DEPLOYING"
	AppRunning   = "RUNNING"

	DeploymentUpdating = "UPDATING"
	DeploymentHealthy  = "HEALTHY"
)

// application is one Serve application as the last PUT that changed it sent it.
type application struct {
	name        string
	routePrefix string
	config      map[string]any // the application's entry of the PUT, as sent
	deployments []deployment
	deployedAt  time.Time
}

type deployment struct {
	name      string
	replicas  int
	resources map[string]float64
}

// serveDeploySchema is the part of Ray's ServeDeploySchema the stand-in reads.
type serveDeploySchema struct {
	Applications []map[string]any `json:"applications"`
}

func (d *Dashboard) putApplications(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var req serveDeploySchema
	if err := json.Unmarshal(body, &req); err != nil {
		http.Error(w, "invalid Serve config: "+err.Error(), http.StatusBadRequest)
		return
	}
	apps := map[string]*application{}
	routes := map[string]string{}
	for i, raw := range req.Applications {
		app, err := parseApplication(raw)
		if err != nil {
			http.Error(w, fmt.Sprintf("invalid Serve config: applications[%d]: %v", i, err), http.StatusBadRequest)
			return
		}
		if _, dup := apps[app.name]; dup {
			http.Error(w, fmt.Sprintf("invalid Serve config: application names must be unique, %q appears twice", app.name), http.StatusBadRequest)
			return
		}
		if other, dup := routes[app.routePrefix]; dup {
			http.Error(w, fmt.Sprintf("invalid Serve config: applications %q and %q share the route prefix %q", other, app.name, app.routePrefix), http.StatusBadRequest)
			return
		}
		apps[app.name], routes[app.routePrefix] = app, app.name
	}
	now := d.cfg.Now()
	d.mu.Lock()
	for name, app := range apps {
		// An application sent again unchanged keeps running; a changed one deploys again.
		if old, ok := d.apps[name]; ok && reflect.DeepEqual(old.config, app.config) {
			app.deployedAt = old.deployedAt
		} else {
			app.deployedAt = now
		}
	}
	d.apps = apps
	d.mu.Unlock()
	w.WriteHeader(http.StatusOK)
}

// parseApplication reads one application of a PUT: import_path is required; the name defaults
// to "default" and the route prefix to "/", as in Ray's ServeApplicationSchema.
func parseApplication(raw map[string]any) (*application, error) {
	app := &application{name: "default", routePrefix: "/", config: raw}
	if v, ok := raw["name"].(string); ok && v != "" {
		app.name = v
	}
	if v, ok := raw["route_prefix"].(string); ok && v != "" {
		app.routePrefix = v
	}
	if v, _ := raw["import_path"].(string); v == "" {
		return nil, fmt.Errorf("import_path is required")
	}
	list, _ := raw["deployments"].([]any)
	for j, entry := range list {
		m, ok := entry.(map[string]any)
		name, _ := m["name"].(string)
		if !ok || name == "" {
			return nil, fmt.Errorf("deployments[%d]: name is required", j)
		}
		dep := deployment{name: name, replicas: 1, resources: map[string]float64{}}
		if n, ok := m["num_replicas"].(float64); ok {
			dep.replicas = int(n)
		}
		if opts, ok := m["ray_actor_options"].(map[string]any); ok {
			for key, resource := range map[string]string{"num_cpus": "CPU", "num_gpus": "GPU"} {
				if n, ok := opts[key].(float64); ok && n > 0 {
					dep.resources[resource] = n
				}
			}
			if custom, ok := opts["resources"].(map[string]any); ok {
				for k, v := range custom {
					if n, ok := v.(float64); ok {
						dep.resources[k] = n
					}
				}
			}
		}
		app.deployments = append(app.deployments, dep)
	}
	return app, nil
}

func (d *Dashboard) shutdownServe() {
	d.mu.Lock()
	d.apps = map[string]*application{}
	d.mu.Unlock()
}

// Shapes of Ray's ServeInstanceDetails (ray.serve.schema), as GET /api/serve/applications/ sends them.
type (
	serveInstanceDetails struct {
		DeployMode   string                        `json:"deploy_mode"`
		ProxyLoc     string                        `json:"proxy_location"`
		Applications map[string]applicationDetails `json:"applications"`
	}
	applicationDetails struct {
		Name        string                       `json:"name"`
		RoutePrefix string                       `json:"route_prefix"`
		Status      string                       `json:"status"`
		Message     string                       `json:"message"`
		LastDeploy  float64                      `json:"last_deployed_time_s"`
		Source      string                       `json:"source"`
		Config      map[string]any               `json:"deployed_app_config"`
		Deployments map[string]deploymentDetails `json:"deployments"`
	}
	deploymentDetails struct {
		Name              string             `json:"name"`
		Status            string             `json:"status"`
		Message           string             `json:"message"`
		TargetReplicas    int                `json:"target_num_replicas"`
		RequiredResources map[string]float64 `json:"required_resources"`
	}
)

// serveDetails is what GET /api/serve/applications/ answers now. Applications are replaced whole,
// never changed, so they are read under d.mu and judged (Config.Place) after it is released.
func (d *Dashboard) serveDetails() serveInstanceDetails {
	now := d.cfg.Now()
	d.mu.Lock()
	apps := make([]*application, 0, len(d.apps))
	for _, app := range d.apps {
		apps = append(apps, app)
	}
	d.mu.Unlock()
	out := serveInstanceDetails{DeployMode: "MULTI_APP", ProxyLoc: "EveryNode", Applications: map[string]applicationDetails{}}
	for _, app := range apps {
		out.Applications[app.name] = d.applicationDetails(app, now)
	}
	return out
}

func (d *Dashboard) applicationDetails(app *application, now time.Time) applicationDetails {
	deploying := now.Sub(app.deployedAt) < d.cfg.DeployTime
	det := applicationDetails{Name: app.name, RoutePrefix: app.routePrefix, Status: AppRunning, LastDeploy: unixSeconds(app.deployedAt),
		Source: "declarative", Config: app.config, Deployments: map[string]deploymentDetails{}}
	for _, dep := range app.deployments {
		dd := deploymentDetails{Name: dep.name, Status: DeploymentHealthy, TargetReplicas: dep.replicas, RequiredResources: dep.resources}
		switch {
		case deploying:
			dd.Status = DeploymentUpdating
		case d.cfg.Place != nil:
			if ok, why := d.cfg.Place(app.name, dep.name, dep.replicas, dep.resources); !ok {
				dd.Status, dd.Message = DeploymentUpdating, why
				det.Status, det.Message = AppDeploying, fmt.Sprintf("Deployment '%s' in application '%s': %s", dep.name, app.name, why)
			}
		}
		det.Deployments[dep.name] = dd
	}
	if deploying {
		det.Status = AppDeploying
	}
	return det
}

// Routes is the route table of the cluster's Serve proxies: each application's route prefix and
// name, empty while Serve runs no application.
func (d *Dashboard) Routes() map[string]string {
	d.mu.Lock()
	defer d.mu.Unlock()
	routes := make(map[string]string, len(d.apps))
	for name, app := range d.apps {
		routes[app.routePrefix] = name
	}
	return routes
}
