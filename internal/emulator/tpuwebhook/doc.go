// Package tpuwebhook is the emulator's stand-in for GKE's KubeRay TPU webhook, as the Ray
// Operator add-on's clusters get it: a mutating webhook on the creation of KubeRay's Pods and a
// validating webhook on the creation of RayClusters, served over HTTPS (one [Server] for every
// cluster of an emulator, a path per cluster) and registered in each cluster ([Server.Install])
// as MutatingWebhookConfiguration and ValidatingWebhookConfiguration with the server's own CA as
// caBundle, so that the kube-apiserver calls it as it would call the webhook's Service.
//
// It mutates TPU worker Pods (TPU_WORKER_ID, TPU_WORKER_HOSTNAMES, TPU_NAME, the
// TPU_DEVICE_PLUGIN_* and MEGASCALE_* variables, TPU_PROCESS_* on tpu7x, hostname, subdomain and
// the node pool affinity of a multi-host slice) and refuses RayClusters whose TPU worker groups'
// numOfHosts does not match their topology. It follows the webhook's source, cited as
//
//	WH = ai-on-gke/kuberay-tpu-webhook@ef658db45757e88abc584b0d17fbab930b45316f:main.go
//	     (2026-05-20; tag kuberay-tpu-webhook/v1.3.5 differs only in the lastAdmitted key)
//
// and its registration (deployments/mutating-webhook-cfg.yaml, validating-webhook-cfg.yaml at the
// same commit); KubeRay's labels and names are cited as
// KR = ray-project/kuberay/ray-operator@v1.5.0. What GKE's add-on ships exactly is not
// documented; this is the webhook that GKE's TPU guides for Ray point to.
//
// # How it is built
//
// As kwok builds each controller, from a [Config] of clients and functions, with no pointer back
// to the emulator: Config.Kube finds the Kubernetes client of the cluster a request's path names
// (by the cluster's UID), Config.Logf logs, and Config.Certificate and Config.CAPEM are the TLS
// key material (the emulator makes them with kubeproc). [Start] listens on 127.0.0.1 and serves
// until [Server.Close]. The functions passed in take and release their owner's locks themselves;
// the server holds none of them, only its own mutex that serializes mutations as WH's cacheMutex
// does. The emulator starts the server on first use, builds its Config, and calls
// [Server.Install] and [Remove] with a cluster's client when the add-on is enabled or disabled.
//
// # Imports
//
// tpuwebhook may import gketpu (GKE's TPU names), rules and apierr, KubeRay's API types,
// k8s.io/api, apimachinery, client-go and the standard library. It must not import package
// emulator, kubeproc, internal/provider, internal/gke or internal/tpu; package emulator imports
// it, never the other way. Its tests run without Kubernetes binaries: where the webhook calls the
// API server they use client-go's fake clientset. Package tpuwebhooktest builds the RayClusters
// its tests and the emulator's send.
package tpuwebhook
